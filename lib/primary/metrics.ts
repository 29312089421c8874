// The runtime's metrics as `/api/metrics` answers them: the sum of every
// worker's snapshot (prom-client's cluster aggregation, fed by our own IPC so
// that a worker that does not answer is handled like for any other request),
// followed by the primary's own.

import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client';
import type { MetricsSnapshot } from '../ipc.js';

export class PrimaryMetrics {
  readonly #registry = new Registry();
  readonly #operations: Counter<'operation' | 'status'>;
  readonly #watched: Counter<'operation'>;

  constructor(gauges: { services: () => number; workers: () => number }) {
    const registers = [this.#registry];
    this.#operations = new Counter({
      name: 'rt_control_operations_total',
      help: 'Restart, quiesce and reload operations, by the HTTP status they answered.',
      labelNames: ['operation', 'status'],
      registers,
    });
    this.#watched = new Counter({
      name: 'rt_watch_operations_total',
      help: 'Reloads and restarts repositories.watch started (each also counted in rt_control_operations_total, like one the endpoint starts).',
      labelNames: ['operation'],
      registers,
    });
    new Gauge({
      name: 'rt_services',
      help: 'Services served (quiesced ones included), not those that failed to load.',
      registers,
      collect() {
        this.set(gauges.services());
      },
    });
    new Gauge({
      name: 'rt_workers',
      help: 'Worker processes running.',
      registers,
      collect() {
        this.set(gauges.workers());
      },
    });
  }

  operation(operation: string, status: number): void {
    this.#operations.inc({ operation, status });
  }

  /** An operation `repositories.watch` started: counted here besides rt_control_operations_total. */
  watched(operation: 'reload' | 'restart'): void {
    this.#watched.inc({ operation });
  }

  get contentType(): string {
    return this.#registry.contentType;
  }

  /** Prometheus text: the workers' snapshots summed, then the primary's metrics. */
  async text(snapshots: MetricsSnapshot[]): Promise<string> {
    const workers = snapshots.length > 0 ? await AggregatorRegistry.aggregate(snapshots).metrics() : '';
    return workers + (await this.#registry.metrics());
  }
}
