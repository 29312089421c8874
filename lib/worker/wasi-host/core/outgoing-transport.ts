// What a guest's outgoing request is to the thread it runs on, whatever the
// WASI version: a head and timeouts handed to a transport, which answers with
// a call (bodies both ways, the response as it arrives) or a refusal.

import type { BodySink, ErrorCode, RequestBodySource, ResponseHead } from './handler-io.js';
import type { FieldEntry } from './field-rules.js';

/** A request as the transport sends it. */
export interface OutgoingHead {
  /** `GET`, or the guest's own method name. */
  method: string;
  scheme: 'http' | 'https';
  /** `host[:port]`. */
  authority: string;
  pathWithQuery: string;
  /** Without connection-level headers: the transport frames the message. */
  headers: FieldEntry[];
  /**
   * The guest is still writing the body (the transport sends the head at
   * once, and the body as it comes: chunked, without a content-length);
   * false: all of it comes with the start (it is sent with its length).
   */
  bodyFollows: boolean;
  /**
   * Not for the network: the linked interface (`wasi:http/handler`) whose
   * service in this worker serves it (docs/api.md §5.9). A link is the
   * operator's grant, so allowed_outbound_hosts does not apply.
   */
  link?: string;
}

/** request-options in milliseconds; absent: no bound of its own (the exchange's deadline still ends it). */
export interface OutgoingTimeouts {
  connectMs?: number;
  firstByteMs?: number;
  betweenBytesMs?: number;
}

/** setTimeout's longest. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A wasi:clocks duration (ns) as a timer's milliseconds: rounded up (a bound is never shorter than asked), within what setTimeout can hold. */
export function timerMs(ns: bigint | undefined): number | undefined {
  return ns === undefined ? undefined : Math.min(MAX_TIMER_MS, Math.ceil(Number(ns) / 1e6));
}

/** What the response to an outgoing request is so far. */
export type OutgoingResponseState = { kind: 'waiting' } | { kind: 'head'; head: ResponseHead } | { kind: 'failed'; code: ErrorCode };

/** One request in flight, as the guest's objects see it. Nothing here blocks. */
export interface OutgoingCall {
  /** Where the request body goes once sent; its credit is what the far side has room for. */
  readonly requestBody: BodySink;
  response(): OutgoingResponseState;
  /** The response body, read once the head is here; fails with the error-code that broke it. */
  readonly responseBody: RequestBodySource;
  /** The guest lost interest (dropped the future, or the response unread): the request is stopped. */
  cancel(reason: string): void;
}

/** What performs a thread's outgoing requests. */
export interface OutgoingTransport {
  /** Starts a request, or refuses it (HTTP-request-denied) with nothing sent. */
  start(head: OutgoingHead, timeouts: OutgoingTimeouts): { call: OutgoingCall } | { refused: ErrorCode };
}
