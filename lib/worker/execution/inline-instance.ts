// A component instance on the worker's main thread: its calls run inline,
// with no thread hop, because its core modules are fuel-instrumented
// (lib/primary/fuel-instrumentation.ts): every few thousand loop iterations or function
// entries they call `check` below, which throws once the call has used its
// budget. The call is then interrupted wherever it was, and the instance is
// dropped (its state may be half-updated; a componentize-js instance is
// broken after an interrupt).
//
// Calls never overlap here: each runs to its end (or its interrupt) before
// the event loop goes on, so one instance serves any number of concurrent
// requests, one after another.

import { FUEL_IMPORT_MODULE, FUEL_IMPORT_NAME } from '../../fuel-import.js';
import { ComponentInstance, errorText, type CallOutcome, type InstanceSpec } from './component-instance.js';
import { InlineBudget } from './inline-budget.js';
import { HandleHolder, type HolderResult } from './handle-directory.js';
import type { HandleIssuer } from './handle-ids.js';
import { HandleTable, type HandleCall, type HandleCallResult } from './handle-table.js';
import type { MethodDescriptor } from '../../service.js';
import { capturing, OutputCapture, type CapturedText } from '../sandbox/output-capture.js';

export type InlineOutcome = CallOutcome | { kind: 'interrupted' };

/** Thrown by the fuel check; never seen outside the inline placements (this module, inline-handler-place.ts). */
class Interrupt extends Error {}
const INTERRUPT = new Interrupt('the call ran past its inline budget');
export const isInterrupt = (e: unknown) => e === INTERRUPT;

/** The running inline call's bounds: the fuel check asks them whether it must stop. */
export const budget = new InlineBudget();

export const FUEL_IMPORTS: WebAssembly.Imports = {
  [FUEL_IMPORT_MODULE]: {
    [FUEL_IMPORT_NAME]: () => {
      if (budget.exhausted()) throw INTERRUPT;
    },
  },
};

export interface InlineOptions {
  /** Replace the instance after this many calls; 0 = never. */
  recycleAfter: number;
  /** How long instantiating (start functions, init) may hold the main thread. */
  startBudgetMs: number;
  onOutput: (output: CapturedText) => void;
  /** Runs each call's synchronous part, timing it (placement.ts): the call alone, nothing awaited around it. */
  measure: <T>(run: () => T) => T;
  /** Who the handles it makes are issued by, and the service's methods (for handle calls). */
  issuer: HandleIssuer;
  methods: MethodDescriptor[];
}

/** What an inline instance is made from: the rest of InstanceSpec is this module's (fuel, bounds). */
export type InlineSpec = Omit<InstanceSpec, 'coreImports' | 'bounded' | 'isInterrupt' | 'byteNexts'>;

export class InlineInstance {
  readonly #spec: InstanceSpec;
  #instance: ComponentInstance | undefined;
  /** The handles of #instance, and how the worker reaches them: both made with it, both end with it. */
  #table: HandleTable | undefined;
  #holder: HandleHolder | undefined;
  #fresh: Promise<ComponentInstance | 'interrupted'> | undefined;
  #calls = 0;
  readonly #output = new OutputCapture();

