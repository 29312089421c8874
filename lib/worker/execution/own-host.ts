// A component served by rt's own host of the async ABI (async-abi/)
// instead of jco's glue, when it can be (docs/decisions.md, "HTTP
// handlers" and "Where calls run"; instance-spec.ts ownHosting asks): a
// wasi:http 0.3 handler, or a component whose exports are functions of
// types rt's own host lifts (lib/wit/canon/wit-abi-types.ts), async ones,
// or plain ones of a component that imports nothing. Its core module is
// instantiated here, its imports are rt's (wasi-host/p3/canon-functions.ts and the ABI's
// built-ins), and each export is called as wit-component lifted it: an
// async one through its callback, a synchronous one directly.
//
// That takes a component as wit-component makes it from one core module
// (every toolchain that targets the component model does): that module,
// plus the shim and fixup modules wit-component adds to tie imports to its
// memory, which rt's imports need not. Its imports' names say what each is
// (`[method]fields.get`, `[async-lower][stream-write-0][static]response.new`,
// `$root` `[waitable-join]`, `[export]$root` `[task-return]nap`). A
// component of another shape, an async export lifted without a callback
// (stackful), or one importing anything rt's own host does not serve is
// left to jco's glue: `plan` and `instantiate` say why.

import type { ImportObject } from '../sandbox/wasi-imports.js';
import { unversioned } from '../../wit/interface-key.js';
import { streamsAndFutures, type AbiType, type FuturePayload, type HostFunction, type Payloads, type StreamSource } from '../../wit/canon/abi-types.js';
import { STREAM_KINDS, type FutureKinds } from '../../wit/canon/wit-abi-types.js';
import { AsyncInstance, ComponentError, type CoreFunction, type Task } from './async-abi/async-instance.js';
import type { TaskFailure } from './task-failure.js';
import { canonFunctions, HANDLE_EXPORT, P3_PAYLOADS } from '../wasi-host/p3/canon-functions.js';

/** An export as rt's own host calls it: where (its interface, or null at the world's level), whether async, and its types. */
export interface OwnExport {
  interface: string | null;
  name: string;
  async: boolean;
  params: readonly AbiType[];
  result: AbiType | undefined;
}

/** A wasi:http 0.3 handler's `handle`. */
export const HANDLER_EXPORT: OwnExport = { interface: HANDLE_EXPORT.interface, name: HANDLE_EXPORT.name, async: true, params: HANDLE_EXPORT.params, result: HANDLE_EXPORT.results[0] };

/** The core function wit-component lifts `e` from (and, for an async one, its callback). */
function coreNames(e: OwnExport): { lift: string; callback?: string; postReturn?: string } {
  const key = e.interface === null ? e.name : `${e.interface}#${e.name}`;
  return e.async ? { lift: `[async-lift]${key}`, callback: `[callback][async-lift]${key}` } : { lift: key, postReturn: `cabi_post_${key}` };
}

/** A stream's or future's built-in: `[async-lower]` if lowered async, the kind, the operation, the payload's index in the function's type, the function. */
const COPY_BUILTIN = /^(\[async-lower\])?\[(stream|future)-(new|read|write|cancel-read|cancel-write|drop-readable|drop-writable)-(\d+)\](.*)$/;
const TASK_RETURN = '[task-return]';

/** The module wit-component's shim or fixup modules are: functions named by number, and the table of them (and what rt adds to every module: `passedThrough`). */
function isShim(module: WebAssembly.Module, passedThrough: readonly string[]): boolean {
  const numbered = (name: string) => /^\d+$/.test(name) || name === '$imports';
  return WebAssembly.Module.exports(module).every((e) => numbered(e.name)) && WebAssembly.Module.imports(module).every((i) => numbered(i.name) || passedThrough.includes(i.module));
}

/** The core module rt's own host would instantiate to serve `exports`, or why it will not; imports of `passedThrough` modules are rt's own (the fuel check). */
export function plan(modules: Iterable<WebAssembly.Module>, exports: readonly OwnExport[], passedThrough: readonly string[] = []): { main: WebAssembly.Module } | { reason: string } {
  const all = [...modules];
  const first = coreNames(exports[0]).lift;
  const mains = all.filter((m) => WebAssembly.Module.exports(m).some((e) => e.name === first));
  if (mains.length !== 1) return { reason: `no one core module exports ${first}${exports[0].async ? ' (lifted with a callback)' : ''}` };
  const main = mains[0];
  const names = new Set(WebAssembly.Module.exports(main).map((e) => e.name));
  for (const e of exports) {
    const { lift, callback } = coreNames(e);
    if (!names.has(lift)) return { reason: `its core module does not export ${lift}` };
    if (callback && !names.has(callback)) return { reason: `its ${e.name} is lifted without a callback` };
  }
  const other = all.find((m) => m !== main && !isShim(m, passedThrough));
  if (other) return { reason: 'it has core modules besides its own and wit-component’s shims' };
  return { main };
}

export interface OwnInstance {
  /**
   * Calls export `index` with `args` (jco's values): an async one's answer
   * is a promise (of undefined if it acknowledged a cancellation). The err
   * of a top-level result is thrown as ComponentError, as jco's glue does.
   */
  call(index: number, args: readonly unknown[]): unknown;
  memory: WebAssembly.Memory;
  /** The guest's instance (for tests: the handles it holds). */
  instance: AsyncInstance;
}

export interface OwnOptions {
  /** Its exports, in the order `call` takes them by. */
  exports: readonly OwnExport[];
  /** What its own futures carry (wit-abi-types.ts `exportTypes` registered them). */
  futures?: FutureKinds;
  /** Imports passed through to the core module: the fuel check of an inline instance. */
  coreImports?: WebAssembly.Imports;
  /** Runs instantiation within the caller's bounds. */
  bounded?: <T>(fn: () => T) => T;
  /** Runs each entry into the guest within its bounds. */
  enter?: <T>(fn: () => T) => T;
}

