// Request counts and durations, by service and method, as plain numbers on
// the request path. prom-client looks its label set up (sorting and joining
// the labels into a hash) on every inc() and observe(), even through a
// labels() handle; measured, that cost as much as the rest of a request's
// bookkeeping. So a request adds to a `Series` its route resolved once, and
// the series become prom-client's metric JSON only when the primary asks for
// a snapshot (a few times a minute).

import type { MetricsSnapshot } from '../../ipc.js';
import { DURATION_BUCKETS, DURATION_METRIC, REQUESTS_METRIC } from '../../request-metrics.js';

export const STREAMS_OPEN_METRIC = 'rt_streams_open';
export const STREAMS_METRIC = 'rt_streams_total';
export const STREAM_ITEMS_METRIC = 'rt_stream_items_total';
export const STREAM_BYTES_METRIC = 'rt_stream_bytes_total';

/** How a streamed answer ended: all its items written, failed (err, trap, timeout), or its client went away. */
export type StreamOutcome = 'completed' | 'failed' | 'client closed';

/**
 * One service and method's requests (both empty for routes that name
 * neither), or one HTTP handler's requests by the route that reached it
 * (docs/api.md §5.8): a handler has no methods.
 */
export class Series {
  /** Answers by HTTP status. */
  readonly statuses = new Map<number, number>();
  /** Per bucket (not cumulative); the last one is +Inf. */
  readonly buckets = new Array<number>(DURATION_BUCKETS.length + 1).fill(0);
  sum = 0;
  count = 0;
  /** Streamed answers (docs/api.md §5.1.1): open now, ended by outcome, and what they carried. */
  streamsOpen = 0;
  readonly streamsEnded = new Map<StreamOutcome, number>();
  streamItems = 0;
  streamBytes = 0;

  constructor(
    readonly service: string,
    readonly method: string,
    readonly route?: string,
  ) {}

  /** Its metric labels: a handler's carry its route instead of a method. */
  get labels(): Record<string, string> {
    return this.route === undefined ? { service: this.service, method: this.method } : { service: this.service, route: this.route };
  }

  observe(status: number, seconds: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]) bucket++;
    this.buckets[bucket]++;
    this.sum += seconds;
    this.count++;
  }

  streamEnded(outcome: StreamOutcome): void {
    this.streamsOpen--;
    this.streamsEnded.set(outcome, (this.streamsEnded.get(outcome) ?? 0) + 1);
  }
}

export class RequestStats {
  /** By service, then method: two lookups of strings the request holds already, no key built per request. */
  readonly #series = new Map<string, Map<string, Series>>();

  /**
   * The series of `service` and `method`, or of a handler's `route`, made on
   * first use and kept (its counts outlive reloads). Routes begin with `/`,
   * method names never do: they share the second map.
   */
  series(service: string, method: string, route?: string): Series {
    let methods = this.#series.get(service);
    if (!methods) this.#series.set(service, (methods = new Map<string, Series>()));
    const key = route ?? method;
    let series = methods.get(key);
    if (!series) methods.set(key, (series = new Series(service, method, route)));
    return series;
  }

  /** The counter and histogram in prom-client's JSON form, which its cluster aggregation sums across workers. */
  metrics(): MetricsSnapshot {
    const requests: MetricValue[] = [];
    const durations: MetricValue[] = [];
    const [open, ended, items, bytes]: MetricValue[][] = [[], [], [], []];
    for (const s of [...this.#series.values()].flatMap((methods) => [...methods.values()])) {
      const labels = s.labels;
      if (s.streamsEnded.size > 0 || s.streamsOpen > 0) {
        open.push({ value: s.streamsOpen, labels });
        for (const [outcome, value] of s.streamsEnded) ended.push({ value, labels: { ...labels, outcome } });
        items.push({ value: s.streamItems, labels });
        bytes.push({ value: s.streamBytes, labels });
      }
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
        help: 'HTTP requests answered, by service, method and status (service and method empty for routes without them; an HTTP handler\'s by service, route and status).',
        type: 'counter',
        values: requests,
        aggregator: 'sum',
      },
      { name: DURATION_METRIC, help: 'Time to answer an HTTP request, by service and method (a streamed answer: until its end).', type: 'histogram', values: durations, aggregator: 'sum' },
      { name: STREAMS_OPEN_METRIC, help: 'Streamed answers being written now, by service and method.', type: 'gauge', values: open, aggregator: 'sum' },
      { name: STREAMS_METRIC, help: 'Streamed answers ended, by service, method and outcome (completed, failed, client closed).', type: 'counter', values: ended, aggregator: 'sum' },
      { name: STREAM_ITEMS_METRIC, help: 'Items written in streamed answers, by service and method.', type: 'counter', values: items, aggregator: 'sum' },
      { name: STREAM_BYTES_METRIC, help: 'Bytes written in streamed answers (framing included), by service and method.', type: 'counter', values: bytes, aggregator: 'sum' },
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
  type: 'counter' | 'histogram' | 'gauge';
  values: MetricValue[];
  aggregator: 'sum';
}
