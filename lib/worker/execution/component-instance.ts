// One component instance through jco's glue, wherever it runs: on an
// instance thread (instance-thread.ts) or inline on the worker's main thread
// (inline-instance.ts). It instantiates, runs `init(config)`, and makes calls,
// turning each outcome into a `CallOutcome`: the value, the err case of a
// top-level result, or a trap with its error code and message.

import { pathToFileURL } from 'node:url';
import type { ErrorCode } from '../../errors.js';
import type { ExportLocation } from '../../service.js';
import { ComponentExit, UnsatisfiedImportError, type ImportObject } from '../sandbox/wasi-imports.js';
import { CoreByteNext } from './core-byte-next.js';
import { TaskFailure } from './task-failure.js';
import { TASK_FAILED_IMPORT, TASK_STARTED_IMPORT } from '../../task-failed-import.js';
import { instantiate, plan, type OwnExport, type OwnInstance } from './own-host.js';
import type { FutureKinds } from '../../wit/canon/wit-abi-types.js';

type Bound = (...args: unknown[]) => unknown;
/** What the glue takes of a core instance: its exports (rt may hand it wrapped ones: core-byte-next.ts). */
type CoreInstantiate = (module: WebAssembly.Module, imports?: WebAssembly.Imports) => Promise<{ exports: WebAssembly.Exports }>;
type Instantiate = (getCoreModule: (name: string) => WebAssembly.Module, imports: ImportObject, instantiateCore: CoreInstantiate) => Promise<Record<string, unknown>>;

/** How a call failed without an answer from the component (docs/api.md §5.5). */
export type TrapCode = Extract<ErrorCode, 'RT_ERR_COMPONENT_TRAPPED' | 'RT_ERR_UNSATISFIED_IMPORT' | 'RT_ERR_COMPONENT_EXITED' | 'RT_ERR_INSTANCE_LOST'>;

/** What came of one call into the instance: its value, the err case of a top-level result<T, E> (the payload E), or a trap. */
export type CallOutcome = { kind: 'ok'; value: unknown } | { kind: 'component-error'; payload: unknown } | { kind: 'trap'; code: TrapCode; message: string };

export interface InstanceSpec {
  /** The jco glue module (file path). */
  entry: string;
  /** Compiled core modules by the name the glue asks for. */
  modules: Map<string, WebAssembly.Module>;
  imports: ImportObject;
  /** Where each method lives in jco's exports, in method order. */
  methods: ExportLocation[];
  /** The wasi:http handler's `handle` (docs/api.md §5.8), for a handler service. */
  handler?: ExportLocation;
  /** The `init` export, called with `config` before the first call. */
  init: ExportLocation | null;
  config: Uint8Array;
  /** The memory cap the core modules were compiled with, for the trap message. */
  memoryCapBytes: number;
  /** Imports every core module gets besides the glue's (the fuel check, for instrumented modules). */
  coreImports?: WebAssembly.Imports;
  /** Runs the synchronous parts of instantiation (start functions, init) within the caller's bounds. */
  bounded?: <T>(fn: () => T) => T;
  /** Recognises the error that interrupts a call; it passes through as it is, never as a trap. */
  isInterrupt?: (e: unknown) => boolean;
  /** The core `next` functions of byte streams (StreamSignature's `nextExport`) whose items may be read in place: an instance thread's (stream-items.ts `byteNexts`). */
  byteNexts?: ReadonlySet<string>;
  /** What rt's own host would serve (the handler's `handle`, or the methods in order, then `init` if any): it does where it can (own-host.ts), jco's glue otherwise. */
  own?: { exports: OwnExport[]; futures: FutureKinds };
  /** On rt's own host: runs each entry into the guest (an export call, a callback) within its bounds (an inline instance's budget). */
  guestEntry?: <T>(fn: () => T) => T;
}

const NO_ARGS: unknown[] = [];
// As jco's glue names it.
const DISPOSE: typeof Symbol.dispose = Symbol.dispose ?? Symbol.for('dispose');

const glues = new Map<string, Promise<{ instantiate: Instantiate }>>();

function glue(entry: string): Promise<{ instantiate: Instantiate }> {
  let loaded = glues.get(entry);
  if (!loaded) glues.set(entry, (loaded = import(pathToFileURL(entry).href) as Promise<{ instantiate: Instantiate }>));
  return loaded;
}

