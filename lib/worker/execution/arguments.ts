// A call's arguments from its request's input, and where a JSON body is
// decoded: on the worker's main thread, or, when it is large, on the
// instance thread that makes the call.
//
// Parsing and decoding cost per JSON value, not per byte: a 3.5 MB body of
// small nested lists (`[[1],[1],...]` for a list<list<u32>>) held the main
// thread for ~2 s (JSON.parse, the codec, the clone of the arguments to an
// instance thread), and every other request on the worker with it. So a JSON
// body larger than MAIN_THREAD_JSON_BYTES goes as bytes (moved, not copied)
// to the instance thread that makes the call, which parses and decodes it
// there, within the call's deadline and the thread's heap limit; an inline
// service moves to instance threads for it (execution.ts). At or below the
// bound, the densest body measured costs the main thread 10–25 ms (parse,
// decode, clone), and the common small call keeps its path: parsed and
// decoded where it arrived. This module is the only place that decides which.

import { decodeJson, decodeValue, type DecodedJson } from '../../wit/decode-json.js';
import type { FunctionCodec } from '../../wit/codec.js';
import type { Input } from './invocation.js';

export const MAIN_THREAD_JSON_BYTES = 64 * 1024;

/** A call's arguments: decoded (jco values), or a large JSON body's bytes, alone in their buffer (so that they move to the thread). */
export type Arguments = Extract<DecodedJson, { kind: 'arguments' }> | { kind: 'large-json'; bytes: Uint8Array<ArrayBuffer> };

/** The arguments of `input`, decoded here unless it is a large JSON body; or why they do not decode. */
export function callArguments(codec: Pick<FunctionCodec, 'decodeArgs'>, input: Input): Arguments | Exclude<DecodedJson, { kind: 'arguments' }> {
  switch (input.kind) {
    case 'none':
      return decodeValue(codec, undefined);
    case 'bytes':
      return decodeValue(codec, [input.bytes]);
    case 'json':
      return input.bytes.byteLength > MAIN_THREAD_JSON_BYTES ? { kind: 'large-json', bytes: alone(input.bytes) } : decodeJson(codec, input.bytes);
  }
}

/** `bytes` alone in their buffer: as they are when they are, else copied. */
export function alone(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  return own ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
}
