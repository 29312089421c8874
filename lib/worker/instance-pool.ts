// A service's instances within one worker: `size` instance threads, each
// running its calls one at a time (so calls never interleave inside an
// instance). A call goes to an idle thread, else to the one with the fewest
// calls waiting. A call running past the timeout is cut off by terminating
// its thread; the calls queued behind it (not started: a thread runs one call
// at a time) move to the thread that replaces it.
//
// No call waits behind one that has run longer than STUCK_MS: it goes to an
// extra ("overflow") instance instead, so one runaway call does not stall
// its service for the length of the timeout. Overflow instances end once
// they have been idle for IDLE_MS.

import { Worker } from 'node:worker_threads';
import { COMPONENT_ERROR, OK, TRAP, type CallAnswer, type CallRequest, type ThreadMessage, type ThreadSpec, type TrapKind } from './thread-protocol.js';

export type CallOutcome =
  | { status: 'ok'; value: unknown }
  | { status: 'component-error'; payload: unknown }
  | { status: 'trap'; kind: TrapKind | 'instance lost'; message: string }
  | { status: 'timeout' };

export interface PoolOptions {
  size: number;
  timeoutMs: number;
  onOutput: (stream: 'stdout' | 'stderr', text: string, dropped: number) => void;
}

interface Call {
  request: CallRequest;
  resolve: (outcome: CallOutcome) => void;
  /** When the call started running: it is at the head of its thread's queue. */
  startedAt: number;
}

const THREAD_URL = new URL('./instance-thread.js', import.meta.url);
/** How often running calls are checked against the timeout: the cut-off comes at most this late. */
const SWEEP_MS = 100;
const STUCK_MS = 100;
const IDLE_MS = 10_000;
/** Overflow instances per pool at most, beyond its size: bounds what runaway calls can make a worker hold. */
const MAX_OVERFLOW = 4;

let nextId = 0;

class InstanceThread {
  readonly worker: Worker;
  /** In call order: the first one is running. */
  readonly calls = new Map<number, Call>();
  readonly ready: Promise<void>;
  #lost = false;
  /** When the thread last finished its work (for retiring idle overflow threads). */
  idleSince = performance.now();

  constructor(spec: ThreadSpec, private readonly pool: InstancePool, private readonly options: PoolOptions) {
    this.worker = new Worker(THREAD_URL, { workerData: spec });
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (m: ThreadMessage) => {
        if (Array.isArray(m)) return this.#answer(m);
        if (m.type === 'ready') return resolve();
        if (m.type === 'output') return options.onOutput(m.stream, m.text, m.dropped);
        reject(new Error(m.error));
        this.#lose(`could not create a fresh instance: ${m.error}`);
      });
      this.worker.on('error', (e) => {
        reject(e);
        this.#lose(`its thread failed: ${e.message}`);
      });
      this.worker.on('exit', (code) => {
        reject(new Error(`the instance thread exited (${code}) before it was ready`));
        this.#lose(`its thread exited (${code})`);
      });
    });
    // Awaited by the pool when it starts; failures of a replacement surface through the calls.
    this.ready.catch(() => {});
  }

  get lost(): boolean {
    return this.#lost;
  }

  send(call: Call): void {
    if (this.calls.size === 0) call.startedAt = performance.now();
    this.calls.set(call.request[0], call);
    this.worker.postMessage(call.request);
  }

  /** The running call's start, if one is running. */
  runningSince(): number | undefined {
    for (const call of this.calls.values()) return call.startedAt;
    return undefined;
  }

  /** Ends the thread; answers the running call with `outcome` and gives back the calls that had not started. */
  cutOff(outcome: CallOutcome): Call[] {
    this.#lost = true;
    void this.worker.terminate();
    const [running, ...waiting] = this.calls.values();
    this.calls.clear();
    running?.resolve(outcome);
    return waiting;
  }

  terminate(): Promise<number> {
    this.#lost = true;
    return this.worker.terminate();
  }

  /** Whether its running call has run so long that nothing should queue behind it. */
  stuck(now: number): boolean {
    const since = this.runningSince();
    return since !== undefined && now - since > STUCK_MS;
  }

  /** Takes back the calls that have not started. */
  takeWaiting(): Call[] {
    const waiting = [...this.calls.values()].slice(1);
    for (const call of waiting) this.calls.delete(call.request[0]);
    return waiting;
  }

  #answer(answer: CallAnswer): void {
    const id = answer[0];
    const call = this.calls.get(id);
    if (!call) return;
    this.calls.delete(id);
    if (this.calls.size === 0) this.idleSince = performance.now();
    for (const next of this.calls.values()) {
      next.startedAt = performance.now();
      break;
    }
    switch (answer[1]) {
      case OK:
        return call.resolve({ status: 'ok', value: answer[2] });
      case COMPONENT_ERROR:
        return call.resolve({ status: 'component-error', payload: answer[2] });
      case TRAP:
        return call.resolve({ status: 'trap', kind: answer[2], message: answer[3] });
    }
  }

  /** The thread is gone or cannot make an instance: its calls fail and the pool replaces it. */
  #lose(reason: string): void {
    if (this.#lost) return;
    this.#lost = true;
    void this.worker.terminate();
    for (const call of this.calls.values()) call.resolve({ status: 'trap', kind: 'instance lost', message: `the instance was lost: ${reason}` });
    this.calls.clear();
    this.pool.replace(this);
  }
}

