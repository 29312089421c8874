// Messages between a worker's main thread and an instance thread
// (`instance-thread.ts`). Calls and answers are arrays, not objects: they
// cross the thread boundary on every invocation, and arrays clone faster.

import type { MessagePort } from 'node:worker_threads';
import type { ServiceDescriptor } from '../../service.js';
import type { HandlerRequest } from '../wasi-host/index.js';
import type { TrapCode } from './component-instance.js';
import type { HandleIssuer } from './handle-ids.js';
import type { HandleCall } from './handle-table.js';
import type { Framing, StreamFailure } from './invocation.js';

/** What an instance thread is started with (its `workerData`). */
export interface ThreadSpec {
  /** The service, as the worker hosts it: the thread makes its instances from it as the inline path does (instance-spec.ts). */
  descriptor: ServiceDescriptor;
  /** Compiled core modules by the name the glue asks for; compiled once per worker and shared by its threads. */
  modules: [name: string, module: WebAssembly.Module][];
  /** The memory cap the core modules were compiled with, for the trap message. */
  memoryCapBytes: number;
  /** Who the handles its instances make are issued by. */
  issuer: HandleIssuer;
  /** The cells an HTTP handler's guest sleeps on and reads its response credit from (wasi-host/core/channel.ts), shared with the main thread. */
  cells: SharedArrayBuffer;
  /** An HTTP handler's outgoing requests (wasi-host/core/outgoing-channel.ts): the thread's end; the main thread sends them. */
  outgoing?: MessagePort;
  /** Calls across the service's links (link-calls.ts): the thread's end; the main thread makes them. */
  links?: MessagePort;
}

/**
 * Main → thread: call method `index` with jco-shaped `args`, or with the
 * arguments a large JSON body holds (its bytes, moved: the thread parses and
 * decodes them, and answers BAD_ARGUMENTS when they do not fit). With a framing,
 * the method returns a stream: the thread keeps its resource, answers OK
 * (value null) and then calls `next` while the stream's ring (byte-ring.ts)
 * has room, framing each item into it, until END or STREAM_FAILED.
 */
export type CallRequest =
  | [id: number, method: number, args: unknown[] | Uint8Array<ArrayBuffer> | Work]
  /**
   * `ring`: a stream's, made by the pool when a thread takes the call (a
   * call without `framing` answers no stream); `body`: the port its
   * stream<T> parameter's bytes come on (a PortBodySource's).
   */
  | [id: number, method: number, args: unknown[] | Uint8Array<ArrayBuffer>, framing: Framing | undefined, ring: SharedArrayBuffer | undefined, body?: MessagePort];

/**
 * Main → thread: work on the instance's handles (handle-table.ts), answered
 * OK with a HandleCallResult (a call), or with null (a drop).
 */
export type HandleWork = { kind: 'handle-call'; call: HandleCall } | { kind: 'handle-drop'; id: string };

/**
 * Main → thread: one request to an HTTP handler (docs/api.md §5.8), on a
 * fresh instance unless its max_invocations says otherwise. Its body comes and its response goes on `port`
 * (wasi-host/core/channel.ts), ending with what `handle` left behind; the call is
 * answered OK (null) once `handle` has returned.
 */
export interface HttpWork {
  kind: 'http-request';
  request: HandlerRequest;
  port: MessagePort;
  /** The ring its response body goes through (byte-ring.ts). */
  ring: SharedArrayBuffer;
}

/** What a call request carries instead of a method's arguments. */
export type Work = HandleWork | HttpWork;

/** Whether a call request's body is work, not a call's arguments. */
export function isWork(body: CallRequest[2]): body is Work {
  return !Array.isArray(body) && !(body instanceof Uint8Array);
}

/** Whether a call request's body is handle work. */
export function isHandleWork(body: CallRequest[2]): body is HandleWork {
  return isWork(body) && body.kind !== 'http-request';
}

/** Main → thread: the end of an open stream (dropping the resource), or the cancellation of a shared call's task (its client left, its deadline passed). */
export interface CallCancel {
  type: 'cancel';
  id: number;
}

export const OK = 0;
export const COMPONENT_ERROR = 1;
export const TRAP = 2;
/** A stream's next returned none, or it was cancelled; its resource is dropped. */
export const END = 4;
/** The JSON body the thread was given does not decode: the call was not made. */
export const BAD_ARGUMENTS = 5;
/** A stream's `next` returned its err case or trapped, or its call's request body had a line that did not fit; its resource is dropped (unless a trap took the instance). */
export const STREAM_FAILED = 6;

/**
 * Thread → main: one answer per call, in call order. A call's answer
 * carries `ranMs`, how long the call ran on the thread: the main thread's
 * own clock would add the time its answer waited behind other requests
 * there, tens of ms under load (execution.ts judges a move by it).
 */
export type CallAnswer =
  | [id: number, tag: typeof OK, value: unknown, ranMs?: number]
  /** The err case of a top-level result<T, E>: the payload E. */
  | [id: number, tag: typeof COMPONENT_ERROR, payload: unknown, ranMs?: number]
  | [id: number, tag: typeof TRAP, code: TrapCode, message: string, ranMs?: number]
  | [id: number, tag: typeof BAD_ARGUMENTS, kind: 'invalid-json' | 'invalid-arguments' | 'unknown-handle' | 'handle-ended', details: string];

/** Thread → main, once a stream's call has answered OK (its bytes come through its ring): its end, after its last bytes. */
export type StreamAnswer =
  | [id: number, tag: typeof END]
  | [id: number, tag: typeof STREAM_FAILED, failure: Extract<StreamFailure, { kind: 'component-error' | 'trap' | 'invalid-json' | 'invalid-arguments' }>];

/** Thread → main, besides answers. */
export type ThreadEvent =
  | { type: 'ready' }
  /** The instance could not be created (at start, or when replacing a trapped or recycled one). */
  | { type: 'failed'; error: string }
  /** What the component wrote to stdout/stderr, capped per call. */
  | { type: 'output'; stream: 'stdout' | 'stderr'; text: string; dropped: number };

export type ThreadMessage = CallAnswer | StreamAnswer | ThreadEvent;

/** How long the answered call ran on its thread (undefined: the call was not made). */
export function ranMs(answer: CallAnswer): number | undefined {
  switch (answer[1]) {
    case OK:
    case COMPONENT_ERROR:
      return answer[3];
    case TRAP:
      return answer[4];
    case BAD_ARGUMENTS:
      return undefined;
  }
}

/** Whether a message from the thread is a stream's, not a call's answer. */
export function isStreamAnswer(answer: CallAnswer | StreamAnswer): answer is StreamAnswer {
  return answer[1] === END || answer[1] === STREAM_FAILED;
}
