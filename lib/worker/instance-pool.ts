// A service's instance threads within one worker, for services that do not
// run inline (execution.ts): `size` threads, each running one call at a
// time. Calls wait in one queue here, on the main thread, and go to a thread
// when it is free; so a call whose deadline passes while it waits is answered
// 504 without running, and the queue is bounded (`maxQueue`: beyond it a
// call is refused at once, and the service answers 503). A running call is
// cut off at its deadline by terminating its thread; a fresh thread replaces it.
//
// No call waits behind a thread whose call has run longer than STUCK_MS
// while an extra ("overflow") thread can take it, so one runaway call does
// not stall its service until its deadline. Overflow threads end once they
// have been idle for IDLE_MS.

import { Worker } from 'node:worker_threads';
import type { CallOutcome } from './component-instance.js';
import { COMPONENT_ERROR, OK, TRAP, type CallAnswer, type CallRequest, type ThreadMessage, type ThreadSpec } from './thread-protocol.js';

export interface PoolOptions {
  size: number;
  /** Calls that may wait for a thread; more are refused ('overloaded'). */
  maxQueue: number;
  /** Bounds the start of an instance (a start function or init that never ends). */
  timeoutMs: number;
  onOutput: (stream: 'stdout' | 'stderr', text: string, dropped: number) => void;
}

interface Call {
  request: CallRequest;
  /** performance.now() past which the call is answered 504, waiting or running. */
  deadline: number;
  resolve: (outcome: CallOutcome) => void;
}

const THREAD_URL = new URL('./instance-thread.js', import.meta.url);
/** How often deadlines are checked while calls are pending: a 504 comes at most this late. */
const SWEEP_MS = 25;
const STUCK_MS = 100;
const IDLE_MS = 10_000;
/** Overflow threads per pool at most, beyond its size: bounds what runaway calls can make a worker hold. */
const MAX_OVERFLOW = 4;
const UNLOADED: CallOutcome = { status: 'trap', kind: 'instance lost', message: 'the service was unloaded' };

let nextId = 0;

class InstanceThread {
  readonly worker: Worker;
  /** The call running now, and since when. */
  running: Call | undefined;
  startedAt = 0;
  readonly ready: Promise<void>;
  /** Its instance exists: calls go to it only from then on, so one never counts as stuck while the thread starts. */
  #started = false;
  #lost = false;
  /** When the thread last finished its work (for retiring idle overflow threads). */
  idleSince = performance.now();

  constructor(spec: ThreadSpec, private readonly pool: InstancePool, options: PoolOptions) {
    this.worker = new Worker(THREAD_URL, { workerData: spec });
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (m: ThreadMessage) => {
        if (Array.isArray(m)) return this.#answer(m);
        if (m.type === 'ready') {
          this.#started = true;
          resolve();
          return pool.dispatch();
        }
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

  get free(): boolean {
    return this.#started && !this.#lost && this.running === undefined;
  }

  send(call: Call): void {
    this.running = call;
    this.startedAt = performance.now();
    this.worker.postMessage(call.request);
  }

  /** Whether its running call has run so long that nothing should wait behind it. */
  stuck(now: number): boolean {
    return this.running !== undefined && now - this.startedAt > STUCK_MS;
  }

  /** Ends the thread; the running call is answered with `outcome`. */
  end(outcome: CallOutcome): Promise<number> {
    this.#lost = true;
    const call = this.running;
    this.running = undefined;
    call?.resolve(outcome);
    return this.worker.terminate();
  }

  #answer(answer: CallAnswer): void {
    const call = this.running;
    if (!call || call.request[0] !== answer[0]) return;
    this.running = undefined;
    this.idleSince = performance.now();
    switch (answer[1]) {
      case OK:
        call.resolve({ status: 'ok', value: answer[2] });
        break;
      case COMPONENT_ERROR:
        call.resolve({ status: 'component-error', payload: answer[2] });
        break;
      case TRAP:
        call.resolve({ status: 'trap', kind: answer[2], message: answer[3] });
        break;
    }
    this.pool.dispatch();
  }

  /** The thread is gone or cannot make an instance: its call fails and the pool replaces it. */
  #lose(reason: string): void {
    if (this.#lost) return;
    void this.end({ status: 'trap', kind: 'instance lost', message: `the instance was lost: ${reason}` });
    this.pool.replace(this);
  }
}

export class InstancePool {
  readonly #threads: InstanceThread[];
  /** Beyond `size`, while calls would otherwise wait behind stuck ones. */
  readonly #overflow: InstanceThread[] = [];
  /** Calls waiting for a free thread, oldest first. */
  #queue: Call[] = [];
  #sweep: NodeJS.Timeout | undefined;
  #closed = false;
  /** Calls made and not yet answered, and who waits for them all to be. */
  #pending = 0;
  #idleWaiters: (() => void)[] = [];

