// JSON bodies too large to decode on a worker's main thread.
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
// decoded where it arrived.

import type { ErrorCode } from '../../errors.js';
import { CodecError, type FunctionCodec } from '../../wit/codec.js';
import { decodeJson } from '../../wit/decode-json.js';

export const MAIN_THREAD_JSON_BYTES = 64 * 1024;

/** A JSON body left for the instance thread to parse and decode. */
export class LargeJsonBody {
  /** The body's bytes, alone in their buffer (so that it can be moved to the thread). */
  readonly bytes: Uint8Array<ArrayBuffer>;

  constructor(bytes: Uint8Array) {
    const alone = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
    this.bytes = alone ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
  }
}

/** A request's arguments as they go to a call: decoded (jco values), or a large JSON body still to decode. */
export type Arguments = unknown[] | LargeJsonBody;

/** Why a body does not decode: the 400 it answers. */
export interface BadArguments {
  code: ErrorCode;
  details: string;
}

/** A JSON body's bytes → the call's arguments (on an instance thread), or why they are not. */
export function decodeJsonBody(codec: Pick<FunctionCodec, 'decodeArgs'>, bytes: Uint8Array): unknown[] | BadArguments {
  const decoded = decodeJson(codec, bytes);
  if (decoded.kind === 'arguments') return decoded.args;
  return { code: decoded.kind === 'invalid-json' ? 'RT_ERR_INVALID_JSON' : 'RT_ERR_INVALID_ARGUMENTS', details: decoded.details };
}

/** The 400 of arguments that do not fit the signature, wherever they were decoded. */
export function invalidArguments(e: CodecError): BadArguments {
  return { code: 'RT_ERR_INVALID_ARGUMENTS', details: e.message };
}
