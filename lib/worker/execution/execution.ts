// Where a service's calls run. By default inline, on the worker's main
// thread: no thread hop, so a call costs about what the export itself does
// (inline-instance.ts). Some services can never run inline: their core
// modules could not be fuel-instrumented, they ask for instances side by side
// (pool_size > 1: inline calls run one after another), they stream (a stream
// holds its instance), or they hold grants whose side effects a replayed call
// would repeat (allowed_paths, allowed_outbound_hosts). The others move to
// instance threads (instance-pool.ts), and back, as placement.ts decides:
// - a call runs past the inline budget (`budgetMs`): it is interrupted and made again on a
//   thread with the time left before its deadline (the interrupted attempt
//   had no effect outside its instance: no grants, output dropped), and the
//   service follows if the call takes long there too (a call that overran
//   because the worker was paused takes its usual time on the thread);
// - its calls, judged in blocks on wall and CPU time, take more than
//   INLINE_AVERAGE_MS each: such work holds the main thread from every other
//   request, and runs faster on a thread, where modules are not instrumented;
// - a call brings a JSON body too large to decode on the main thread
//   (arguments.ts): the thread that makes the call decodes it;
// - after a probation on threads, it comes back inline to be judged again.
// Each move is logged at warn and reported (`onMove`: the metric and the
// listing of every worker's placement). docs/architecture.md ("Execution
// model") has the measurements behind this. The instances and the clocks are
// passed in (`Instances`, `Clocks`), so the policy's moves are tested with
// fakes of both (test/unit/execution.test.ts).

import type { Logger } from 'pino';
import type { Placement, ServiceDescriptor } from '../../service.js';
import type { Arguments } from './arguments.js';
import { compileCoreModules } from './compile-core-modules.js';
import { SYSTEM_CLOCKS, type Clocks } from './inline-budget.js';
import { InlineInstance, type InlineOutcome } from './inline-instance.js';
import { inlineTurn } from './inline-turn.js';
import { instanceSpec } from './instance-spec.js';
import { InstancePool, type CallOptions } from './instance-pool.js';
import type { HandleHolder, HolderResult } from './handle-directory.js';
import type { HandleIssuer } from './handle-ids.js';
import type { HandleCall } from './handle-table.js';
import type { CallResult } from './invocation.js';
import type { HandlesOutcome, Outcome, Work } from './work.js';
import { PlacementPolicy, type Move, type PlacementSettings, type ThreadRun } from './placement.js';

/** How many inline budgets a call may hold the main thread at all, running or not (the OS may not schedule the worker for a while). */
const HARD_BUDGETS = 4;
/** How long instantiating inline (start functions, init) may take before the service starts on threads instead. */
export const START_BUDGET_MS = 250;
/**
 * How long a service back inline keeps its instance threads: a service that
 * was moved for its nature (every call over the budget) goes back there at
 * its first call, and a thread start costs it seconds on a busy machine for
 * a componentize-js component.
 */
const WARM_POOL_MS = 60_000;

/** What Execution needs of an inline instance (inline-instance.ts). */
export interface InlineCalls {
  call(index: number, args: unknown[], budgetEnd: number, hardEnd: number): Promise<InlineOutcome>;
  /** A call that involves handles, on `holder`'s instance if given (handle-table.ts); bounded by its deadline alone. */
  callHandles(call: HandleCall, deadline: number, holder?: HandleHolder): Promise<{ result: HolderResult | { kind: 'interrupted' }; holder: HandleHolder }>;
  /** Its instance holds live handles, which an interrupt would end. */
  readonly holdsHandles: boolean;
  /** Ends the instance and its handles. */
  close(reason: string): void;
}

/** What Execution needs of a service's instance threads (instance-pool.ts). */
export interface ThreadCalls {
  readonly live: number;
  /** Calls waiting for a free thread. */
  readonly waiting: number;
  start(): Promise<void>;
  /** Runs `work` of any kind on a thread (a call that involves handles but names none, a constructor, on any thread). */
  run<W extends Work>(work: W, deadline: number, options: CallOptions): Promise<Outcome<W>>;
  drain(): Promise<void>;
  close(): Promise<void>;
}

