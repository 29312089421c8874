// How a thread that runs a guest sleeps until the worker's main thread has
// something for it (body bytes, credit) or a deadline passes: a shared
// counter, Atomics.wait on the thread's side and Atomics.notify on the other.

/** What a waiting host side watches: a counter that moves when there is something to look at. */
export interface WakeSignal {
  epoch(): number;
  /** Resolves once the counter is no longer `seen`. */
  moved(seen: number): Promise<void>;
}

/**
 * A WakeSignal on one thread (an inline handler's, on the worker's main
 * thread): nothing sleeps, so a promise is all a wait needs.
 */
export class LocalWaker implements WakeSignal {
  #epoch = 0;
  #waiting: (() => void)[] = [];

  epoch(): number {
    return this.#epoch;
  }

  moved(seen: number): Promise<void> {
    if (seen !== this.#epoch) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  wake(): void {
    this.#epoch++;
    const waiting = this.#waiting;
    if (waiting.length === 0) return;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  }
}

/**
 * Blocks the calling thread until the shared counter moves. The main-thread
 * side bumps it with `wake` (same buffer).
 */
export class Waker implements WakeSignal {
  readonly #cell: Int32Array;

  /** `shared` holds at least one Int32 at `index`. */
  constructor(shared: SharedArrayBuffer, index = 0) {
    this.#cell = new Int32Array(shared, index * 4, 1);
  }

  epoch(): number {
    return Atomics.load(this.#cell, 0);
  }

  /** Sleeps until the counter is no longer `seen` or `ms` passed (Infinity: no bound). */
  sleep(seen: number, ms: number): void {
    Atomics.wait(this.#cell, 0, seen, ms);
  }

  /** Resolves once the counter is no longer `seen`, without blocking the thread: for a thread whose guest is suspended (JSPI) while its event loop runs. */
  async moved(seen: number): Promise<void> {
    const waiting = Atomics.waitAsync(this.#cell, 0, seen);
    if (waiting.async) await waiting.value;
  }

  /** From any thread: wakes whoever sleeps on `shared[index]`. */
  static wake(shared: SharedArrayBuffer, index = 0): void {
    const cell = new Int32Array(shared, index * 4, 1);
    Atomics.add(cell, 0, 1);
    Atomics.notify(cell, 0);
  }
}

/** A waker nobody else bumps: on a thread that receives nothing (or in a test), only timers end a wait. */
export function privateWaker(): Waker {
  return new Waker(new SharedArrayBuffer(4));
}
