// A service's instance threads within one worker, the placement (place.ts)
// for work that does not run inline (execution.ts): `size` threads, each running one call at a
// time, or up to max_concurrency calls of async functions side by side while
// they wait (`shared`: WASI 0.3, docs/api.md §5.9). Calls wait in one queue here, on the main thread, and go to a thread
// when it is free; so a call whose deadline passes while it waits times out
// without running, one whose client leaves while it waits is abandoned
// without running (its signal aborts), and the queue is bounded (`maxQueue`:
// beyond it a call is refused at once as overloaded). A running call is cut
// off at its deadline by terminating its thread; a fresh thread replaces it.
//
// No call waits behind a thread whose call has run longer than STUCK_MS
// while an extra ("overflow") thread can take it, so one runaway call does
// not stall its service until its deadline. Overflow threads end once they
// have been idle for IDLE_MS.
//
// A streaming call holds its thread until the stream ends (instance-thread.ts):
// its bytes come through a ring of shared memory (byte-ring.ts) to the call's
// sink, which releases them as its reader takes them. Each `next` is bounded
// by the call timeout, the whole stream by its own deadline.
//
// A request to an HTTP handler (`serveHttp`) runs like a call: it holds its
// thread until `handle` returns, and its deadline cuts it off there. Its body
// and response cross on a channel of their own (wasi-host/core/channel.ts), bound
// to the thread's shared cells while the thread has the request.

import { MessageChannel, Worker, type MessagePort, type Transferable } from 'node:worker_threads';
import { RingReader } from '../../byte-ring.js';
import type { Arguments } from './arguments.js';
import { HandleHolder, type HolderResult } from './handle-directory.js';
import type { HandleCall } from './handle-table.js';
import { handlerLink } from './handler-link.js';
import { OutgoingClient, threadCells, type BodyChannel, type HandlerRequest, type LinkedRequests, type MainEnd } from '../wasi-host/index.js';
import type { CallResult, Failure, Framing, StreamControl, StreamOpening, StreamOptions } from './invocation.js';
import type { HandlesOutcome, Outcome, Work } from './work.js';
import { CANCEL_GRACE_MS, type Place, type RunOptions, type RunReport } from './place.js';
import { answersLater } from '../../wit/async-abi.js';
import { WASI_0_3 } from '../../wasi-lines.js';
import { interfaceKey } from '../../wit/interface-key.js';
import type { InstanceOptions, ServiceDescriptor } from '../../service.js';
import { BAD_ARGUMENTS, COMPONENT_ERROR, END, isHandleWork, isStreamAnswer, isWork, OK, ranMs, TRAP, type CallAnswer, type CallRequest, type StreamAnswer, type HandleWork, type CallCancel, type ThreadMessage, type ThreadSpec } from './thread-protocol.js';
import type { CallTrace, OutgoingTrace, Traces } from '../../tracing/traces.js';

/** What a pool's threads are started with; each thread gets cells of its own. */
export type PoolSpec = Omit<ThreadSpec, 'cells'>;

export interface PoolOptions {
  size: number;
  /** Calls that may wait for a thread; more are refused ('overloaded'). */
  maxQueue: number;
  /** Bounds the start of an instance (a start function or init that never ends), and each `next` of an open stream. */
  timeoutMs: number;
  /** Each thread's JS heap limit (runtime.max_thread_heap_mb): a thread that reaches it dies, its call is answered as lost, and a fresh thread replaces it. */
  heapMb: number;
  onOutput: (stream: 'stdout' | 'stderr', text: string, dropped: number) => void;
  /** Serves the guests' requests across links (handler-link.ts), on this thread's outgoing port. */
  linked?: LinkedRequests;
  /** Serves the calls across the service's other links (link-calls.ts), from a port of each thread's. */
  linkCalls?: (port: MessagePort, cells: SharedArrayBuffer) => void;
  /** The worker's traces, when on: its guests' outgoing requests get client spans. */
  traces?: Traces;
}

interface CallBase {
  request: CallRequest;
  /** performance.now() past which the call times out, waiting or running. */
  deadline: number;
  /** Answers the caller with a failure: the call did not return (or the stream did not open). */
  failed: (failure: Failure) => void;
  /** The call's work is over (answered, or its stream ended): the pool counts it no more. */
  finish: () => void;
  /** Told how long the call ran on its thread, when it answered. */
  onRun?: RunReport;
  /** Handle work for this thread alone: the instance whose handles it names. */
  pinned?: PoolThread;
  /** Told which instance ran it, as it answers (a handle call: its new handles live there). */
  ranOn?: (holder: HandleHolder) => void;
  /** An HTTP request's channel, or a call's stream<T> parameter's body: bound to the thread's cells while the thread has the call. */
  channel?: MainEnd | BodyChannel;
  /** Its span (traces on): the parent of its guest's outgoing requests' spans. */
  trace?: CallTrace;
  /** It may share its thread's instance with others like it (an async function's call: instance-thread.ts's `sharing`). */
  shared?: boolean;
  /** The thread a shared call went to (its task is cancelled there if its client leaves). */
  thread?: PoolThread;
  /** When it went to its thread. */
  sentAt?: number;
}

