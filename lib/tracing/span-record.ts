// A span as rt records it: the few fields OTLP carries for rt's spans, its
// attributes in one flat array, its times as `performance.now()` readings.
// The OpenTelemetry SDK's span objects (attribute maps, event and link lists,
// [seconds, nanoseconds] pairs made at every start and end, a context per
// parent) and the generic OTLP transformer behind them cost a lightly loaded
// request more than rt's whole invoke path (docs/performance.md, "Traces");
// these are encoded straight into an export's bytes (otlp-protobuf.ts,
// otlp-json.ts) and are garbage after it.

import { randomFillSync } from 'node:crypto';

/** OTLP's SpanKind: what a span stands for. */
export const SpanKind = { internal: 1, server: 2, client: 3 } as const;
export type SpanKindCode = (typeof SpanKind)[keyof typeof SpanKind];

export type AttributeValue = string | number | boolean;

export class SpanRecord {
  /** Its attributes as key, value, key, value, … in the order they were set. */
  readonly attributes: (string | AttributeValue)[] = [];
  /** When it ended (`performance.now()`), 0 until then. */
  endedAt = 0;
  /** Set when the span failed: OTLP's status ERROR, with this message ('' for none). */
  error: string | undefined;

  constructor(
    readonly traceId: string,
    readonly spanId: string,
    /** Its parent's span id; undefined for a trace's root. */
    readonly parentSpanId: string | undefined,
    /** Whether its parent is a remote one (a request's `traceparent`). */
    readonly remoteParent: boolean,
    readonly traceState: string | undefined,
    public name: string,
    readonly kind: SpanKindCode,
    /** Whether it is recorded and exported (the sampler's decision for its trace). */
    readonly sampled: boolean,
    readonly startedAt: number = performance.now(),
  ) {}

  /** Sets an attribute (of a span that is recorded: others need none). */
  set(key: string, value: AttributeValue): void {
    if (this.sampled) this.attributes.push(key, value);
  }
}

/** OTLP's Span.flags: the sampled trace flag (every exported span is sampled), and that the span says whether its parent is remote (bit 8) and if it is (bit 9). */
export function spanFlags(span: SpanRecord): number {
  return span.remoteParent ? 0x301 : 0x101;
}

const ORIGIN_NS = BigInt(Math.round(performance.timeOrigin * 1_000)) * 1_000n;

/** A `performance.now()` reading as nanoseconds since the Unix epoch (OTLP's time). */
export function unixNanos(at: number): bigint {
  return ORIGIN_NS + BigInt(Math.round(at * 1_000_000));
}

const ID_POOL_BYTES = 8_192;
let pool = Buffer.alloc(0);
let next = 0;

/** `bytes` random bytes as lowercase hex, never all zeros (an invalid id in W3C trace context). */
function randomHex(bytes: number): string {
  for (;;) {
    if (next + bytes > pool.length) {
      pool = randomFillSync(Buffer.allocUnsafe(ID_POOL_BYTES));
      next = 0;
    }
    const id = pool.toString('hex', next, (next += bytes));
    if (!/^0+$/.test(id)) return id;
  }
}

export const newTraceId = (): string => randomHex(16);
export const newSpanId = (): string => randomHex(8);
