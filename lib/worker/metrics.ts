// A worker's Prometheus metrics (docs/api.md §7). The primary collects every
// worker's snapshot over IPC and answers `/api/metrics` with their sum
// (lib/primary/metrics.ts), so a scrape sees the whole runtime whichever
// worker it reaches. Request counts are kept apart (request-stats.ts): they
// are recorded on every request, where prom-client's bookkeeping costs too much.

import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { MetricsSnapshot } from '../ipc.js';
import type { HandleChange } from './execution/handle-directory.js';
import type { Move } from './execution/placement.js';
import type { ServiceRegistry } from './execution/registry.js';
import { RequestStats } from './http/request-stats.js';
import type { ShareKind } from './http/fair-shares.js';
import type { SpanFate } from '../tracing/traces.js';

export class WorkerMetrics {
  readonly #registry = new Registry();
  readonly requests = new RequestStats();
  readonly #placementChanges: Counter<'service' | 'to' | 'reason'>;
  readonly #handleEvents: Counter<'service' | 'event'>;
  readonly #shareRefusals: Counter<'share' | 'service'>;
  readonly #spans: Counter<'fate'>;

  constructor(services: ServiceRegistry) {
    const registers = [this.#registry];
    this.#placementChanges = new Counter({
      name: 'rt_placement_changes_total',
      help: 'Services moved between inline calls and instance threads, by service, where to (inline, threads) and why (slow_calls, over_budget, large_body, probation_over).',
      labelNames: ['service', 'to', 'reason'],
      registers,
    });
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
    this.#handleEvents = new Counter({
      name: 'rt_handle_events_total',
      help: 'Handles made and ended (docs/api.md §5.1.2), by service and event: created, dropped (DELETE), moved (passed as own), expired (idle), instance-ended (a trap, timeout, restart, quiesce or reload).',
      labelNames: ['service', 'event'],
      registers,
    });
    new Gauge({
      name: 'rt_handles_live',
      help: 'Live handles, by service (at most max_handles per handle scope).',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const hosted of services.list()) this.set({ service: hosted.name }, hosted.liveHandles());
      },
    });
    // Counted, not labelled one by one: a label per scope would grow without bound.
    new Gauge({
      name: 'rt_handle_scopes',
      help: 'Named handle scopes alive, by service (each an instance of its own; at most max_scopes per worker).',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const hosted of services.list()) this.set({ service: hosted.name }, hosted.liveScopes());
      },
    });
    new Gauge({
      name: 'rt_calls_waiting',
      help: 'Calls waiting for an instance thread, by service (at most max_queue per worker; beyond it calls are refused with 503).',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const hosted of services.list()) this.set({ service: hosted.name }, hosted.waitingCalls());
      },
    });
    this.#shareRefusals = new Counter({
      name: 'rt_fair_share_refusals_total',
      help: "Requests refused because their client held its fair share (docs/api.md §5.10), by share (connections, streams, request_bodies; body_rate: a body slower than http.min_body_bytes_per_second, 408) and service (empty for connections).",
      labelNames: ['share', 'service'],
      registers,
    });
    this.#spans = new Counter({
      name: 'rt_trace_spans_total',
      help: 'Spans (docs/api.md §7, traces on) the batch processor is done with, by fate: exported, dropped (its queue was full: OTEL_BSP_MAX_QUEUE_SIZE), failed (the export failed).',
      labelNames: ['fate'],
      registers,
    });
    collectDefaultMetrics({ register: this.#registry, prefix: 'rt_worker_' });
  }

  handlesChanged(service: string, event: HandleChange, count: number): void {
    this.#handleEvents.inc({ service, event }, count);
  }

  shareRefused(share: ShareKind, service: string): void {
    this.#shareRefusals.inc({ share, service });
  }

  spansDone(fate: SpanFate, spans: number): void {
    this.#spans.inc({ fate }, spans);
  }

  placementChanged(service: string, move: Move): void {
    this.#placementChanges.inc({ service, to: move.to, reason: move.reason });
  }

  async snapshot(): Promise<MetricsSnapshot> {
    return [...this.requests.metrics(), ...(await this.#registry.getMetricsAsJSON())];
  }
}
