// What the console's plots (plots.ts) draw, from GET /api/metrics/history
// (docs/api.md §7): per plot, the samples' times and a line of values each.
// Apart from the drawing, so that tests run it without a browser.

import type { MetricsHistory, RequestFigures } from '../../lib/metrics-history.js';

/** What the selector names for the figures of all of rt. */
export const ALL = '';

/** One plot's data: the samples' times (seconds), and one array of values per line (null: no value then). */
export interface Columns {
  times: number[];
  lines: (number | null)[][];
}

export interface PlotData {
  rate: Columns;
  latency: Columns;
  errors: Columns;
}

/**
 * The columns of the three plots, for all of rt (`ALL`) or one service
 * (`domain.service`). A sample without the service is one where it answered
 * nothing: no requests, and no latency or error share to show.
 */
export function plotData(history: MetricsHistory, service: string): PlotData {
  const times = history.samples.map((s) => Date.parse(s.at) / 1000);
  const figures = history.samples.map((s): RequestFigures | undefined => (service === ALL ? s.all : s.services[service]));
  const ms = (seconds: number | null | undefined) => (seconds == null ? null : seconds * 1000);
  return {
    rate: { times, lines: [figures.map((f) => f?.requests_per_second ?? 0)] },
    latency: { times, lines: [figures.map((f) => ms(f?.p50_seconds)), figures.map((f) => ms(f?.p99_seconds))] },
    errors: { times, lines: [figures.map((f) => (f?.error_rate == null ? null : f.error_rate * 100))] },
  };
}

/** Services that answered requests in any sample, by name. */
export function servicesIn(history: MetricsHistory): string[] {
  return [...new Set(history.samples.flatMap((s) => Object.keys(s.services)))].sort();
}