  constructor(
    private readonly spec: ThreadSpec,
    private readonly options: PoolOptions,
  ) {
    this.#threads = Array.from({ length: options.size }, () => new InstanceThread(spec, this, options));
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

  call(method: number, args: unknown[], deadline: number): Promise<CallOutcome> {
    if (this.#closed) return Promise.resolve(UNLOADED);
    if (performance.now() >= deadline) return Promise.resolve({ status: 'timeout' });
    if (this.#queue.length >= this.options.maxQueue && !this.#free()) return Promise.resolve({ status: 'overloaded' });
    return new Promise((resolve) => {
      this.#pending++;
      const answered = (outcome: CallOutcome) => {
        if (--this.#pending === 0) {
          for (const wake of this.#idleWaiters.splice(0)) wake();
          clearInterval(this.#sweep);
          this.#sweep = undefined;
          if (this.#overflow.length > 0) setTimeout(() => this.#retireIdle(), IDLE_MS + SWEEP_MS).unref();
        }
        resolve(outcome);
      };
      this.#sweep ??= setInterval(() => this.#checkDeadlines(), SWEEP_MS).unref();
      this.#queue.push({ request: [++nextId, method, args], deadline, resolve: answered });
      this.dispatch();
    });
  }

  /** Hands waiting calls to free threads; one whose deadline has passed is answered 504 without running. */
  dispatch(): void {
    while (this.#queue.length > 0) {
      const call = this.#queue[0]!;
      if (performance.now() >= call.deadline) {
        this.#queue.shift();
        call.resolve({ status: 'timeout' });
        continue;
      }
      const thread = this.#free();
      if (!thread) return this.#addOverflowIfAllStuck();
      this.#queue.shift();
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
    for (const call of this.#queue.splice(0)) call.resolve(UNLOADED);
    await Promise.all([...this.#threads, ...this.#overflow].map((t) => t.end(UNLOADED)));
  }

  /** Swaps a lost thread for a new one. Called by the thread itself. */
  replace(thread: InstanceThread): void {
    if (this.#closed) return;
    const index = this.#threads.indexOf(thread);
    if (index === -1) {
      // A lost overflow thread is not replaced: the next stuck call makes another.
      this.#overflow.splice(this.#overflow.indexOf(thread) >>> 0, 1);
    } else {
      this.#threads[index] = new InstanceThread(this.spec, this, this.options);
    }
    this.dispatch();
  }

  #free(): InstanceThread | undefined {
    for (const t of this.#threads) if (t.free) return t;
    for (const t of this.#overflow) if (t.free) return t;
    return undefined;
  }

  /**
   * A new overflow thread when every thread is held by a call that has run
   * too long, and the bound allows. It takes waiting calls once it has started.
   */
  #addOverflowIfAllStuck(): void {
    const now = performance.now();
    if (this.#overflow.length >= MAX_OVERFLOW || ![...this.#threads, ...this.#overflow].every((t) => t.stuck(now))) return;
    this.#overflow.push(new InstanceThread(this.spec, this, this.options));
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
      if (thread.running && now >= thread.running.deadline) {
        void thread.end({ status: 'timeout' });
        this.replace(thread);
      }
    }
    this.#retireIdle();
    // Expires waiting calls, and moves them to overflow threads when the others are stuck.
    this.dispatch();
  }
}