/** Where a service's instances come from: its component (`componentInstances`), or a test's fakes. */
export interface Instances {
  /** Why the service can never run inline, if it cannot. */
  inlineRefusal: string | undefined;
  /** A new inline instance whose calls `measure` times; undefined when instantiating it ran past the start budget. */
  inline(measure: <T>(run: () => T) => T): Promise<InlineCalls | undefined>;
  /** New instance threads (not started): the service's pool_size of them, or `size`. */
  threads(size?: number): Promise<ThreadCalls>;
}

/** The instance of one named handle scope (docs/api.md §5.1.2): its own, inline when the service runs inline, else on a thread of its own. */
export interface ScopeInstance {
  /** A call that makes handles from none, on the scope's instance: its result, and the holder that now holds them. */
  callHandles(call: HandleCall, deadline: number, signal?: AbortSignal): Promise<{ result: HolderResult; holder?: HandleHolder }>;
  /** Ends the instance once what was asked of it has run. */
  close(reason: string): void;
}

export interface ExecutionOptions {
  log: Logger;
  /** The service has moved (placement.ts), after it is in its new place: for the metric and the listing. */
  onMove?: (move: Move) => void;
  /** The placement policy's settings (tests shorten the probation). */
  placement?: PlacementSettings;
  /** The clocks calls are timed and deadlines read by (tests pass their own). */
  clocks?: Clocks;
  /** Whether the service holds live handles: a pool left behind by a move back inline is then kept, for them. */
  holdsHandles?: () => boolean;
}

export class Execution {
  #inline: InlineCalls | undefined;
  #threads: Promise<ThreadCalls> | undefined;
  /** The pool, once #threads has made it. */
  #pool: ThreadCalls | undefined;
  /** Absent for a service that can never run inline. */
  #policy: PlacementPolicy | undefined;
  /** Pools left behind by a move back inline, draining. */
  readonly #retired = new Set<Promise<void>>();
  /** A move back inline under way (its instance starting). */
  #returning = false;
  #draining = false;
  readonly #clocks: Clocks;

  private constructor(
    private readonly instances: Instances,
    private readonly options: ExecutionOptions,
  ) {
    this.#clocks = options.clocks ?? SYSTEM_CLOCKS;
    if (!instances.inlineRefusal) this.#policy = new PlacementPolicy(this.#clocks, options.placement);
  }

