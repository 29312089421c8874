// Where a service's work runs, of the placements (place.ts). By default
// inline, on the worker's main thread: no thread hop, so a call costs about
// what the export itself does (inline-place.ts). Some services can never
// run inline: their core modules could not be fuel-instrumented, they ask
// for instances side by side (pool_size > 1: inline calls run one after
// another), they stream (a stream holds its instance), their functions
// answer later (async, WASI 0.3), they are HTTP handlers other than a WASI
// 0.3 one on rt's own host (handlerRefusal), or they hold grants whose side
// effects a replayed call would repeat (allowed_paths, allowed_outbound_hosts). The others move to
// instance threads (instance-pool.ts), and back, as placement.ts decides:
// - a call runs past the inline budget (`budgetMs`): it is interrupted and made again on a
//   thread with the time left before its deadline (the interrupted attempt
//   had no effect outside its instance: no grants, output dropped), and the
//   service follows if the call takes long there too (a call that overran
//   because the worker was paused takes its usual time on the thread);
// - its calls, judged in blocks on wall and CPU time, take more than
//   `averageMs` each: such work holds the main thread from every other
//   request, and runs faster on a thread, where modules are not instrumented;
// - a call brings a JSON body too large to decode on the main thread
//   (arguments.ts): the thread that makes the call decodes it;
// - after a probation on threads, it comes back inline to be judged again.
// Each move is logged at warn and reported (`onMove`: the metric and the
// listing of every worker's placement). docs/architecture.md ("Execution
// model") has the measurements behind this. The instances and the clocks are
// passed in (`Instances`, `Clocks`), so the policy's moves are tested with
// fakes of both (test/unit/execution.test.ts).

import type { MessagePort } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Placement, ServiceDescriptor } from '../../service.js';
import { answersLater } from '../../wit/async-abi.js';
import { unversioned } from '../../wit/interface-key.js';
import { compileCoreModules } from './compile-core-modules.js';
import { handlerLinks } from './handler-link.js';
import type { LinkedServices } from './link-target.js';
import { serveLinkCalls, valueLinks } from './link-calls.js';
import { SYSTEM_CLOCKS, type Clocks } from './inline-budget.js';
import { InlineInstance } from './inline-instance.js';
import { InlinePlace, type InlineCalls } from './inline-place.js';
import { InlineHandlerPlace } from './inline-handler-place.js';
import { instanceSpec, servedByOwnHost } from './instance-spec.js';
import { InstancePool } from './instance-pool.js';
import type { HandleIssuer } from './handle-ids.js';
import { isInterrupted, type Place, type Ran, type RunOptions } from './place.js';
import type { Outcome, Work } from './work.js';
import { PlacementPolicy, type Move, type PlacementSettings, type ThreadRun } from './placement.js';
import type { CallTrace, Traces } from '../../tracing/traces.js';

/** How long instantiating inline (start functions, init) may take before the service starts on threads instead. */
export const START_BUDGET_MS = 250;
/**
 * How long a service back inline keeps its instance threads: a service that
 * was moved for its nature (every call over the budget) goes back there at
 * its first call, and a thread start costs it seconds on a busy machine for
 * a componentize-js component.
 */
const WARM_POOL_MS = 60_000;

/** The instance-threads placement (instance-pool.ts): work of every kind, never interrupted. */
export interface ThreadCalls extends Place {
  start(): Promise<void>;
  run<W extends Work>(work: W, deadline: number, options?: RunOptions): Promise<Outcome<W>>;
}

/** Where a service's instances come from: its component (`componentInstances`), or a test's fakes. */
export interface Instances {
  /** Why the service can never run inline, if it cannot. */
  inlineRefusal: string | undefined;
  /**
   * For a WASI 0.3 handler on rt's own host: its place on the main thread
   * (inline-handler-place.ts), told what to do when a turn of its guest
   * overruns; undefined when it cannot be made there.
   */
  inlineHandler?: (budgetMs: number, onOverrun: (detail: string) => void) => Promise<Place | undefined>;
  /** A new inline instance whose calls `measure` times; undefined when instantiating it ran past the start budget. */
  inline(measure: <T>(run: () => T) => T): Promise<InlineCalls | undefined>;
  /** New instance threads (not started): the service's pool_size of them, or `size`. */
  threads(size?: number): Promise<ThreadCalls>;
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
  #inline: Place | undefined;
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
    return (this.#inline?.live ?? 0) + (this.#pool?.live ?? 0);
  }

  /** Work waiting for an instance in this worker. */
  get waiting(): number {
    return this.#pool?.waiting ?? 0;
  }

