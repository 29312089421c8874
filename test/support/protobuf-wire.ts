// A protobuf wire-format reader for the tests of rt's OTLP encoder: it reads
// any message field by field (as the encoding specification defines it,
// sharing no code with lib/tracing/otlp-protobuf.ts) into a plain tree, so
// two encodings of the same messages compare equal whatever their field
// order and whether they write proto3 defaults.

/** A decoded message: its fields by number, each with its values in order. */
export interface WireMessage {
  [field: number]: WireValue[];
}
export type WireValue = string | WireMessage;

/** How a length-delimited field is read: as a nested message (its schema), a UTF-8 string, or bytes (as hex). */
export type WireSchema = { [field: number]: WireSchema | 'string' | 'bytes' };

/** OTLP's trace export request (opentelemetry-proto: collector/trace/v1, trace/v1, resource/v1, common/v1), as far as the tests need it. */
const ANY_VALUE: WireSchema = { 1: 'string', 7: 'bytes' };
const KEY_VALUE: WireSchema = { 1: 'string', 2: ANY_VALUE };
const SPAN: WireSchema = { 1: 'bytes', 2: 'bytes', 3: 'string', 4: 'bytes', 5: 'string', 9: KEY_VALUE, 15: { 2: 'string' } };
export const EXPORT_TRACE_SERVICE_REQUEST: WireSchema = {
  1: { 1: { 1: KEY_VALUE }, 2: { 1: { 1: 'string', 2: 'string', 3: KEY_VALUE }, 2: SPAN, 3: 'string' }, 3: 'string' },
};

export function decodeWire(bytes: Uint8Array, schema: WireSchema): WireMessage {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= bytes.length) throw new Error('truncated varint');
      const byte = bytes[at++];
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  const message: WireMessage = {};
  while (at < bytes.length) {
    const key = Number(varint());
    const field = key >>> 3;
    let value: WireValue | undefined;
    switch (key & 7) {
      case 0:
        value = String(varint());
        break;
      case 1:
        // fixed64 and double share the wire type: kept as the bytes' hex, compared as such.
        value = Buffer.from(bytes.subarray(at, at + 8)).toString('hex');
        at += 8;
        break;
      case 5:
        value = String(view.getUint32(at, true));
        at += 4;
        break;
      case 2: {
        const length = Number(varint());
        if (at + length > bytes.length) throw new Error(`field ${field}: length ${length} beyond the message`);
        const content = bytes.subarray(at, at + length);
        at += length;
        const kind = schema[field];
        value = kind === 'string' ? Buffer.from(content).toString('utf8') : typeof kind === 'object' ? decodeWire(content, kind) : Buffer.from(content).toString('hex');
        break;
      }
      default:
        throw new Error(`field ${field}: wire type ${key & 7} is not one protobuf writes`);
    }
    // proto3: a scalar at its default, or an empty message, is the same as one not written.
    if (value === '0' || value === '' || value === '0000000000000000' || (typeof value === 'object' && Object.keys(value).length === 0)) continue;
    (message[field] ??= []).push(value);
  }
  return message;
}
