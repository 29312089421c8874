// The inline placement (place.ts): a service's calls on the worker's main
// thread, in one instance (inline-instance.ts), one after another. Each waits
// for its turn (inline-turn.ts), then runs held to the inline budget: past it
// the call is interrupted, and comes back so for Execution (execution.ts) to
// make again on a thread. A call that involves handles cannot be made again
// elsewhere, nor can any call once the instance holds live handles (an
// interrupt would end them): only their deadline bounds those.

import type { HandleHolder, HolderResult } from './handle-directory.js';
import type { HandleCall } from './handle-table.js';
import { HARD_BUDGETS, type Clocks } from './inline-budget.js';
import type { InlineOutcome } from './inline-instance.js';
import { inlineTurn } from './inline-turn.js';
import type { Interrupted, Place, Ran, RunOptions } from './place.js';
import type { HandlesOutcome, Work } from './work.js';


/** What the inline placement needs of its instance (inline-instance.ts). */
export interface InlineCalls {
  call(index: number, args: unknown[], budgetEnd: number, hardEnd: number): Promise<InlineOutcome>;
  /** A call that involves handles, on `holder`'s instance if given (handle-table.ts); bounded by its deadline alone. */
  callHandles(call: HandleCall, deadline: number, holder?: HandleHolder): Promise<{ result: HolderResult | { kind: 'interrupted' }; holder: HandleHolder }>;
  /** Its instance holds live handles, which an interrupt would end. */
  readonly holdsHandles: boolean;
  /** Ends the instance and its handles. */
  close(reason: string): void;
}

export class InlinePlace implements Place {
  readonly name = 'inline';
  readonly live = 1;
  readonly waiting = 0;

  constructor(
    private readonly instance: InlineCalls,
    private readonly clocks: Clocks,
    /** How long one call may run before it is interrupted (ms). */
    private readonly budgetMs: number,
  ) {}

  takes(work: Work): boolean {
    // A body read as it arrives is read on a thread, whose event loop stays free while the guest waits for it.
    return (work.kind === 'call' && work.args.kind === 'arguments' && !work.body) || (work.kind === 'handles' && !work.holder);
  }

  run<W extends Work>(work: W, deadline: number, options: RunOptions = {}): Promise<Ran<W>> {
    // Each case's outcome is Ran<W> for its kind, which TypeScript cannot narrow W to.
    if (work.kind === 'call' && work.args.kind === 'arguments' && !work.body) return this.#call(work.method, work.args.args, deadline, options.signal) as Promise<Ran<W>>;
    if (work.kind === 'handles') return this.#callHandles(work.call, deadline, options.signal) as Promise<Ran<W>>;
    return Promise.reject(new Error(`${work.kind} work of this form never runs inline (takes() says what does)`));
  }

  async #call(method: number, args: unknown[], deadline: number, signal: AbortSignal | undefined): Promise<Ran<Extract<Work, { kind: 'call' }>>> {
    // Made now, it runs in this instance even if the service drains or moves meanwhile.
    const started = await this.#turn(deadline, signal);
    if (typeof started !== 'number') return started;
    const [budgetEnd, hardEnd] = this.instance.holdsHandles ? [deadline, deadline] : [Math.min(started + this.budgetMs, deadline), Math.min(started + HARD_BUDGETS * this.budgetMs, deadline)];
    const outcome = await this.instance.call(method, args, budgetEnd, hardEnd);
    return outcome.kind === 'interrupted' ? ({ kind: 'interrupted', ranMs: this.clocks.now() - started } satisfies Interrupted) : outcome;
  }

  async #callHandles(call: HandleCall, deadline: number, signal: AbortSignal | undefined): Promise<HandlesOutcome> {
    const started = await this.#turn(deadline, signal);
    if (typeof started !== 'number') return { result: started };
    const ran = await this.instance.callHandles(call, deadline);
    return { result: ran.result.kind === 'interrupted' ? { kind: 'timeout', what: 'call' } : ran.result, holder: ran.holder };
  }

  /** Waits for the inline turn: when the call starts, or why it is not made (its client left, its deadline passed). */
  async #turn(deadline: number, signal: AbortSignal | undefined): Promise<number | { kind: 'abandoned' } | { kind: 'timeout'; what: 'call' }> {
    await inlineTurn();
    if (signal?.aborted) return { kind: 'abandoned' };
    const started = this.clocks.now();
    // A request that spent its time arriving (a slow body) is not the service's doing.
    return started >= deadline ? { kind: 'timeout', what: 'call' } : started;
  }

  drain(reason: string): Promise<void> {
    this.instance.close(reason);
    return Promise.resolve();
  }

  close(reason: string): Promise<void> {
    return this.drain(reason);
  }
}