/** Of the glue's task object, what rt uses: a request that the guest cancel it. */
interface GuestTask {
  requestCancellation(): void;
}

/** A call's task, which rt may ask the guest to cancel (ComponentInstance.started). */
export interface StartedTask {
  cancel(): void;
  /** Its cancellation was asked for. */
  readonly cancelled: boolean;
}

/** What jco's glue throws for a task asked to cancel before it entered the instance. */
const NOT_ENTERED = 'failed to enter task';

export class ComponentInstance {
  private constructor(
    private readonly spec: InstanceSpec,
    private readonly functions: (Bound | undefined)[],
    private readonly memories: WebAssembly.Memory[],
    private readonly handler: Bound | undefined,
    private readonly byteNexts: Map<string, CoreByteNext>,
    /** The first failure of a task that nobody awaits any more (glue-async-rewrite.ts): the instance has trapped. */
    private readonly taskFailure: TaskFailure,
    /** The task the export call being made started, as the glue tells it (TASK_STARTED_IMPORT). */
    private readonly starts: { last: GuestTask | undefined },
    /** Whose host runs it: rt's own (own-host.ts) or jco's glue. */
    readonly host: 'rt' | 'jco',
  ) {}

  /**
   * A new instance, its init run. Core modules are instantiated synchronously,
   * so their start functions run inside this call (and inside the caller's
   * bounds: the fuel budget of an inline instance).
   */
  static async create(spec: InstanceSpec): Promise<ComponentInstance> {
    const memories: WebAssembly.Memory[] = [];
    const byteNexts = new Map<string, CoreByteNext>();
    const bounded = spec.bounded ?? ((fn) => fn());
    const taskFailure = new TaskFailure();
    const starts: { last: GuestTask | undefined } = { last: undefined };
    const own = spec.own && ownInstance(spec, spec.own, taskFailure, starts);
    if (own) {
      const functions = spec.methods.map((_, i): Bound => (...args) => own.call(i, args));
      // What rt's own host serves after the methods is init (instance-spec.ts ownHosting).
      if (spec.init) bounded(() => runInit((config) => own.call(spec.methods.length, [config]), spec.config, spec.isInterrupt));
      return new ComponentInstance(spec, functions, [own.memory], spec.handler && ((request) => own.call(0, [request])), byteNexts, taskFailure, starts, 'rt');
    }
    const { instantiate } = await glue(spec.entry);
    const exports = await instantiate(
      (name) => {
        const module = spec.modules.get(name);
        if (!module) throw new Error(`the glue asked for an unknown core module ${name}`);
        return module;
      },
      { ...spec.imports, [TASK_FAILED_IMPORT]: (e: unknown) => taskFailure.fail(e), [TASK_STARTED_IMPORT]: (task: GuestTask) => (starts.last = task) },
      async (module, imports) => {
        const instance = bounded(() => new WebAssembly.Instance(module, spec.coreImports ? { ...imports, ...spec.coreImports } : imports));
        for (const value of Object.values(instance.exports)) if (value instanceof WebAssembly.Memory) memories.push(value);
        let exports = instance.exports;
        for (const name of spec.byteNexts ?? []) {
          const core = CoreByteNext.find(module, exports, name);
          if (!core) continue;
          byteNexts.set(name, core);
          exports = core.exports;
        }
        return { exports };
      },
    );
    const find = (m: ExportLocation): Bound | undefined => {
      const container = m.exportKey === null ? exports : (exports[m.exportKey] as Record<string, unknown> | undefined);
      return m.className === undefined ? functionAt(container, m.jsName) : memberOf(container?.[m.className], m);
    };
    if (spec.init) {
      const init = find(spec.init);
      bounded(() => runInit(init, spec.config, spec.isInterrupt));
    }
    return new ComponentInstance(spec, spec.methods.map(find), memories, spec.handler && find(spec.handler), byteNexts, taskFailure, starts, 'jco');
  }

  /** Calls method `index`. An interrupt (see InstanceSpec) is rethrown, not turned into a trap. */
  call(index: number, args: unknown[]): CallOutcome {
    return this.#run(this.functions[index], undefined, args);
  }

