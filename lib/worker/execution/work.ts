// What a hosted service asks its execution to run (execution.ts): one kind
// of work each, and what each kind comes to. Every kind runs on instance
// threads (instance-pool.ts: `run`); a call, and a call that involves
// handles, also inline on the main thread when the service's placement is
// inline (placement.ts), and a request to a WASI 0.3 handler on rt's own
// host in a place of its own there (inline-handler-place.ts). A new kind of work (say, an async task of a WASI
// 0.3 component) is a variant here, its outcome below, and a case in `run`
// of each placement that takes it (place.ts; on threads, the thread
// protocol too, thread-protocol.ts).

import type { Arguments } from './arguments.js';
import type { HandleHolder, HolderResult } from './handle-directory.js';
import type { HandleCall } from './handle-table.js';
import type { CallResult, StreamOpening, StreamOptions } from './invocation.js';
import type { BodyChannel, HandlerRequest, MainEnd } from '../wasi-host/index.js';

export type Work =
  /** A call of exported function `method` (its index in the service's methods); `body`: its stream<T> parameter, the request body as it arrives (threads only). */
  | { kind: 'call'; method: number; args: Arguments; body?: BodyChannel }
  /** A call of streaming method `method`: once it has returned its resource, its items go to `options.sink` until it ends. */
  | { kind: 'stream'; method: number; args: Arguments; options: StreamOptions; body?: BodyChannel }
  /** A call that involves handles (handle-table.ts): on `holder`'s instance when it names handles, else where the service runs. */
  | { kind: 'handles'; call: HandleCall; holder?: HandleHolder }
  /** One request to an HTTP handler: its body and response cross on `channel`. */
  | { kind: 'http'; request: HandlerRequest; channel: MainEnd };

/** What a call that involves handles came to, and the instance it ran on (where the handles it made live). */
export interface HandlesOutcome {
  result: HolderResult;
  holder?: HandleHolder;
}

/**
 * What work of each kind comes to: a call's result (or why there is none);
 * a stream's opening; a handle call's outcome; for an HTTP request, that
 * `handle` returned (its response comes on the channel) or why it did not.
 */
export type Outcome<W extends Work> = W extends { kind: 'stream' } ? StreamOpening : W extends { kind: 'handles' } ? HandlesOutcome : CallResult;
