// Where a service's calls run. By default inline, on the worker's main
// thread: no thread hop, so a call costs about what the export itself does
// (inline-instance.ts). A service goes to instance threads (instance-pool.ts)
// for good when inline would be unsafe or slow:
// - it cannot run inline at all: its core modules could not be
//   fuel-instrumented, it asks for instances side by side (pool_size > 1:
//   inline calls run one after another), or it holds grants whose side
//   effects a replayed call would repeat (allowed_paths, allowed_outbound_hosts);
// - a call runs past INLINE_BUDGET_MS: it is interrupted and made again on a
//   thread with the time left before its deadline (the interrupted attempt
//   had no effect outside its instance: no grants, output dropped);
// - its calls take more than INLINE_AVERAGE_MS on average: such work holds
//   the main thread from every other request, and runs faster on a thread,
//   where modules are not instrumented;
// - a call brings a JSON body too large to decode on the main thread
//   (large-body.ts): the thread that makes the call decodes it.
// docs/architecture.md ("Execution model") has the measurements behind this.

import type { Logger } from 'pino';
import type { ServiceDescriptor } from '../service.js';
import { compileCoreModules } from './component.js';
import type { CallOutcome } from './component-instance.js';
import { hostImports, type Grants } from './host.js';
import { InlineInstance } from './inline-instance.js';
import { InstancePool, type StreamOptions } from './instance-pool.js';
import { LargeJsonBody, MAIN_THREAD_JSON_BYTES, type Arguments } from './large-body.js';
import type { ThreadSpec } from './thread-protocol.js';

/** How long one inline call may run on the main thread before it is moved to a thread. */
export const INLINE_BUDGET_MS = 20;
/** How long it may hold the main thread at all, running or not (the OS may not schedule the worker for a while). */
const INLINE_HARD_MS = 4 * INLINE_BUDGET_MS;
/** Average inline call time (moving average over ~10 calls) above which a service moves to threads. */
export const INLINE_AVERAGE_MS = 1;
/** How long instantiating inline (start functions, init) may take before the service starts on threads instead. */
const START_BUDGET_MS = 250;

export type Placement = 'inline' | 'threads';

export interface ExecutionOptions {
  /** `<domain>.<service>`, for the instance threads' messages. */
  service: string;
  timeoutMs: number;
  memoryCapBytes: number;
  /** The JS heap limit of each instance thread. */
  threadHeapMb: number;
  log: Logger;
}

export class Execution {
  #inline: InlineInstance | undefined;
  #threads: Promise<InstancePool> | undefined;
  /** The pool, once #threads has made it. */
  #pool: InstancePool | undefined;
  #averageMs = 0;
  #draining = false;

  private constructor(
    private readonly descriptor: ServiceDescriptor,
    private readonly options: ExecutionOptions,
  ) {}

  /** Starts the service's first instance(s); rejects when they cannot be created. */
  static async start(descriptor: ServiceDescriptor, options: ExecutionOptions): Promise<Execution> {
    const execution = new Execution(descriptor, options);
    const why = inlineRefusal(descriptor);
    if (!why) execution.#inline = await execution.#startInline();
    if (!execution.#inline) {
      const pool = await execution.#startThreads(why ?? `instantiating it took longer than ${START_BUDGET_MS} ms`, false);
      await pool.start();
    }
    return execution;
  }

  get placement(): Placement {
    return this.#inline ? 'inline' : 'threads';
  }

  /** Instances alive in this worker. */
  get live(): number {
    return this.#inline ? 1 : (this.#pool?.live ?? 0);
  }

