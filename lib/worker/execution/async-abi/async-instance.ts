// rt's own host of the component model's async ABI for one core instance
// (CanonicalABI.md; docs/decisions.md, "WASI 0.3 handlers"): the guest's
// table, its tasks, and the built-ins it imports (task.return, waitable
// sets, subtasks, context, backpressure, streams and futures), with host
// functions lifted and lowered by abi-types.ts. jco's glue does all of this
// in general (any component, any types, through JSPI); this does what a
// guest of the callback form needs, with no JSPI and no stack kept while a
// task waits: a task runs until it returns a code (exit, yield, wait on a
// set), and its callback is called when an event comes.
//
// Guest code never runs re-entrantly: an export call runs to its code, and
// callbacks run from a microtask once the call that set their event has
// returned. A trap anywhere (the guest's, or a rule it broke) ends the
// instance: every promise of it rejects (TaskFailure), and it takes no more
// calls.

import { flatCount, flatten, layout, liftFlat, load, lowerFlat, store, t, type AbiType, type Carrier, type CoreValue, type Handles, type HostClass, type HostFunction, type Payloads } from '../../../wit/canon/abi-types.js';
import { AbiTrap, GuestMemory } from '../../../wit/canon/guest-memory.js';
import { CanonTable } from './canon-table.js';
import { BLOCKED, hostFuture, hostStream, newFuture, newStream, ReadableFuture, ReadableStreamEnd, WritableFuture, WritableStreamEnd } from './copies.js';
import { EVENT, Subtask, SUBTASK, Waitable, WaitableSet, type Event } from './waitables.js';
import type { TaskFailure } from '../task-failure.js';

export type CoreFunction = (...args: CoreValue[]) => CoreValue | undefined;


/** The canonical ABI's limit on flat parameters of an async-lowered call; more go by pointer. */
const MAX_FLAT_ASYNC_PARAMS = 4;
const MAX_FLAT_PARAMS = 16;

/** The codes a callback-form export (or its callback) returns. */
const CALLBACK = { EXIT: 0, YIELD: 1, WAIT: 2, POLL: 3 } as const;

/** The err case of an export's top-level result, as jco's glue throws it (ComponentInstance recognises it by this name). */
export class ComponentError extends Error {
  constructor(readonly payload: unknown) {
    super('the component returned an error');
  }
}

class Task {
  readonly context = [0, 0];
  state: 'running' | 'waiting' | 'yielding' | 'exited' = 'running';
  returned = false;
  cancel: 'none' | 'requested' | 'delivered' = 'none';
  waitingOn: WaitableSet | undefined;
  /** A POLL code's set: the event it gets when resumed, if it has one. */
  polling: WaitableSet | undefined;
  queued = false;

  constructor(
    readonly callback: CoreFunction,
    readonly onReturn: (values: unknown[]) => void,
    readonly onCancelled: () => void,
    private readonly instance: AsyncInstance,
  ) {}

  /** rt gave up on the call (its client left, its deadline passed): the guest hears TASK_CANCELLED at its next wait. */
  requestCancellation(): void {
    this.instance.requestCancellation(this);
  }
}

export type { Task };

export class AsyncInstance implements Handles {
  readonly #table = new CanonTable();
  #mem: GuestMemory | undefined;
  #current: Task | undefined;
  #failed: { cause: unknown } | undefined;
  readonly #ready: Task[] = [];
  #draining = false;
  #backpressure = 0;
  readonly #waitingStarts: (() => void)[] = [];

  constructor(
    private readonly failure: TaskFailure,
    private readonly payloads: Payloads,
    /** Runs each entry into the guest (an export call, a callback) within its bounds: an inline instance's budget. */
    private readonly enter: <T>(fn: () => T) => T = (fn) => fn(),
  ) {}

  /** The core instance's memory and allocator, once it is instantiated. */
  attach(memory: WebAssembly.Memory, realloc: ((...args: number[]) => number) | undefined): void {
    this.#mem = new GuestMemory(memory, realloc);
  }

