// When a running inline call must stop: the decision the fuel check makes
// every FUEL_INTERVAL ticks (inline-instance.ts). The budget is wall-clock
// time, and a worker the OS did not schedule (two cores, a load generator on
// them) can pass it without running. So a call past its budget is
// interrupted only if the process used at least half that time on a CPU;
// otherwise it gets another budget, up to its hard end, where it stops
// whatever it was doing. Clocks are passed in, so the policy is tested alone.

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

export class FuelBudget {
  #budgetEnd = Infinity;
  #hardEnd = Infinity;
  /** Wall and CPU time at the call's first check: where "has it been running" is measured from. */
  #since: { wall: number; cpu: number } | undefined;

  constructor(private readonly clocks: Clocks = SYSTEM_CLOCKS) {}

  /** Runs `fn` with these bounds (wall-clock times); the bounds outside it are restored after. */
  within<T>(budgetEnd: number, hardEnd: number, fn: () => T): T {
    const outer = [this.#budgetEnd, this.#hardEnd, this.#since] as const;
    [this.#budgetEnd, this.#hardEnd, this.#since] = [budgetEnd, hardEnd, undefined];
    try {
      return fn();
    } finally {
      [this.#budgetEnd, this.#hardEnd, this.#since] = outer;
    }
  }

  /** Whether the running call must stop now. */
  exhausted(): boolean {
    const now = this.clocks.now();
    this.#since ??= { wall: now, cpu: this.clocks.cpu() };
    if (now >= this.#hardEnd) return true;
    if (now < this.#budgetEnd) return false;
    const cpu = this.clocks.cpu();
    if (cpu - this.#since.cpu >= (now - this.#since.wall) / 2) return true;
    // Mostly not running: another budget as long as the first, from now.
    this.#budgetEnd = now + (this.#budgetEnd - this.#since.wall);
    this.#since = { wall: now, cpu };
    return false;
  }
}