  /** Calls method `index`; `deadline` (performance.now() time) bounds waiting and running alike. */
  async call(index: number, args: Arguments, deadline: number): Promise<CallOutcome> {
    const inline = this.#inline;
    if (inline && !(args instanceof LargeJsonBody)) {
      const started = performance.now();
      // A request that spent its time arriving (a slow body) is not the service's doing.
      if (started >= deadline) return { status: 'timeout' };
      const outcome = await inline.call(index, args, Math.min(started + INLINE_BUDGET_MS, deadline), Math.min(started + INLINE_HARD_MS, deadline));
      const now = performance.now();
      if (outcome.status !== 'interrupted') {
        this.#averageMs += (now - started - this.#averageMs) / 10;
        if (this.#averageMs > INLINE_AVERAGE_MS) void this.#startThreads(`its calls took ${this.#averageMs.toFixed(1)} ms on average`, true);
        return outcome;
      }
      const overran = now - started >= INLINE_BUDGET_MS;
      if (now >= deadline) {
        // Cut off by its deadline: moved only if it also used the whole inline budget.
        if (overran) void this.#startThreads('a call ran to its deadline', true);
        return { status: 'timeout' };
      }
      void this.#startThreads(`a call ran past the inline budget of ${INLINE_BUDGET_MS} ms and is made again there`, true);
    } else if (inline) {
      // A large body (the only arguments that do not run inline).
      void this.#startThreads(`a request's JSON body of ${(args as LargeJsonBody).bytes.byteLength} bytes is decoded there: bodies over ${MAIN_THREAD_JSON_BYTES} bytes never are on the main thread`, true);
    }
    const pool = await this.#threads!;
    const outcome = await pool.call(index, args, deadline);
    // Moved while the service was draining: the pool was made for this call alone.
    if (this.#draining) void pool.drain();
    return outcome;
  }

  /** Opens a stream (instance-pool.ts): services with streaming methods always run on threads, where a stream can hold its instance. */
  async openStream(index: number, args: Arguments, deadline: number, options: StreamOptions): Promise<CallOutcome> {
    const pool = await this.#threads!;
    const outcome = await pool.openStream(index, args, deadline, options);
    if (this.#draining) void pool.drain();
    return outcome;
  }

  /** Resolves once the calls made so far have finished, then ends the instances. */
  async drain(): Promise<void> {
    this.#draining = true;
    this.#inline = undefined;
    await (await this.#threads)?.drain();
  }

  /** Ends the instances at once. */
  async close(): Promise<void> {
    this.#inline = undefined;
    await (await this.#threads)?.close();
  }

  #startInline(): Promise<InlineInstance | undefined> {
    const d = this.descriptor;
    const { memoryCapBytes } = this.options;
    return compileCoreModules(d.artifact, memoryCapBytes, 'fuel').then((modules) =>
      InlineInstance.start(
        { ...this.#instanceSpec(), modules: new Map(modules), imports: hostImports(d.artifact.importSpecifiers, d.interface.imports, grants(d)) },
        {
          recycleAfter: d.instances.recycleAfter,
          startBudgetMs: START_BUDGET_MS,
          onOutput: ({ stream, text, dropped }) => this.#logOutput(stream, text, dropped),
        },
      ),
    );
  }

  /** Moves the service to instance threads (once); `moved` says whether it was inline before. */
  #startThreads(reason: string, moved: boolean): Promise<InstancePool> {
    if (this.#threads) return this.#threads;
    this.#inline = undefined;
    const d = this.descriptor;
    const log = this.options.log;
    if (moved) log.info({ reason }, 'service moved to instance threads');
    else log.debug({ reason }, 'service runs on instance threads');
    this.#threads = compileCoreModules(d.artifact, this.options.memoryCapBytes, 'plain').then((modules) => {
      const spec: ThreadSpec = {
        ...this.#instanceSpec(),
        service: this.options.service,
        modules,
        importSpecifiers: d.artifact.importSpecifiers,
        imports: d.interface.imports,
        recycleAfter: d.instances.recycleAfter,
        grants: grants(d),
        streams: d.methods.map((m) => m.stream ?? null),
        signatures: d.methods.map((m) => (m.invocable ? { name: m.function.name, params: m.function.params } : null)),
      };
      return (this.#pool = new InstancePool(spec, {
        size: d.instances.poolSize,
        maxQueue: d.instances.maxQueue,
        timeoutMs: this.options.timeoutMs,
        heapMb: this.options.threadHeapMb,
        onOutput: (stream, text, dropped) => this.#logOutput(stream, text, dropped),
      }));
    });
    return this.#threads;
  }

  /** What an instance is made from, wherever it runs. */
  #instanceSpec() {
    const d = this.descriptor;
    return {
      entry: d.artifact.entry,
      methods: d.methods.map((m) => ({ exportKey: m.exportKey, jsName: m.jsName })),
      init: d.init,
      config: d.config?.bytes ?? new Uint8Array(),
      memoryCapBytes: this.options.memoryCapBytes,
    };
  }

  #logOutput(stream: 'stdout' | 'stderr', text: string, dropped: number): void {
    this.options.log.info({ stream, ...(dropped ? { dropped } : {}) }, text.trimEnd());
  }
}

function grants(d: ServiceDescriptor): Grants {
  return { env: Object.entries(d.env), config: d.config?.entries ?? [], paths: d.paths, outboundHosts: d.outboundHosts };
}

/** Why the service cannot run inline, if it cannot. */
function inlineRefusal(d: ServiceDescriptor): string | undefined {
  if (!d.artifact.fuelModules) return `its core modules could not be fuel-instrumented: ${d.artifact.fuelRefusal ?? 'unknown reason'}`;
  if (d.methods.some((m) => m.stream)) return 'it has streaming methods: a stream holds its instance until it ends, which only a thread can do';
  if (d.instances.poolSize > 1) return `its pool_size is ${d.instances.poolSize}: only threads run calls side by side`;
  if (d.paths.length > 0) return 'it is granted allowed_paths: a call made again after an interrupt could repeat its writes';
  if (d.outboundHosts.length > 0) return 'it is granted allowed_outbound_hosts: a call made again after an interrupt could repeat its requests';
  return undefined;
}
