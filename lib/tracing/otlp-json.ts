// rt's spans as an OTLP/HTTP JSON export (the protobuf messages in
// proto3's JSON mapping, ids as hex as OTLP/JSON requires).

import { type AttributeValue, type SpanRecord, spanFlags, unixNanos } from './span-record.js';

type AnyValue = { stringValue: string } | { boolValue: boolean } | { intValue: string } | { doubleValue: number };
type KeyValue = { key: string; value: AnyValue };

function attributes(list: readonly (string | AttributeValue)[]): KeyValue[] {
  const out: KeyValue[] = [];
  for (let i = 0; i < list.length; i += 2) {
    const value = list[i + 1];
    out.push({
      key: list[i] as string,
      value: typeof value === 'string' ? { stringValue: value } : typeof value === 'boolean' ? { boolValue: value } : Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value },
    });
  }
  return out;
}

export interface JsonHead {
  resource: { attributes: KeyValue[] };
  scope: { name: string; version: string };
}

export function jsonHead(resource: readonly (string | AttributeValue)[], scopeName: string, scopeVersion: string): JsonHead {
  return { resource: { attributes: attributes(resource) }, scope: { name: scopeName, version: scopeVersion } };
}

/** An ExportTraceServiceRequest of `spans`, for `Content-Type: application/json`. */
export function encodeJson(head: JsonHead, spans: readonly SpanRecord[]): Uint8Array {
  const request = {
    resourceSpans: [
      {
        resource: head.resource,
        scopeSpans: [
          {
            scope: head.scope,
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.traceState === undefined ? {} : { traceState: span.traceState }),
              ...(span.parentSpanId === undefined ? {} : { parentSpanId: span.parentSpanId }),
              name: span.name,
              kind: span.kind,
              startTimeUnixNano: String(unixNanos(span.startedAt)),
              endTimeUnixNano: String(unixNanos(span.endedAt)),
              attributes: attributes(span.attributes),
              status: span.error === undefined ? {} : { code: 2, ...(span.error === '' ? {} : { message: span.error }) },
              flags: spanFlags(span),
            })),
          },
        ],
      },
    ],
  };
  return Buffer.from(JSON.stringify(request));
}
