// A WASI 0.3 handler on the worker's main thread (a placement: place.ts):
// its requests side by side in one instance of rt's own host of the async
// ABI (own-host.ts), up to the service's max_concurrency, with no thread
// hop: each request's body and response pass on the main thread
// (wasi-host/core/local-channel.ts). A 0.3 guest runs only in short turns —
// the export call, then a callback per event — and waits between them
// holding nothing, so the main thread serves everything else meanwhile.
//
// Every turn is held to the inline budget by the fuel check of the
// instrumented core modules. A guest that runs past it is interrupted: its
// instance ends with the requests on it (answered as a trap, as on a thread
// whose runaway is cut off), and the service moves to instance threads
// (`onOverrun`), where a runaway holds only its own thread. A trap ends the
// instance too; the next request gets a fresh one. A request past its
// deadline, or whose client left, has its task cancelled; one whose guest
// ignores that retires the instance once the requests beside it are done.

import { ComponentInstance, errorText, type InstanceSpec } from './component-instance.js';
import { budget, FUEL_IMPORTS, isInterrupt } from './inline-instance.js';
import type { CallResult } from './invocation.js';
import { respond } from './p3-exchange.js';
import { CANCEL_GRACE_MS, type Place, type Ran, type RunOptions } from './place.js';
import { HARD_BUDGETS } from './inline-budget.js';
import type { Work } from './work.js';
import { LocalEnd, p3, type HandlerRequest, type MainEnd } from '../wasi-host/index.js';


export interface InlineHandlerOptions {
  /** Requests one instance serves at once (sidecar max_concurrency); more go to instance threads. */
  maxConcurrency: number;
  /** Requests an instance serves in all before new ones get a fresh instance (sidecar max_invocations); 0: no limit. */
  recycleAfter: number;
  /** How long one turn of the guest may run (ms). */
  budgetMs: number;
  /** How long instantiating may hold the main thread (ms). */
  startBudgetMs: number;
  /** A turn ran past its budget: the service belongs on threads. */
  onOverrun: (detail: string) => void;
}

export class InlineHandlerPlace implements Place {
  readonly name = 'inline';
  readonly waiting = 0;
  readonly #spec: InstanceSpec;
  #instance: ComponentInstance | undefined;
  #fresh: Promise<ComponentInstance | undefined> | undefined;
  #inFlight = 0;
  /** Requests the current instance has taken. */
  #served = 0;
  #closed = false;
  /** A turn of the guest was interrupted: the service is on its way to threads. */
  #overran = false;
  readonly #idle: (() => void)[] = [];

  private constructor(
    spec: InstanceSpec,
    private readonly options: InlineHandlerOptions,
  ) {
    const bounded = <T>(fn: () => T) => {
      const end = performance.now() + options.startBudgetMs;
      return budget.within(end, end, fn);
    };
    const guestEntry = <T>(fn: () => T): T => {
      const now = performance.now();
      try {
        return budget.within(now + options.budgetMs, now + HARD_BUDGETS * options.budgetMs, fn);
      } catch (e) {
        if (isInterrupt(e)) this.#overran = true;
        throw e;
      }
    };
    this.#spec = { ...spec, coreImports: FUEL_IMPORTS, isInterrupt, bounded, guestEntry };
  }

