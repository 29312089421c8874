// Where a service's work runs: each placement is a strategy behind this one
// interface, and Execution (execution.ts) chooses among them for each piece
// of work by the placement policy (placement.ts):
// - inline (inline-place.ts): on the worker's main thread, one call after
//   another in one instance, each held to the inline budget; it takes a call
//   whose arguments are decoded and a call that involves handles;
// - inline for a WASI 0.3 handler on rt's own host (inline-handler-place.ts):
//   its requests side by side in one instance on the main thread, each turn
//   of its guest held to the inline budget;
// - instance threads (instance-pool.ts): work of every kind, side by side.
// A new placement is a new implementation, and a case where Execution chooses.

import type { Placement } from '../../service.js';
import type { Outcome, Work } from './work.js';
import type { CallTrace } from '../../tracing/traces.js';

/**
 * How long a call ran on its thread, by the thread's clock (thread-protocol.ts:
 * CallAnswer), and whether it was the thread's first (its wasm functions compiled
 * as they are first called: the first call of a componentize-js instance
 * pays for many).
 */
export type RunReport = (ms: number, first: boolean) => void;

/** How long a task asked to cancel (docs/api.md §5.9) has to end before its instance retires as if it could not be: it takes nothing more, and is replaced once the work beside it is done. */
export const CANCEL_GRACE_MS = 1_000;

/** What work may bring besides itself and its deadline. */
export interface RunOptions {
  /** Told how long the work ran on its thread, once it answers (not when it is cut off or lost). */
  onRun?: RunReport;
  /** Aborts when the work's client leaves: work still waiting for its turn then is never run. */
  signal?: AbortSignal;
  /** The call's span (traces on): the parent of the spans of the outgoing requests its guest makes. */
  trace?: CallTrace;
}

/** A call that ran past its placement's budget and was stopped: it had no effect outside its instance, and may be made again elsewhere. */
export interface Interrupted {
  kind: 'interrupted';
  /** How long it ran before it was stopped (ms). */
  ranMs: number;
}

/** What work comes to in a place: its outcome, or, for a call, that it was interrupted. */
export type Ran<W extends Work> = Outcome<W> | (W extends { kind: 'call' } ? Interrupted : never);

export function isInterrupted(ran: Ran<Work>): ran is Interrupted {
  return 'kind' in ran && ran.kind === 'interrupted';
}

export interface Place {
  readonly name: Placement;
  /** Whether `work` can run here. */
  takes(work: Work): boolean;
  /** Runs `work` by `deadline` (clock time; waiting and running alike). */
  run<W extends Work>(work: W, deadline: number, options?: RunOptions): Promise<Ran<W>>;
  /** Instances alive here. */
  readonly live: number;
  /** Work waiting for an instance here. */
  readonly waiting: number;
  /** Ends the instances once the work asked of them so far has run; `reason` is what their handles ended of. */
  drain(reason: string): Promise<void>;
  /** Ends the instances at once. */
  close(reason: string): Promise<void>;
}
