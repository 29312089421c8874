// Request counts and durations, by service and method, as plain numbers on
// the request path. prom-client looks its label set up (sorting and joining
// the labels into a hash) on every inc() and observe(), even through a
// labels() handle; measured, that cost as much as the rest of a request's
// bookkeeping. So a request adds to a `Series` its route resolved once, and
// the series become prom-client's metric JSON only when the primary asks for
// a snapshot (a few times a minute).

import type { MetricsSnapshot } from './metrics.js';

/** Upper bounds of the duration histogram's buckets, in seconds. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const REQUESTS_METRIC = 'rt_http_requests_total';
export const DURATION_METRIC = 'rt_http_request_duration_seconds';

/** One service and method's requests (both empty for routes that name neither). */
export class Series {
  /** Answers by HTTP status. */
  readonly statuses = new Map<number, number>();
  /** Per bucket (not cumulative); the last one is +Inf. */
  readonly buckets = new Array<number>(DURATION_BUCKETS.length + 1).fill(0);
  sum = 0;
  count = 0;

  constructor(
    readonly service: string,
    readonly method: string,
  ) {}

  observe(status: number, seconds: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++;
    this.buckets[bucket]!++;
    this.sum += seconds;
    this.count++;
  }
}

export class RequestStats {
  readonly #series = new Map<string, Series>();

  /** The series of `service` and `method`, made on first use and kept (its counts outlive reloads). */
  series(service: string, method: string): Series {
    const key = `${service}\u0000${method}`;
    let series = this.#series.get(key);
    if (!series) this.#series.set(key, (series = new Series(service, method)));
    return series;
  }

  /** The counter and histogram in prom-client's JSON form, which its cluster aggregation sums across workers. */
  metrics(): MetricsSnapshot {
    const requests: MetricValue[] = [];
    const durations: MetricValue[] = [];
    for (const s of this.#series.values()) {
      const labels = { service: s.service, method: s.method };
      for (const [status, value] of s.statuses) requests.push({ value, labels: { ...labels, status } });
      let cumulative = 0;
      s.buckets.forEach((n, i) => {
        cumulative += n;
        durations.push({ value: cumulative, metricName: `${DURATION_METRIC}_bucket`, labels: { le: DURATION_BUCKETS[i] ?? '+Inf', ...labels } });
      });
      durations.push({ value: s.sum, metricName: `${DURATION_METRIC}_sum`, labels });
      durations.push({ value: s.count, metricName: `${DURATION_METRIC}_count`, labels });
    }
    return [
      {
        name: REQUESTS_METRIC,
        help: 'HTTP requests answered, by service, method and status (service and method empty for routes without them).',
        type: 'counter',
        values: requests,
        aggregator: 'sum',
      },
      { name: DURATION_METRIC, help: 'Time to answer an HTTP request, by service and method.', type: 'histogram', values: durations, aggregator: 'sum' },
    ] satisfies MetricJson[] as unknown as MetricsSnapshot;
  }
}

// prom-client's JSON as its getMetricsAsJSON() writes it and its aggregate()
// reads it; its type declarations say `type` is an enum number and require a
// `collect` function, which the JSON never has.
interface MetricValue {
  value: number;
  metricName?: string;
  labels: Record<string, string | number>;
}
interface MetricJson {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: MetricValue[];
  aggregator: 'sum';
}