  /**
   * What `start` (a call of an async export, or of the handler) returns, and
   * how to ask the guest to cancel the task it started: its callback gets
   * TASK_CANCELLED at its next wait, and the call resolves with no value
   * once it acknowledges (undefined where the glue told no task). Its
   * outcome is `settled`'s: an async function's glue (through JSPI) returns
   * a promise of its result; a future<T> result is jco's thenable
   * FutureValue, which gives T.
   */
  started<T>(start: () => T): [T, StartedTask | undefined] {
    this.starts.last = undefined;
    const value = start();
    const task = this.starts.last as GuestTask | undefined;
    this.starts.last = undefined;
    if (!task) return [value, undefined];
    const started = {
      cancelled: false,
      cancel: () => {
        started.cancelled = true;
        task.requestCancellation();
      },
    };
    return [value, started];
  }

  /**
   * What `value` comes to once no longer a promise (or a thenable of the
   * glue's), as a call's outcome: a rejection is the guest's trap or error,
   * and so is a trap of any of the instance's tasks meanwhile (it has
   * trapped: nothing it promised comes any more).
   */
  async settled(value: unknown, task?: StartedTask): Promise<CallOutcome> {
    try {
      while (isThenable(value)) value = await this.taskFailure.guard(value);
      return { kind: 'ok', value };
    } catch (e) {
      // Cancelled before the guest had begun it: the glue refuses to start it, and nothing of it ran.
      if (task?.cancelled && e instanceof Error && e.message === NOT_ENTERED) return { kind: 'ok', value: undefined };
      return this.failure(e);
    }
  }

  /** Calls the handler's `handle` (wasi-host's objects: 0.2's request and response outparam; 0.3's request, its outcome a promise of the response). */
  handle(...args: unknown[]): CallOutcome {
    return this.#run(this.handler, undefined, args);
  }

  /** Whether a task of the instance has trapped. */
  get failed(): boolean {
    return this.taskFailure.failed;
  }

  /** `promise`, a guest's (a stream's read, a future), rejecting instead if any of the instance's tasks traps meanwhile. */
  guard<T>(promise: PromiseLike<T>): Promise<T> {
    return this.taskFailure.guard(promise);
  }

  /** Calls `next` on a stream's resource (what a streaming method returned): its value is the item, or undefined/null at the end. */
  next(resource: unknown): CallOutcome {
    return this.#run((resource as { next?: Bound }).next, resource, NO_ARGS);
  }

  /** The core `next` named `name` (a byte stream's `nextExport`), when the instance's core exports have it. */
  byteNext(name: string): CoreByteNext | undefined {
    return this.byteNexts.get(name);
  }

  /** `fn` (a call into the instance past the glue: stream-items.ts) with `args`, its outcome as a call's. */
  callCore(fn: Bound, args: unknown[]): CallOutcome {
    return this.#run(fn, undefined, args);
  }

  /** Drops a resource the instance handed out: jco's glue runs the guest's destructor. */
  drop(resource: unknown): CallOutcome {
    return this.#run((resource as { [DISPOSE]?: Bound })[DISPOSE], resource, NO_ARGS);
  }

  /** `fn` called on `self`, its outcome; no closure per call, as this is the hot path of every call. */
  #run(fn: Bound | undefined, self: unknown, args: unknown[]): CallOutcome {
    try {
      if (!fn) throw new Error('the component does not export this function where its type says');
      return { kind: 'ok', value: fn.apply(self, args) };
    } catch (e) {
      if (this.spec.isInterrupt?.(e)) throw e;
      return this.failure(e);
    }
  }

  /** What a call that threw `e` came to: the err of its result, or a trap. */
  failure(e: unknown): Exclude<CallOutcome, { kind: 'ok' }> {
    if (isComponentError(e)) return { kind: 'component-error', payload: e.payload };
    return { kind: 'trap', code: trapCode(e), message: this.#trapMessage(e) };
  }

  /** The trap's own message, and the memory figures when the instance ran into the cap (its allocator usually traps without saying why). */
  #trapMessage(e: unknown): string {
    const message = trapText(e);
    const largest = Math.max(0, ...this.memories.map((m) => m.buffer.byteLength));
    if (largest < this.spec.memoryCapBytes * 0.9) return message;
    const mib = (n: number) => Math.round(n / 1_048_576);
    return `${message} (the instance's memory reached ${mib(largest)} MiB; runtime.max_memory_mb is ${mib(this.spec.memoryCapBytes)})`;
  }
}

