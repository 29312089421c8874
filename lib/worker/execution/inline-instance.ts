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
import { capturing, OutputCapture, type CapturedText } from '../sandbox/output-capture.js';

export type InlineOutcome = CallOutcome | { kind: 'interrupted' };

/** Thrown by the fuel check; never seen outside this module. */
class Interrupt extends Error {}
const INTERRUPT = new Interrupt('the call ran past its inline budget');
const isInterrupt = (e: unknown) => e === INTERRUPT;

/** The running inline call's bounds: the fuel check asks them whether it must stop. */
const budget = new InlineBudget();

const FUEL_IMPORTS: WebAssembly.Imports = {
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
}

/** What an inline instance is made from: the rest of InstanceSpec is this module's (fuel, bounds). */
export type InlineSpec = Omit<InstanceSpec, 'coreImports' | 'bounded' | 'isInterrupt'>;

export class InlineInstance {
  readonly #spec: InstanceSpec;
  #instance: ComponentInstance | undefined;
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

  /** Calls method `index`, interrupting it past `budgetEnd` if it runs, past `hardEnd` in any case (performance.now() times). */
  async call(index: number, args: unknown[], budgetEnd: number, hardEnd: number): Promise<InlineOutcome> {
    let instance = this.#instance;
    if (!instance) {
      try {
        const fresh = await this.#replacement();
        if (fresh === 'interrupted') return { kind: 'interrupted' };
        instance = fresh;
      } catch (e) {
        return { kind: 'trap', code: 'RT_ERR_INSTANCE_LOST', message: `could not create a fresh instance: ${errorText(e)}` };
      }
    }
    let outcome: CallOutcome;
    try {
      outcome = capturing(this.#output, () => budget.within(budgetEnd, hardEnd, () => this.options.measure(() => instance.call(index, args))));
    } catch (e) {
      if (!isInterrupt(e)) throw e;
      // Its output is dropped with it: the call is made again elsewhere, and logs it there.
      this.#output.take();
      this.#instance = undefined;
      return { kind: 'interrupted' };
    }
    for (const output of this.#output.take()) this.options.onOutput(output);
    if (outcome.kind === 'trap' || (this.options.recycleAfter > 0 && ++this.#calls >= this.options.recycleAfter)) this.#instance = undefined;
    return outcome;
  }

  #replacement(): Promise<ComponentInstance | 'interrupted'> {
    this.#fresh ??= ComponentInstance.create(this.#spec)
      .then(
        (instance) => {
          this.#instance = instance;
          this.#calls = 0;
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
