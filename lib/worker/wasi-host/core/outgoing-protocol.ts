// Outgoing HTTP requests of a handler guest, between its instance thread
// (OutgoingChannel, outgoing-channel.ts: the guest's OutgoingTransport) and
// the worker's main thread (OutgoingClient, outgoing-client.ts: node:http and
// https), over one MessagePort per thread: the messages both ways.
//
// As for the handler's own request (channel.ts): the guest's thread sleeps in
// Atomics.wait, so the main thread posts and bumps the thread's wake counter,
// and the thread drains the port with receiveMessageOnPort whenever readiness
// is asked. Messages carry a request id: several requests may be in flight
// from one guest. Memory stays bounded both ways: the guest writes a request
// body within a credit the main thread grants back as node flushes it, and
// the main thread pauses a response once `responseWindow` bytes sit unread by
// the guest, resuming as the thread reports its reads.
//
// The allow-list is the main thread's: the client sends it to the thread
// first thing, so that `handle` refuses a denied request at once (what
// StarlingMonkey's fetch handles best), and checks it again before it
// connects.

import type { FieldEntry } from './field-rules.js';
import type { ErrorCode, ResponseHead } from './handler-io.js';
import type { OutgoingHead, OutgoingTimeouts } from './outgoing-transport.js';

/** Thread → main. */
export type OutgoingToMain =
  | { kind: 'start'; id: number; head: OutgoingHead; timeouts: OutgoingTimeouts }
  | { kind: 'chunk'; id: number; bytes: Uint8Array }
  | { kind: 'end'; id: number; trailers: FieldEntry[] | undefined }
  /** The guest broke the request off (dropped its body unfinished, lost interest, returned from `handle`). */
  | { kind: 'abort'; id: number; reason: string }
  /** The guest read this many response bytes. */
  | { kind: 'read'; id: number; bytes: number }
  /** The guest wants only the end (and trailers) of the response body. */
  | { kind: 'skip'; id: number };

/** Main → thread. */
export type OutgoingToThread =
  | { kind: 'policy'; hosts: string[] }
  /** Request body bytes flushed: the guest may write that many more. */
  | { kind: 'credit'; id: number; bytes: number }
  | { kind: 'head'; id: number; head: ResponseHead }
  | { kind: 'chunk'; id: number; bytes: Uint8Array }
  | { kind: 'end'; id: number; trailers: FieldEntry[] | undefined }
  /** The request failed: before the head, its error-code; after it, why the body broke. Nothing follows. */
  | { kind: 'error'; id: number; code: ErrorCode };
