// Where a worker's traces begin: the OpenTelemetry SDK (otel-traces.ts) is
// imported here, dynamically, and only when the OTEL_* variables turn traces
// on; with them off, no module of it is ever loaded.

import type { TraceSettings } from './settings.js';
import type { SpanFate, Traces } from './traces.js';

/** The worker's traces, per `settings`, from rt `version`; `counted` hears how each batch of spans fared. */
export async function startTraces(settings: TraceSettings, version: string, counted: (fate: SpanFate, spans: number) => void): Promise<Traces> {
  const { OtelTraces } = await import('./otel-traces.js');
  return new OtelTraces(settings, version, counted);
}