  /** Starts the service's first instance(s); rejects when they cannot be created. */
  static async start(instances: Instances, options: ExecutionOptions): Promise<Execution> {
    const execution = new Execution(instances, options);
    if (execution.#policy) execution.#inline = await execution.#startInline();
    if (!execution.#inline) {
      // Slow to instantiate is the component's nature, not a passing state: no probation.
      execution.#policy = undefined;
      options.log.debug({ reason: instances.inlineRefusal ?? `instantiating it took longer than ${START_BUDGET_MS} ms` }, 'service runs on instance threads');
      await (await execution.#startThreads()).start();
    }
    return execution;
  }

  get placement(): Placement {
    return this.#inline ? 'inline' : 'threads';
  }

  /** Instances alive in this worker. */
  get live(): number {
    return (this.#inline ? 1 : 0) + (this.#pool?.live ?? 0);
  }

  /** Calls waiting for an instance thread in this worker (inline calls never wait for an instance). */
  get waiting(): number {
    return this.#pool?.waiting ?? 0;
  }

  /**
   * Runs `work`: where the service's placement says for the kinds that can
   * run inline (a call, a call that involves handles), on instance threads
   * for the others (a stream holds its instance until it ends, a handler's
   * guest blocks while its body arrives: only a thread can do either).
   * `deadline` (clock time) bounds waiting and running alike; `signal`
   * aborts when its client leaves.
   */
  run<W extends Work>(work: W, deadline: number, signal?: AbortSignal): Promise<Outcome<W>> {
    // Each case's outcome is Outcome<W> for its kind, which TypeScript cannot narrow W to.
    switch (work.kind) {
      case 'call':
        return this.#call(work.method, work.args, deadline, signal) as Promise<Outcome<W>>;
      case 'handles':
        return this.#callHandles(work.call, deadline, signal, work.holder) as Promise<Outcome<W>>;
      default:
        return this.#onPool((pool) => pool.run(work, deadline, signal ? { signal } : {}));
    }
  }

  async #call(index: number, args: Arguments, deadline: number, signal?: AbortSignal): Promise<CallResult> {
    const inline = this.#inline;
    const policy = this.#policy;
    if (inline && policy && args.kind === 'arguments') {
      // Made now, it runs in this instance even if the service drains or moves meanwhile.
      const started = await this.#inlineStart(deadline, signal);
      if (typeof started !== 'number') return started;
      const { budgetMs } = policy.settings;
      // An interrupt would take the instance's handles with it: such a call is bounded by its deadline alone.
      const [budgetEnd, hardEnd] = inline.holdsHandles ? [deadline, deadline] : [Math.min(started + budgetMs, deadline), Math.min(started + HARD_BUDGETS * budgetMs, deadline)];
      const outcome = await inline.call(index, args.args, budgetEnd, hardEnd);
      if (outcome.kind !== 'interrupted') {
        this.#moved(policy.verdict());
        return outcome;
      }
      const now = this.#clocks.now();
      if (now >= deadline) {
        // Cut off by its deadline: moved only if it also used the whole inline budget.
        if (now - started >= budgetMs) this.#moved(policy.overran(undefined, 'a call ran to its deadline'));
        return { kind: 'timeout', what: 'call' };
      }
      // Made again on a thread; the service follows if the call takes long there too.
      let ran: ThreadRun | undefined;
      const again = await this.#onThreads(index, args, deadline, { signal, onRun: (ms, first) => (ran = { ms, first }) });
      if (this.#inline !== inline) return again;
      const move = policy.overran(ran, `a call ran past the inline budget of ${budgetMs} ms and was made again on a thread`);
      if (move) this.#moved(move);
      else this.options.log.debug({ ms: ran?.ms }, 'a call ran past the inline budget, but not on a thread: the service stays inline');
      return again;
    } else if (inline && policy && args.kind === 'large-json') {
      this.#moved(policy.leave('large_body', `a request's JSON body of ${args.bytes.byteLength} bytes is decoded there (arguments.ts: large bodies never are on the main thread)`));
    } else if (policy && !this.#returning && !this.#draining) {
      this.#moved(policy.mayReturn());
    }
    return this.#onThreads(index, args, deadline, { signal });
  }

  /** Waits for the inline turn: when the call starts, or why it is not made (its client left, its deadline passed). */
  async #inlineStart(deadline: number, signal: AbortSignal | undefined): Promise<number | { kind: 'abandoned' } | { kind: 'timeout'; what: 'call' }> {
    await inlineTurn();
    if (signal?.aborted) return { kind: 'abandoned' };
    const started = this.#clocks.now();
    // A request that spent its time arriving (a slow body) is not the service's doing.
    return started >= deadline ? { kind: 'timeout', what: 'call' } : started;
  }

  /** Runs `work` on the instance threads. */
  async #onPool<T>(work: (pool: ThreadCalls) => Promise<T>): Promise<T> {
    const pool = await this.#startThreads();
    const result = await work(pool);
    // Started while the service was draining: the pool was made for this work alone.
    if (this.#draining) void pool.drain();
    return result;
  }

  #onThreads(index: number, args: Arguments, deadline: number, options: CallOptions): Promise<CallResult> {
    return this.#onPool((pool) => pool.run({ kind: 'call', method: index, args }, deadline, options));
  }

  /**
   * A call that involves handles (handle-table.ts): on the instance `holder`
   * when it names handles, else where the service runs now. It cannot be
   * made again elsewhere, so only its deadline bounds it, inline too; the
   * placement policy still judges how long it took. Its result, and the
   * instance it ran on (where the handles it made live).
   */
  async #callHandles(call: HandleCall, deadline: number, signal: AbortSignal | undefined, holder: HandleHolder | undefined): Promise<HandlesOutcome> {
    if (holder) return { result: await holder.run(call, deadline, signal), holder };
    const inline = this.#inline;
    const policy = this.#policy;
    if (inline && policy) {
      const started = await this.#inlineStart(deadline, signal);
      if (typeof started !== 'number') return { result: started };
      const ran = await inline.callHandles(call, deadline);
      if (ran.result.kind === 'interrupted') return { result: { kind: 'timeout', what: 'call' }, holder: ran.holder };
      this.#moved(policy.verdict());
      return { result: ran.result, holder: ran.holder };
    }
    return this.#onPool((pool) => pool.run({ kind: 'handles', call }, deadline, signal ? { signal } : {}));
  }

