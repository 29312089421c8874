// The ticker example: streaming methods (see ticker.wit). State lives in the
// resource objects, so one instance can serve several streams at once.
// Build it with the `clocks` feature on: without it componentize-js replaces
// the monotonic clock with a stub that traps.
import { now, subscribeDuration } from 'wasi:clocks/monotonic-clock@0.2.3';

const MAX_COUNT = 10000;
const MAX_INTERVAL_MS = 10000;

// Blocking on a pollable parks the thread until the time is up; a busy loop
// would burn a CPU (and the fuel rt meters calls with) for nothing.
function sleep(ms) {
  if (ms > 0) subscribeDuration(BigInt(ms) * 1000000n).block();
}

class Ticks {
  constructor(count, intervalMs, message) {
    this.count = count;
    this.intervalMs = intervalMs;
    this.message = message;
    this.seq = 0;
    this.started = now();
    this.problem =
      count > MAX_COUNT ? `count: at most ${MAX_COUNT}, got ${count}`
      : intervalMs > MAX_INTERVAL_MS ? `interval-ms: at most ${MAX_INTERVAL_MS}, got ${intervalMs}`
      : undefined;
  }

  next() {
    // A thrown string is the err of next's result.
    if (this.problem) throw this.problem;
    if (this.seq >= this.count) return undefined;
    if (this.seq > 0) sleep(this.intervalMs);
    return { seq: this.seq++, atMs: (now() - this.started) / 1000000n, message: this.message };
  }
}

class TextLines {
  constructor(count, intervalMs) {
    this.count = count;
    this.intervalMs = intervalMs;
    this.seq = 0;
  }

  next() {
    if (this.seq >= this.count) return undefined;
    if (this.seq > 0) sleep(this.intervalMs);
    this.seq++;
    return `line ${this.seq} of ${this.count}\n`;
  }
}

export const events = {
  Ticks,
  TextLines,
  start: (count, intervalMs, message) => new Ticks(count, intervalMs, message),
  lines: (count, intervalMs) => new TextLines(count, intervalMs),
};
