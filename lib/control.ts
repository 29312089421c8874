// What a control operation (docs/api.md §5.2–5.4, /api/metrics and its history) came to, as
// the primary's control plane reports it and a worker's routes answer it. The
// primary speaks in outcomes, not HTTP: the worker maps them (http/operations.ts), and
// a failure is an error code of the catalogue with its details.

import { ERRORS, type ErrorCode, type ErrorContext } from './errors.js';
import type { MetricsHistory } from './metrics-history.js';
import type { LoadFailure, ServiceId } from './service.js';

export type ControlRequest =
  /** `config` is the restart body as sent; absent: the configuration file from the repository. */
  | { op: 'restart'; service: ServiceId; config?: { bytes: Uint8Array; contentType: string } }
  | { op: 'quiesce'; service: ServiceId }
  | { op: 'reload' }
  /** Not a change: every worker's metrics, summed (`/api/metrics`). */
  | { op: 'metrics' }
  /** Not a change: the recent rates and latencies the primary sampled (`/api/metrics/history`). */
  | { op: 'metrics-history' };

export type ControlOutcome =
  | { kind: 'restarted' | 'quiesced'; service: string }
  /** Services by name, and what failed to load (the catalog's failures). */
  | { kind: 'reloaded'; added: string[]; updated: string[]; removed: string[]; failed: LoadFailure[] }
  /** Prometheus text. */
  | { kind: 'metrics'; text: string; contentType: string }
  | { kind: 'metrics-history'; history: MetricsHistory }
  | { kind: 'failed'; code: ErrorCode; details: string; context: ErrorContext };

/** The HTTP status an outcome answers with: what `rt_control_operations_total` counts by. */
export function outcomeStatus(outcome: ControlOutcome): number {
  return outcome.kind === 'failed' ? ERRORS[outcome.code].status : 200;
}