export class InstancePool {
  readonly #threads: InstanceThread[];
  /** Beyond `size`, while calls would otherwise wait behind stuck ones. */
  readonly #overflow: InstanceThread[] = [];
  readonly #sweep: NodeJS.Timeout;
  #closed = false;
  /** Calls made and not yet answered, and who waits for them all to be. */
  #pending = 0;
  #idleWaiters: (() => void)[] = [];

  constructor(private readonly spec: ThreadSpec, private readonly options: PoolOptions) {
    this.#threads = Array.from({ length: options.size }, () => new InstanceThread(spec, this, options));
    this.#sweep = setInterval(() => this.#cutOffRunaways(), SWEEP_MS).unref();
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

  /** Instance threads alive now, overflow included. */
  get live(): number {
    return this.#closed ? 0 : this.#threads.length + this.#overflow.length;
  }

  call(method: number, args: unknown[]): Promise<CallOutcome> {
    return new Promise((resolve) => {
      if (this.#closed) return resolve({ status: 'trap', kind: 'instance lost', message: 'the service was unloaded' });
      this.#pending++;
      let settled = false;
      const answered = (outcome: CallOutcome) => {
        if (settled) return;
        settled = true;
        if (--this.#pending === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
        resolve(outcome);
      };
      this.#pick().send({ request: [++nextId, method, args], resolve: answered, startedAt: 0 });
    });
  }

  /**
   * Waits for every call made so far (each is bounded by the timeout), then
   * closes. Calls made meanwhile still run: the caller stops making them.
   */
  async drain(): Promise<void> {
    if (this.#pending > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    await this.close();
  }

  /** Ends every thread; calls still running are answered as lost. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweep);
    await Promise.all(
      [...this.#threads, ...this.#overflow].map((t) => {
        for (const call of t.cutOff({ status: 'trap', kind: 'instance lost', message: 'the service was unloaded' })) {
          call.resolve({ status: 'trap', kind: 'instance lost', message: 'the service was unloaded' });
        }
        return t.terminate();
      }),
    );
  }

  /** Swaps a lost thread for a new one. Called by the thread itself. */
  replace(thread: InstanceThread): InstanceThread | undefined {
    if (this.#closed) return undefined;
    const index = this.#threads.indexOf(thread);
    if (index === -1) {
      // A lost overflow thread is not replaced: the next stuck call makes another.
      this.#overflow.splice(this.#overflow.indexOf(thread) >>> 0, 1);
      return undefined;
    }
    const fresh = new InstanceThread(this.spec, this, this.options);
    this.#threads[index] = fresh;
    return fresh;
  }

  #pick(): InstanceThread {
    const now = performance.now();
    let best: InstanceThread | undefined;
    for (const t of [...this.#threads, ...this.#overflow]) {
      if (t.calls.size === 0) return t;
      if (!t.stuck(now) && (!best || t.calls.size < best.calls.size)) best = t;
    }
    return best ?? this.#addOverflow() ?? this.#threads[0]!;
  }

  #addOverflow(): InstanceThread | undefined {
    if (this.#overflow.length >= MAX_OVERFLOW) return undefined;
    const thread = new InstanceThread(this.spec, this, this.options);
    this.#overflow.push(thread);
    return thread;
  }

  #cutOffRunaways(): void {
    const now = performance.now();
    for (const thread of [...this.#threads, ...this.#overflow]) {
      const since = thread.runningSince();
      if (since !== undefined && now - since >= this.options.timeoutMs) {
        const waiting = thread.cutOff({ status: 'timeout' });
        const fresh = this.replace(thread);
        for (const call of waiting) (fresh ?? this.#pick()).send(call);
      } else if (thread.stuck(now) && thread.calls.size > 1) {
        for (const call of thread.takeWaiting()) this.#pick().send(call);
      }
    }
    for (const thread of [...this.#overflow]) {
      if (thread.calls.size === 0 && now - thread.idleSince > IDLE_MS) {
        this.#overflow.splice(this.#overflow.indexOf(thread), 1);
        void thread.terminate();
      }
    }
  }
}
