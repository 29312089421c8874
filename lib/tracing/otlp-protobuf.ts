// rt's spans as an OTLP/HTTP protobuf export (opentelemetry-proto's
// ExportTraceServiceRequest), written field by field into one buffer: no
// message objects, no generic encoder. Only the fields rt's spans have are
// written; a collector reads the others as unset.

import { type AttributeValue, type SpanRecord, spanFlags, unixNanos } from './span-record.js';

const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;
/** Room left for a nested message's length before its contents are written (lengths below 2^35). */
const LENGTH_ROOM = 5;

/** A growing protobuf buffer; `begin`/`end` bracket a nested message whose length is known only after it. */
class ProtoWriter {
  #buf = Buffer.allocUnsafe(64 * 1_024);
  #pos = 0;

  #room(bytes: number): void {
    if (this.#pos + bytes <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#pos + bytes));
    this.#buf.copy(grown, 0, 0, this.#pos);
    this.#buf = grown;
  }

  #varint(value: number): void {
    this.#room(10);
    while (value >= 0x80) {
      this.#buf[this.#pos++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    this.#buf[this.#pos++] = value;
  }

  #tag(field: number, wire: number): void {
    this.#varint(field * 8 + wire);
  }

  uint(field: number, value: number): void {
    this.#tag(field, VARINT);
    this.#varint(value);
  }

  /** A signed int64 (negative ones take ten bytes, as two's complement). */
  int(field: number, value: number): void {
    if (value >= 0) return this.uint(field, value);
    this.#tag(field, VARINT);
    let rest = BigInt.asUintN(64, BigInt(value));
    this.#room(10);
    while (rest >= 0x80n) {
      this.#buf[this.#pos++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.#buf[this.#pos++] = Number(rest);
  }

  double(field: number, value: number): void {
    this.#tag(field, FIXED64);
    this.#room(8);
    this.#pos = this.#buf.writeDoubleLE(value, this.#pos);
  }

  fixed64(field: number, value: bigint): void {
    this.#tag(field, FIXED64);
    this.#room(8);
    this.#pos = this.#buf.writeBigUInt64LE(value, this.#pos);
  }

  fixed32(field: number, value: number): void {
    this.#tag(field, FIXED32);
    this.#room(4);
    this.#pos = this.#buf.writeUInt32LE(value, this.#pos);
  }

  string(field: number, value: string): void {
    const length = Buffer.byteLength(value);
    this.#tag(field, BYTES);
    this.#varint(length);
    this.#room(length);
    this.#pos += this.#buf.write(value, this.#pos, length, 'utf8');
  }

  /** Bytes given as hex (trace and span ids). */
  hex(field: number, value: string): void {
    const length = value.length / 2;
    this.#tag(field, BYTES);
    this.#varint(length);
    this.#room(length);
    this.#pos += this.#buf.write(value, this.#pos, length, 'hex');
  }

  raw(field: number, bytes: Uint8Array): void {
    this.#tag(field, BYTES);
    this.#varint(bytes.length);
    this.#room(bytes.length);
    this.#buf.set(bytes, this.#pos);
    this.#pos += bytes.length;
  }

  /** Opens nested message `field`; returns where it starts, for `end`. */
  begin(field: number): number {
    this.#tag(field, BYTES);
    this.#room(LENGTH_ROOM);
    const at = this.#pos;
    this.#pos += LENGTH_ROOM;
    return at;
  }

  /** Closes the message `begin` opened at `at`: its length written, its contents moved up to meet it. */
  end(at: number): void {
    const start = at + LENGTH_ROOM;
    let length = this.#pos - start;
    let p = at;
    while (length >= 0x80) {
      this.#buf[p++] = (length & 0x7f) | 0x80;
      length >>>= 7;
    }
    this.#buf[p++] = length;
    if (p < start) {
      this.#buf.copyWithin(p, start, this.#pos);
      this.#pos -= start - p;
    }
  }

  bytes(): Uint8Array {
    return this.#buf.subarray(0, this.#pos);
  }
}

/** KeyValue pairs (field `field` of the message being written), from a flat key, value, … list. */
function attributes(w: ProtoWriter, field: number, list: readonly (string | AttributeValue)[]): void {
  for (let i = 0; i < list.length; i += 2) {
    const pair = w.begin(field);
    w.string(1, list[i] as string);
    const value = list[i + 1];
    const any = w.begin(2);
    if (typeof value === 'string') w.string(1, value);
    else if (typeof value === 'boolean') w.uint(2, value ? 1 : 0);
    else if (Number.isSafeInteger(value)) w.int(3, value);
    else w.double(4, value);
    w.end(any);
    w.end(pair);
  }
}

/** What every export from this process starts with: its Resource and InstrumentationScope messages, encoded once. */
export interface ProtobufHead {
  resource: Uint8Array;
  scope: Uint8Array;
}

export function protobufHead(resource: readonly (string | AttributeValue)[], scopeName: string, scopeVersion: string): ProtobufHead {
  const r = new ProtoWriter();
  attributes(r, 1, resource);
  const s = new ProtoWriter();
  s.string(1, scopeName);
  s.string(2, scopeVersion);
  return { resource: Uint8Array.from(r.bytes()), scope: Uint8Array.from(s.bytes()) };
}

/** An ExportTraceServiceRequest of `spans` (ended, sampled ones), for `Content-Type: application/x-protobuf`. */
export function encodeProtobuf(head: ProtobufHead, spans: readonly SpanRecord[]): Uint8Array {
  const w = new ProtoWriter();
  const resourceSpans = w.begin(1);
  w.raw(1, head.resource);
  const scopeSpans = w.begin(2);
  w.raw(1, head.scope);
  for (const span of spans) {
    const s = w.begin(2);
    w.hex(1, span.traceId);
    w.hex(2, span.spanId);
    if (span.traceState !== undefined) w.string(3, span.traceState);
    if (span.parentSpanId !== undefined) w.hex(4, span.parentSpanId);
    w.string(5, span.name);
    w.uint(6, span.kind);
    w.fixed64(7, unixNanos(span.startedAt));
    w.fixed64(8, unixNanos(span.endedAt));
    attributes(w, 9, span.attributes);
    if (span.error !== undefined) {
      const status = w.begin(15);
      if (span.error !== '') w.string(2, span.error);
      w.uint(3, 2);
      w.end(status);
    }
    w.fixed32(16, spanFlags(span));
    w.end(s);
  }
  w.end(scopeSpans);
  w.end(resourceSpans);
  return w.bytes();
}
