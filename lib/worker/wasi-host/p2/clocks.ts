// wasi:clocks/monotonic-clock with pollables rt's `poll` can sleep on: a
// guest's setTimeout is a subscribe-instant/duration polled with the rest.

import { now, Pollable } from './poll.js';

function timer(deadline: bigint): Pollable {
  return new Pollable({ ready: () => now() >= deadline, deadline });
}

export const monotonicClock = {
  now,
  /** Nanoseconds: process.hrtime's unit (its real granularity is the platform's). */
  resolution: (): bigint => 1n,
  subscribeInstant: (when: bigint): Pollable => timer(when),
  subscribeDuration: (duration: bigint): Pollable => timer(now() + duration),
};
