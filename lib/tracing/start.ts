// Where a worker's traces begin: OpenTelemetry's OTLP exporter
// (otlp-exporter.ts) is imported here, dynamically, and only when the OTEL_*
// variables turn traces on; with them off, no module of it is ever loaded.

import { RecordedTraces } from './recorded-traces.js';
import type { TraceSettings } from './settings.js';
import { SpanBatcher } from './span-batcher.js';
import type { SpanFate, Traces } from './traces.js';

/** The worker's traces, per `settings`, from rt `version`; `counted` hears how each batch of spans fared. */
export async function startTraces(settings: TraceSettings, version: string, counted: (fate: SpanFate, spans: number) => void): Promise<Traces> {
  const { otlpExport } = await import('./otlp-exporter.js');
  const exporter = otlpExport(settings, version);
  return new RecordedTraces(settings.sampler, new SpanBatcher(settings.batch, exporter.send, counted), exporter.shutdown);
}
