// wasi:io/poll for a guest whose `poll` may block its thread.
//
// StarlingMonkey (componentize-js) runs its whole event loop inside the
// exported `handle`: every await ends up in `poll(list)`, which must block
// until one of the pollables is ready. On an instance thread rt blocks with
// Atomics.wait on a shared counter (the Waker) until either the main thread
// bumps it (body bytes arrived, response credit granted) or the earliest
// timer among the pollables is due. Readiness is always re-checked from the
// source of truth, so a spurious wake-up costs one loop, never a wrong answer.

import { assignRep, GuestMisuse } from '../core/host-objects.js';
import { privateWaker, type Waker } from '../core/waker.js';

/**
 * What a pollable waits on. `ready` is asked after every wake-up; `deadline`
 * (monotonic ns) bounds the sleep for timers; `pending` says whether something
 * outside the thread can still make it ready (without one, and no deadline,
 * waiting would be forever). A source that stops pending must be ready from
 * then on: `poll` relies on it to ask the two without a lock.
 */
export interface Readiness {
  ready(): boolean;
  deadline?: bigint;
  pending?(): boolean;
}

// Sources read what other threads sent (body chunks, credit) when asked for
// readiness (receiveMessageOnPort, Atomics.load): nothing to refresh here.
let waker: Waker = privateWaker();

/** Makes this thread's `poll` sleep on `shared` (an instance thread's, bumped by the main thread). */
export function usePollWaker(shared: Waker): void {
  waker = shared;
}

export const now = (): bigint => process.hrtime.bigint();

export class Pollable {
  readonly #readiness: Readiness;

  constructor(readiness: Readiness) {
    // The glue never constructs a pollable (wasi:io/poll has no constructor); rt does.
    this.#readiness = readiness;
    assignRep(this);
  }

  /** @internal */ get readiness(): Readiness {
    return this.#readiness;
  }

  ready(): boolean {
    return this.#readiness.ready();
  }

  block(): void {
    poll([this]);
  }

  [Symbol.dispose](): void {
    // Nothing to release: readiness is read from its source.
  }
}

/** A pollable that is ready now and stays so (a stream that never has to wait). */
export const alwaysReady = (): Pollable => new Pollable({ ready: () => true });

/**
 * wasi:io/poll#poll: the indices of the ready pollables, blocking until there
 * is at least one. A list none of which can ever become ready traps instead of
 * hanging the thread for good.
 */
export function poll(list: Pollable[]): Uint32Array {
  if (list.length === 0) throw new GuestMisuse('poll: an empty list of pollables');
  for (;;) {
    // Read the epoch before the check: a wake-up between check and sleep then ends the sleep at once.
    const seen = waker.epoch();
    const ready: number[] = [];
    let deadline: bigint | undefined;
    let pending = false;
    list.forEach((p, i) => {
      const r = p.readiness;
      // `pending` before `ready`: asking a source may take in what another
      // thread sent, so its state can move between the two questions. Asked
      // the other way round, "not ready yet" then "no longer pending" would
      // trap a poll whose pollable has just become ready; asked in this
      // order, a source that has stopped pending answers ready.
      if (r.pending?.()) pending = true;
      if (r.ready()) ready.push(i);
      if (r.deadline !== undefined && (deadline === undefined || r.deadline < deadline)) deadline = r.deadline;
    });
    if (ready.length > 0) return Uint32Array.from(ready);
    if (deadline === undefined && !pending) throw new GuestMisuse(`poll: none of the ${list.length} pollables can ever become ready`);
    const ms = deadline === undefined ? Infinity : Math.max(0, Number(deadline - now()) / 1e6);
    if (ms > 0) waker.sleep(seen, ms);
  }
}
