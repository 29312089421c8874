// Whether a service's calls stay inline on the worker's main thread or go to
// instance threads, decided on evidence and undone when the evidence was a
// false alarm (execution.ts carries the decisions out).
//
// What a call costs is its own run: the synchronous call into the instance,
// timed around that alone (timing across an `await` counts every other
// request's work queued before the continuation). One slow call proves
// nothing: a GC pause or the OS descheduling the worker lands in a call now
// and then. So calls are judged in blocks (`blockCalls`, 16), with the
// slowest (`trimmed`, 2) of each block left out; a block whose other calls average over
// `averageMs` (1 ms) makes the policy suspicious, and the next block is
// timed on the CPU clock as well (process.cpuUsage() costs ~2–3 µs, too much
// for every call): the service moves only if those calls also used that much
// CPU. A worker that was descheduled used no CPU meanwhile; a busy thread
// elsewhere in the process adds CPU but not wall time, so both must agree.
//
// A call that runs past the inline budget (inline-budget.ts decides that) is
// made again on a thread; the service moves if it takes over
// overrunConfirmMs there too, or does not finish (a GC pause or a
// descheduled worker made the inline attempt long, not the work). A call
// that brings a body too large for the main thread moves the service at
// once: that call is made on a thread. Every move is on
// probation: after PROBATION_MS the service comes back inline and is judged
// again; each further move doubles the probation, up to MAX_PROBATION_MS, so
// a truly slow method spends almost all its time on threads and a false
// alarm costs one probation.

import type { Placement } from '../../service.js';
import { SYSTEM_CLOCKS, type Clocks } from './inline-budget.js';

/**
 * Why a service moved (the metric's `reason` label): its calls were slow, one
 * ran past the inline budget, one brought a large body, its probation on
 * threads was over, or its inline instance could not be made when it was.
 */
export type MoveReason = 'slow_calls' | 'over_budget' | 'large_body' | 'probation_over' | 'inline_failed';

export interface Move {
  to: Placement;
  reason: MoveReason;
  /** For the log line: what the evidence was. */
  detail: string;
}

export interface PlacementSettings {
  /** Calls judged together. */
  blockCalls: number;
  /** The slowest calls of a block left out of its average. */
  trimmed: number;
  /** Average call time (ms), trimmed, above which a service belongs on threads. */
  averageMs: number;
  /** How long one inline call may run (execution.ts interrupts it then). */
  budgetMs: number;
  /**
   * How long a call that overran the inline budget must also take on a
   * thread for the service to move (ms): instrumented code is at most ~2×
   * slower, so work that needs the budget inline needs over half of it there;
   * a call that overran because the worker was paused (GC, the OS) takes its
   * usual time.
   */
  overrunConfirmMs: number;
  /** How long a first move lasts before the service is tried inline again (ms). */
  probationMs: number;
  maxProbationMs: number;
}

/** A call made on an instance thread: how long it ran there, and whether it was the thread's first (place.ts, RunReport). */
export interface ThreadRun {
  ms: number;
  first: boolean;
}

export const PLACEMENT: PlacementSettings = {
  blockCalls: 16,
  trimmed: 2,
  averageMs: 1,
  budgetMs: 20,
  overrunConfirmMs: 5,
  probationMs: 30_000,
  maxProbationMs: 600_000,
};

/** One block's sum and its `trimmed` largest samples. */
class Block {
  count = 0;
  sum = 0;
  readonly #top: number[];

  constructor(trimmed: number) {
    this.#top = new Array<number>(trimmed).fill(0);
  }

  add(ms: number): void {
    this.count++;
    this.sum += ms;
    const top = this.#top;
    if (top.length === 0 || ms <= top[top.length - 1]) return;
    let i = top.length - 1;
    while (i > 0 && top[i - 1] < ms) {
      top[i] = top[i - 1];
      i--;
    }
    top[i] = ms;
  }

  /** The average of the block without its largest samples. */
  trimmedMean(): number {
    const kept = this.count - this.#top.length;
    return kept > 0 ? (this.sum - this.#top.reduce((a, b) => a + b, 0)) / kept : 0;
  }

  reset(): void {
    this.count = 0;
    this.sum = 0;
    this.#top.fill(0);
  }
}

export class PlacementPolicy {
  #placement: Placement = 'inline';
  #wall: Block;
  /** While suspicious: the confirming block, wall and CPU. */
  #confirming: { wall: Block; cpu: Block } | undefined;
  /** When the service may come back inline (clock ms), while on threads. */
  #returnAt = Infinity;
  /** Moves to threads so far: each doubles the next probation. */
  #moves = 0;

