// One request to a handler as rt's side sees it: what goes in (the request
// and a source for its body) and where the response goes (a sink). The guest
// side of both is a version folder's (p2/http-types.ts); crossing threads is channel.ts.

import type { ByteSource } from './byte-queue.js';
import type { FieldEntry } from './field-rules.js';
import type { Variant } from './host-objects.js';

/** A wasi:http error-code as the glue represents the variant. */
export type ErrorCode = Variant;

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

/**
 * A body as the guest reads it (a request's to a handler, or the response to
 * a request the guest sent): bytes as they arrive, then the end (with
 * trailers) or a failure.
 */
export interface RequestBodySource extends ByteSource {
  /** The trailers the body ended with (once ended). */
  trailers(): FieldEntry[] | undefined;
  /** The guest dropped the body (or its trailers) before the end: the far side may stop sending. */
  release?(): void;
  /** The guest asked for the trailers without reading the rest: the remaining bytes can be dropped as they come. */
  skipRest?(): void;
}

export interface ResponseHead {
  status: number;
  headers: FieldEntry[];
}

/**
 * Where the bytes of a body the guest writes go once its message is under
 * way: a response's to the client, a request's to the server. `chunk`s, then
 * `finish` or `abort`.
 */
export interface BodySink {
  /** Bytes the sink takes now (the guest's check-write): the credit its reader granted. */
  credit(): number;
  /** False once the far side is gone (a client that disconnected): writes fail from then on. */
  open(): boolean;
  /** Body bytes, at most `credit()` of them: the sink may keep the array, but not detach it. */
  chunk(bytes: Uint8Array): void;
  /** The body is complete. */
  finish(trailers: FieldEntry[] | undefined): void;
  /** The body ends incomplete: the guest broke it off, or returned without finishing it. */
  abort(reason: string): void;
}

/**
 * Where a handler's response goes. Calls come in this order: `head`, then
 * the body's calls; or `malformed` / `refused` alone.
 */
export interface ResponseSink extends BodySink {
  /** The guest set a valid response. */
  head(head: ResponseHead): void;
  /** The guest set a response rt cannot send (invalid status or header): answered 502. Nothing follows. */
  malformed(problem: string): void;
  /** The guest set an error-code instead of a response. Nothing follows. */
  refused(code: ErrorCode): void;
}

/** What a `handle` call left behind, once it returned or threw. */
export type HandleOutcome =
  /** The guest never set the response-outparam (→ 500). */
  | { kind: 'no-response' }
  | { kind: 'malformed'; problem: string }
  | { kind: 'refused'; code: ErrorCode }
  /** A response went to the sink; `complete` unless its body was cut off (then `abort` was called). */
  | { kind: 'responded'; status: number; complete: boolean; bodyBytes: number };

/** How much body a guest may write before its response is set or its request sent (then the sink's credit rules). */
export const UNSENT_WINDOW = 64 * 1024;
