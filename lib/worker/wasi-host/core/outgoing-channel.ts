// The instance thread's end of a handler guest's outgoing requests
// (outgoing-protocol.ts): the OutgoingTransport the guest's outgoing-handler
// hands its requests to. It never blocks the guest but to wait for the
// allow-list, which the main thread posts first thing.

import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { OutboundPolicy } from '../../../outbound-hosts.js';
import { ChunkQueue } from './byte-queue.js';
import { threadWaker } from './channel.js';
import type { FieldEntry } from './field-rules.js';
import { UNSENT_WINDOW, type BodySink, type ErrorCode, type RequestBodySource } from './handler-io.js';
import type { OutgoingToMain, OutgoingToThread } from './outgoing-protocol.js';
import type { OutgoingCall, OutgoingHead, OutgoingResponseState, OutgoingTimeouts, OutgoingTransport } from './outgoing-transport.js';
import type { Waker } from './waker.js';

/** A request body's credit to start with: what OutgoingBody holds before `handle` must fit in it. */
const REQUEST_WINDOW = UNSENT_WINDOW;
/** How long `handle` waits for the client's allow-list before deciding rt is miswired. */
const POLICY_WAIT_MS = 10_000;

const describe = (code: ErrorCode): string => (code.val === undefined ? code.tag : `${code.tag}: ${typeof code.val === 'string' ? code.val : JSON.stringify(code.val)}`);

/**
 * One per instance thread, over the port handed in its workerData. Pass it to
 * handlerImports; call `abandon` when a `handle` call returned, since nothing
 * of that guest runs again to finish its requests.
 */
export class OutgoingChannel implements OutgoingTransport {
  readonly #port: MessagePort;
  readonly #waker: Waker;
  readonly #flights = new Map<number, Flight>();
  #policy: OutboundPolicy | undefined;
  #nextId = 1;

  /** `shared`: the thread's cells (channel.ts threadCells), whose wake counter `poll` sleeps on. */
  constructor(port: MessagePort, shared: SharedArrayBuffer) {
    this.#port = port;
    this.#waker = threadWaker(shared);
  }

  /** What moves when the main thread posts for a request: a WASI 0.3 guest's host awaits it (Waker.moved) instead of sleeping. */
  get waker(): Waker {
    return this.#waker;
  }