/** `spec`'s instance on rt's own host, when its core modules and imports allow (own-host.ts); undefined for the glue to serve. */
function ownInstance(spec: InstanceSpec, own: NonNullable<InstanceSpec['own']>, failure: TaskFailure, starts: { last: GuestTask | undefined }): OwnInstance | undefined {
  const planned = plan(spec.modules.values(), own.exports, Object.keys(spec.coreImports ?? {}));
  if ('reason' in planned) return undefined;
  const made = instantiate(planned.main, spec.imports, failure, (task) => (starts.last = task), { ...own, coreImports: spec.coreImports, bounded: spec.bounded, enter: spec.guestEntry });
  return 'reason' in made ? undefined : made;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function functionAt(container: unknown, name: string): Bound | undefined {
  const fn = (container as Record<string, unknown> | undefined)?.[name];
  return typeof fn === 'function' ? (fn as Bound) : undefined;
}

/**
 * A resource's function on its jco class, as a plain function: a constructor
 * makes the object, a method takes it as its first argument (`self`), a
 * static is the class's own.
 */
function memberOf(cls: unknown, m: ExportLocation): Bound | undefined {
  if (typeof cls !== 'function') return undefined;
  const Class = cls as new (...args: unknown[]) => unknown;
  switch (m.kind) {
    case 'constructor':
      return (...args) => new Class(...args);
    case 'method': {
      const method = functionAt(Class.prototype, m.jsName);
      return method && ((self, ...args) => method.apply(self, args));
    }
    default: {
      const fn = functionAt(Class, m.jsName);
      return fn && ((...args) => fn.apply(Class, args));
    }
  }
}

/** The component's `init(config)`: an instance whose init fails or traps is never served. */
function runInit(init: Bound | undefined, config: Uint8Array, isInterrupt?: (e: unknown) => boolean): void {
  if (!init) throw new Error('the component does not export init where its type says');
  try {
    init(config);
  } catch (e) {
    if (isInterrupt?.(e)) throw e;
    if (isComponentError(e)) throw new Error(`init returned an error: ${typeof e.payload === 'string' ? e.payload : JSON.stringify(e.payload)}`, { cause: e });
    throw new Error(`init trapped: ${trapText(e)}`, { cause: e });
  }
}

/** jco throws a ComponentError carrying `payload` for the err case of a top-level result<T, E>. */
function isComponentError(e: unknown): e is { payload: unknown } {
  return e instanceof Error && e.constructor.name === 'ComponentError' && 'payload' in e;
}

function trapCode(e: unknown): TrapCode {
  if (e instanceof UnsatisfiedImportError) return 'RT_ERR_UNSATISFIED_IMPORT';
  if (e instanceof ComponentExit) return 'RT_ERR_COMPONENT_EXITED';
  return 'RT_ERR_COMPONENT_TRAPPED';
}

/**
 * V8's words for a core trap, as wasmtime says them: jco's glue rewrites
 * them so (docs/deployment.md), and a guest on rt's own host must not read
 * differently to a client.
 */
const WASMTIME_TRAPS = new Map([
  ['unreachable', 'wasm trap: wasm `unreachable` instruction executed'],
  ['memory access out of bounds', 'wasm trap: out of bounds memory access'],
  ['divide by zero', 'wasm trap: integer divide by zero'],
  ['remainder by zero', 'wasm trap: integer divide by zero'],
  ['divide result unrepresentable', 'wasm trap: integer overflow'],
  ['float unrepresentable in integer range', 'wasm trap: invalid conversion to integer'],
  ['table index is out of bounds', 'wasm trap: undefined element: out of bounds table access'],
  ['function signature mismatch', 'wasm trap: indirect call type mismatch'],
  ['call stack exhausted', 'wasm trap: call stack exhausted'],
]);

/** What a trap says: a core trap in wasmtime's words, whichever host ran the guest. */
function trapText(e: unknown): string {
  return (e instanceof WebAssembly.RuntimeError && WASMTIME_TRAPS.get(e.message)) || errorText(e);
}

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}
