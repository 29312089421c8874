// rt's own host of the async ABI serving a real WASI 0.3 handler in process
// (lib/worker/execution/own-host.ts): the P3 handler fixture (WAT, built
// into a component by wit-component, its core modules as jco-transpile
// writes them) for every path it has — a body written after handle
// returned, an echo of a streamed body with its trailers, a status, an
// error-code, naps side by side, a cancelled nap, a trap — with nothing left
// in its table after each; and the components and imports rt's own host
// leaves to jco's glue, and why.

import { expect } from 'chai';
import { transpileBytes } from '@bytecodealliance/jco-transpile';
import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { TRANSPILE_OPTIONS } from '../../lib/primary/compile-job.js';
import { buildComponent } from '../../examples/builder.js';
import { asyncCalls, P3_HANDLER } from '../support/async-components.js';
import { HANDLER_EXPORT, instantiate, plan, type OwnInstance } from '../../lib/worker/execution/own-host.js';
import { TaskFailure } from '../../lib/worker/execution/task-failure.js';
import { wasi03Interfaces } from '../../lib/worker/sandbox/wasi-p3.js';
import { p3, type HandlerRequest } from '../../lib/worker/wasi-host/index.js';
import { byteReader } from '../../lib/worker/wasi-host/p3/bodies.js';
import { Fields } from '../../lib/worker/wasi-host/p3/fields.js';
import { Request, Response } from '../../lib/worker/wasi-host/p3/http-types.js';
import { ComponentError } from '../../lib/worker/execution/async-abi/async-instance.js';
import type { ImportObject } from '../../lib/worker/sandbox/wasi-imports.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const gc = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

async function coreModules(bytes: Uint8Array): Promise<WebAssembly.Module[]> {
  const { files } = await transpileBytes(bytes, { ...TRANSPILE_OPTIONS, asyncMode: 'jspi', asyncExports: ['wasi:http/handler@0.3.0#handle'] });
  return Promise.all(Object.entries(files).flatMap(([name, data]) => (name.endsWith('.wasm') ? [WebAssembly.compile(data as Uint8Array<ArrayBuffer>)] : [])));
}

const exit = (): never => {
  throw new Error('exit');
};

/** What the instance thread gives a handler: the 0.3 http types and clocks (keyed as jco's specifiers). */
function provided(withClocks = true): ImportObject {
  return {
    'wasi:http/types': p3.httpTypes['wasi:http/types@0.3'],
    ...(withClocks ? { 'wasi:clocks/monotonic-clock': wasi03Interfaces({ env: [], exit })['wasi:clocks/monotonic-clock@0.3'] } : {}),
  };
}

/** A handler on rt's own host: its `handle`, and its instance. */
interface OwnHandler {
  handle(request: unknown): Promise<unknown>;
  instance: OwnInstance['instance'];
}

const HANDLER = { exports: [HANDLER_EXPORT] };

/** The handler rt's own host made of `main`, or why it did not. */
function handlerOf(main: WebAssembly.Module, imports: ImportObject, failure: TaskFailure, started: (task: { requestCancellation(): void }) => void = () => {}): OwnHandler | { reason: string } {
  const made = instantiate(main, imports, failure, started, HANDLER);
  if ('reason' in made) return made;
  return { handle: (request) => made.call(0, [request]) as Promise<unknown>, instance: made.instance };
}

interface Served {
  status: number;
  body: string;
  trailers: unknown;
}

/** One request through `handler` as rt's exchange takes it (wasi-host/p3/handler.ts): the response's status, body and trailers. */
async function serve(handler: OwnHandler, method: string, chunks: string[] = [], trailers?: Fields): Promise<Served> {
  const head: HandlerRequest = { method, pathWithQuery: '/', scheme: 'http', authority: 'localhost', headers: [] };
  const body = (async function* () {
    for (const chunk of chunks) yield new TextEncoder().encode(chunk);
  })();
  const response = await handler.handle(new Request(head, body, Promise.resolve({ tag: 'ok', val: trailers })));
  expect(response).to.be.instanceOf(Response);
  const parts = (response as Response).parts()!;
  const reader = byteReader(parts.contents!);
  let text = '';
  for (let bytes = await reader.read(65_536); bytes; bytes = await reader.read(65_536)) text += Buffer.from(bytes).toString();
  reader.close();
  const ended = await parts.trailers;
  parts.transmitted({ tag: 'ok', val: undefined });
  return { status: parts.status, body: text, trailers: ended };
}