  /** The place with its first instance; undefined when instantiating ran past the start budget, or rt's own host does not serve the component (jco's glue runs on threads only). */
  static async start(spec: InstanceSpec, options: InlineHandlerOptions): Promise<InlineHandlerPlace | undefined> {
    const place = new InlineHandlerPlace(spec, options);
    return (await place.#replacement()) ? place : undefined;
  }

  get live(): number {
    return this.#instance ? 1 : 0;
  }

  takes(work: Work): boolean {
    return work.kind === 'http' && !this.#closed && !this.#overran && this.#inFlight < this.options.maxConcurrency;
  }

  async run<W extends Work>(work: W, deadline: number, options: RunOptions = {}): Promise<Ran<W>> {
    if (work.kind !== 'http') throw new Error(`${work.kind} work never runs in an inline handler place`);
    // Each outcome is Ran<W> for an http request (a CallResult), which TypeScript cannot narrow W to.
    return (await this.#request(work.request, work.channel, deadline, options.signal)) as Ran<W>;
  }

  async #request(request: HandlerRequest, channel: MainEnd, deadline: number, signal: AbortSignal | undefined): Promise<CallResult> {
    if (signal?.aborted) return { kind: 'abandoned' };
    this.#inFlight++;
    try {
      const instance = this.#instance ?? (await this.#replacement());
      if (!instance) return { kind: 'trap', code: 'RT_ERR_INSTANCE_LOST', message: 'could not create a fresh instance of the handler' };
      if (performance.now() >= deadline) return { kind: 'timeout', what: 'call' };
      // At its max_invocations, it serves the requests it has and takes no more.
      if (this.options.recycleAfter > 0 && ++this.#served >= this.options.recycleAfter) this.#retire(instance);
      return await this.#serve(instance, request, channel, deadline, signal);
    } finally {
      if (--this.#inFlight === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }

  /** Serves the request on `instance`: ok once the exchange is over, or a timeout at the deadline (the task is cancelled, the exchange winds up on its own). */
  async #serve(instance: ComponentInstance, request: HandlerRequest, channel: MainEnd, deadline: number, signal: AbortSignal | undefined): Promise<CallResult> {
    const end = channel.takeLocally((listener, window) => new LocalEnd(listener, window));
    const exchange = new p3.HandlerExchange(request, end.body, end.sink, end.waker);
    const [called, task] = instance.started(() => instance.handle(exchange.request));
    const served = { done: false };
    const cancel = () => {
      if (!task || task.cancelled) return;
      task.cancel();
      // A guest that does not wind its task up leaves the instance to the requests beside it.
      setTimeout(() => served.done || this.#retire(instance), CANCEL_GRACE_MS).unref();
    };
    signal?.addEventListener('abort', cancel, { once: true });
    const exchanged = (async () => {
      const { outcome, trap } = await respond(instance, exchange, called.kind === 'ok' ? await instance.settled(called.value, task) : called);
      served.done = true;
      if (trap) this.#trapped(instance, trap.message);
      end.sink.settled(trap ? { outcome, trap: { code: trap.code, message: trap.message } } : { outcome });
    })();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - performance.now()))));
    try {
      if ((await Promise.race([exchanged, timedOut])) !== 'timeout') return { kind: 'ok', value: null };
      cancel();
      return { kind: 'timeout', what: 'call' };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
    }
  }

  /** The instance trapped (or was interrupted): the next request gets a fresh one; an interrupt moves the service to threads. */
  #trapped(instance: ComponentInstance, message: string): void {
    const first = this.#instance === instance;
    this.#retire(instance);
    if (first && this.#overran) this.options.onOverrun(`a turn of its guest ran past the inline budget of ${this.options.budgetMs} ms (${message})`);
  }

  /** New requests get a fresh instance; the requests on this one finish there. */
  #retire(instance: ComponentInstance): void {
    if (this.#instance === instance) this.#instance = undefined;
  }

  #replacement(): Promise<ComponentInstance | undefined> {
    this.#fresh ??= ComponentInstance.create(this.#spec)
      .then(
        (instance) => {
          // The glue's instance cannot run inline (it waits through JSPI, unbudgeted): this place is not for it.
          if (instance.host !== 'rt') return undefined;
          this.#instance = instance;
          this.#served = 0;
          return instance;
        },
        (e: unknown) => {
          if (isInterrupt(e)) return undefined;
          throw new Error(`could not create the handler's instance: ${errorText(e)}`, { cause: e });
        },
      )
      .finally(() => (this.#fresh = undefined));
    return this.#fresh;
  }

  /** Ends the instance once the requests it serves are done. */
  async drain(): Promise<void> {
    if (this.#inFlight > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
    await this.close();
  }

  close(): Promise<void> {
    this.#closed = true;
    this.#instance = undefined;
    return Promise.resolve();
  }
}