  constructor(
    private readonly clocks: Clocks = SYSTEM_CLOCKS,
    readonly settings: PlacementSettings = PLACEMENT,
  ) {
    this.#wall = new Block(settings.trimmed);
  }

  get placement(): Placement {
    return this.#placement;
  }

  /**
   * Runs an inline call (`run` is its synchronous part) and records what it
   * cost. A call that throws (an interrupt) is not recorded: `overBudget`
   * judges it.
   */
  measure<T>(run: () => T): T {
    const { clocks } = this;
    const confirming = this.#confirming;
    const cpu0 = confirming ? clocks.cpu() : 0;
    const wall0 = clocks.now();
    const result = run();
    const wall = clocks.now() - wall0;
    if (!confirming) this.#wall.add(wall);
    else {
      confirming.cpu.add(clocks.cpu() - cpu0);
      confirming.wall.add(wall);
    }
    return result;
  }

  /** After an inline call: a move to threads when the calls measured so far call for one. */
  verdict(): Move | undefined {
    const { blockCalls, averageMs } = this.settings;
    const confirming = this.#confirming;
    if (!confirming) {
      if (this.#wall.count < blockCalls) return undefined;
      const mean = this.#wall.trimmedMean();
      this.#wall.reset();
      if (mean > averageMs) this.#confirming = { wall: new Block(this.settings.trimmed), cpu: new Block(this.settings.trimmed) };
      return undefined;
    }
    if (confirming.cpu.count < blockCalls) return undefined;
    this.#confirming = undefined;
    const [wall, cpu] = [confirming.wall.trimmedMean(), confirming.cpu.trimmedMean()];
    if (wall <= averageMs || cpu <= averageMs) return undefined;
    return this.leave('slow_calls', `its calls took ${cpu.toFixed(1)} ms of CPU each (${blockCalls} calls, the ${this.settings.trimmed} slowest left out; over ${averageMs} ms they hold the main thread from every other request)`);
  }

  /**
   * A call ran past the inline budget and was made again on a thread, where
   * it ran `thread.ms` (undefined: it did not answer there, cut off at its
   * deadline or lost): a move when the thread confirms the work is long. A
   * thread's first call also compiles the wasm functions it reaches, so it
   * confirms only by taking the whole inline budget.
   */
  overran(thread: ThreadRun | undefined, detail: string): Move | undefined {
    if (thread && thread.ms < (thread.first ? this.settings.budgetMs : this.settings.overrunConfirmMs)) return undefined;
    const there = thread === undefined ? 'it did not finish on a thread either' : `it took ${thread.ms.toFixed(1)} ms on a thread`;
    return this.leave('over_budget', `${detail}, and ${there}`);
  }

  /**
   * The service goes to threads at once, for a reason of one call (it ran
   * past the inline budget, or brought a body too large for the main thread:
   * it is made on a thread) or because its inline instance could not be
   * made; undefined when it is there already.
   */
  leave(reason: Exclude<MoveReason, 'probation_over'>, detail: string): Move | undefined {
    if (this.#placement === 'threads') return undefined;
    this.#placement = 'threads';
    this.#confirming = undefined;
    this.#returnAt = this.clocks.now() + this.#probationMs(++this.#moves);
    return { to: 'threads', reason, detail: `${detail}; back inline on probation in ${formatMs(this.#probationMs(this.#moves))}` };
  }

  /** On threads: a move back inline once the probation is over. */
  mayReturn(): Move | undefined {
    if (this.#placement === 'inline' || this.clocks.now() < this.#returnAt) return undefined;
    this.#placement = 'inline';
    this.#returnAt = Infinity;
    this.#wall.reset();
    this.#confirming = undefined;
    return { to: 'inline', reason: 'probation_over', detail: `no move for ${formatMs(this.#probationMs(this.#moves))}: its calls are judged inline again` };
  }

  /** The probation after `moves` moves: doubled each time, up to the maximum. */
  #probationMs(moves: number): number {
    return Math.min(this.settings.probationMs * 2 ** Math.max(0, moves - 1), this.settings.maxProbationMs);
  }
}

function formatMs(ms: number): string {
  return ms >= 60_000 ? `${(ms / 60_000).toFixed(ms % 60_000 ? 1 : 0)} min` : `${Math.round(ms / 1000)} s`;
}
