// The maths behind the history of request rates and latencies
// (metrics-history-ring.ts): a worker's request counts read from the snapshot
// it sends for /api/metrics, what they grew by between two snapshots, and the
// figures of an interval, quantiles estimated from the duration histogram.
//
// Increases are taken worker by worker, then summed. Summed first, a worker
// that dies takes its counts out of the sum: the sum goes down, and taking
// its new value as the increase (Prometheus' rule for a counter reset) would
// count every other worker's requests since it started again.

import type { MetricsSnapshot } from '../ipc.js';
import type { RequestFigures } from '../metrics-history.js';
import { DURATION_BUCKETS, DURATION_METRIC, REQUESTS_METRIC } from '../request-metrics.js';

/** Requests counted (since a worker started, or in an interval). */
export interface RequestTally {
  requests: number;
  /** Answers with a 5xx status. */
  errors: number;
  /** The duration histogram: cumulative counts, one per bound of DURATION_BUCKETS, then +Inf. */
  buckets: number[];
}

/** A worker's (or an interval's) requests: all of them, and those of each service (by `domain.service`). */
export interface Tallies {
  all: RequestTally;
  services: Map<string, RequestTally>;
}

export const emptyTally = (): RequestTally => ({ requests: 0, errors: 0, buckets: new Array<number>(DURATION_BUCKETS.length + 1).fill(0) });

const emptyTallies = (): Tallies => ({ all: emptyTally(), services: new Map() });

function serviceTally(tallies: Tallies, service: string): RequestTally {
  let tally = tallies.services.get(service);
  if (!tally) tallies.services.set(service, (tally = emptyTally()));
  return tally;
}

/** Adds `b` into `a`. */
function add(a: RequestTally, b: RequestTally): void {
  a.requests += b.requests;
  a.errors += b.errors;
  b.buckets.forEach((n, i) => (a.buckets[i] += n));
}

/** The request counter and duration histogram of one worker's snapshot (request-stats.ts writes them), summed by service. */
export function talliesOf(snapshot: MetricsSnapshot): Tallies {
  const tallies = emptyTallies();
  // A service's requests count once in `all`, and requests without one (rt's own routes) only there.
  const count = (service: unknown, change: (t: RequestTally) => void) => {
    change(tallies.all);
    if (typeof service === 'string' && service !== '') change(serviceTally(tallies, service));
  };
  for (const metric of snapshot) {
    if (metric.name === REQUESTS_METRIC) {
      for (const { value, labels } of metric.values) {
        count(labels.service, (t) => {
          t.requests += value;
          if (Number(labels.status) >= 500) t.errors += value;
        });
      }
    } else if (metric.name === DURATION_METRIC) {
      for (const { value, labels, ...named } of metric.values) {
        // The histogram's values are its buckets, sum and count, told apart by their name (which prom-client's types leave out).
        if ((named as { metricName?: string }).metricName !== `${DURATION_METRIC}_bucket`) continue;
        const bucket = labels.le === '+Inf' ? DURATION_BUCKETS.length : DURATION_BUCKETS.indexOf(Number(labels.le));
        if (bucket >= 0) count(labels.service, (t) => (t.buckets[bucket] += value));
      }
    }
  }
  return tallies;
}

/**
 * What `after` counted since `before`, a snapshot of the same worker (none: a
 * worker that started since, counting from zero). A count that went down
 * means counting started again: `after` is then all of the increase, never
 * a negative one.
 */
export function increase(before: RequestTally | undefined, after: RequestTally): RequestTally {
  if (!before || after.requests < before.requests || after.buckets.some((n, i) => n < before.buckets[i])) return after;
  return {
    requests: after.requests - before.requests,
    errors: Math.max(0, after.errors - before.errors),
    buckets: after.buckets.map((n, i) => n - before.buckets[i]),
  };
}

/** `increase` for all of a worker's requests and each service's. */
export function talliesIncrease(before: Tallies | undefined, after: Tallies): Tallies {
  const services = new Map<string, RequestTally>();
  for (const [service, tally] of after.services) services.set(service, increase(before?.services.get(service), tally));
  return { all: increase(before?.all, after.all), services };
}

/** Several workers' tallies as one. */
export function sumTallies(list: Tallies[]): Tallies {
  const sum = emptyTallies();
  for (const tallies of list) {
    add(sum.all, tallies.all);
    for (const [service, tally] of tallies.services) add(serviceTally(sum, service), tally);
  }
  return sum;
}

/**
 * The `q`-quantile (0 < q ≤ 1) of the durations a histogram counted, as
 * Prometheus' histogram_quantile estimates it: linearly interpolated within
 * the bucket it falls in (the first from 0); in the +Inf bucket, the highest
 * finite bound. Null for an empty histogram.
 */
export function quantile(q: number, cumulative: readonly number[], bounds: readonly number[] = DURATION_BUCKETS): number | null {
  const total = cumulative.at(-1) ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  const bucket = cumulative.findIndex((n) => n >= rank);
  if (bucket >= bounds.length) return bounds.at(-1) ?? null;
  const lower = bucket === 0 ? 0 : bounds[bucket - 1];
  const below = bucket === 0 ? 0 : cumulative[bucket - 1];
  return lower + ((bounds[bucket] - lower) * (rank - below)) / (cumulative[bucket] - below);
}

/** An interval's figures from what it counted over `seconds`. */
export function figures(tally: RequestTally, seconds: number): RequestFigures {
  const { requests, errors, buckets } = tally;
  return {
    requests,
    requests_per_second: seconds > 0 ? requests / seconds : 0,
    errors,
    error_rate: requests > 0 ? errors / requests : null,
    p50_seconds: quantile(0.5, buckets),
    p99_seconds: quantile(0.99, buckets),
  };
}
