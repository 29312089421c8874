// Waiting in tests: for a state, never for a fixed time. `eventually()` tries
// a probe until the state it checks holds, within a bound, and fails naming
// what it waited for and what the last try saw. Where a test lets time pass on
// purpose (to show that something does not happen within it, or to act as a
// slow client), `letTimePass()` says so and why. `within()` bounds a promise.
// This module is the one place in test/ with timers that waits are made of:
// the lint rule in eslint.config.js holds the rest of test/ to it
// (test/unit/test-conventions.test.ts checks the rule).

import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';

export interface EventuallyOptions {
  /** What is waited for, for the failure: e.g. "the stopped worker to be replaced". */
  what: string;
  /** How long the state may take to come; default 5 s. */
  timeoutMs?: number;
  /** Pause between tries; default 50 ms. */
  intervalMs?: number;
  /** More to say when the wait fails (e.g. what a process printed). */
  context?: () => string;
}

/**
 * Thrown by a probe to stop waiting and fail at once: the state can no longer
 * come (the process it waits on exited), or something seen on the way must
 * never be (see `always`). The failure carries `reason`.
 */
export class StopWaiting extends Error {
  constructor(readonly reason: unknown) {
    super(reason instanceof Error ? reason.message : String(reason));
    this.name = 'StopWaiting';
  }
}

/** Runs `check` inside a probe as a check that must hold on every try: if it fails, the wait fails at once (the probe's other assertions are tried again). */
export function always(check: () => void): void {
  try {
    check();
  } catch (e) {
    throw new StopWaiting(e);
  }
}

/**
 * Tries `probe` until it holds, and resolves with what it returned then. The
 * probe says "not yet" by throwing (an assertion: its message is what the
 * failure reports) or by returning `false`; anything else holds (so an
 * assertion-only probe holds once it returns). The first try is at once, the
 * next ones `intervalMs` apart; a probe that has not settled when the bound
 * passes fails the wait too. Past `timeoutMs` the wait fails with an error
 * naming `what` and the last try's error (its `cause`; an assertion's
 * expected and actual values are kept for the diff).
 */
export async function eventually<T>(probe: () => T | Promise<T>, options: EventuallyOptions): Promise<Exclude<T, false>> {
  const { what, timeoutMs = 5_000, intervalMs = 50, context } = options;
  const started = performance.now();
  const deadline = started + timeoutMs;
  /** What the last try that finished saw: its error, or undefined when it returned false. */
  let last: unknown;
  for (let tries = 1; ; tries++) {
    /** A try is given until the deadline: one still running then is the last. */
    let unfinished = false;
    try {
      const value = await within(Promise.resolve().then(probe), Math.max(0, deadline - performance.now()), 'a try');
      if (value !== false) return value as Exclude<T, false>;
      last = undefined;
    } catch (e) {
      if (e instanceof StopWaiting) throw failure(`gave up waiting for ${what} after ${Math.round(performance.now() - started)} ms`, e.reason, context);
      if (e instanceof TookTooLong) unfinished = true;
      else last = e;
    }
    const left = deadline - performance.now();
    if (left <= 0 || unfinished) {
      const headline = `waited ${timeoutMs} ms (${tries} ${tries === 1 ? 'try' : 'tries'}) for ${what}, in vain${unfinished ? ' (the last try had not finished)' : ''}`;
      throw failure(headline, unfinished && tries === 1 ? new Error('no try finished') : last, context);
    }
    await sleep(Math.min(intervalMs, left));
  }
}

/**
 * Lets `ms` pass on purpose, where the passing time is what a test shows or
 * needs: that something does not happen within it, a pace, a client that
 * sends nothing for a while. `why` says which (it is there for the reader;
 * a wait for a state is `eventually()`'s).
 */
export async function letTimePass(ms: number, why: string): Promise<void> {
  if (why.trim() === '') throw new Error('letTimePass: say why the time must pass');
  await sleep(ms);
}

/** What `within` fails with. */
export class TookTooLong extends Error {}

/** What `promise` settles with, if it does within `ms`; otherwise fails (TookTooLong), saying that `what` took longer. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TookTooLong(`${what} took longer than ${Math.round(ms)} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The wait's error: `headline`, then what the last try saw, then `context`. */
function failure(headline: string, last: unknown, context: (() => string) | undefined): Error {
  const seen = last === undefined ? 'the probe still returned false' : last instanceof Error ? last.message : inspect(last);
  const error = new Error(`${headline}: ${seen}${context ? `\n${context()}` : ''}`, last === undefined ? {} : { cause: last });
  // An assertion's expected and actual values, for mocha's diff.
  if (last instanceof Error && 'actual' in last && 'expected' in last) {
    const { actual, expected, showDiff } = last as Error & { actual: unknown; expected: unknown; showDiff?: boolean };
    Object.assign(error, { actual, expected, showDiff: showDiff ?? true });
  }
  return error;
}