  private constructor(
    spec: InlineSpec,
    private readonly options: InlineOptions,
  ) {
    // Start functions and init run inside `bounded`: held to the start budget, their output captured.
    const bounded = <T>(fn: () => T) => {
      const end = performance.now() + options.startBudgetMs;
      return capturing(this.#output, () => budget.within(end, end, fn));
    };
    this.#spec = { ...spec, coreImports: FUEL_IMPORTS, isInterrupt, bounded };
  }

  /**
   * The first instance. Resolves to undefined when instantiating ran past the
   * start budget (the service belongs on threads); rejects when it failed.
   */
  static async start(spec: InlineSpec, options: InlineOptions): Promise<InlineInstance | undefined> {
    const inline = new InlineInstance(spec, options);
    const first = await inline.#replacement();
    return first === 'interrupted' ? undefined : inline;
  }

  /** Whether its instance holds live handles: a call interrupted there would take them with it (execution.ts bounds such calls by their deadline alone). */
  get holdsHandles(): boolean {
    return (this.#table?.size ?? 0) > 0;
  }

  /** Calls method `index`, interrupting it past `budgetEnd` if it runs, past `hardEnd` in any case (performance.now() times). */
  async call(index: number, args: unknown[], budgetEnd: number, hardEnd: number): Promise<InlineOutcome> {
    for (;;) {
      const instance = await this.#current();
      if (!(instance instanceof ComponentInstance)) return instance;
      // Calls that waited together resume one after another: one before this may have ended the instance (a trap, an interrupt, recycling).
      if (instance === this.#instance) return this.#run(budgetEnd, hardEnd, () => instance.call(index, args));
    }
  }

  /**
   * Makes a call that involves handles (handle-table.ts), on `holder`'s
   * instance when it names one (it may have ended), else on the current one.
   * It cannot be made again elsewhere, so only its deadline bounds it.
   */
  async callHandles(call: HandleCall, deadline: number, holder?: HandleHolder): Promise<{ result: HolderResult | { kind: 'interrupted' }; holder: HandleHolder }> {
    for (;;) {
      if (holder && holder !== this.#holder) return { result: { kind: 'handle-ended', details: `the handle has ended: its instance ended: ${holder.ended ?? 'it was replaced'}` }, holder };
      const instance = await this.#current();
      const current = this.#holder!;
      if (!(instance instanceof ComponentInstance)) return { result: instance, holder: current };
      // As in call(): the instance this call waited for may have ended before its turn.
      if (instance !== this.#instance) continue;
      const table = this.#table!;
      return { result: this.#run(deadline, deadline, () => table.call(instance, call)), holder: current };
    }
  }

  /** The instance, made afresh when the last one trapped, was interrupted or recycled. */
  async #current(): Promise<ComponentInstance | Extract<InlineOutcome, { kind: 'interrupted' | 'trap' }>> {
    if (this.#instance) return this.#instance;
    try {
      const fresh = await this.#replacement();
      return fresh === 'interrupted' ? { kind: 'interrupted' } : fresh;
    } catch (e) {
      return { kind: 'trap', code: 'RT_ERR_INSTANCE_LOST', message: `could not create a fresh instance: ${errorText(e)}` };
    }
  }

  /** Runs `make` (one call, timed) within the bounds; the instance is dropped after an interrupt or a trap, and recycled at its count unless it holds handles. */
  #run<T extends CallOutcome | HandleCallResult>(budgetEnd: number, hardEnd: number, make: () => T): T | { kind: 'interrupted' } {
    let outcome: T;
    try {
      outcome = capturing(this.#output, () => budget.within(budgetEnd, hardEnd, () => this.options.measure(make)));
    } catch (e) {
      if (!isInterrupt(e)) throw e;
      // Its output is dropped with it: the call is made again elsewhere, and logs it there.
      this.#output.take();
      this.#endInstance('a call on it ran past its time and was interrupted');
      return { kind: 'interrupted' };
    }
    for (const output of this.#output.take()) this.options.onOutput(output);
    const result: CallOutcome | HandleCallResult = outcome;
    const trap = result.kind === 'trap' ? result : result.kind === 'called' && result.outcome.kind === 'trap' ? result.outcome : undefined;
    if (trap) this.#endInstance(`a call on it trapped: ${trap.message}`);
    else if (this.options.recycleAfter > 0 && ++this.#calls >= this.options.recycleAfter && !this.holdsHandles) this.#endInstance('recycled');
    return outcome;
  }

  /** Drops handle `id` of the current instance (its destructor runs, within the start budget). */
  drop(holder: HandleHolder, id: string): void {
    if (holder !== this.#holder || !this.#instance) return;
    const instance = this.#instance;
    const table = this.#table!;
    const end = performance.now() + this.options.startBudgetMs;
    const outcome: CallOutcome | { kind: 'interrupted' } = this.#run(end, end, (): CallOutcome => table.drop(instance, id) ?? { kind: 'ok', value: undefined });
    if (outcome.kind === 'trap') this.options.onOutput({ stream: 'stderr', text: `dropping a handle trapped: ${outcome.message}`, dropped: 0 });
  }

  #endInstance(reason: string): void {
    this.#instance = undefined;
    this.#table = undefined;
    this.#holder?.end(reason);
    this.#holder = undefined;
  }

  /** Ends the instance and its handles (the service drains or closes). */
  close(reason: string): void {
    this.#endInstance(reason);
  }

  #replacement(): Promise<ComponentInstance | 'interrupted'> {
    this.#fresh ??= ComponentInstance.create(this.#spec)
      .then(
        (instance) => {
          this.#instance = instance;
          this.#calls = 0;
          this.#table = new HandleTable(this.options.issuer, this.options.methods);
          const holder: HandleHolder = new HandleHolder(
            async (call, deadline) => {
              const { result } = await this.callHandles(call, deadline, holder);
              return result.kind === 'interrupted' ? { kind: 'timeout', what: 'call' } : result;
            },
            async (id) => this.drop(holder, id),
          );
          this.#holder = holder;
          return instance;
        },
        (e: unknown) => {
          if (isInterrupt(e)) return 'interrupted' as const;
          throw e;
        },
      )
      .finally(() => {
        this.#fresh = undefined;
        for (const output of this.#output.take()) this.options.onOutput(output);
      });
    return this.#fresh;
  }
}