describe("rt's own host of WASI 0.3 handlers (in process)", function () {
  this.timeout(120_000);
  let modules: WebAssembly.Module[];
  let failure: TaskFailure;
  let handler: OwnHandler;

  before(async () => {
    modules = await coreModules(await buildComponent(P3_HANDLER));
  });

  beforeEach(() => {
    const planned = plan(modules, HANDLER.exports);
    if ('reason' in planned) throw new Error(planned.reason);
    failure = new TaskFailure();
    const made = handlerOf(planned.main, provided(), failure);
    if ('reason' in made) throw new Error(made.reason);
    handler = made;
  });

  it('serves a body the guest writes after handle returned, then its trailers, and leaves no handle behind', async () => {
    expect(await serve(handler, 'GET')).to.deep.equal({ status: 200, body: 'Hello, world!\n', trailers: { tag: 'ok', val: undefined } });
    expect(handler.instance.handles).to.equal(0);
  });

  it('hands the request’s body and trailers back as the response’s (an echo), bytes as they came', async () => {
    const trailers = Fields.fromList([['x-sum', new TextEncoder().encode('42')]]);
    const served = await serve(handler, 'POST', ['one ', 'two ', 'three'], trailers);
    expect(served.body).to.equal('one two three');
    expect((served.trailers as { val: Fields }).val.list()).to.deep.equal(trailers.list());
    expect(handler.instance.handles).to.equal(0);
  });

  it('gives the status the guest set, and its error-code as a ComponentError', async () => {
    expect((await serve(handler, 'PUT')).status).to.equal(700);
    const refused = await handler.handle(new Request({ method: 'PATCH', pathWithQuery: '/', scheme: 'http', authority: 'a', headers: [] }, (async function* () {})(), Promise.resolve({ tag: 'ok', val: undefined }))).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(ComponentError);
    expect((refused as ComponentError).payload).to.deep.equal({ tag: 'connection-refused' });
    expect(handler.instance.handles).to.equal(0);
  });

  it('serves naps side by side (wasi:clocks wait-for as a subtask): 20 of 300 ms in well under 20 × 300 ms', async () => {
    const began = performance.now();
    const served = await Promise.all(Array.from({ length: 20 }, () => serve(handler, 'OPTIONS')));
    expect(served.every((s) => s.body === 'Hello, world!\n')).to.equal(true);
    expect(performance.now() - began).to.be.below(3_000);
    expect(handler.instance.handles).to.equal(0);
  });

  it('tells a napping task that rt gave up on it (TASK_CANCELLED); the guest acknowledges, the call resolves with nothing, and others serve on', async () => {
    let task: { requestCancellation(): void } | undefined;
    const made = handlerOf((plan(modules, HANDLER.exports) as { main: WebAssembly.Module }).main, provided(), failure, (started) => (task = started));
    if ('reason' in made) throw new Error(made.reason);
    const head: HandlerRequest = { method: 'TRACE', pathWithQuery: '/', scheme: 'http', authority: 'localhost', headers: [] };
    const call = made.handle(new Request(head, (async function* () {})(), Promise.resolve({ tag: 'ok', val: undefined })));
    task!.requestCancellation();
    expect(await call).to.equal(undefined);
    expect((await serve(made, 'GET')).status).to.equal(200);
  });

  it('fails every call in flight once the guest traps, and takes no more', async () => {
    const napping = serve(handler, 'OPTIONS').catch((e: unknown) => e);
    const trapped = await serve(handler, 'DELETE').catch((e: unknown) => e);
    expect(trapped).to.be.instanceOf(WebAssembly.RuntimeError);
    // The nap's own promise is the guest's: what rt awaits of it is guarded by the instance's failure.
    expect(await failure.guard(napping).catch((e: unknown) => e)).to.equal(trapped);
    expect(await serve(handler, 'GET').catch((e: unknown) => e)).to.equal(trapped);
  });

  it('keeps nothing of the requests it served: 2,000 requests 50 at a time', async () => {
    const round = async (n: number) => {
      for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: 50 }, () => serve(handler, i % 100 === 0 ? 'POST' : 'GET', ['x'])));
    };
    await round(500);
    gc();
    const before = process.memoryUsage().heapUsed;
    await round(2_000);
    gc();
    expect(process.memoryUsage().heapUsed - before).to.be.below(4 * 1_048_576);
    expect(handler.instance.handles).to.equal(0);
  });

  it('leaves to jco’s glue a component that is no handler lifted with a callback, one with other core modules, and one importing what it does not serve', async () => {
    expect(plan(await coreModules(await asyncCalls()), HANDLER.exports)).to.deep.equal({ reason: 'no one core module exports [async-lift]wasi:http/handler@0.3.0#handle (lifted with a callback)' });
    const other = await WebAssembly.compile((await parse('(module (func (export "main")))')) as Uint8Array<ArrayBuffer>);
    expect(plan([...modules, other], HANDLER.exports)).to.deep.equal({ reason: 'it has core modules besides its own and wit-component’s shims' });
    const planned = plan(modules, HANDLER.exports) as { main: WebAssembly.Module };
    expect(handlerOf(planned.main, provided(false), new TaskFailure())).to.deep.equal({ reason: "rt's own host does not serve its import wasi:clocks/monotonic-clock@0.3.0 [async-lower]wait-for" });
  });
});