  /**
   * A new instance for a named handle scope, apart from the service's own
   * and every other scope's, so that a trap or a memory cap in it ends only
   * that scope's handles: inline when the service runs inline (and its
   * instance starts within the start budget), else on a thread of its own.
   */
  async scopeInstance(): Promise<ScopeInstance> {
    if (this.#policy) {
      const inline = await this.instances.inline((run) => run());
      if (inline) {
        return {
          callHandles: async (call, deadline, signal) => {
            const started = await this.#inlineStart(deadline, signal);
            if (typeof started !== 'number') return { result: started };
            const ran = await inline.callHandles(call, deadline);
            return { result: ran.result.kind === 'interrupted' ? { kind: 'timeout', what: 'call' } : ran.result, holder: ran.holder };
          },
          close: (reason) => inline.close(reason),
        };
      }
    }
    const pool = await this.instances.threads(1);
    await pool.start();
    return {
      callHandles: (call, deadline, signal) => pool.run({ kind: 'handles', call }, deadline, signal ? { signal } : {}),
      close: () => void pool.drain(),
    };
  }

  /** Resolves once the calls made so far have finished, then ends the instances. */
  async drain(): Promise<void> {
    this.#draining = true;
    this.#inline?.close('the service was unloaded');
    this.#inline = undefined;
    await Promise.all([(await this.#threads)?.drain(), ...this.#retired]);
  }

  /** Ends the instances at once. */
  async close(): Promise<void> {
    this.#draining = true;
    this.#inline?.close('the service was unloaded');
    this.#inline = undefined;
    await (await this.#threads)?.close();
  }

  /** Carries out what the policy decided. */
  #moved(move: Move | undefined): void {
    if (!move) return;
    if (move.to === 'inline') {
      void this.#returnInline(move);
      return;
    }
    this.#inline = undefined;
    void this.#startThreads();
    this.#report(move);
  }

  /** Logged at warn (a move changes what every request to the service costs) and reported. */
  #report(move: Move): void {
    this.options.log.warn({ reason: move.reason, detail: move.detail }, move.to === 'threads' ? 'service moved to instance threads' : 'service moved back inline');
    this.options.onMove?.(move);
  }

  /** Back inline after a probation: calls go to the pool until the inline instance exists; the pool stays warm for a while. */
  async #returnInline(move: Move): Promise<void> {
    this.#returning = true;
    try {
      const inline = await this.#startInline().catch((e: unknown) => {
        this.options.log.error({ err: e }, 'the inline instance could not be made');
        return undefined;
      });
      if (this.#draining) return;
      if (!inline) {
        // It never left the threads: no move to report, only why it stays.
        const stay = this.#policy?.leave('inline_failed', `its inline instance could not be made (or took over ${START_BUDGET_MS} ms)`);
        if (stay) this.options.log.warn({ reason: stay.reason, detail: stay.detail }, 'service stays on instance threads');
        return;
      }
      this.#inline = inline;
      this.#report(move);
      const pool = this.#threads;
      if (pool) setTimeout(() => this.#retire(pool), WARM_POOL_MS).unref();
    } finally {
      this.#returning = false;
    }
  }

  /** Drains `pool` if the service is still inline and serving: its calls have stayed there. */
  #retire(pool: Promise<ThreadCalls>): void {
    if (!this.#inline || this.#threads !== pool) return;
    if (this.options.holdsHandles?.()) {
      setTimeout(() => this.#retire(pool), WARM_POOL_MS).unref();
      return;
    }
    this.#threads = this.#pool = undefined;
    const retiring = pool.then((p) => p.drain()).finally(() => this.#retired.delete(retiring));
    this.#retired.add(retiring);
  }

  #startInline(): Promise<InlineCalls | undefined> {
    const policy = this.#policy!;
    return this.instances.inline((run) => policy.measure(run));
  }

  /** The service's instance threads, started on first need. */
  #startThreads(): Promise<ThreadCalls> {
    this.#threads ??= this.instances.threads().then((pool) => (this.#pool = pool));
    return this.#threads;
  }
}

/** What a hosted service needs of the worker's configuration to make its instances. */
export interface InstanceLimits {
  /** Bounds an instance thread's start and each `next` of a stream (instance-pool.ts). */
  timeoutMs: number;
  memoryCapBytes: number;
  /** The JS heap limit of each instance thread. */
  threadHeapMb: number;
}

/** The instances of service `d`'s component: inline (fuel-instrumented modules) and on instance threads (plain ones); `issuer` issues their handles. */
export function componentInstances(d: ServiceDescriptor, limits: InstanceLimits, issuer: HandleIssuer, log: Logger): Instances {
  const logOutput = (stream: 'stdout' | 'stderr', text: string, dropped: number) => log.info({ stream, ...(dropped ? { dropped } : {}) }, text.trimEnd());
  return {
    inlineRefusal: inlineRefusal(d),
    inline: async (measure) => {
      const modules = await compileCoreModules(d.artifact, limits.memoryCapBytes, 'fuel');
      return InlineInstance.start(instanceSpec(d, modules, limits.memoryCapBytes), {
        recycleAfter: d.instances.recycleAfter,
        startBudgetMs: START_BUDGET_MS,
        onOutput: ({ stream, text, dropped }) => logOutput(stream, text, dropped),
        measure,
        issuer,
        methods: d.methods,
      });
    },
    threads: async (size = d.instances.poolSize) => {
      const modules = await compileCoreModules(d.artifact, limits.memoryCapBytes, 'plain');
      return new InstancePool(
        { descriptor: d, modules, memoryCapBytes: limits.memoryCapBytes, issuer },
        { size, maxQueue: d.instances.maxQueue, timeoutMs: limits.timeoutMs, heapMb: limits.threadHeapMb, onOutput: logOutput },
      );
    },
  };
}

/** Why the service cannot run inline, if it cannot. */
function inlineRefusal(d: ServiceDescriptor): string | undefined {
  if (d.http) return 'it is an HTTP handler: its guest blocks while its request body arrives and its response drains, which only a thread can do';
  if (!d.artifact.fuelModules) return `its core modules could not be fuel-instrumented: ${d.artifact.fuelRefusal ?? 'unknown reason'}`;
  if (d.methods.some((m) => m.stream)) return 'it has streaming methods: a stream holds its instance until it ends, which only a thread can do';
  if (d.instances.poolSize > 1) return `its pool_size is ${d.instances.poolSize}: only threads run calls side by side`;
  if (d.paths.length > 0) return 'it is granted allowed_paths: a call made again after an interrupt could repeat its writes';
  if (d.outboundHosts.length > 0) return 'it is granted allowed_outbound_hosts: a call made again after an interrupt could repeat its requests';
  return undefined;
}
