// How fast a request body arrives while rt waits for it (docs/api.md §5.10):
// a body slower than `http.min_body_bytes_per_second` holds what waits for
// it (a connection, an instance thread) for as long as its sender likes, so
// it is answered 408 before it can hold them for its whole deadline. After a
// first GRACE_MS, the bytes received must keep up with the rate over the
// time rt has waited: a body that came fast early has credit for a stall
// later. Only waiting counts: while the guest has not read what arrived (its
// reader paused the body), the time is the guest's, not the client's.
//
// Reads in progress are checked by one sweep a few times a second: a timer
// set and cleared for every read cost more than the read of a small body
// (measured: ~3 µs a request).

const GRACE_MS = 2_000;
const SWEEP_MS = 250;

export class BodyPace {
  #received = 0;
  /** Time waited before the current stretch. */
  #waited = 0;
  /** When the current stretch of waiting began; undefined while paused. */
  #since: number | undefined;

  constructor(
    /** 0: no minimum. */
    readonly minBytesPerSecond: number,
    now = performance.now(),
  ) {
    this.#since = now;
  }

  received(bytes: number): void {
    this.#received += bytes;
  }

  /** The bytes received so far. */
  get bytes(): number {
    return this.#received;
  }

  /** rt stops waiting: the reader has enough unread. */
  pause(now = performance.now()): void {
    if (this.#since === undefined) return;
    this.#waited += now - this.#since;
    this.#since = undefined;
  }

  resume(now = performance.now()): void {
    this.#since ??= now;
  }

  /** Whether the body has fallen behind the minimum rate by `now`. */
  tooSlow(now: number): boolean {
    if (this.minBytesPerSecond === 0) return false;
    const waited = this.#waited + (this.#since === undefined ? 0 : now - this.#since);
    return this.#received < (this.minBytesPerSecond * (waited - GRACE_MS)) / 1000;
  }
}

const watched = new Set<(now: number) => void>();
setInterval(() => {
  const now = performance.now();
  for (const check of watched) check(now);
}, SWEEP_MS).unref();

/** Has `check` called a few times a second with the time, until the returned function is called. */
export function watchBody(check: (now: number) => void): () => void {
  watched.add(check);
  return () => watched.delete(check);
}