/** A call waiting or running: one that returns a value, or one that opens a stream. */
type Call = (CallBase & { stream?: undefined; returned: (value: unknown) => void }) | (CallBase & { stream: StreamState; opened: (control: StreamControl) => void });

interface StreamState extends StreamOptions {
  /** Aborts when the client leaves: a stream still waiting for a thread is never opened. */
  signal?: AbortSignal;
  open: boolean;
  /** Cancelled (the client left, or the stream's deadline passed): the thread still holds the instance until it has dropped the resource. */
  cancelled: boolean;
  /** Where its bytes come from: made when a thread takes the call. */
  ring?: RingReader;
  /** The items the thread had made when the deadline sweep last looked. */
  items: number;
  /** When the `next` running now must have returned (unless the thread waits for room). */
  nextDeadline: number;
}

const THREAD_URL = new URL('./instance-thread.js', import.meta.url);
/** How often deadlines are checked while calls are pending: a 504 comes at most this late. */
const SWEEP_MS = 25;
const STUCK_MS = 100;
const IDLE_MS = 10_000;
/**
 * Overflow threads per pool at most, beyond its size: what the service's max_instances leaves beyond its
 * pool_size (4 by default). Bounds what runaway calls, and async calls beyond max_concurrency, make a worker hold.
 */
function overflowAtMost(instances: InstanceOptions): number {
  return Math.max(0, instances.maxInstances - instances.poolSize);
}

/** How a running call ends when the pool ends it: cut off at a deadline, or its instance lost. */
type Ending = Extract<Failure, { kind: 'timeout' | 'trap' }>;

const UNLOADED: Ending = { kind: 'trap', code: 'RT_ERR_INSTANCE_LOST', message: 'the service was unloaded' };
const ABANDONED: Failure = { kind: 'abandoned' };
const TIMEOUT: Ending = { kind: 'timeout', what: 'call' };
const NOTHING = () => {};

let nextId = 0;

/** A call's request to its thread: with its stream's framing (a call that answers a stream), and the port of the body it reads (a stream<T> parameter), if any. */
function callRequest(method: number, args: Arguments, framing: Framing | undefined, body: BodyChannel | undefined): CallRequest {
  const id = ++nextId;
  if (body) return [id, method, forThread(args), framing, undefined, body.threadPort];
  return framing === undefined ? [id, method, forThread(args)] : [id, method, forThread(args), framing, undefined];
}

/** One thread of the pool, as the worker's main thread drives it (the code running inside it is instance-thread.ts). */
class PoolThread {
  readonly worker: Worker;
  /** The call running now: the one the thread has, unless it has calls that share it. */
  running: Call | undefined;
  /** Calls that share the instance, waiting on it side by side (at most the service's max_concurrency), by id. */
  readonly shared = new Map<number, Call>();
  /** Shared calls answered already whose tasks were asked to cancel and have not ended yet (cancelShared). */
  readonly #cancelling = new Set<number>();
  /**
   * A shared call's task was asked to cancel and did not end in time (its guest ignores the request), or the
   * thread is to go for another reason: it takes nothing more, and ends once its other calls have answered
   * (never under them).
   */
  retiring = false;
  readonly ready: Promise<void>;
  /** Its instance exists: calls go to it only from then on, so one never counts as stuck while the thread starts. */
  #started = false;
  #lost = false;
  /** When the thread last finished its work (for retiring idle overflow threads). */
  idleSince = performance.now();
  /** Calls it has run (a body that did not decode ran none). */
  #ran = 0;
  /** How the worker reaches the handles of its instance; a new one when the instance is replaced after a trap. */
  holder: HandleHolder;
  /** Shared with the thread: what an HTTP handler's guest sleeps on and reads its response credit from. */
  readonly cells = threadCells();
  /** The thread's outgoing requests (an HTTP handler's), ended with it. */
  #outgoing: OutgoingClient | undefined;
  /** Where the thread's calls across links come from (link-calls.ts), closed with it. */
  #linkPort: MessagePort | undefined;