/**
 * Instantiates `main` with rt's own imports over `provided` (the sandboxed
 * interfaces the glue would get), or says which import it does not serve.
 * `started` hears of each async call's task (to cancel it).
 */
export function instantiate(main: WebAssembly.Module, provided: ImportObject, failure: TaskFailure, started: (task: Task) => void, options: OwnOptions): OwnInstance | { reason: string } {
  const { exports: own, futures = new Map<string, FuturePayload>(), coreImports = {}, bounded = (fn) => fn(), enter } = options;
  const runtime = new AsyncInstance(failure, payloads(futures), enter);
  const interfaces = canonFunctions(Object.fromEntries(Object.entries(provided).map(([name, value]) => [unversioned(name), value])) as Parameters<typeof canonFunctions>[0]);
  const exported = new Map<string, Map<string, OwnExport>>();
  for (const e of own) {
    const module = `[export]${e.interface ?? '$root'}`;
    if (!exported.has(module)) exported.set(module, new Map());
    exported.get(module)!.set(e.name, e);
  }
  const imports: Record<string, Record<string, unknown>> = {};
  for (const { module, name } of WebAssembly.Module.imports(main)) {
    const resolved = coreImports[module]?.[name] ?? resolve(runtime, interfaces, exported, module, name);
    if (!resolved) return { reason: `rt's own host does not serve its import ${module} ${name}` };
    (imports[module] ??= {})[name] = resolved;
  }
  const instance = bounded(() => new WebAssembly.Instance(main, imports as WebAssembly.Imports)).exports;
  const memory = instance.memory;
  if (!(memory instanceof WebAssembly.Memory)) return { reason: 'its core module exports no memory' };
  runtime.attach(memory, instance.cabi_realloc as ((...args: number[]) => number) | undefined);
  const calls = own.map((e) => {
    const { lift, callback, postReturn } = coreNames(e);
    const [core, back, post] = [instance[lift], callback && instance[callback], postReturn && instance[postReturn]] as (CoreFunction | undefined)[];
    if (e.async) {
      return (args: readonly unknown[]) => runtime.call(core!, back!, e.params, args, started).then((values) => (values ? answer(e, values[0]) : undefined));
    }
    return (args: readonly unknown[]) => answer(e, runtime.callSync(core!, post, e.params, e.result, args));
  });
  return { memory, instance: runtime, call: (index, args) => calls[index](args) };
}

/** An export's answer as jco's glue gives it: the ok of a top-level result, its err thrown. */
function answer(e: OwnExport, value: unknown): unknown {
  if (e.result?.kind !== 'result') return value;
  const { tag, val } = value as { tag: 'ok' | 'err'; val: unknown };
  if (tag === 'err') throw new ComponentError(val);
  return val;
}

/** What the instance's streams and futures carry: wasi:http's and wasi:cli's, and those of its own exports (an invoke's request body, a future it returns). */
function payloads(futures: FutureKinds): Payloads {
  return {
    streamSource: (kind, value) => (EXPORT_STREAMS.has(kind) ? iterated(value as AsyncIterable<unknown>, kind) : P3_PAYLOADS.streamSource(kind, value)),
    future: (kind) => futures.get(kind) ?? P3_PAYLOADS.future(kind),
  };
}

const EXPORT_STREAMS = new Set<string>(Object.values(STREAM_KINDS));

/** Items rt hands a guest from an async iterable: chunks of bytes (a request body), arrays of numbers, or other items one by one (NDJSON lines). */
function iterated(items: AsyncIterable<unknown>, kind: string): StreamSource {
  const iterator = items[Symbol.asyncIterator]();
  return {
    read: async () => {
      const next = await iterator.next();
      if (next.done) return undefined;
      return kind === STREAM_KINDS.items ? [next.value] : (next.value as Uint8Array | unknown[]);
    },
    close: () => void iterator.return?.(),
  };
}

function resolve(runtime: AsyncInstance, interfaces: Map<string, Record<string, HostFunction>>, exported: Map<string, Map<string, OwnExport>>, module: string, name: string): CoreFunction | undefined {
  if (module === '$root') return runtime.builtin(name);
  if (module === '[export]$root') {
    const builtin = runtime.builtin(name);
    if (builtin) return builtin;
  }
  const ofExports = exported.get(module);
  if (ofExports && name.startsWith(TASK_RETURN)) {
    const e = ofExports.get(name.slice(TASK_RETURN.length));
    return e?.async ? runtime.taskReturn(e.result ? [e.result] : []) : undefined;
  }
  const functions: Record<string, { params: readonly AbiType[]; result?: AbiType }> | undefined = ofExports ? Object.fromEntries(ofExports) : interfaces.get(module);
  if (!functions) return undefined;
  const copy = COPY_BUILTIN.exec(name);
  if (copy) {
    const [, lowered, kind, op, index, fnName] = copy;
    const fn = functions[fnName];
    // The n-th stream or future in the function's type, as wit-component numbers them.
    const type = fn && streamsAndFutures([...fn.params, fn.result])[Number(index)];
    if (!type || type.kind !== kind) return undefined;
    return runtime.copyBuiltin(type, `${lowered ?? ''}${op}`);
  }
  if (ofExports) return undefined;
  const fn = (functions as Record<string, HostFunction>)[name];
  if (!fn) return undefined;
  return name.startsWith('[async-lower]') ? runtime.asyncLower(fn) : runtime.syncLower(fn);
}
