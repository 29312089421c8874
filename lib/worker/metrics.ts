// A worker's Prometheus metrics (contract §7). The primary collects every
// worker's snapshot over IPC and answers `/api/metrics` with their sum
// (lib/primary/metrics.ts), so a scrape sees the whole runtime whichever
// worker it reaches.

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ServiceRegistry } from './registry.js';

/** One worker's metrics as plain data: what crosses IPC to the primary. */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

export class WorkerMetrics {
  readonly #registry = new Registry();
  readonly #requests: Counter<'service' | 'method' | 'status'>;
  readonly #duration: Histogram<'service' | 'method'>;

  constructor(services: ServiceRegistry) {
    const registers = [this.#registry];
    this.#requests = new Counter({
      name: 'rt_http_requests_total',
      help: 'HTTP requests answered, by service, method and status (service and method empty for routes without them).',
      labelNames: ['service', 'method', 'status'],
      registers,
    });
    this.#duration = new Histogram({
      name: 'rt_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by service and method.',
      labelNames: ['service', 'method'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    new Gauge({
      name: 'rt_instances',
      help: 'Component instances alive, by service (each on its own thread).',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const hosted of services.list()) this.set({ service: hosted.name }, hosted.liveInstances());
      },
    });
    collectDefaultMetrics({ register: this.#registry, prefix: 'rt_worker_' });
  }

  observe(service: string, method: string, status: number, seconds: number): void {
    this.#requests.inc({ service, method, status });
    this.#duration.observe({ service, method }, seconds);
  }

  snapshot(): Promise<MetricsSnapshot> {
    return this.#registry.getMetricsAsJSON();
  }
}
