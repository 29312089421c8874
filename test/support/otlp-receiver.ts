// An OTLP/HTTP trace receiver on loopback, for the tests of rt's traces
// (docs/api.md §7): it takes what an exporter posts to /v1/traces, decodes
// OTLP/JSON and protobuf (protobuf-wire.ts) into spans, and keeps the bodies
// as they came. It can hold its answers (an exporter then waits, and its
// queue fills) or refuse them.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeWire, EXPORT_TRACE_SERVICE_REQUEST, type WireMessage } from './protobuf-wire.js';

/** One span as OTLP/JSON carries it, with its attributes as a plain object. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  /** Its resource's attributes. */
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>` (the exporter adds `/v1/traces` to OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly url: string;
  /** Every span received so far. */
  readonly spans: ReceivedSpan[];
  /** Every request posted, as it came. */
  readonly posts: { path: string; contentType: string; authorization: string | undefined; body: Buffer }[];
  /** How it answers from now on: 200, `refuse` (400: a failed export), or `hold` (no answer until set otherwise). */
  answer(mode: 'accept' | 'refuse' | 'hold'): void;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}

type KeyValues = { key: string; value: AnyValue }[] | undefined;

function attributesOf(list: KeyValues): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.boolValue ?? value.doubleValue ?? '';
  return out;
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValues };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: KeyValues; status?: { code?: number; message?: string } }[] }[];
  }[];
}

/** The spans of a protobuf ExportTraceServiceRequest, read field by field (opentelemetry-proto's numbers). */
function protobufSpans(body: Buffer): ReceivedSpan[] {
  const messages = (m: WireMessage | undefined, field: number) => (m?.[field] ?? []).filter((v): v is WireMessage => typeof v === 'object');
  const text = (m: WireMessage | undefined, field: number) => m?.[field]?.[0] as string | undefined;
  const attributes = (m: WireMessage | undefined, field: number) => {
    const out: Record<string, string | number | boolean> = {};
    for (const pair of messages(m, field)) {
      const any = messages(pair, 2)[0];
      const int = text(any, 3);
      const double = text(any, 4);
      out[text(pair, 1) ?? ''] = text(any, 1) ?? (int !== undefined ? Number(BigInt.asIntN(64, BigInt(int))) : double !== undefined ? Buffer.from(double, 'hex').readDoubleLE() : text(any, 2) === '1');
    }
    return out;
  };
  const found: ReceivedSpan[] = [];
  for (const rs of messages(decodeWire(body, EXPORT_TRACE_SERVICE_REQUEST), 1)) {
    const resource = attributes(messages(rs, 1)[0], 1);
    for (const ss of messages(rs, 2)) {
      for (const s of messages(ss, 2)) {
        const status = messages(s, 15)[0];
        const code = text(status, 3);
        found.push({
          traceId: text(s, 1) ?? '',
          spanId: text(s, 2) ?? '',
          parentSpanId: text(s, 4),
          name: text(s, 5) ?? '',
          kind: Number(text(s, 6) ?? 0),
          attributes: attributes(s, 9),
          status: { ...(code === undefined ? {} : { code: Number(code) }), ...(text(status, 2) === undefined ? {} : { message: text(status, 2) }) },
          resource,
        });
      }
    }
  }
  return found;
}

export async function otlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const posts: OtlpReceiver['posts'] = [];
  let mode: 'accept' | 'refuse' | 'hold' = 'accept';
  const held: ServerResponse[] = [];
  const respond = (res: ServerResponse) => {
    if (mode === 'hold') return void held.push(res);
    res.writeHead(mode === 'accept' ? 200 : 400, { 'content-type': 'application/json' }).end(mode === 'accept' ? '{}' : '{"code":3,"message":"refused by the test"}');
  };
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = req.headers['content-type'] ?? '';
      posts.push({ path: req.url ?? '', contentType, authorization: req.headers.authorization, body });
      if (contentType === 'application/x-protobuf') spans.push(...protobufSpans(body));
      if (contentType.startsWith('application/json')) {
        const parsed = JSON.parse(body.toString('utf8')) as ExportRequest;
        for (const rs of parsed.resourceSpans ?? []) {
          const resource = attributesOf(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, kind: s.kind, attributes: attributesOf(s.attributes), status: s.status ?? {}, resource });
            }
          }
        }
      }
      respond(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    posts,
    answer(next) {
      mode = next;
      if (next !== 'hold') for (const res of held.splice(0)) respond(res);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held.splice(0)) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
