// A WASI 0.3 HTTP handler served by rt's own host of the async ABI
// (async-abi/) instead of jco's glue, when it can be (docs/decisions.md,
// "WASI 0.3 handlers"): its core module is instantiated here, its imports
// are rt's (wasi-host/p3/canon-functions.ts and the ABI's built-ins), and
// `handle` calls its callback-form export.
//
// That takes a component as wit-component makes it from one core module
// (every toolchain that targets the component model does): that module,
// plus the shim and fixup modules wit-component adds to tie imports to its
// memory, which rt's imports need not. Its imports' names say what each is
// (`[method]fields.get`, `[async-lower][stream-write-0][static]response.new`,
// `$root` `[waitable-join]`). A component of another shape, a guest lifted
// without a callback (stackful), or one importing anything rt's own host
// does not serve is left to jco's glue: `plan` says why.

import type { ImportObject } from '../sandbox/wasi-imports.js';
import { unversioned } from '../../wit/interface-key.js';
import { streamsAndFutures, type HostFunction } from '../../wit/canon/abi-types.js';
import { AsyncInstance, ComponentError, type CoreFunction, type Task } from './async-abi/async-instance.js';
import type { TaskFailure } from './task-failure.js';
import { canonFunctions, HANDLE_EXPORT, P3_PAYLOADS } from '../wasi-host/p3/canon-functions.js';

const LIFT = `[async-lift]${HANDLE_EXPORT.interface}#${HANDLE_EXPORT.name}`;
const CALLBACK = `[callback]${LIFT}`;
const EXPORTS = `[export]${HANDLE_EXPORT.interface}`;
/** A stream's or future's built-in: `[async-lower]` if lowered async, the kind, the operation, the payload's index in the function's type, the function. */
const COPY_BUILTIN = /^(\[async-lower\])?\[(stream|future)-(new|read|write|cancel-read|cancel-write|drop-readable|drop-writable)-(\d+)\](.*)$/;

/** The module wit-component's shim or fixup modules are: functions named by number, and the table of them (and what rt adds to every module: `passedThrough`). */
function isShim(module: WebAssembly.Module, passedThrough: readonly string[]): boolean {
  const numbered = (name: string) => /^\d+$/.test(name) || name === '$imports';
  return WebAssembly.Module.exports(module).every((e) => numbered(e.name)) && WebAssembly.Module.imports(module).every((i) => numbered(i.name) || passedThrough.includes(i.module));
}

/** The core module rt's own host would instantiate, or why it will not; imports of `passedThrough` modules are rt's own (the fuel check). */
export function plan(modules: Iterable<WebAssembly.Module>, passedThrough: readonly string[] = []): { main: WebAssembly.Module } | { reason: string } {
  const all = [...modules];
  const mains = all.filter((m) => WebAssembly.Module.exports(m).some((e) => e.name === LIFT));
  if (mains.length !== 1) return { reason: `no one core module exports ${LIFT} (a handler lifted with a callback)` };
  const main = mains[0];
  if (!WebAssembly.Module.exports(main).some((e) => e.name === CALLBACK)) return { reason: 'its handle is lifted without a callback' };
  const other = all.find((m) => m !== main && !isShim(m, passedThrough));
  if (other) return { reason: 'it has core modules besides its own and wit-component’s shims' };
  return { main };
}

export interface OwnHandler {
  /** Calls `handle`: resolves with the response, throws ComponentError for its err, resolves undefined if it acknowledged a cancellation. */
  handle(request: unknown): Promise<unknown>;
  memory: WebAssembly.Memory;
  /** The guest's instance (for tests: the handles it holds). */
  instance: AsyncInstance;
}

/**
 * Instantiates `main` with rt's own imports over `provided` (the sandboxed
 * interfaces the glue would get), or says which import it does not serve.
 * `coreImports` are passed through (the fuel check of an inline instance);
 * `started` hears of each call's task (to cancel it); instantiation runs
 * within `bounded`, and each entry into the guest within `enter`.
 */
export function instantiate(
  main: WebAssembly.Module,
  provided: ImportObject,
  failure: TaskFailure,
  started: (task: Task) => void,
  coreImports: WebAssembly.Imports = {},
  bounded: <T>(fn: () => T) => T = (fn) => fn(),
  enter?: <T>(fn: () => T) => T,
): OwnHandler | { reason: string } {
  const runtime = new AsyncInstance(failure, P3_PAYLOADS, enter);
  const interfaces = canonFunctions(Object.fromEntries(Object.entries(provided).map(([name, value]) => [unversioned(name), value])) as Parameters<typeof canonFunctions>[0]);
  const imports: Record<string, Record<string, unknown>> = {};
  for (const { module, name } of WebAssembly.Module.imports(main)) {
    const resolved = coreImports[module]?.[name] ?? resolve(runtime, interfaces, module, name);
    if (!resolved) return { reason: `rt's own host does not serve its import ${module} ${name}` };
    (imports[module] ??= {})[name] = resolved;
  }
  const exports = bounded(() => new WebAssembly.Instance(main, imports as WebAssembly.Imports)).exports;
  const memory = exports.memory;
  if (!(memory instanceof WebAssembly.Memory)) return { reason: 'its core module exports no memory' };
  runtime.attach(memory, exports.cabi_realloc as ((...args: number[]) => number) | undefined);
  const lift = exports[LIFT] as CoreFunction;
  const callback = exports[CALLBACK] as CoreFunction;
  return {
    memory,
    instance: runtime,
    handle: async (request) => {
      const results = await runtime.call(lift, callback, HANDLE_EXPORT.params, [request], started);
      if (!results) return undefined;
      const result = results[0] as { tag: 'ok' | 'err'; val: unknown };
      if (result.tag === 'err') throw new ComponentError(result.val);
      return result.val;
    },
  };
}

function resolve(runtime: AsyncInstance, interfaces: Map<string, Record<string, HostFunction>>, module: string, name: string): CoreFunction | undefined {
  if (module === '$root' || module === '[export]$root') return runtime.builtin(name);
  if (module === EXPORTS && name === `[task-return]${HANDLE_EXPORT.name}`) return runtime.taskReturn(HANDLE_EXPORT.results);
  const functions = interfaces.get(module);
  if (!functions) return undefined;
  const copy = COPY_BUILTIN.exec(name);
  if (copy) {
    const [, lowered, kind, op, index, fnName] = copy;
    const fn = functions[fnName];
    // The n-th stream or future in the function's type, as wit-component numbers them.
    const payload = fn && streamsAndFutures([...fn.params, fn.result])[Number(index)];
    if (!payload || payload.kind !== kind) return undefined;
    return runtime.copyBuiltin(payload.kind, `${lowered ?? ''}${op}`, payload.payload);
  }
  const fn = functions[name];
  if (!fn) return undefined;
  return name.startsWith('[async-lower]') ? runtime.asyncLower(fn) : runtime.syncLower(fn);
}
