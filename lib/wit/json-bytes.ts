// `list<u8>` as JSON: base64 text both ways; an array of numbers is accepted too.
//
// Node's own base64 decoder skips characters it does not know, so "not base64"
// would turn silently into some other bytes; the text is checked first.

import { mismatch } from './codec-errors.js';
import { typedArray } from './typed-arena.js';

// Standard or URL-safe alphabet (not mixed), padding optional.
const BASE64 = /^(?:[A-Za-z0-9+/]*|[A-Za-z0-9_-]*)={0,2}$/;

const EQUALS = 0x3d;

/** The bytes of a base64 text, or undefined when it is not base64. */
function fromBase64(text: string): Uint8Array | undefined {
  if (!BASE64.test(text)) return undefined;
  const length = text.length;
  const padding = text.charCodeAt(length - 1) === EQUALS ? (text.charCodeAt(length - 2) === EQUALS ? 2 : 1) : 0;
  if (padding > 0 ? length % 4 !== 0 : length % 4 === 1) return undefined;
  // Decoded into the decode's arena (typed-arena.ts), not into a buffer of its own.
  const bytes = typedArray(Uint8Array, Math.floor((length * 3) / 4) - padding);
  if (bytes.length > 0) Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).write(text, 'base64');
  return bytes;
}

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

const BYTES_HINT = 'base64 text or an array of numbers 0..255';

/**
 * A decoder for `list<u8>` (`typeName` as messages spell it). Yields the
 * Uint8Array jco needs; a Uint8Array given directly (a raw
 * `application/octet-stream` body) passes through.
 */
export function bytesDecoder(typeName: string): (json: unknown) => Uint8Array {
  return (json) => {
    if (typeof json === 'string') {
      const bytes = fromBase64(json);
      if (bytes === undefined) throw mismatch(typeName, json, 'not valid base64');
      return bytes;
    }
    if (Array.isArray(json)) return byteArray(json);
    if (json instanceof Uint8Array) return json;
    throw mismatch(typeName, json, BYTES_HINT);
  };
}

function byteArray(json: unknown[]): Uint8Array {
  const n = json.length;
  const out = typedArray(Uint8Array, n);
  for (let i = 0; i < n; i++) {
    const b = json[i];
    if (typeof b !== 'number' || !Number.isInteger(b) || b < 0 || b > 255) {
      const e = mismatch('u8 (0..255)', b);
      e.suffix = `[${i}]`;
      throw e;
    }
    out[i] = b;
  }
  return out;
}

/** `list<u8>` out: base64 text. */
export function encodeBytes(value: unknown): string {
  if (value instanceof Uint8Array) return toBase64(value);
  // Not what jco 1.12 returns, but an array of byte values encodes the same.
  return Buffer.from(value as ArrayLike<number>).toString('base64');
}