  start(head: OutgoingHead, timeouts: OutgoingTimeouts): { call: OutgoingCall } | { refused: ErrorCode } {
    if (head.link === undefined && !this.#awaitPolicy().allows(head.scheme, head.authority)) return { refused: { tag: 'HTTP-request-denied' } };
    const id = this.#nextId++;
    const flight = new Flight(id, this);
    this.#flights.set(id, flight);
    this.post({ kind: 'start', id, head, timeouts });
    return { call: flight };
  }

  /** Every request still in flight is stopped (the guest that sent them returned). */
  abandon(reason = 'the handler returned'): void {
    this.drain();
    for (const flight of [...this.#flights.values()]) flight.cancel(reason);
    this.#flights.clear();
  }

  /** Requests whose messages this end still expects (for tests and metrics). */
  get inFlight(): number {
    return this.#flights.size;
  }

  /** @internal Takes what the main thread posted; never blocks. */
  drain(): void {
    for (let m = receiveMessageOnPort(this.#port); m; m = receiveMessageOnPort(this.#port)) {
      const message = m.message as OutgoingToThread;
      if (message.kind === 'policy') this.#policy = new OutboundPolicy(message.hosts);
      else this.#flights.get(message.id)?.receive(message);
    }
  }

  /** @internal */ post(message: OutgoingToMain, transfer: ArrayBuffer[] = []): void {
    this.#port.postMessage(message, transfer);
  }

  /** @internal No more messages for `id` matter; whether it was still here. */
  forget(id: number): boolean {
    return this.#flights.delete(id);
  }

  /** The client's allow-list, posted when it was made: normally here already. */
  #awaitPolicy(): OutboundPolicy {
    const until = Date.now() + POLICY_WAIT_MS;
    for (;;) {
      const seen = this.#waker.epoch();
      this.drain();
      if (this.#policy) return this.#policy;
      const left = until - Date.now();
      // rt's wiring, not the guest's doing: the call traps.
      if (left <= 0) throw new Error('wasi:http/outgoing-handler: no OutgoingClient answers on this thread’s outgoing port');
      this.#waker.sleep(seen, left);
    }
  }
}

type BodyStatus = { kind: 'open' } | { kind: 'ended' } | { kind: 'failed'; reason: string; code: ErrorCode };

/** One request as the thread sees it: the guest's objects read and write through it. */
class Flight implements OutgoingCall {
  readonly #id: number;
  readonly #channel: OutgoingChannel;
  #response: OutgoingResponseState = { kind: 'waiting' };
  readonly #queue = new ChunkQueue();
  #body: BodyStatus = { kind: 'open' };
  #trailers: FieldEntry[] | undefined;
  #credit = REQUEST_WINDOW;
  /** The main thread gave up on the request: body writes are swallowed (the future or the response body says why). */
  #failed = false;
  /** The guest finished or aborted its request body. */
  #requestDone = false;
  #skipping = false;
  #cancelled = false;

  constructor(id: number, channel: OutgoingChannel) {
    this.#id = id;
    this.#channel = channel;
  }

  receive(message: Exclude<OutgoingToThread, { kind: 'policy' }>): void {
    switch (message.kind) {
      case 'credit':
        this.#credit += message.bytes;
        return;
      case 'head':
        this.#response = { kind: 'head', head: message.head };
        return;
      case 'chunk':
        // After a skip, what was already on its way is dropped too.
        if (this.#skipping) return;
        this.#queue.push(message.bytes);
        return;
      case 'end':
        this.#body = { kind: 'ended' };
        this.#trailers = message.trailers;
        return this.#settle();
      case 'error':
        this.#failed = true;
        if (this.#response.kind === 'waiting') this.#response = { kind: 'failed', code: message.code };
        if (this.#body.kind === 'open') this.#body = { kind: 'failed', reason: describe(message.code), code: message.code };
        return this.#settle();
    }
  }

  response(): OutgoingResponseState {
    this.#channel.drain();
    return this.#response;
  }

  /**
   * Writes after a failure are taken and dropped rather than failed:
   * StarlingMonkey asserts that its body writes succeed, and learns of the
   * failure from the future as it should.
   */
  readonly requestBody: BodySink = {
    credit: () => {
      this.#channel.drain();
      return this.#failed || this.#cancelled ? REQUEST_WINDOW : Math.max(0, this.#credit);
    },
    open: () => true,
    chunk: (bytes) => {
      if (this.#failed || this.#cancelled) return;
      this.#credit -= bytes.length;
      // Copied by the post: the array may be a view of one the caller goes on using.
      this.#channel.post({ kind: 'chunk', id: this.#id, bytes });
    },
    finish: (trailers) => {
      this.#requestDone = true;
      if (!this.#failed && !this.#cancelled) this.#channel.post({ kind: 'end', id: this.#id, trailers });
      this.#settle();
    },
    abort: (reason) => {
      this.#requestDone = true;
      // The main thread stops the request and answers with an error for the future or the response body.
      if (!this.#failed && !this.#cancelled) this.#channel.post({ kind: 'abort', id: this.#id, reason });
    },
  };

  readonly responseBody: RequestBodySource = {
    read: (max) => {
      this.#channel.drain();
      const bytes = this.#queue.take(max);
      if (bytes.length > 0 && this.#body.kind === 'open') this.#channel.post({ kind: 'read', id: this.#id, bytes: bytes.length });
      return bytes;
    },
    available: () => {
      this.#channel.drain();
      return this.#queue.available;
    },
    status: () => {
      this.#channel.drain();
      // Bytes that arrived before a failure are still read; the failure shows once they are.
      return this.#body.kind === 'failed' && this.#queue.available > 0 ? { kind: 'open' } : this.#body;
    },
    trailers: () => this.#trailers,
    release: () => this.cancel('the guest dropped the response body before its end'),
    skipRest: () => {
      this.#channel.drain();
      this.#queue.clear();
      if (this.#body.kind !== 'open' || this.#skipping) return;
      this.#skipping = true;
      this.#channel.post({ kind: 'skip', id: this.#id });
    },
  };

  cancel(reason: string): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    if (this.#channel.forget(this.#id)) this.#channel.post({ kind: 'abort', id: this.#id, reason });
    // What the guest still holds reads as failed from now on.
    const code: ErrorCode = { tag: 'internal-error', val: reason };
    if (this.#response.kind === 'waiting') this.#response = { kind: 'failed', code };
    if (this.#body.kind === 'open') this.#body = { kind: 'failed', reason, code };
  }

  /** Both directions done: no message for this id matters any more. */
  #settle(): void {
    if (this.#body.kind !== 'open' && (this.#requestDone || this.#failed)) this.#channel.forget(this.#id);
  }
}