  constructor(
    spec: PoolSpec,
    private readonly pool: InstancePool,
    private readonly options: PoolOptions,
  ) {
    // An HTTP handler's outgoing requests (and a 0.3 guest's wasi:http/client's) are sent from here, within its allowed_outbound_hosts.
    const outgoing = sendsRequests(spec.descriptor) ? new MessageChannel() : undefined;
    const traces = options.traces;
    const trace = traces && ((method: string, url: string) => this.#outgoingTrace(traces, method, url));
    if (outgoing) this.#outgoing = new OutgoingClient(outgoing.port1, this.cells, spec.descriptor.outboundHosts, { ...(options.linked ? { linked: options.linked } : {}), ...(trace ? { trace } : {}) });
    const links = options.linkCalls ? new MessageChannel() : undefined;
    if (links) options.linkCalls!((this.#linkPort = links.port1), this.cells);
    const ports = [outgoing?.port2, links?.port2].filter((p) => p !== undefined);
    this.worker = new Worker(THREAD_URL, {
      workerData: { ...spec, cells: this.cells, ...(outgoing ? { outgoing: outgoing.port2 } : {}), ...(links ? { links: links.port2 } : {}) } satisfies ThreadSpec,
      ...(ports.length > 0 ? { transferList: ports } : {}),
      resourceLimits: { maxOldGenerationSizeMb: options.heapMb },
    });
    this.holder = this.#newHolder();
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (m: ThreadMessage) => {
        if (Array.isArray(m)) return this.#answer(m);
        if (m.type === 'ready') {
          this.#started = true;
          resolve();
          return pool.dispatch();
        }
        if (m.type === 'output') return this.options.onOutput(m.stream, m.text, m.dropped);
        reject(new Error(m.error));
        this.#lose(`could not create a fresh instance: ${m.error}`);
      });
      this.worker.on('error', (e: NodeJS.ErrnoException) => {
        reject(e);
        this.#lose(e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `its thread reached its JS heap limit (runtime.max_thread_heap_mb: ${options.heapMb} MiB) during this call` : `its thread failed: ${e.message}`);
      });
      this.worker.on('exit', (code) => {
        reject(new Error(`the instance thread exited (${code}) before it was ready`));
        this.#lose(`its thread exited (${code})`);
      });
    });
    // Awaited by the pool when it starts; failures of a replacement surface through the calls.
    this.ready.catch(() => {});
  }

