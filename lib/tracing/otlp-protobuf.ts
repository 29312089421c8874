// rt's spans as an OTLP/HTTP protobuf export (opentelemetry-proto's
// ExportTraceServiceRequest), written field by field into one buffer: no
// message objects, no generic encoder. Only the fields rt's spans have are
// written; a collector reads the others as unset. A request's two spans take
// well under its own cost to write: ASCII strings and hex ids are copied by
// hand (a call into Buffer's native writers costs more than the copy of a
// short string), and a nested message leaves room for the length it will
// most likely have, so that it is rarely moved once written.

import { type AttributeValue, type SpanRecord, spanFlags, unixMillis, unixSubNanos } from './span-record.js';

const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;

/** Nibbles by character code, for hex ids (-1: not a hex digit). */
const NIBBLE = new Int8Array(128).fill(-1);
for (let c = 0; c < 16; c++) {
  NIBBLE['0123456789abcdef'.charCodeAt(c)] = c;
  NIBBLE['0123456789ABCDEF'.charCodeAt(c)] = c;
}

/** Bytes a varint of `value` (< 2^53) takes. */
function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    size++;
  }
  return size;
}

/** A growing protobuf buffer; `begin`/`end` bracket a nested message whose length is known only after it. */
class ProtoWriter {
  #buf: Buffer;
  #pos = 0;

  /** `expected`: the bytes it will likely take (it grows past them if need be). */
  constructor(expected: number) {
    this.#buf = Buffer.allocUnsafe(expected);
  }

  #room(bytes: number): void {
    if (this.#pos + bytes <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#pos + bytes));
    this.#buf.copy(grown, 0, 0, this.#pos);
    this.#buf = grown;
  }

  #varint(value: number): void {
    this.#room(10);
    this.#pos = this.#varintAt(this.#pos, value);
  }

  /** Writes the varint of `value` (< 2^53) at `p`, in room already made; returns where it ends. */
  #varintAt(p: number, value: number): number {
    while (value >= 0x80) {
      this.#buf[p++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    this.#buf[p++] = value;
    return p;
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

  /** A fixed64 of `ms` × 10^6 + `ns` (Unix nanoseconds, span-record.ts), in 32-bit halves so that no step passes 2^53. */
  time(field: number, ms: number, ns: number): void {
    this.#tag(field, FIXED64);
    this.#room(8);
    // ms × 10^6 = (high × 4096 + low) × 10^6, and high × 10^6 × 4096 = (top × 2^20 + rest) × 2^12.
    const high = Math.floor(ms / 4_096);
    const scaled = high * 1_000_000;
    let lo = (ms % 4_096) * 1_000_000 + ns + (scaled % 1_048_576) * 4_096;
    const hi = Math.floor(scaled / 1_048_576) + Math.floor(lo / 4_294_967_296);
    lo %= 4_294_967_296;
    this.#pos = this.#buf.writeUInt32LE(lo, this.#pos);
    this.#pos = this.#buf.writeUInt32LE(hi, this.#pos);
  }

  fixed32(field: number, value: number): void {
    this.#tag(field, FIXED32);
    this.#room(4);
    this.#pos = this.#buf.writeUInt32LE(value, this.#pos);
  }

  string(field: number, value: string): void {
    this.#tag(field, BYTES);
    const n = value.length;
    if (n < 0x80) {
      // One length byte, then the characters as bytes while they are ASCII (nearly always).
      this.#room(n + 1);
      const buf = this.#buf;
      const start = this.#pos;
      let p = start + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        buf[p++] = c;
      }
      if (i === n) {
        buf[start] = n;
        this.#pos = p;
        return;
      }
    }
    const length = Buffer.byteLength(value);
    this.#varint(length);
    this.#room(length);
    this.#pos += this.#buf.write(value, this.#pos, length, 'utf8');
  }

  /** Bytes given as hex (trace and span ids: 16 or 8 bytes). */
  hex(field: number, value: string): void {
    const length = value.length >>> 1;
    this.#tag(field, BYTES);
    this.#varint(length);
    this.#room(length);
    const buf = this.#buf;
    let p = this.#pos;
    for (let i = 0; i < value.length; i += 2) buf[p++] = (NIBBLE[value.charCodeAt(i)] << 4) | NIBBLE[value.charCodeAt(i + 1)];
    this.#pos = p;
  }

  raw(field: number, bytes: Uint8Array): void {
    this.#tag(field, BYTES);
    this.#varint(bytes.length);
    this.#room(bytes.length);
    this.#buf.set(bytes, this.#pos);
    this.#pos += bytes.length;
  }

  /**
   * Opens nested message `field` with `room` bytes left for its length (1:
   * below 128 bytes, 2: below 16 KiB, 3: below 2 MiB); returns the mark `end` takes.
   */
  begin(field: number, room: 1 | 2 | 3): number {
    this.#tag(field, BYTES);
    this.#room(room);
    const mark = this.#pos * 4 + room;
    this.#pos += room;
    return mark;
  }

  /** Closes the message `begin` opened: its length written in the room left, its contents moved only when the length needs more or less. */
  end(mark: number): void {
    const room = mark % 4;
    const at = (mark - room) / 4;
    const start = at + room;
    const length = this.#pos - start;
    const size = varintSize(length);
    if (size !== room) {
      this.#room(size - room);
      this.#buf.copyWithin(at + size, start, this.#pos);
      this.#pos += size - room;
    }
    this.#varintAt(at, length);
  }

  bytes(): Uint8Array {
    return this.#buf.subarray(0, this.#pos);
  }
}

/** KeyValue pairs (field `field` of the message being written), from a flat key, value, … list. */
function attributes(w: ProtoWriter, field: number, list: readonly (string | AttributeValue)[]): void {
  for (let i = 0; i < list.length; i += 2) {
    const pair = w.begin(field, 1);
    w.string(1, list[i] as string);
    const value = list[i + 1];
    const any = w.begin(2, 1);
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
  const r = new ProtoWriter(1_024);
  attributes(r, 1, resource);
  const s = new ProtoWriter(256);
  s.string(1, scopeName);
  s.string(2, scopeVersion);
  return { resource: Uint8Array.from(r.bytes()), scope: Uint8Array.from(s.bytes()) };
}

/** An ExportTraceServiceRequest of `spans` (ended, sampled ones), for `Content-Type: application/x-protobuf`. */
export function encodeProtobuf(head: ProtobufHead, spans: readonly SpanRecord[]): Uint8Array {
  // A span of rt's takes ~320 bytes with the attributes it sets.
  const w = new ProtoWriter(1_024 + spans.length * 512);
  const resourceSpans = w.begin(1, 3);
  w.raw(1, head.resource);
  const scopeSpans = w.begin(2, 3);
  w.raw(1, head.scope);
  for (const span of spans) {
    const s = w.begin(2, 2);
    w.hex(1, span.traceId);
    w.hex(2, span.spanId);
    if (span.traceState !== undefined) w.string(3, span.traceState);
    if (span.parentSpanId !== undefined) w.hex(4, span.parentSpanId);
    w.string(5, span.name);
    w.uint(6, span.kind);
    w.time(7, unixMillis(span.startedAt), unixSubNanos(span.startedAt));
    w.time(8, unixMillis(span.endedAt), unixSubNanos(span.endedAt));
    attributes(w, 9, span.attributes);
    if (span.error !== undefined) {
      const status = w.begin(15, 1);
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
