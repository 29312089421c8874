// The WASI 0.3 interfaces rt's own host of the async ABI serves a guest
// (execution/async-abi): wasi:http's, clocks, random and cli. Each
// function's WIT types, for lifting and lowering, over the same host objects
// and sandboxed functions jco's glue is given (http-types.ts, client.ts,
// sandbox/wasi-p3.ts). Only what is here is served this way; a guest
// importing anything else runs through jco's glue (execution/own-host.ts
// decides).

import { t, type AbiType, type FuturePayload, type HostClass, type HostFunction, type Payloads } from '../../../wit/canon/abi-types.js';
import { WasiError } from '../core/host-objects.js';
import { byteReader, type Body } from './bodies.js';
import { Fields } from './fields.js';
import { Request, RequestOptions, Response } from './http-types.js';

/** The one version of the 0.3 line whose types these are (a release candidate's differ). */
export const CANON_VERSION = '0.3.0';

const dnsErrorPayload = t.record(['rcode', t.option(t.string)], ['info-code', t.option(t.u16)]);
const tlsAlertPayload = t.record(['alert-id', t.option(t.u8)], ['alert-message', t.option(t.string)]);
const fieldSizePayload = t.record(['field-name', t.option(t.string)], ['field-size', t.option(t.u32)]);

export const errorCode: AbiType = t.variant(
  ['DNS-timeout'],
  ['DNS-error', dnsErrorPayload],
  ['destination-not-found'],
  ['destination-unavailable'],
  ['destination-IP-prohibited'],
  ['destination-IP-unroutable'],
  ['connection-refused'],
  ['connection-terminated'],
  ['connection-timeout'],
  ['connection-read-timeout'],
  ['connection-write-timeout'],
  ['connection-limit-reached'],
  ['TLS-protocol-error'],
  ['TLS-certificate-error'],
  ['TLS-alert-received', tlsAlertPayload],
  ['HTTP-request-denied'],
  ['HTTP-request-length-required'],
  ['HTTP-request-body-size', t.option(t.u64)],
  ['HTTP-request-method-invalid'],
  ['HTTP-request-URI-invalid'],
  ['HTTP-request-URI-too-long'],
  ['HTTP-request-header-section-size', t.option(t.u32)],
  ['HTTP-request-header-size', t.option(fieldSizePayload)],
  ['HTTP-request-trailer-section-size', t.option(t.u32)],
  ['HTTP-request-trailer-size', fieldSizePayload],
  ['HTTP-response-incomplete'],
  ['HTTP-response-header-section-size', t.option(t.u32)],
  ['HTTP-response-header-size', fieldSizePayload],
  ['HTTP-response-body-size', t.option(t.u64)],
  ['HTTP-response-trailer-section-size', t.option(t.u32)],
  ['HTTP-response-trailer-size', fieldSizePayload],
  ['HTTP-response-transfer-coding', t.option(t.string)],
  ['HTTP-response-content-coding', t.option(t.string)],
  ['HTTP-response-timeout'],
  ['HTTP-upgrade-failed'],
  ['HTTP-protocol-error'],
  ['loop-detected'],
  ['configuration-error'],
  ['internal-error', t.option(t.string)],
);

const method = t.variant(['get'], ['head'], ['post'], ['put'], ['delete'], ['connect'], ['options'], ['trace'], ['patch'], ['other', t.string]);
const scheme = t.variant(['HTTP'], ['HTTPS'], ['other', t.string]);
const headerError = t.variant(['invalid-syntax'], ['forbidden'], ['immutable'], ['size-exceeded'], ['other', t.option(t.string)]);
const optionsError = t.variant(['not-supported'], ['immutable'], ['other', t.option(t.string)]);
const entries = t.list(t.tuple(t.string, t.bytes));

/** The payload kinds of the streams and futures these functions pass. */
const BODY = 'body';
const TRAILERS = 'trailers';
const TRANSMITTED = 'transmitted';
const body = t.stream(BODY);
const trailers = t.future(TRAILERS);
const transmitted = t.future(TRANSMITTED);