  #newHolder(): HandleHolder {
    return new HandleHolder(
      (call, deadline, signal) => this.pool.work(this, { kind: 'handle-call', call }, deadline, signal),
      async (id) => {
        await this.pool.work(this, { kind: 'handle-drop', id }, performance.now() + this.options.timeoutMs);
      },
    );
  }

  /**
   * The span of an outgoing request the guest makes: a child of the call that made it, when the thread has one call.
   * With several sharing the instance the guest does not say which made it (jco's glue keeps its current task to
   * itself): then a trace of its own.
   */
  #outgoingTrace(traces: Traces, method: string, url: string): OutgoingTrace {
    const call = this.running ?? (this.shared.size === 1 ? this.shared.values().next().value : undefined);
    return call?.trace?.outgoing(method, url) ?? traces.outgoing(method, url);
  }

  /** Whether it is gone (ended, or lost). */
  get lost(): boolean {
    return this.#lost;
  }

  get free(): boolean {
    return this.#taking && this.running === undefined && this.shared.size === 0;
  }

  /** Whether it takes work at all: started, not going, and no task it was asked to cancel still running (a guest busy in one takes nothing else in time). */
  get #taking(): boolean {
    return this.#started && !this.#lost && !this.retiring && this.#cancelling.size === 0;
  }

  /** Whether it takes another shared call: it has only shared ones, fewer than `max`. */
  sharesWith(max: number): boolean {
    return this.#taking && this.running === undefined && this.shared.size < max;
  }

  send(call: Call): void {
    call.sentAt = performance.now();
    if (call.shared) {
      this.shared.set(call.request[0], call);
      call.thread = this;
    } else this.running = call;
    const args = call.request[2];
    call.channel?.bind(this.cells);
    if (call.stream) call.request[4] = this.#ring(call.stream).shared;
    // A large JSON body moves to the thread rather than being copied; an HTTP request's port goes there, and a body's.
    const moved: Transferable[] = args instanceof Uint8Array ? [args.buffer] : isWork(args) && args.kind === 'http-request' ? [args.port] : [];
    if (call.request.length === 6 && call.request[5]) moved.push(call.request[5]);
    this.worker.postMessage(call.request, moved);
  }

  /**
   * Whether a waiting call (`shared`: one that may share) should not wait for it: its running call has run
   * STUCK_MS; or it has all `max` shared calls and the waiting call is one too; or it has shared calls, the
   * waiting call is not one, and the latest of them went to it STUCK_MS ago.
   */
  stuck(now: number, max: number, shared: boolean): boolean {
    if (this.running !== undefined) return now - this.running.sentAt! > STUCK_MS;
    if (this.shared.size === 0 || (shared && this.shared.size < max)) return false;
    // Full of calls that wait side by side: the next goes to another instance at once (docs/api.md §5.9).
    if (shared) return true;
    let latest = 0;
    for (const call of this.shared.values()) latest = Math.max(latest, call.sentAt!);
    return now - latest > STUCK_MS;
  }

  /** Ends the thread; the running call is answered with `failure` (an open stream fails with it). */
  end(failure: Ending): Promise<number> {
    this.#lost = true;
    this.holder.end(failure.kind === 'timeout' ? 'a call on it ran past its deadline and its thread was ended' : failure.message);
    const call = this.running;
    this.running = undefined;
    // What an open stream's thread published goes out before the failure; it may go on writing until it is gone.
    if (call?.stream?.open) call.stream.ring!.pull();
    call?.stream?.ring?.abandon();
    if (call) settle(call, failure);
    for (const shared of this.shared.values()) settle(shared, failure);
    this.shared.clear();
    this.#outgoing?.close();
    this.#linkPort?.close();
    return this.worker.terminate();
  }

  /** The running call's work is over: the thread is free for the next. */
  release(): void {
    this.running = undefined;
    this.idleSince = performance.now();
    this.pool.dispatch();
  }

  /**
   * Answers shared call `id` with `failure` now (its deadline passed, its
   * client left) and asks the guest to cancel its task. A task that has not
   * ended within CANCEL_GRACE_MS (a guest that ignores the request, or is
   * not waiting) retires the thread: it takes nothing more and ends once
   * its other calls have answered, never cut under them.
   */
  cancelShared(id: number, failure: Failure): void {
    const call = this.shared.get(id);
    if (!call) return;
    this.shared.delete(id);
    this.#cancelling.add(id);
    this.worker.postMessage({ type: 'cancel', id } satisfies CallCancel);
    setTimeout(() => {
      if (!this.#cancelling.delete(id)) return;
      this.retiring = true;
      if (this.shared.size === 0 && !this.#lost) this.afterShared();
    }, CANCEL_GRACE_MS).unref();
    settle(call, failure);
  }

  #answer(answer: CallAnswer | StreamAnswer): void {
    // A cancelled task has ended (acknowledged, returned or trapped): its thread serves on.
    if (this.#cancelling.delete(answer[0])) return this.#sharedEnded(answer as CallAnswer);
    const shared = this.shared.get(answer[0]);
    if (shared) return this.#sharedAnswer(shared, answer as CallAnswer);
    const call = this.running;
    if (!call || call.request[0] !== answer[0]) return;
    if (isStreamAnswer(answer)) {
      if (call.stream?.open) this.#streamAnswer(call, call.stream, answer);
      return;
    }
    if (call.stream && answer[1] === OK) {
      call.stream.open = true;
      call.stream.nextDeadline = performance.now() + this.options.timeoutMs;
      call.opened(this.#control(call, call.stream));
      // Its bytes reach the sink from now on, after the opening.
      return call.stream.ring!.pull();
    }
    // A stream that did not open never had its ring written to: it is free for another.
    call.stream?.ring?.end();
    const ms = ranMs(answer);
    if (ms !== undefined) call.onRun?.(ms, this.#ran++ === 0);
    call.ranOn?.(this.holder);
    // The thread replaces an instance that trapped: its handles are gone. Handle work answers OK with what came of it, a
    // trap among it: a call pinned to its handles' thread, and as much one that names none (a constructor, a static).
    const trap = answer[1] === TRAP ? answer[3] : answer[1] === OK && isHandleWork(call.request[2]) ? trappedIn(answer[2]) : undefined;
    if (trap !== undefined) {
      this.holder.end(`a call on it trapped: ${trap}`);
      this.holder = this.#newHolder();
    }
    this.release();
    call.finish();
    if (answer[1] !== OK) call.failed(failureOf(answer));
    else if (!call.stream) call.returned(answer[2]);
  }

  /** A shared call's answer (it answers no stream): it makes room for another. */
  #sharedAnswer(call: Call, answer: CallAnswer): void {
    this.shared.delete(answer[0]);
    const ms = ranMs(answer);
    if (ms !== undefined) call.onRun?.(ms, this.#ran++ === 0);
    call.finish();
    if (answer[1] !== OK) call.failed(failureOf(answer));
    else if (!call.stream) call.returned(answer[2]);
    this.#sharedEnded(answer);
  }

  /** A shared call's task has ended (its answer came): a trap means a new instance, once the calls beside it have answered. */
  #sharedEnded(answer: CallAnswer): void {
    if (answer[1] === TRAP) {
      // Its instance is replaced once the calls in flight on it have answered (each of them the trap's, likely).
      this.holder.end(`a call on it trapped: ${answer[3]}`);
      this.holder = this.#newHolder();
    }
    this.afterShared();
  }

  /** A shared call is over (answered, or cut off at its deadline): a retiring thread ends once none is left; any other takes more. */
  afterShared(): void {
    if (this.shared.size === 0) this.idleSince = performance.now();
    if (this.retiring && this.shared.size === 0) return this.pool.retire(this);
    this.pool.dispatch();
  }

  #streamAnswer(call: Call, stream: StreamState, answer: StreamAnswer): void {
    // Its last bytes are in the ring before its end.
    stream.ring!.end();
    this.release();
    call.finish();
    if (!stream.cancelled) stream.sink.end(answer[1] === END ? undefined : answer[2]);
  }

  /**
   * Ends an open stream early: the thread drops the resource once its
   * current `next` returns (still bounded by its deadline), and acknowledges
   * with END; the sink hears nothing more.
   */
  cancel(call: Call): void {
    const stream = call.stream!;
    if (this.running !== call || stream.cancelled) return;
    stream.cancelled = true;
    // A thread waiting for room acknowledges at once; one in a `next` has the rest of its deadline.
    if (stream.ring!.stalled) stream.nextDeadline = performance.now() + this.options.timeoutMs;
    // The thread calls `next` no more from its next look at the ring, before the message reaches it (a pump runs
    // for a slice of time before it reads its messages, and the bytes still delivered are released at once).
    stream.ring!.close();
    this.worker.postMessage({ type: 'cancel', id: call.request[0] } satisfies CallCancel);
  }

  /** The ring a stream's bytes come through, delivered to its sink (or released at once once it is cancelled). */
  #ring(stream: StreamState): RingReader {
    stream.ring = new RingReader(stream.window, (bytes, items) => (stream.cancelled ? stream.ring!.release(bytes.length) : stream.sink.chunk(bytes, items)));
    return stream.ring;
  }

  #control(call: Call, stream: StreamState): StreamControl {
    return {
      grant: (bytes) => stream.ring!.release(bytes),
      cancel: () => this.cancel(call),
    };
  }

  /** The thread is gone or cannot make an instance: its call fails and the pool replaces it. */
  #lose(reason: string): void {
    if (this.#lost) return;
    void this.end({ kind: 'trap', code: 'RT_ERR_INSTANCE_LOST', message: `the instance was lost: ${reason}` });
    this.pool.replace(this);
  }
}