  get mem(): GuestMemory {
    if (!this.#mem) throw new AbiTrap('the guest called the host before its instance was made');
    return this.#mem;
  }

  /** Handles the guest holds (for tests: what a request left behind). */
  get handles(): number {
    return this.#table.size;
  }

  // ---- Handles (abi-types.ts) ----

  own(object: object): number {
    return this.#add(object);
  }

  take(handle: number, resource: HostClass): object {
    return this.#table.remove(handle, resource, resource.name);
  }

  borrow(handle: number, resource: HostClass): object {
    return this.#table.get(handle, resource, resource.name);
  }

  liftReadable(handle: number, type: Carrier): unknown {
    if (type.kind === 'stream') return this.#table.remove(handle, ReadableStreamEnd, 'readable stream end').lift();
    return this.#table.remove(handle, ReadableFuture, 'readable future end').lift();
  }

  lowerReadable(value: unknown, type: Carrier): number {
    const mem = this.mem;
    if (type.kind === 'stream') return this.#add(hostStream(mem, this, type.element, value, () => this.payloads.streamSource(type.payload, value)));
    return this.#add(hostFuture(mem, this, this.payloads.future(type.payload), value as PromiseLike<unknown>));
  }

  #add(item: object): number {
    const handle = this.#table.add(item);
    if (item instanceof Waitable) item.handle = handle;
    return handle;
  }

  // ---- host functions, lowered ----

  /** `fn` as a guest's synchronous import: flat arguments lifted, its result lowered (by pointer if it flattens to more than one value). */
  syncLower(fn: HostFunction): CoreFunction {
    const count = flatCount(fn.params);
    if (count > MAX_FLAT_PARAMS) throw new Error('rt lowers no host function of so many parameters');
    const result = fn.result;
    const byPointer = result !== undefined && flatten(result).length > 1;
    const call = fn.call as (...args: unknown[]) => unknown;
    return (...core) => {
      const value = call(...liftFlat(this.mem, this, fn.params, core.length === count ? core : core.slice(0, count)));
      if (!result) return undefined;
      if (byPointer) {
        store(this.mem, this, result, value, core[count] as number);
        return undefined;
      }
      return lowerFlat(this.mem, this, [result], [value])[0];
    };
  }