/** wasi:cli's: how a write or read of stdio ended. */
const STDIO = 'stdio';
const stdioDone = t.future(STDIO);

const FUTURES: Record<string, FuturePayload> = {
  [STDIO]: { type: t.result(undefined, t.enum('io', 'illegal-byte-sequence', 'pipe')), dropped: { tag: 'err', val: 'pipe' } },
  [TRAILERS]: { type: t.result(t.option(t.own(Fields)), errorCode), dropped: { tag: 'err', val: { tag: 'internal-error', val: 'the guest dropped the trailers future without writing it' } } },
  [TRANSMITTED]: { type: t.result(undefined, errorCode), dropped: { tag: 'err', val: { tag: 'internal-error', val: 'the future was dropped without a value' } } },
};

export const P3_PAYLOADS: Payloads = {
  streamSource: (_kind, value) => byteReader(value as Body),
  future: (kind) => {
    const payload = FUTURES[kind];
    if (!payload) throw new Error(`no future of kind ${kind}`);
    return payload;
  },
};

/** A function of a result-typed WIT function: the value as `ok`, or a WasiError's payload (what rt's host objects throw) as `err`. */
function attempt(run: () => unknown): { tag: 'ok' | 'err'; val: unknown } {
  try {
    return { tag: 'ok', val: run() };
  } catch (e) {
    if (e instanceof WasiError) return { tag: 'err', val: e.payload };
    throw e;
  }
}

function fn<A extends unknown[]>(params: AbiType[], result: AbiType | undefined, call: (...args: A) => unknown): HostFunction {
  return { params, ...(result ? { result } : {}), call: call };
}

function drop(resource: HostClass): HostFunction {
  return fn([t.own(resource)], undefined, (object: { [Symbol.dispose]?: () => void }) => object[Symbol.dispose]?.());
}

const fields = t.borrow(Fields);
const request = t.borrow(Request);
const response = t.borrow(Response);
const options = t.borrow(RequestOptions);
const timeout = (get: (o: RequestOptions) => bigint | undefined) => fn([options], t.option(t.u64), get);
const setTimeout_ = (set: (o: RequestOptions, ns: bigint | undefined) => void) => fn([options, t.option(t.u64)], t.result(undefined, optionsError), (o: RequestOptions, ns: bigint | undefined) => attempt(() => set(o, ns)));

