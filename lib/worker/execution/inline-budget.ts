// When a running inline call must stop: the decision the fuel check makes
// every FUEL_INTERVAL ticks (inline-instance.ts). The budget is wall-clock
// time, and a worker the OS did not schedule (two cores, a load generator on
// them) can pass it without running. So a call past its budget is
// interrupted only if the process used at least half the time since the CPU
// clock was read on a CPU; otherwise it gets another budget, up to its hard
// end, where it stops whatever it was doing. The CPU clock costs 2–3 µs a
// read (a getrusage system call), as much as a whole call of a small
// componentize-js method, so it is read only once a call has run for
// CPU_SAMPLE_AFTER_MS: the calls that end before (nearly all) never read it.
// Clocks are passed in, so the policy is tested alone.

/** How many inline budgets a call (or a guest's turn) may hold the main thread at all, running or not: the OS may not schedule the worker for a while. */
export const HARD_BUDGETS = 4;

/** How long a call runs before its CPU time starts being counted. */
const CPU_SAMPLE_AFTER_MS = 2;

export interface Clocks {
  /** Wall clock, ms (performance.now()). */
  now(): number;
  /** CPU time the process has used, ms (process.cpuUsage(), ~0.3 µs: read only when the check runs). */
  cpu(): number;
}

export const SYSTEM_CLOCKS: Clocks = {
  now: () => performance.now(),
  cpu: () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  },
};

export class InlineBudget {
  #budgetEnd = Infinity;
  #hardEnd = Infinity;
  /** Wall time of the call's first check, and wall and CPU time of the reading "has it been running" is measured from. */
  #started: number | undefined;
  /** The budget's length, from the first check: each further budget is as long. */
  #lengthMs = 0;
  #since: { wall: number; cpu: number } | undefined;

  constructor(private readonly clocks: Clocks = SYSTEM_CLOCKS) {}

  /** Runs `fn` with these bounds (wall-clock times); the bounds outside it are restored after. */
  within<T>(budgetEnd: number, hardEnd: number, fn: () => T): T {
    const outer = [this.#budgetEnd, this.#hardEnd, this.#started, this.#since] as const;
    [this.#budgetEnd, this.#hardEnd, this.#started, this.#since] = [budgetEnd, hardEnd, undefined, undefined];
    try {
      return fn();
    } finally {
      [this.#budgetEnd, this.#hardEnd, this.#started, this.#since] = outer;
    }
  }

  /** Whether the running call must stop now. */
  exhausted(): boolean {
    const now = this.clocks.now();
    if (this.#started === undefined) {
      this.#started = now;
      this.#lengthMs = this.#budgetEnd - now;
    }
    if (now >= this.#hardEnd) return true;
    if (now < this.#budgetEnd) {
      if (!this.#since && now - this.#started >= CPU_SAMPLE_AFTER_MS) this.#since = { wall: now, cpu: this.clocks.cpu() };
      return false;
    }
    const cpu = this.clocks.cpu();
    const since = this.#since;
    if (since && cpu - since.cpu >= (now - since.wall) / 2) return true;
    // Mostly not running (or not measured yet): another budget as long as the first, from now.
    this.#budgetEnd = now + this.#lengthMs;
    this.#since = { wall: now, cpu };
    return false;
  }
}
