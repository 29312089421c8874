// A JSON body's bytes → a function's arguments: parsed, then decoded by the
// function's codec. One function for both places a body is decoded (the
// worker's main thread for small bodies, an instance thread for large ones:
// lib/worker/execution/arguments.ts), so both give the same arguments and
// the same complaints. It imports nothing of HTTP: an instance thread loads
// only this and the codec.

import { CodecError, type FunctionCodec } from './codec.js';

export type DecodedJson =
  | { kind: 'arguments'; args: unknown[] }
  /** The bytes are not JSON: the parser's complaint. */
  | { kind: 'invalid-json'; details: string }
  /** JSON that does not fit the signature: the codec's complaint, naming the path. */
  | { kind: 'invalid-arguments'; details: string }
  /** A handle in it that was never issued (`unknown-handle`) or has ended (`handle-ended`): the complaint, naming the path. */
  | { kind: 'unknown-handle' | 'handle-ended'; details: string };

export function decodeJson(codec: Pick<FunctionCodec, 'decodeArgs'>, bytes: Uint8Array): DecodedJson {
  let body: unknown;
  try {
    // A body read from a request is a Buffer already (no view to make); one moved to a thread is not.
    const text = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('utf8');
    body = JSON.parse(text);
  } catch (e) {
    return { kind: 'invalid-json', details: (e as Error).message };
  }
  return decodeValue(codec, body);
}

/** A parsed JSON body (or undefined for none, or `[bytes]` for raw bytes) → the arguments, or why they do not fit. */
export function decodeValue(codec: Pick<FunctionCodec, 'decodeArgs'>, body: unknown): DecodedJson {
  try {
    return { kind: 'arguments', args: codec.decodeArgs(body) };
  } catch (e) {
    if (e instanceof CodecError) return { kind: e.handle === undefined ? 'invalid-arguments' : e.handle === 'unknown' ? 'unknown-handle' : 'handle-ended', details: e.message };
    throw e;
  }
}
