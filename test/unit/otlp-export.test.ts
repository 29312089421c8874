// rt's OTLP encoders (lib/tracing/otlp-protobuf.ts, otlp-json.ts) against
// OpenTelemetry's own serializers (@opentelemetry/otlp-transformer, what its
// exporters send): the same spans must make the same export request, read
// back field by field (test/support/protobuf-wire.ts) or as JSON.

import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { expect } from 'chai';
import { encodeJson, jsonHead } from '../../lib/tracing/otlp-json.js';
import { encodeProtobuf, protobufHead } from '../../lib/tracing/otlp-protobuf.js';
import { type AttributeValue, newSpanId, newTraceId, SpanKind, SpanRecord, unixNanos } from '../../lib/tracing/span-record.js';
import { decodeWire, EXPORT_TRACE_SERVICE_REQUEST } from '../support/protobuf-wire.js';

type ReferenceSpan = Parameters<typeof ProtobufTraceSerializer.serializeRequest>[0][number];

const RESOURCE: (string | AttributeValue)[] = ['service.name', 'rt', 'service.version', '0.1.0', 'process.pid', 4321, 'deployment.environment', 'ünïcödé ✓'];

/** The same resource and scope for every span (the serializer groups spans by these objects). */
const REFERENCE_RESOURCE = resourceFromAttributes(Object.fromEntries(Array.from({ length: RESOURCE.length / 2 }, (_, i) => [RESOURCE[2 * i] as string, RESOURCE[2 * i + 1]])));
const REFERENCE_SCOPE = { name: 'rt', version: '0.1.0' };

function hrTime(at: number): [number, number] {
  const ns = unixNanos(at);
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}

/** `span` as the SDK's ReadableSpan the reference serializer takes (OTLP's kinds are the SDK's plus one). */
function reference(span: SpanRecord): ReferenceSpan {
  const attributes: Record<string, AttributeValue> = {};
  for (let i = 0; i < span.attributes.length; i += 2) attributes[span.attributes[i] as string] = span.attributes[i + 1];
  const traceState = span.traceState === undefined ? undefined : { serialize: () => span.traceState!, get: () => undefined, set: () => { throw new Error('unused'); }, unset: () => { throw new Error('unused'); } };
  const context = { traceId: span.traceId, spanId: span.spanId, traceFlags: 1, traceState };
  return {
    name: span.name,
    kind: span.kind - 1,
    spanContext: () => context,
    parentSpanContext: span.parentSpanId === undefined ? undefined : { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: 1, isRemote: span.remoteParent },
    startTime: hrTime(span.startedAt),
    endTime: hrTime(span.endedAt),
    status: span.error === undefined ? { code: 0 } : { code: 2, ...(span.error === '' ? {} : { message: span.error }) },
    attributes,
    links: [],
    events: [],
    duration: [0, 0],
    ended: true,
    resource: REFERENCE_RESOURCE,
    instrumentationScope: REFERENCE_SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as unknown as ReferenceSpan;
}

/** A request's spans: a server span continuing a remote parent (with a tracestate) that failed, its call, the call's outgoing request. */
function requestSpans(longValue = 'x'): SpanRecord[] {
  const traceId = newTraceId();
  const server = new SpanRecord(traceId, newSpanId(), newSpanId(), true, 'vendor=opaque,other=1', 'POST /api/services/{domain}/{service}/invoke/{method}', SpanKind.server, true, 1_000.25);
  server.set('http.request.method', 'POST');
  server.set('server.port', 8080);
  server.set('rt.request_id', longValue);
  server.set('http.response.status_code', 500);
  server.set('error.type', '500');
  server.error = '';
  server.endedAt = 1_012.5;
  const call = new SpanRecord(traceId, newSpanId(), server.spanId, false, server.traceState, 'call acme.greeter greet', SpanKind.internal, true, 1_001);
  call.set('rt.outcome', 'trap');
  call.set('rt.ratio', 0.25);
  call.set('rt.negative', -3);
  call.set('rt.inline', true);
  call.error = 'trap';
  call.endedAt = 1_011;
  const client = new SpanRecord(traceId, newSpanId(), call.spanId, false, server.traceState, 'GET', SpanKind.client, true, 1_002);
  client.set('url.full', 'http://127.0.0.1:9/ünï');
  client.endedAt = 1_003;
  return [server, call, client];
}

describe('OTLP export encoding (lib/tracing/otlp-protobuf.ts, otlp-json.ts)', () => {
  it('writes, as protobuf, the request OpenTelemetry’s serializer writes for the same spans', () => {
    const spans = requestSpans();
    const ours = decodeWire(encodeProtobuf(protobufHead(RESOURCE, 'rt', '0.1.0'), spans), EXPORT_TRACE_SERVICE_REQUEST);
    const theirs = decodeWire(ProtobufTraceSerializer.serializeRequest(spans.map(reference))!, EXPORT_TRACE_SERVICE_REQUEST);
    expect(ours).to.deep.equal(theirs);
  });

  it('writes lengths of several bytes: long values, and a batch of 600 requests’ spans', () => {
    const spans = Array.from({ length: 600 }, (_, i) => requestSpans('r'.repeat(i))).flat();
    const bytes = encodeProtobuf(protobufHead(RESOURCE, 'rt', '0.1.0'), spans);
    expect(bytes.length, 'beyond what a 2-byte length holds').to.be.greaterThan(2 ** 14);
    const ours = decodeWire(bytes, EXPORT_TRACE_SERVICE_REQUEST);
    const theirs = decodeWire(ProtobufTraceSerializer.serializeRequest(spans.map(reference))!, EXPORT_TRACE_SERVICE_REQUEST);
    expect(ours).to.deep.equal(theirs);
  });

  it('writes, as JSON, the request OpenTelemetry’s serializer writes (64-bit integers as strings, which OTLP/JSON allows)', () => {
    const spans = requestSpans();
    const normal = (json: Uint8Array) =>
      JSON.parse(Buffer.from(json).toString('utf8'), (key, value: unknown) => {
        if (/^dropped\w*Count$/.test(key) && value === 0) return undefined;
        if ((key === 'events' || key === 'links') && Array.isArray(value) && value.length === 0) return undefined;
        if (key === 'intValue') return String(value);
        if (key === 'status' && typeof value === 'object' && value !== null && Object.keys(value).every((k) => k === 'code') && (value as { code?: number }).code === 0) return {};
        return value;
      }) as unknown;
    expect(normal(encodeJson(jsonHead(RESOURCE, 'rt', '0.1.0'), spans))).to.deep.equal(normal(JsonTraceSerializer.serializeRequest(spans.map(reference))!));
  });
});
