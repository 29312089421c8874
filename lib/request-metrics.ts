// The request metrics' names and the duration histogram's buckets (docs/api.md
// §7): the workers count requests into them (worker/http/request-stats.ts),
// the primary reads them back from the workers' snapshots for the history of
// rates and latencies (primary/request-tallies.ts).

/** Upper bounds of the duration histogram's buckets, in seconds (a last one, +Inf, holds the rest). */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const REQUESTS_METRIC = 'rt_http_requests_total';
export const DURATION_METRIC = 'rt_http_request_duration_seconds';
