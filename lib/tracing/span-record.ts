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

// OTLP's times are nanoseconds since the Unix epoch, beyond what a double
// holds exactly; so a `performance.now()` reading is turned into whole
// milliseconds and the nanoseconds past them, each exact, and the encoders
// put them together (otlp-protobuf.ts without a BigInt per time).
const ORIGIN_MS = Math.floor(performance.timeOrigin);
const ORIGIN_NS = Math.round((performance.timeOrigin - ORIGIN_MS) * 1_000_000);

/** The whole milliseconds since the Unix epoch of a `performance.now()` reading (see unixSubNanos). */
export function unixMillis(at: number): number {
  return ORIGIN_MS + Math.floor(at);
}

/** The nanoseconds of a `performance.now()` reading past unixMillis' (below 2,000,000). */
export function unixSubNanos(at: number): number {
  return ORIGIN_NS + Math.round((at - Math.floor(at)) * 1_000_000);
}

/** A `performance.now()` reading as nanoseconds since the Unix epoch (OTLP's time). */
export function unixNanos(at: number): bigint {
  return BigInt(unixMillis(at)) * 1_000_000n + BigInt(unixSubNanos(at));
}

// Ids are cut from one long hex string of random bytes, made a pool at a
// time: a slice of a string costs V8 next to nothing, a Buffer's
// toString('hex') per id more than the rest of a span.
const ID_POOL_BYTES = 8_192;
let pool = '';
let next = 0;

/** `bytes` random bytes as lowercase hex, never all zeros (an invalid id in W3C trace context). */
function randomHex(bytes: number): string {
  const chars = bytes * 2;
  for (;;) {
    if (next + chars > pool.length) {
      pool = randomFillSync(Buffer.allocUnsafe(ID_POOL_BYTES)).toString('hex');
      next = 0;
    }
    const id = pool.slice(next, (next += chars));
    if (id !== ZERO_TRACE_ID && id !== ZERO_SPAN_ID) return id;
  }
}

const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

export const newTraceId = (): string => randomHex(16);
export const newSpanId = (): string => randomHex(8);