  /**
   * `fn` (which returns a promise) as a guest's async-lowered import: it
   * starts at once and the guest gets a subtask, which returns once the
   * result is in its memory.
   */
  asyncLower(fn: HostFunction): CoreFunction {
    const count = flatCount(fn.params);
    if (count > MAX_FLAT_ASYNC_PARAMS) throw new Error('rt lowers no async host function of so many parameters');
    const call = fn.call as (...args: unknown[]) => unknown;
    return (...core) => {
      const args = liftFlat(this.mem, this, fn.params, core.slice(0, count));
      const retptr = core[count] as number | undefined;
      const subtask = new Subtask();
      const handle = this.#add(subtask);
      Promise.resolve(call(...args)).then(
        (value) => {
          if (this.#failed || subtask.resolved()) return;
          try {
            if (fn.result) store(this.mem, this, fn.result, value, retptr!);
            subtask.settle(SUBTASK.RETURNED);
          } catch (e) {
            this.#fail(e);
          }
        },
        (e: unknown) => this.#fail(e),
      );
      return SUBTASK.STARTED | (handle << 4);
    };
  }

  /** `task.return` for an export whose results are `results`: the call's promise resolves with them (passed by pointer when they flatten to more than 16 values). */
  taskReturn(results: readonly AbiType[]): CoreFunction {
    const byPointer = flatCount(results) > MAX_FLAT_PARAMS;
    const tuple = t.tuple(...results);
    return (...core) => {
      const task = this.#running('task.return');
      if (task.returned) throw new AbiTrap('the guest returned a result twice (task.return)');
      task.returned = true;
      task.onReturn(byPointer ? (load(this.mem, this, tuple, core[0] as number) as unknown[]) : liftFlat(this.mem, this, results, core));
      return undefined;
    };
  }

  /**
   * Calls a synchronous export (`lift`) with `args`, lowered as `params`:
   * its result (`result`: by pointer when it flattens to more than one
   * value), then its post-return (`postReturn`), if it has one.
   */
  callSync(lift: CoreFunction, postReturn: CoreFunction | undefined, params: readonly AbiType[], result: AbiType | undefined, args: readonly unknown[]): unknown {
    if (this.#failed) throw this.#failed.cause as Error;
    if (this.#current) throw new AbiTrap('a synchronous export was called while a task ran');
    try {
      const ret = this.enter(() => lift(...this.#lowerArguments(params, args)));
      let value: unknown;
      if (result) value = flatten(result).length > 1 ? load(this.mem, this, result, ret as number) : liftFlat(this.mem, this, [result], [ret!])[0];
      if (postReturn) this.enter(() => postReturn(...(ret === undefined ? [] : [ret])));
      return value;
    } catch (e) {
      this.#fail(e);
      throw e;
    }
  }

  /** An export's arguments as core values: flat, or (over 16 of them) in memory the guest's realloc gives, by pointer. */
  #lowerArguments(params: readonly AbiType[], args: readonly unknown[]): CoreValue[] {
    if (flatCount(params) <= MAX_FLAT_PARAMS) return lowerFlat(this.mem, this, params, args);
    const tuple = t.tuple(...params);
    const { size, align } = layout(tuple);
    const ptr = this.mem.alloc(size, align);
    store(this.mem, this, tuple, args, ptr);
    return [ptr];
  }

  /** The built-ins of `$root` and `[export]$root` (and their names): undefined for one rt's own host does not serve. */
  builtin(name: string): CoreFunction | undefined {
    switch (name) {
      case '[waitable-set-new]':
        return () => this.#add(new WaitableSet());
      case '[waitable-set-drop]':
        return (set) => {
          if (this.#table.get(set as number, WaitableSet, 'waitable set').onReady) throw new AbiTrap('the guest dropped a waitable set a task waits on');
          this.#table.remove(set as number, WaitableSet, 'waitable set');
          return undefined;
        };
      case '[waitable-set-poll]':
        return (set, ptr) => this.#poll(set as number, ptr as number);
      case '[waitable-join]':
        return (w, set) => {
          const waitable = this.#table.get(w as number, Waitable, 'waitable');
          waitable.join(set === 0 ? undefined : this.#table.get(set as number, WaitableSet, 'waitable set'));
          return undefined;
        };
      case '[subtask-drop]':
        return (handle) => {
          if (!this.#table.get(handle as number, Subtask, 'subtask').resolved()) throw new AbiTrap('the guest dropped a subtask that has not returned');
          this.#table.remove(handle as number, Subtask, 'subtask');
          return undefined;
        };
      case '[subtask-cancel]':
      case '[async-lower][subtask-cancel]':
        return (handle) => {
          const subtask = this.#table.get(handle as number, Subtask, 'subtask');
          // rt's subtasks (a timer, a request) stop mattering once cancelled: what they bring later is dropped.
          subtask.settle(SUBTASK.STARTED_CANCELLED);
          subtask.takeEvent();
          return subtask.state;
        };
      case '[context-get-0]':
        return () => this.#running('context.get').context[0];
      case '[context-get-1]':
        return () => this.#running('context.get').context[1];
      case '[context-set-0]':
        return (v) => void (this.#running('context.set').context[0] = v as number);
      case '[context-set-1]':
        return (v) => void (this.#running('context.set').context[1] = v as number);
      case '[backpressure-set]':
        return (on) => this.#setBackpressure(on ? 1 : 0);
      case '[backpressure-inc]':
        return () => this.#setBackpressure(this.#backpressure + 1);
      case '[backpressure-dec]':
        return () => this.#setBackpressure(Math.max(0, this.#backpressure - 1));
      case '[yield]':
        return () => (this.#running('yield').cancel === 'requested' ? 1 : 0);
      case '[task-cancel]':
        return () => {
          const task = this.#running('task.cancel');
          if (task.cancel === 'none' || task.returned) throw new AbiTrap('the guest cancelled a task rt had not asked it to cancel, or one that returned');
          task.returned = true;
          task.onCancelled();
          return undefined;
        };
      default:
        return undefined;
    }
  }

  /** A stream's or future's built-in (`op`, as in `[async-lower][stream-write-N]`) for ones of `type`. */
  copyBuiltin(type: Carrier, op: string): CoreFunction | undefined {
    const table = this.#table;
    if (type.kind === 'stream') {
      switch (op) {
        case 'new':
          return () => {
            const [r, w] = newStream(this.mem, this, type.element);
            return BigInt(this.#add(r)) | (BigInt(this.#add(w)) << 32n);
          };
        case '[async-lower]read':
          return (h, ptr, n) => table.get(h as number, ReadableStreamEnd, 'readable stream end').read(ptr as number, n as number);
        case '[async-lower]write':
          return (h, ptr, n) => {
            const end = table.get(h as number, WritableStreamEnd, 'writable stream end');
            return end.stream.write(end, ptr as number, n as number);
          };
        case 'cancel-read':
        case '[async-lower]cancel-read':
          return (h) => table.get(h as number, ReadableStreamEnd, 'readable stream end').cancelRead();
        case 'cancel-write':
        case '[async-lower]cancel-write':
          return (h) => {
            const end = table.get(h as number, WritableStreamEnd, 'writable stream end');
            return end.stream.cancelWrite(end);
          };
        case 'drop-readable':
          return (h) => void table.remove(h as number, ReadableStreamEnd, 'readable stream end').drop();
        case 'drop-writable':
          return (h) => void table.remove(h as number, WritableStreamEnd, 'writable stream end').stream.dropWriter();
        default:
          return undefined;
      }
    }
    const future = this.payloads.future(type.payload);
    switch (op) {
      case 'new':
        return () => {
          const [r, w] = newFuture(this.mem, this, future);
          return BigInt(this.#add(r)) | (BigInt(this.#add(w)) << 32n);
        };
      case '[async-lower]read':
        return (h, ptr) => table.get(h as number, ReadableFuture, 'readable future end').read(ptr as number);
      case '[async-lower]write':
        return (h, ptr) => {
          const end = table.get(h as number, WritableFuture, 'writable future end');
          return end.future.write(end, ptr as number);
        };
      case 'cancel-read':
      case '[async-lower]cancel-read':
        return (h) => table.get(h as number, ReadableFuture, 'readable future end').cancelRead();
      case 'cancel-write':
      case '[async-lower]cancel-write':
        return (h) => {
          const end = table.get(h as number, WritableFuture, 'writable future end');
          return end.future.cancelWrite(end);
        };
      case 'drop-readable':
        return (h) => void table.remove(h as number, ReadableFuture, 'readable future end').drop();
      case 'drop-writable':
        return (h) => void table.remove(h as number, WritableFuture, 'writable future end').future.dropWriter();
      default:
        return undefined;
    }
  }

  // ---- tasks ----

  /**
   * Calls an async export of the callback form (`lift`, then `callback` for
   * each event) with `args`, lowered as `params`: resolves with its results
   * (task.return), or with undefined if it acknowledged a cancellation. The
   * task is handed to `started` before the guest runs, so that rt may cancel
   * it. A trap in the call itself throws.
   */
  call(lift: CoreFunction, callback: CoreFunction, params: readonly AbiType[], args: readonly unknown[], started?: (task: Task) => void): Promise<unknown[] | undefined> {
    // The trap's own error (a wasm RuntimeError, or what the guest broke), passed on as it came.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    if (this.#failed) return Promise.reject(this.#failed.cause);
    return new Promise((resolve, reject) => {
      const task = new Task(callback, resolve, () => resolve(undefined), this);
      started?.(task);
      const run = () => {
        try {
          const core = this.#lowerArguments(params, args);
          this.#run(task, () => lift(...core), true);
        } catch (e) {
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the trap's own error, as above
          reject(e);
        }
      };
      // With backpressure on, a new call waits until the guest turns it off.
      if (this.#backpressure > 0) this.#waitingStarts.push(run);
      else run();
    });
  }

  requestCancellation(task: Task): void {
    if (task.returned || task.state === 'exited' || task.cancel !== 'none') return;
    task.cancel = 'requested';
    if (task.state === 'waiting') this.#schedule(task);
  }

  #running(what: string): Task {
    const task = this.#current;
    if (!task) throw new AbiTrap(`the guest called ${what} outside a task`);
    return task;
  }

  #setBackpressure(value: number): undefined {
    this.#backpressure = value;
    while (this.#backpressure === 0 && this.#waitingStarts.length > 0) queueMicrotask(this.#waitingStarts.shift()!);
    return undefined;
  }

  /** Runs guest code for `task` and acts on the code it returns; a trap ends the instance (and is thrown on if `rethrow`). */
  #run(task: Task, enter: () => CoreValue | undefined, rethrow: boolean): void {
    if (this.#failed) {
      if (rethrow) throw this.#failed.cause as Error;
      return;
    }
    const outer = this.#current;
    this.#current = task;
    try {
      this.#after(task, this.enter(enter) as number);
    } catch (e) {
      this.#fail(e);
      if (rethrow) throw e;
    } finally {
      this.#current = outer;
    }
  }

  #after(task: Task, code: number): void {
    switch (code & 0xf) {
      case CALLBACK.EXIT:
        task.state = 'exited';
        if (!task.returned) throw new AbiTrap('the task exited without returning its result (task.return)');
        return;
      case CALLBACK.YIELD:
      case CALLBACK.POLL:
        task.state = 'yielding';
        task.polling = (code & 0xf) === CALLBACK.POLL ? this.#table.get(code >>> 4, WaitableSet, 'waitable set') : undefined;
        // A yield lets everything else in first (I/O included), as a host thread would.
        setImmediate(() => this.#resume(task));
        return;
      case CALLBACK.WAIT: {
        const set = this.#table.get(code >>> 4, WaitableSet, 'waitable set');
        if (set.onReady) throw new AbiTrap('two tasks wait on one waitable set');
        task.state = 'waiting';
        task.waitingOn = set;
        set.onReady = () => this.#schedule(task);
        if (set.hasEvent() || task.cancel === 'requested') this.#schedule(task);
        return;
      }
      default:
        throw new AbiTrap(`the guest returned an unknown callback code ${code}`);
    }
  }

  #schedule(task: Task): void {
    if (task.queued) return;
    task.queued = true;
    this.#ready.push(task);
    if (this.#draining) return;
    this.#draining = true;
    queueMicrotask(this.#drain);
  }

  readonly #drain = (): void => {
    while (this.#ready.length > 0) {
      const task = this.#ready.shift()!;
      task.queued = false;
      if (task.state !== 'waiting') continue;
      const set = task.waitingOn!;
      const event = this.#cancelEvent(task) ?? set.takeEvent();
      if (!event) continue;
      set.onReady = undefined;
      task.waitingOn = undefined;
      this.#deliver(task, event);
    }
    this.#draining = false;
  };

  #resume(task: Task): void {
    if (task.state !== 'yielding') return;
    const event = this.#cancelEvent(task) ?? task.polling?.takeEvent() ?? ([EVENT.NONE, 0, 0] as const);
    task.polling = undefined;
    this.#deliver(task, event);
  }

  #cancelEvent(task: Task): Event | undefined {
    if (task.cancel !== 'requested') return undefined;
    task.cancel = 'delivered';
    return [EVENT.TASK_CANCELLED, 0, 0];
  }

  #deliver(task: Task, [code, handle, payload]: Event): void {
    task.state = 'running';
    this.#run(task, () => task.callback(code, handle, payload), false);
  }

  /** waitable-set.poll: the set's next event, written at `ptr` (handle, payload), or NONE. */
  #poll(set: number, ptr: number): number {
    const task = this.#running('waitable-set.poll');
    const event = this.#cancelEvent(task) ?? this.#table.get(set, WaitableSet, 'waitable set').takeEvent() ?? ([EVENT.NONE, 0, 0] as const);
    const mem = this.mem;
    mem.check(ptr, 8);
    mem.view().setUint32(ptr, event[1], true);
    mem.view().setUint32(ptr + 4, event[2], true);
    return event[0];
  }

  #fail(e: unknown): void {
    if (this.#failed) return;
    this.#failed = { cause: e };
    this.failure.fail(e);
  }
}

export { BLOCKED };
