// How rt's span batches reach the collector: the OpenTelemetry OTLP/HTTP
// exporter's transport (its OTEL_EXPORTER_OTLP_* headers, timeout,
// compression and retries) with rt's own encoders as its serializer
// (otlp-protobuf.ts, otlp-json.ts), and the process's resource (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES over rt's own). The one module that imports
// OpenTelemetry's packages; start.ts loads it only when traces are on.

import { ExportResultCode } from '@opentelemetry/core';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, ProtobufTraceSerializer, type ISerializer } from '@opentelemetry/otlp-transformer';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { encodeJson, jsonHead } from './otlp-json.js';
import { encodeProtobuf, protobufHead } from './otlp-protobuf.js';
import type { TraceSettings } from './settings.js';
import type { SendBatch } from './span-batcher.js';
import type { AttributeValue, SpanRecord } from './span-record.js';

export interface OtlpExport {
  send: SendBatch;
  /** Waits for exports in flight, then refuses more. */
  shutdown(): Promise<void>;
}

/** The instrumentation scope every span of rt's is recorded under. */
const SCOPE = 'rt';

export function otlpExport(settings: TraceSettings, version: string): OtlpExport {
  const resource = resourceAttributes(version);
  const json = settings.protocol === 'http/json';
  let serializer: ISerializer<SpanRecord[], unknown>;
  if (json) {
    const head = jsonHead(resource, SCOPE, version);
    serializer = { serializeRequest: (spans) => encodeJson(head, spans), deserializeResponse: (data) => JsonTraceSerializer.deserializeResponse(data) };
  } else {
    const head = protobufHead(resource, SCOPE, version);
    serializer = { serializeRequest: (spans) => encodeProtobuf(head, spans), deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data) };
  }
  const options = convertLegacyHttpOptions({ url: settings.endpoint }, 'TRACES', 'v1/traces', { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' });
  const delegate = createOtlpHttpExportDelegate(options, serializer, 'otlp_http_span_exporter', { name: 'span', countItems: (spans) => spans.length }, undefined);
  return {
    send: (spans) => new Promise((resolve) => delegate.export(spans, (result) => resolve(result.code === ExportResultCode.SUCCESS))),
    shutdown: () => delegate.shutdown(),
  };
}

/** rt's resource attributes, with OTEL_SERVICE_NAME's and OTEL_RESOURCE_ATTRIBUTES' over them, as a flat key, value, … list. */
function resourceAttributes(version: string): (string | AttributeValue)[] {
  const resource = resourceFromAttributes({ 'service.name': 'rt', 'service.version': version, 'process.pid': process.pid }).merge(detectResources({ detectors: [envDetector] }));
  return Object.entries(resource.attributes).flatMap(([key, value]) => (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? [key, value] : []));
}
