// The recent history of request rates, error rates and latencies that
// `GET /api/metrics/history` answers (docs/api.md §7) and the console plots.
// Every interval the primary takes the workers' snapshots, the same ones
// /api/metrics sums, and keeps what they counted in that interval, for all
// of rt and per service, in a ring of bounded length: older samples are
// dropped. The maths is request-tallies.ts's.

import type { MetricsSnapshot } from '../ipc.js';
import type { HistorySample, MetricsHistory } from '../metrics-history.js';
import { DURATION_BUCKETS } from '../request-metrics.js';
import { figures, sumTallies, talliesIncrease, talliesOf, type Tallies } from './request-tallies.js';

/** How often a sample is taken. */
export const SAMPLE_INTERVAL_MS = 5_000;
/** 10 minutes of samples. */
export const MAX_SAMPLES = 120;

export interface HistoryOptions<W> {
  /** Each live worker's snapshot: undefined when it sent none within `timeoutMs`. */
  snapshots: (timeoutMs: number) => Promise<Map<W, MetricsSnapshot | undefined>>;
  intervalMs?: number;
  maxSamples?: number;
}

export class MetricsHistoryRing<W> {
  readonly #snapshots: HistoryOptions<W>['snapshots'];
  readonly #intervalMs: number;
  readonly #maxSamples: number;
  readonly #samples: HistorySample[] = [];
  /** Each live worker's counts at its last snapshot. */
  #last = new Map<W, Tallies>();
  #lastAt = 0;
  #timer: NodeJS.Timeout | undefined;
  /** A sample being taken: the next tick waits for none, it is skipped. */
  #taking = false;

  constructor(opts: HistoryOptions<W>) {
    this.#snapshots = opts.snapshots;
    this.#intervalMs = opts.intervalMs ?? SAMPLE_INTERVAL_MS;
    this.#maxSamples = opts.maxSamples ?? MAX_SAMPLES;
  }

  /** Samples every interval from now on. The timer holds no process alive. */
  start(): void {
    if (this.#timer) return;
    this.#lastAt = performance.now();
    this.#timer = setInterval(() => void this.sample(), this.#intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Takes one sample now (the timer's tick). */
  async sample(): Promise<void> {
    if (this.#taking) return;
    this.#taking = true;
    try {
      // Workers that take longer than an interval to answer are left out of this one.
      const snapshots = await this.#snapshots(this.#intervalMs);
      const at = performance.now();
      const seconds = (at - this.#lastAt) / 1000;
      this.#lastAt = at;
      const increases: Tallies[] = [];
      const last = new Map<W, Tallies>();
      // A worker that did not answer keeps its last counts (its requests count in the sample it next answers); one that is gone takes them with it.
      for (const [worker, snapshot] of snapshots) {
        const before = this.#last.get(worker);
        if (!snapshot) {
          if (before) last.set(worker, before);
          continue;
        }
        const tallies = talliesOf(snapshot);
        increases.push(talliesIncrease(before, tallies));
        last.set(worker, tallies);
      }
      this.#last = last;
      const interval = sumTallies(increases);
      this.#samples.push({
        at: new Date().toISOString(),
        seconds,
        all: figures(interval.all, seconds),
        services: Object.fromEntries([...interval.services].filter(([, t]) => t.requests > 0).map(([service, t]) => [service, figures(t, seconds)])),
      });
      if (this.#samples.length > this.#maxSamples) this.#samples.splice(0, this.#samples.length - this.#maxSamples);
    } finally {
      this.#taking = false;
    }
  }

  view(): MetricsHistory {
    return { interval_seconds: this.#intervalMs / 1000, max_samples: this.#maxSamples, buckets: DURATION_BUCKETS, samples: [...this.#samples] };
  }
}
