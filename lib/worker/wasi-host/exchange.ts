// One request to a handler as rt's side sees it: what goes in (the request
// and a source for its body) and where the response goes (a sink). The guest
// side of both is http-types.ts; crossing threads is channel.ts.

import type { FieldEntry } from './fields.js';
import type { ByteSource } from './streams.js';

/** A wasi:http error-code as the glue represents the variant. */
export interface ErrorCode {
  tag: string;
  val?: unknown;
}

export interface HandlerRequest {
  /** As the client sent it: `GET`, `PURGE`. */
  method: string;
  /** `/{path…}?{query}` as the handler sees it. */
  pathWithQuery: string;
  /** `http`, `https` (or another). */
  scheme: string;
  authority: string;
  /** What the guest sees, hop-by-hop headers already removed by the caller. */
  headers: FieldEntry[];
}

/** The request body as the guest reads it: bytes as they arrive, then the end (with trailers) or a failure. */
export interface RequestBodySource extends ByteSource {
  /** The trailers the body ended with (once ended). */
  trailers(): FieldEntry[] | undefined;
}

export interface ResponseHead {
  status: number;
  headers: FieldEntry[];
}

/**
 * Where a handler's response goes. Calls come in this order: `head`, then
 * `chunk`s, then `finish` or `abort`; or `malformed` / `refused` alone.
 */
export interface ResponseSink {
  /** The guest set a valid response. */
  head(head: ResponseHead): void;
  /** The guest set a response rt cannot send (invalid status or header): answered 502. Nothing follows. */
  malformed(problem: string): void;
  /** The guest set an error-code instead of a response. Nothing follows. */
  refused(code: ErrorCode): void;
  /** Bytes the sink takes now (the guest's check-write): the credit its reader granted. */
  credit(): number;
  /** False once the far side is gone (a client that disconnected): writes fail from then on. */
  open(): boolean;
  /** Body bytes, at most `credit()` of them; the sink owns the array. */
  chunk(bytes: Uint8Array): void;
  /** The body is complete. */
  finish(trailers: FieldEntry[] | undefined): void;
  /** The body ends incomplete: the guest broke it off, or returned without finishing it. */
  abort(reason: string): void;
}

/** What a `handle` call left behind, once it returned or threw. */
export type HandleOutcome =
  /** The guest never set the response-outparam (→ 500). */
  | { kind: 'no-response' }
  | { kind: 'malformed'; problem: string }
  | { kind: 'refused'; code: ErrorCode }
  /** A response went to the sink; `complete` unless its body was cut off (then `abort` was called). */
  | { kind: 'responded'; status: number; complete: boolean; bodyBytes: number };