  /**
   * Runs `work`: inline when the service's placement is and the inline
   * placement takes it (a call, a call that involves handles; a 0.3
   * handler's request, within its max_concurrency), else on instance threads
   * (a stream holds its instance until it ends, a handler on jco's glue
   * blocks while its body arrives: only a thread can do either). A call
   * that names handles runs on their holder, wherever it is.
   * `deadline` (clock time) bounds waiting and running alike; `signal`
   * aborts when its client leaves; `trace` is the call's span, if traced.
   */
  async run<W extends Work>(work: W, deadline: number, signal?: AbortSignal, trace?: CallTrace): Promise<Outcome<W>> {
    if (work.kind === 'handles' && work.holder) return { result: await work.holder.run(work.call, deadline, signal), holder: work.holder } as Outcome<W>;
    const options: RunOptions = signal ? { signal } : {};
    if (trace) options.trace = trace;
    const inline = this.#inlineFor(work);
    if (!inline) return this.#onThreads(work, deadline, options);
    const ran: Ran<Work> = await inline.run(work, deadline, options);
    const policy = this.#policy!;
    if (!isInterrupted(ran)) {
      this.#moved(policy.verdict());
      return ran as Outcome<W>;
    }
    if (this.#clocks.now() >= deadline) {
      // Cut off by its deadline: moved only if it also used the whole inline budget.
      if (ran.ranMs >= policy.settings.budgetMs) this.#moved(policy.overran(undefined, 'a call ran to its deadline'));
      return { kind: 'timeout', what: 'call' } as Outcome<W>;
    }
    // Made again on a thread; the service follows if the call takes long there too.
    let thread: ThreadRun | undefined;
    const again = await this.#onThreads(work, deadline, { ...options, onRun: (ms, first) => (thread = { ms, first }) });
    if (this.#inline !== inline) return again;
    const move = policy.overran(thread, `a call ran past the inline budget of ${policy.settings.budgetMs} ms and was made again on a thread`);
    if (move) this.#moved(move);
    else this.options.log.debug({ ms: thread?.ms }, 'a call ran past the inline budget, but not on a thread: the service stays inline');
    return again;
  }

  /**
   * The inline placement, when `work` goes there. A call that does not
   * tells the policy why: one bringing a body too large for the main thread
   * moves the service; on threads, a service whose probation is over comes
   * back inline.
   */
  #inlineFor(work: Work): Place | undefined {
    const [inline, policy] = [this.#inline, this.#policy];
    if (!policy || work.kind === 'stream') return undefined;
    if (inline?.takes(work)) return inline;
    if (work.kind !== 'call') return undefined;
    if (inline && work.args.kind === 'large-json') {
      this.#moved(policy.leave('large_body', `a request's JSON body of ${work.args.bytes.byteLength} bytes is decoded there (arguments.ts: large bodies never are on the main thread)`));
    } else if (!inline && !this.#returning && !this.#draining) {
      this.#moved(policy.mayReturn());
    }
    // A move back inline makes its instance first: this call goes to the threads.
    return undefined;
  }

  /** Runs `work` on the instance threads. */
  async #onThreads<W extends Work>(work: W, deadline: number, options: RunOptions): Promise<Outcome<W>> {
    const pool = await this.#startThreads();
    const result = await pool.run(work, deadline, options);
    // Started while the service was draining: the pool was made for this work alone.
    if (this.#draining) void pool.drain('the service was unloaded');
    return result;
  }

  /**
   * A new placement for a named handle scope (docs/api.md §5.1.2), apart from
   * the service's own and every other scope's, so that a trap or a memory cap
   * in it ends only that scope's handles: inline when the service runs
   * inline (and its instance starts within the start budget), else a thread
   * of its own.
   */
  async scopePlace(): Promise<Place> {
    if (this.#policy) {
      const inline = await this.instances.inline((run) => run());
      if (inline) return new InlinePlace(inline, this.#clocks, this.#policy.settings.budgetMs);
    }
    const pool = await this.instances.threads(1);
    await pool.start();
    return pool;
  }

  /** Resolves once the work asked so far has finished, then ends the instances. */
  async drain(): Promise<void> {
    this.#draining = true;
    await this.#inline?.drain('the service was unloaded');
    this.#inline = undefined;
    await Promise.all([(await this.#threads)?.drain('the service was unloaded'), ...this.#retired]);
  }

  /** Ends the instances at once. */
  async close(): Promise<void> {
    this.#draining = true;
    await this.#inline?.close('the service was unloaded');
    this.#inline = undefined;
    await (await this.#threads)?.close('the service was unloaded');
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
    const retiring = pool.then((p) => p.drain('the service moved back inline')).finally(() => this.#retired.delete(retiring));
    this.#retired.add(retiring);
  }

  async #startInline(): Promise<Place | undefined> {
    const policy = this.#policy!;
    if (this.instances.inlineHandler) return this.instances.inlineHandler(policy.settings.budgetMs, (detail) => this.#moved(policy.leave('over_budget', detail)));
    const instance = await this.instances.inline((run) => policy.measure(run));
    return instance && new InlinePlace(instance, this.#clocks, policy.settings.budgetMs);
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
  /** How long a stream a service returns across a link may run (http.stream_timeout_seconds); left out (tests), as long as a call. */
  streamTimeoutMs?: number;
  /** The worker's traces, when on: spans of the outgoing requests guests make. */
  traces?: Traces | undefined;
}

/** The instances of service `d`'s component: inline (fuel-instrumented modules) and on instance threads (plain ones); `issuer` issues their handles. */
export function componentInstances(d: ServiceDescriptor, limits: InstanceLimits, issuer: HandleIssuer, log: Logger, linked?: LinkedServices): Instances {
  const links = linked && handlerLinks(d, linked, limits.timeoutMs);
  const linkCalls = linked && valueLinks(d).length > 0 ? (port: MessagePort, cells: SharedArrayBuffer) => serveLinkCalls(port, cells, d, linked, { callMs: limits.timeoutMs, streamMs: limits.streamTimeoutMs ?? limits.timeoutMs }) : undefined;
  const logOutput = (stream: 'stdout' | 'stderr', text: string, dropped: number) => log.info({ stream, ...(dropped ? { dropped } : {}) }, text.trimEnd());
  const refusal = inlineRefusal(d);
  return {
    inlineRefusal: refusal,
    ...(d.http && !refusal
      ? {
          inlineHandler: async (budgetMs: number, onOverrun: (detail: string) => void) => {
            const modules = await compileCoreModules(d.artifact, limits.memoryCapBytes, 'fuel');
            return InlineHandlerPlace.start(instanceSpec(d, modules, limits.memoryCapBytes), { maxConcurrency: d.instances.maxConcurrency, recycleAfter: d.instances.recycleAfter, budgetMs, startBudgetMs: START_BUDGET_MS, onOverrun });
          },
        }
      : {}),
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
        { size, maxQueue: d.instances.maxQueue, timeoutMs: limits.timeoutMs, heapMb: limits.threadHeapMb, onOutput: logOutput, ...(links ? { linked: links } : {}), ...(linkCalls ? { linkCalls } : {}), ...(limits.traces ? { traces: limits.traces } : {}) },
      );
    },
  };
}

/** Why the service cannot run inline, if it cannot. */
function inlineRefusal(d: ServiceDescriptor): string | undefined {
  if (d.http) return handlerRefusal(d);
  if (d.links.length > 0) return 'it imports interfaces other services serve ([imports]): a call across a link waits for that service, which only a thread can do';
  if (!d.artifact.fuelModules) return `its core modules could not be fuel-instrumented: ${d.artifact.fuelRefusal ?? 'unknown reason'}`;
  if (d.methods.some((m) => m.stream)) return 'it has streaming methods: a stream holds its instance until it ends, which only a thread can do';
  if (d.methods.some((m) => answersLater(m.function))) return 'it has functions that answer later (async, or taking or returning a future): a call waits for its answer, which the inline budget cannot bound';
  if (d.instances.poolSize > 1) return `its pool_size is ${d.instances.poolSize}: only threads run calls side by side`;
  if (d.paths.length > 0) return 'it is granted allowed_paths: a call made again after an interrupt could repeat its writes';
  if (d.outboundHosts.length > 0) return 'it is granted allowed_outbound_hosts: a call made again after an interrupt could repeat its requests';
  return undefined;
}

/** The interfaces whose host side an inline handler has no way to: outgoing requests and links (the thread's channel), stdio (the thread's capture). */
const THREAD_ONLY_IMPORTS = ['wasi:http/client', 'wasi:http/handler', 'wasi:cli/stdout', 'wasi:cli/stderr'];

/** Why a handler cannot run inline, if it cannot: only a WASI 0.3 handler rt's own host serves, with nothing only a thread has, can. */
function handlerRefusal(d: ServiceDescriptor): string | undefined {
  if (!servedByOwnHost(d)) return 'it is an HTTP handler on jco’s glue: its guest blocks (or waits through JSPI) while its request body arrives and its response drains, which only a thread can do';
  if (!d.artifact.fuelModules) return `its core modules could not be fuel-instrumented: ${d.artifact.fuelRefusal ?? 'unknown reason'}`;
  const threadOnly = d.interface.imports.find((i) => THREAD_ONLY_IMPORTS.includes(unversioned(i.name)));
  if (threadOnly) return `it imports ${threadOnly.name}, which a handler has on instance threads only`;
  if (d.links.length > 0 || d.outboundHosts.length > 0 || d.paths.length > 0) return 'it is granted links, outbound hosts or paths, which a handler has on instance threads only';
  return undefined;
}
