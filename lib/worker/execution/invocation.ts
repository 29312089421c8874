// What the HTTP layer hands to the execution layer, and what it gets back:
// an Invocation (one call of one method, as the request asked for it), and
// a result that says what came of it in the execution layer's own words. The
// HTTP layer turns those words into statuses and error bodies in one place
// (lib/worker/http/failures.ts); nothing here knows of HTTP.

import type { TrapCode } from './component-instance.js';
import type { Method } from './method.js';
import type { BodyChannel } from '../wasi-host/index.js';
import type { RequestTrace } from '../../tracing/traces.js';

/**
 * A request's arguments as they arrived: a JSON body's bytes (decoded where
 * arguments.ts says), the raw bytes of a method whose only parameter is
 * list<u8>, or no body at all.
 */
export type Input = { kind: 'none' } | { kind: 'json'; bytes: Uint8Array } | { kind: 'bytes'; bytes: Uint8Array };

export interface Invocation {
  method: Method;
  input: Input;
  /** performance.now() time by which the call must have answered, waiting and running (counted from the request's arrival). */
  deadline: number;
  /** How a list<u8> result is wanted: as the bytes themselves, or as JSON (base64). Other results are JSON whatever this says. */
  answer: 'bytes' | 'json';
  /** Aborts when the client leaves: a call still waiting for its turn is then never made. */
  signal?: AbortSignal;
  /** The handle a resource's method is called on (docs/api.md §5.1.2). */
  self?: string;
  /** The request body as it arrives, for a method's stream<T> parameter (docs/api.md §5.9): the thread that makes the call reads it. */
  body?: BodyChannel;
  /** Another worker sent it here (http/peers.ts): it is made here, whatever this worker would say of where it belongs. */
  forwarded?: boolean;
  /** The handle scope its request named (`RT-Handle-Scope`, docs/api.md §5.1.2), for a call that makes handles from none. */
  scope?: string;
  /** The client's address (docs/api.md §5.10): the default scope's handles are bounded per client. */
  client?: string;
  /** The request's span (traces on): the call's span is its child. */
  trace?: RequestTrace;
}

/** How a call or a stream failed, without HTTP: the HTTP layer gives each its status and body. */
export type Failure =
  /** The method's signature is one rt cannot call (`reason` says why). */
  | { kind: 'not-invocable'; reason: string }
  /** The service is quiesced: it holds no instances. */
  | { kind: 'quiesced' }
  /** The JSON body is not JSON: the parser's complaint. */
  | { kind: 'invalid-json'; details: string }
  /** The arguments do not fit the signature: the codec's complaint, naming the path. */
  | { kind: 'invalid-arguments'; details: string }
  /** A handle it names was never issued (`unknown-handle`), or has ended (`handle-ended`: dropped, moved, expired, or its instance gone): why. */
  | { kind: 'unknown-handle' | 'handle-ended'; details: string }
  /** The scope keeps `max` live handles already (`scope`: shortened, absent for the default scope), or the client its share of the default scope (`client`). */
  | { kind: 'too-many-handles'; max: number; scope?: string; client?: boolean }
  /** A call that makes handles from none names no scope, and the service requires one (sidecar `handle_scope`). */
  | { kind: 'scope-required' }
  /** The worker holds `max_scopes` named scopes of the service already. */
  | { kind: 'too-many-scopes'; max: number }
  /** The call would make handles that cannot live (instance_per_call), or passes handles that live in different instances. */
  | { kind: 'handles-refused'; details: string }
  /** The err case of a top-level result<T, E> (for a stream: of `next`), as JSON. */
  | { kind: 'component-error'; payload: unknown }
  | { kind: 'trap'; code: TrapCode; message: string }
  /** Cut off at a deadline: the call's, one `next` of a stream's, or the whole stream's. */
  | { kind: 'timeout'; what: 'call' | 'next' | 'stream' }
  /** Not made: the service's queue was full. */
  | { kind: 'overloaded' }
  /** Not made: its client left while it waited. */
  | { kind: 'abandoned' };

/** How a stream that began ends early: the guest failed, or ran out of time, or (a stream<T> parameter's) the request body had a line that did not fit. */
export type StreamFailure = Extract<Failure, { kind: 'component-error' | 'trap' | 'timeout' | 'invalid-json' | 'invalid-arguments' }>;

/** What an invocation came to: the result's JSON value, its raw bytes (a list<u8> result answered as bytes), or a failure. */
export type InvokeResult =
  | { kind: 'json'; value: unknown }
  | { kind: 'bytes'; bytes: Uint8Array; mediaType: string }
  | Failure;

/**
 * A worker other than this one, where a request is to be made: the handles
 * it names live there (`handles`), or it makes handles and names none, and
 * that worker is their home (`home`, handle-homes.ts). The HTTP layer
 * forwards the request there (http/peers.ts) before execution is asked.
 */
export interface OtherWorker {
  kind: 'other-worker';
  worker: number;
  for: 'handles' | 'home';
}

/**
 * How a stream's items are written: `raw` (list<u8> items as they are,
 * strings as UTF-8), `ndjson` (one JSON value per line) or `sse`
 * (`data: <json>` events). Items are framed where they are made, so the
 * main thread only writes bytes.
 */
export type Framing = 'raw' | 'ndjson' | 'sse';

/** Where an open stream's framed items go. */
export interface StreamSink {
  /**
   * The next bytes of framed items, and how many items they complete: a view
   * of the stream's ring, valid until granted back (StreamControl.grant),
   * which must happen for every byte, once it has gone out or is dropped.
   */
  chunk(bytes: Uint8Array, items: number): void;
  /** The stream is over: its items all came (no failure), or it failed. Not called after `cancel`. */
  end(failure?: StreamFailure): void;
}

export interface StreamOptions {
  framing: Framing;
  /** Bytes the instance may make ahead of what the sink has granted back (a power of two: its ring's size). */
  window: number;
  /** performance.now() at which the whole stream is ended. */
  streamDeadline: number;
  sink: StreamSink;
}

/** What the caller of an open stream does with it. */
export interface StreamControl {
  /** `bytes` the sink was given are no longer needed (the reader took them): the instance may make that many more. */
  grant(bytes: number): void;
  /** Ends the stream early (the client went away): the instance drops its resource. */
  cancel(): void;
}

/** A stream that opened (the method returned its resource; items follow to the sink), or why it did not. */
export type StreamOpening = { kind: 'open'; control: StreamControl } | Failure;

/** What came of a call inside the execution layer, before its value is encoded: the jco value, or a failure. */
export type CallResult = { kind: 'ok'; value: unknown } | Failure;
