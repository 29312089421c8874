// A worker's Prometheus metrics (docs/api.md §7). The primary collects every
// worker's snapshot over IPC and answers `/api/metrics` with their sum
// (lib/primary/metrics.ts), so a scrape sees the whole runtime whichever
// worker it reaches. Request counts are kept apart (request-stats.ts): they
// are recorded on every request, where prom-client's bookkeeping costs too much.

import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { MetricsSnapshot } from '../ipc.js';
import type { ServiceRegistry } from './registry.js';
import { RequestStats } from './request-stats.js';

export class WorkerMetrics {
  readonly #registry = new Registry();
  readonly requests = new RequestStats();

  constructor(services: ServiceRegistry) {
    const registers = [this.#registry];
    new Gauge({
      name: 'rt_instances',
      help: 'Component instances alive, by service (inline on the worker, or each on its own thread).',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const hosted of services.list()) this.set({ service: hosted.name }, hosted.liveInstances());
      },
    });
    collectDefaultMetrics({ register: this.#registry, prefix: 'rt_worker_' });
  }

  async snapshot(): Promise<MetricsSnapshot> {
    return [...this.requests.metrics(), ...(await this.#registry.getMetricsAsJSON())];
  }
}