/** The instance-threads placement (place.ts): work of every kind, side by side. */
export class InstancePool implements Place {
  readonly name = 'threads';
  readonly #threads: PoolThread[];
  /** Beyond `size`, while calls would otherwise wait behind stuck ones. */
  readonly #overflow: PoolThread[] = [];
  /** Calls waiting for a free thread, oldest first. */
  #queue: Call[] = [];
  #sweep: NodeJS.Timeout | undefined;
  #closed = false;
  /** Calls made and not yet answered, and who waits for them all to be. */
  #pending = 0;
  #idleWaiters: (() => void)[] = [];
  /** Calls one instance takes side by side (sidecar max_concurrency): calls of methods that answer later, by method. */
  readonly #maxShared: number;
  readonly #shares: boolean[];

  constructor(
    private readonly spec: PoolSpec,
    private readonly options: PoolOptions,
  ) {
    this.#threads = Array.from({ length: options.size }, () => new PoolThread(spec, this, options));
    this.#maxShared = spec.descriptor.instances.maxConcurrency;
    this.#shares = spec.descriptor.methods.map((m) => answersLater(m.function));
  }

  /**
   * Resolves once every instance exists; rejects (and closes the pool) if one
   * cannot be created, or takes longer than a call may: a start function or
   * init that never ends must not hold up a load or a restart.
   */
  async start(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const tooLong = new Promise<never>((_, reject) => {
      const seconds = this.options.timeoutMs / 1000;
      timer = setTimeout(() => reject(new Error(`the instance was not ready within ${seconds} s (http.request_timeout_seconds): its start function or init ran too long`)), this.options.timeoutMs);
    });
    try {
      await Promise.race([Promise.all(this.#threads.map((t) => t.ready)), tooLong]);
    } catch (e) {
      await this.close();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Every kind of work runs on a thread. */
  takes(): boolean {
    return true;
  }

  /** Calls waiting for a free thread now. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Instance threads alive now, overflow included. */
  get live(): number {
    return this.#closed ? 0 : this.#threads.length + this.#overflow.length;
  }

  /** Runs `work` on the first free thread, by `deadline` (waiting and running alike): what it came to. */
  run<W extends Work>(work: W, deadline: number, options: RunOptions = {}): Promise<Outcome<W>> {
    // Each case's outcome is Outcome<W> for its kind, which TypeScript cannot narrow W to.
    switch (work.kind) {
      case 'call':
        return this.#call(work.method, work.args, deadline, options, work.body) as Promise<Outcome<W>>;
      case 'stream':
        return this.#openStream(work.method, work.args, deadline, work.options, options, work.body) as Promise<Outcome<W>>;
      case 'handles':
        // One that names handles runs on their holder (execution.ts), which comes back here by `work` below.
        return this.#callHandles(work.call, deadline, options) as Promise<Outcome<W>>;
      case 'http':
        return this.#serveHttp(work.request, work.channel, deadline, options) as Promise<Outcome<W>>;
    }
  }

  #call(method: number, args: Arguments, deadline: number, options: RunOptions, body: BodyChannel | undefined): Promise<CallResult> {
    return new Promise((resolve) => {
      const returned = (value: unknown) => resolve({ kind: 'ok', value });
      // An async function's call waits on the instance side by side with others (docs/api.md §5.9), unless it reads a body.
      const shared = !body && this.#maxShared > 1 && this.#shares[method];
      this.#enqueue({ request: callRequest(method, args, undefined, body), deadline, failed: resolve, returned, finish: NOTHING, ...(options.onRun ? { onRun: options.onRun } : {}), ...(body ? { channel: body } : {}), ...(shared ? { shared } : {}) }, options.signal, options.trace);
    });
  }

  /**
   * Handle work on `thread`'s instance (handle-table.ts), after what is
   * queued before it; a handle call's result, or a failure (the thread
   * ended, the deadline passed, the client left).
   */
  work(thread: PoolThread, work: HandleWork, deadline: number, signal?: AbortSignal): Promise<HolderResult> {
    const holder = thread.holder;
    return new Promise((resolve) => {
      const returned = (value: unknown) => resolve((value ?? { kind: 'called', outcome: { kind: 'ok', value: undefined }, issued: [], consumed: [] }) as HolderResult);
      this.#enqueue({ request: [++nextId, -1, work], deadline, failed: resolve, returned, finish: NOTHING, pinned: thread, ranOn: (ran) => ran !== holder && resolve({ kind: 'handle-ended', details: 'the handle has ended: its instance ended' }) }, signal);
    });
  }

  /** A handle call on whichever thread is free first (it names no handles: a constructor); its result, and the instance that ran it. */
  #callHandles(call: HandleCall, deadline: number, options: RunOptions): Promise<HandlesOutcome> {
    return new Promise((resolve) => {
      let holder: HandleHolder | undefined;
      const returned = (value: unknown) => resolve({ result: value as HolderResult, ...(holder ? { holder } : {}) });
      const failed = (failure: Failure) => resolve({ result: failure });
      this.#enqueue({ request: [++nextId, call.method, { kind: 'handle-call', call }], deadline, failed, returned, finish: NOTHING, ranOn: (ran) => (holder = ran), ...(options.onRun ? { onRun: options.onRun } : {}) }, options.signal);
    });
  }

  /**
   * Calls a streaming method: `open` (with the stream's handle) once the
   * method has returned its resource, and from then on its items go to
   * `options.sink` until it ends. The thread stays with the stream until then.
   */
  #openStream(method: number, args: Arguments, deadline: number, options: StreamOptions, run: RunOptions, body: BodyChannel | undefined): Promise<StreamOpening> {
    const stream: StreamState = { ...options, open: false, cancelled: false, items: 0, nextDeadline: deadline };
    return new Promise((resolve) => {
      const opened = (control: StreamControl) => resolve({ kind: 'open', control });
      this.#enqueue({ request: callRequest(method, args, options.framing, body), deadline, failed: resolve, stream, opened, finish: NOTHING, ...(body ? { channel: body } : {}) }, run.signal, run.trace);
    });
  }

  /**
   * Serves one request to an HTTP handler (a fresh instance unless its max_invocations says otherwise): its body and
   * response cross on `channel`; resolves (value null) once `handle` has
   * returned, or with why it did not run or was cut off.
   */
  #serveHttp(request: HandlerRequest, channel: MainEnd, deadline: number, options: RunOptions): Promise<CallResult> {
    // A 0.3 handler's requests share an instance, up to max_concurrency (docs/api.md §5.9).
    const shared = this.#maxShared > 1 && this.spec.descriptor.http?.wasi === WASI_0_3;
    return new Promise((resolve) => {
      const returned = (value: unknown) => resolve({ kind: 'ok', value });
      this.#enqueue({ request: [++nextId, -1, { kind: 'http-request', request, port: channel.threadPort, ring: channel.ring }], deadline, failed: resolve, returned, finish: NOTHING, channel, ...(options.onRun ? { onRun: options.onRun } : {}), ...(shared ? { shared } : {}) }, options.signal, options.trace);
    });
  }

  /** Queues `call` (its `finish` set here), or answers it at once when it cannot be made. */
  #enqueue(call: Call, signal: AbortSignal | undefined, trace?: CallTrace): void {
    if (trace) call.trace = trace;
    if (this.#closed) return call.failed(UNLOADED);
    if (signal?.aborted) return call.failed(ABANDONED);
    if (performance.now() >= call.deadline) return call.failed(TIMEOUT);
    if (this.#queue.length >= this.options.maxQueue && !this.#free()) return call.failed({ kind: 'overloaded' });
    this.#pending++;
    let finished = false;
    call.finish = () => {
      if (finished) return;
      finished = true;
      call.channel?.unbind();
      signal?.removeEventListener('abort', leave);
      if (--this.#pending === 0) {
        for (const wake of this.#idleWaiters.splice(0)) wake();
        clearInterval(this.#sweep);
        this.#sweep = undefined;
        if (this.#overflow.length > 0) setTimeout(() => this.#retireIdle(), IDLE_MS + SWEEP_MS).unref();
      }
    };
    this.#sweep ??= setInterval(() => this.#checkDeadlines(), SWEEP_MS).unref();
    // Its client left: dropped if it still waits; a shared call's task is cancelled; any other call running runs on.
    const leave = () => {
      const waiting = this.#queue.indexOf(call);
      if (waiting === -1) return call.thread?.cancelShared(call.request[0], ABANDONED);
      this.#queue.splice(waiting, 1);
      settle(call, ABANDONED);
    };
    signal?.addEventListener('abort', leave, { once: true });
    this.#queue.push(call);
    this.dispatch();
  }

  /** Hands waiting calls to free threads (handle work to its own thread only); one whose deadline has passed times out without running. */
  dispatch(): void {
    const now = performance.now();
    for (let i = 0; i < this.#queue.length; ) {
      const call = this.#queue[i];
      if (now >= call.deadline || call.pinned?.lost) {
        this.#queue.splice(i, 1);
        settle(call, call.pinned?.lost ? { kind: 'handle-ended', details: `the handle has ended: its instance ended: ${call.pinned.holder.ended ?? 'its thread is gone'}` } : TIMEOUT);
        continue;
      }
      const thread = call.pinned ? (call.pinned.free ? call.pinned : undefined) : call.shared ? this.#sharing() : this.#free();
      if (!thread) {
        if (!call.pinned) return this.#addOverflowIfAllStuck(call.shared === true);
        i++;
        continue;
      }
      this.#queue.splice(i, 1);
      thread.send(call);
    }
  }

  /**
   * Waits for every call made so far (each is bounded by its deadline), then
   * closes. Calls made meanwhile still run: the caller stops making them.
   */
  async drain(): Promise<void> {
    if (this.#pending > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    await this.close();
  }

  /** Ends every thread; calls still running or waiting are answered as lost. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const call of this.#queue.splice(0)) settle(call, UNLOADED);
    await Promise.all([...this.#threads, ...this.#overflow].map((t) => t.end(UNLOADED)));
  }

  /** Swaps a lost thread for a new one. Called by the thread itself. */
  replace(thread: PoolThread): void {
    if (this.#closed) return;
    const index = this.#threads.indexOf(thread);
    if (index === -1) {
      // A lost overflow thread is not replaced: the next stuck call makes another.
      this.#overflow.splice(this.#overflow.indexOf(thread) >>> 0, 1);
    } else {
      this.#threads[index] = new PoolThread(this.spec, this, this.options);
    }
    this.dispatch();
  }

  #free(): PoolThread | undefined {
    for (const t of this.#threads) if (t.free) return t;
    for (const t of this.#overflow) if (t.free) return t;
    return undefined;
  }

  /** A thread for a shared call: one that shares already and has room (so one instance serves many), else a free one. */
  #sharing(): PoolThread | undefined {
    const all = [...this.#threads, ...this.#overflow];
    return all.find((t) => t.shared.size > 0 && t.sharesWith(this.#maxShared)) ?? all.find((t) => t.sharesWith(this.#maxShared));
  }

  /** Ends a retiring thread (instance-pool's PoolThread.retiring), none of its calls left; a fresh one takes its place. */
  retire(thread: PoolThread): void {
    this.#cutOff(thread, TIMEOUT);
  }

  /**
   * A new overflow thread when every thread is held by a call that has run
   * too long, and the bound allows. It takes waiting calls once it has started.
   */
  #addOverflowIfAllStuck(shared: boolean): void {
    const now = performance.now();
    if (this.#overflow.length >= overflowAtMost(this.spec.descriptor.instances) || ![...this.#threads, ...this.#overflow].every((t) => t.stuck(now, this.#maxShared, shared))) return;
    this.#overflow.push(new PoolThread(this.spec, this, this.options));
  }

  /** Ends a thread whose call ran past its deadline; a fresh one takes its place. */
  #cutOff(thread: PoolThread, failure: Ending): void {
    void thread.end(failure);
    this.replace(thread);
  }

  /** A shared call past its deadline is answered at once (504), and its task cancelled (PoolThread.cancelShared). */
  #sharedDeadlines(thread: PoolThread, now: number): void {
    for (const [id, call] of thread.shared) if (now >= call.deadline) thread.cancelShared(id, TIMEOUT);
  }

  #retireIdle(): void {
    const now = performance.now();
    for (const thread of [...this.#overflow]) {
      if (thread.free && now - thread.idleSince > IDLE_MS) {
        this.#overflow.splice(this.#overflow.indexOf(thread), 1);
        void thread.end(UNLOADED);
      }
    }
  }

  #checkDeadlines(): void {
    const now = performance.now();
    for (const thread of [...this.#threads, ...this.#overflow]) {
      this.#sharedDeadlines(thread, now);
      const call = thread.running;
      if (!call) continue;
      const stream = call.stream;
      if (!stream?.open) {
        if (now >= call.deadline) this.#cutOff(thread, TIMEOUT);
        continue;
      }
      // A `next` that runs too long is cut off like a call (the thread made no item since the deadline was set, and does
      // not wait for room); at the stream's deadline the stream is cancelled (its resource dropped).
      const ring = stream.ring!;
      const items = ring.items;
      if (items !== stream.items || (ring.stalled && !stream.cancelled)) {
        stream.items = items;
        stream.nextDeadline = now + this.options.timeoutMs;
      } else if (now >= stream.nextDeadline) {
        this.#cutOff(thread, { kind: 'timeout', what: 'next' });
        continue;
      }
      if (now >= stream.streamDeadline && !stream.cancelled) {
        stream.sink.end({ kind: 'timeout', what: 'stream' });
        thread.cancel(call);
      }
    }
    this.#retireIdle();
    // Expires waiting calls, and moves them to overflow threads when the others are stuck.
    this.dispatch();
  }
}

/** Whether a service's guests send HTTP requests rt carries: an HTTP handler's (0.2's outgoing-handler is in its host), any that imports WASI 0.3's client, or a middleware's to its linked handler. */
function sendsRequests(d: ServiceDescriptor): boolean {
  return d.http !== null || handlerLink(d) !== undefined || d.interface.imports.some((i) => interfaceKey(i.name) === `wasi:http/client@${WASI_0_3}`);
}

/** The trap message inside a handle call's result, if it trapped. */
function trappedIn(value: unknown): string | undefined {
  const result = value as HolderResult | null;
  return result?.kind === 'called' && result.outcome.kind === 'trap' ? result.outcome.message : undefined;
}

/** Arguments as a call request carries them: a large JSON body as its bytes (moved to the thread). */
function forThread(args: Arguments): unknown[] | Uint8Array<ArrayBuffer> {
  return args.kind === 'large-json' ? args.bytes : args.args;
}

/** A call's answer that is not OK, as its failure. */
function failureOf(answer: Exclude<CallAnswer, [number, typeof OK, ...unknown[]]>): Failure {
  switch (answer[1]) {
    case COMPONENT_ERROR:
      return { kind: 'component-error', payload: answer[2] };
    case TRAP:
      return { kind: 'trap', code: answer[2], message: answer[3] };
    case BAD_ARGUMENTS:
      return { kind: answer[2], details: answer[3] };
  }
}

/** Answers a call that did not run to its end with `failure`; a stream already open fails with it instead (a call's deadline there is its `next`'s). */
function settle(call: Call, failure: Failure): void {
  call.finish();
  const stream = call.stream;
  if (!stream?.open) return call.failed(failure);
  if (stream.cancelled) return;
  if (failure.kind === 'timeout') stream.sink.end(failure.what === 'call' ? { kind: 'timeout', what: 'next' } : failure);
  else if (failure.kind === 'trap') stream.sink.end(failure);
}