const HTTP_TYPES: Record<string, HostFunction> = {
  '[constructor]fields': fn([], t.own(Fields), () => new Fields()),
  '[static]fields.from-list': fn([entries], t.result(t.own(Fields), headerError), (list: [string, Uint8Array][]) => attempt(() => Fields.fromList(list))),
  '[method]fields.get': fn([fields, t.string], t.list(t.bytes), (f: Fields, name: string) => f.get(name)),
  '[method]fields.has': fn([fields, t.string], t.bool, (f: Fields, name: string) => f.has(name)),
  '[method]fields.set': fn([fields, t.string, t.list(t.bytes)], t.result(undefined, headerError), (f: Fields, name: string, values: Uint8Array[]) => attempt(() => f.set(name, values))),
  '[method]fields.delete': fn([fields, t.string], t.result(undefined, headerError), (f: Fields, name: string) => attempt(() => f.delete(name))),
  '[method]fields.get-and-delete': fn([fields, t.string], t.result(t.list(t.bytes), headerError), (f: Fields, name: string) => attempt(() => f.getAndDelete(name))),
  '[method]fields.append': fn([fields, t.string, t.bytes], t.result(undefined, headerError), (f: Fields, name: string, value: Uint8Array) => attempt(() => f.append(name, value))),
  '[method]fields.copy-all': fn([fields], entries, (f: Fields) => f.copyAll()),
  '[method]fields.clone': fn([fields], t.own(Fields), (f: Fields) => f.clone()),
  '[resource-drop]fields': drop(Fields),

  '[static]request.new': fn([t.own(Fields), t.option(body), trailers, t.option(t.own(RequestOptions))], t.tuple(t.own(Request), transmitted), Request.new),
  '[method]request.get-method': fn([request], method, (r: Request) => r.getMethod()),
  '[method]request.set-method': fn([request, method], t.result(), (r: Request, m: Parameters<Request['setMethod']>[0]) => attempt(() => r.setMethod(m))),
  '[method]request.get-path-with-query': fn([request], t.option(t.string), (r: Request) => r.getPathWithQuery()),
  '[method]request.set-path-with-query': fn([request, t.option(t.string)], t.result(), (r: Request, p: string | undefined) => attempt(() => r.setPathWithQuery(p))),
  '[method]request.get-scheme': fn([request], t.option(scheme), (r: Request) => r.getScheme()),
  '[method]request.set-scheme': fn([request, t.option(scheme)], t.result(), (r: Request, s: Parameters<Request['setScheme']>[0]) => attempt(() => r.setScheme(s))),
  '[method]request.get-authority': fn([request], t.option(t.string), (r: Request) => r.getAuthority()),
  '[method]request.set-authority': fn([request, t.option(t.string)], t.result(), (r: Request, a: string | undefined) => attempt(() => r.setAuthority(a))),
  '[method]request.get-options': fn([request], t.option(t.own(RequestOptions)), (r: Request) => r.getOptions()),
  '[method]request.get-headers': fn([request], t.own(Fields), (r: Request) => r.getHeaders()),
  '[static]request.consume-body': fn([t.own(Request), transmitted], t.tuple(body, trailers), Request.consumeBody),
  '[resource-drop]request': drop(Request),

  '[constructor]request-options': fn([], t.own(RequestOptions), () => new RequestOptions()),
  '[method]request-options.get-connect-timeout': timeout((o) => o.getConnectTimeout()),
  '[method]request-options.set-connect-timeout': setTimeout_((o, ns) => o.setConnectTimeout(ns)),
  '[method]request-options.get-first-byte-timeout': timeout((o) => o.getFirstByteTimeout()),
  '[method]request-options.set-first-byte-timeout': setTimeout_((o, ns) => o.setFirstByteTimeout(ns)),
  '[method]request-options.get-between-bytes-timeout': timeout((o) => o.getBetweenBytesTimeout()),
  '[method]request-options.set-between-bytes-timeout': setTimeout_((o, ns) => o.setBetweenBytesTimeout(ns)),
  '[method]request-options.clone': fn([options], t.own(RequestOptions), (o: RequestOptions) => o.clone()),
  '[resource-drop]request-options': drop(RequestOptions),

  '[static]response.new': fn([t.own(Fields), t.option(body), trailers], t.tuple(t.own(Response), transmitted), Response.new),
  '[method]response.get-status-code': fn([response], t.u16, (r: Response) => r.getStatusCode()),
  '[method]response.set-status-code': fn([response, t.u16], t.result(), (r: Response, status: number) => attempt(() => r.setStatusCode(status))),
  '[method]response.get-headers': fn([response], t.own(Fields), (r: Response) => r.getHeaders()),
  '[static]response.consume-body': fn([t.own(Response), transmitted], t.tuple(body, trailers), Response.consumeBody),
  '[resource-drop]response': drop(Response),
};

/** What `handle` and `send` take and give. */
const exchange = { params: [t.own(Request)], result: t.result(t.own(Response), errorCode) };

/** The exported handler's `handle`: its parameters and results as task.return gives them. */
export const HANDLE_EXPORT = { interface: `wasi:http/handler@${CANON_VERSION}`, name: 'handle', params: exchange.params, results: [exchange.result] } as const;

/** jco's names for the interface objects rt hands its glue (sandbox/wasi-imports.ts), which these functions call into. */
type Provided = Record<string, Record<string, (...args: never[]) => unknown>>;

/**
 * The functions served of each interface, by the core module's import
 * module (`wasi:http/types@0.3.0`) and name (`[method]fields.get`, with
 * `[async-lower]` for an async function lowered async), given the sandboxed
 * interfaces `provided` (keyed without version, as jco's specifiers).
 */
