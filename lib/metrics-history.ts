// What `GET /api/metrics/history` answers (docs/api.md §7): the primary's ring
// of recent samples (primary/metrics-history-ring.ts), as JSON. Shared: the
// primary makes it, the worker that got the request answers with it.

/** The requests of one interval, for all of rt or for one service. */
export interface RequestFigures {
  /** Requests answered in the interval. */
  requests: number;
  requests_per_second: number;
  /** Answers with a 5xx status (a 499, the client gone, is not one). */
  errors: number;
  /** `errors / requests`; null without requests. */
  error_rate: number | null;
  /** Approximate: interpolated within the histogram's buckets, as Prometheus' histogram_quantile; null without requests. */
  p50_seconds: number | null;
  p99_seconds: number | null;
}

export interface HistorySample {
  /** When the interval ended (ISO 8601). */
  at: string;
  /** How long the interval was. */
  seconds: number;
  /** Every request rt answered, its own routes' included. */
  all: RequestFigures;
  /** By service (`domain.service`), those that answered requests in the interval. */
  services: Record<string, RequestFigures>;
}

export interface MetricsHistory {
  interval_seconds: number;
  /** The most samples kept: older ones are dropped. */
  max_samples: number;
  /** Upper bounds of the duration histogram's buckets the quantiles come from, in seconds. */
  buckets: number[];
  /** Oldest first. */
  samples: HistorySample[];
}