export function canonFunctions(provided: Provided): Map<string, Record<string, HostFunction>> {
  const of = (name: string) => provided[name] ?? {};
  const client = of('wasi:http/client');
  const handler = of('wasi:http/handler');
  const monotonic = of('wasi:clocks/monotonic-clock');
  const system = of('wasi:clocks/system-clock');
  const random = of('wasi:random/random');
  const insecure = of('wasi:random/insecure');
  const seed = of('wasi:random/insecure-seed');
  const environment = of('wasi:cli/environment');
  const exit = of('wasi:cli/exit');
  const stdin = of('wasi:cli/stdin');
  const stdout = of('wasi:cli/stdout');
  const stderr = of('wasi:cli/stderr');
  const served: Record<string, Record<string, HostFunction | undefined>> = {
    'wasi:http/types': HTTP_TYPES,
    'wasi:http/client': { '[async-lower]send': client.send && fn(exchange.params, exchange.result, client.send) },
    // A middleware's downstream handler (a link, docs/api.md §5.9).
    'wasi:http/handler': { '[async-lower]handle': handler.handle && fn(exchange.params, exchange.result, handler.handle) },
    'wasi:clocks/monotonic-clock': {
      now: monotonic.now && fn([], t.u64, monotonic.now),
      'get-resolution': monotonic.getResolution && fn([], t.u64, monotonic.getResolution),
      '[async-lower]wait-for': monotonic.waitFor && fn([t.u64], undefined, monotonic.waitFor),
      '[async-lower]wait-until': monotonic.waitUntil && fn([t.u64], undefined, monotonic.waitUntil),
    },
    'wasi:clocks/system-clock': {
      now: system.now && fn([], t.record(['seconds', t.s64], ['nanoseconds', t.u32]), system.now),
      'get-resolution': system.getResolution && fn([], t.u64, system.getResolution),
    },
    'wasi:random/random': {
      'get-random-bytes': random.getRandomBytes && fn([t.u64], t.bytes, random.getRandomBytes),
      'get-random-u64': random.getRandomU64 && fn([], t.u64, random.getRandomU64),
    },
    'wasi:random/insecure': {
      'get-insecure-random-bytes': insecure.getInsecureRandomBytes && fn([t.u64], t.bytes, insecure.getInsecureRandomBytes),
      'get-insecure-random-u64': insecure.getInsecureRandomU64 && fn([], t.u64, insecure.getInsecureRandomU64),
    },
    'wasi:random/insecure-seed': { 'get-insecure-seed': seed.getInsecureSeed && fn([], t.tuple(t.u64, t.u64), seed.getInsecureSeed) },
    'wasi:cli/environment': {
      'get-environment': environment.getEnvironment && fn([], t.list(t.tuple(t.string, t.string)), environment.getEnvironment),
      'get-arguments': environment.getArguments && fn([], t.list(t.string), environment.getArguments),
      'get-initial-cwd': environment.getInitialCwd && fn([], t.option(t.string), environment.getInitialCwd),
    },
    'wasi:cli/exit': {
      exit: exit.exit && fn([t.result()], undefined, exit.exit),
      'exit-with-code': exit.exitWithCode && fn([t.u8], undefined, exit.exitWithCode),
    },
    'wasi:cli/stdin': { 'read-via-stream': stdin.readViaStream && fn([], t.tuple(body, stdioDone), stdin.readViaStream) },
    'wasi:cli/stdout': { 'write-via-stream': stdout.writeViaStream && fn([body], stdioDone, stdout.writeViaStream) },
    'wasi:cli/stderr': { 'write-via-stream': stderr.writeViaStream && fn([body], stdioDone, stderr.writeViaStream) },
  };
  const functions = new Map<string, Record<string, HostFunction>>();
  for (const [name, table] of Object.entries(served)) {
    functions.set(`${name}@${CANON_VERSION}`, Object.fromEntries(Object.entries(table).filter((entry): entry is [string, HostFunction] => entry[1] !== undefined)));
  }
  return functions;
}
