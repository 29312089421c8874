// A request's body and its response between the worker's main thread (where
// the sockets are) and the instance thread the guest blocks on.
//
// The guest's thread sleeps in Atomics.wait (waker.ts), so it cannot take
// 'message' events: the main thread posts on a MessagePort and bumps the
// thread's wake counter; the thread drains the port with receiveMessageOnPort
// whenever readiness is asked. The response's body goes the other way
// through a ring of shared memory (byte-ring.ts) whose room is the guest's
// credit: the main thread frees it as its client takes the bytes, so a slow
// reader stops the guest in check-write/poll instead of making anyone
// buffer. The response's head and end are messages, posted after the bytes
// before them are in the ring.

import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { RingProducer, RingReader } from '../../../byte-ring.js';
import type { ErrorCode as RtErrorCode } from '../../../errors.js';
import { ChunkQueue } from './byte-queue.js';
import type { FieldEntry } from './field-rules.js';
import type { ErrorCode, HandleOutcome, RequestBodySource, ResponseHead, ResponseSink } from './handler-io.js';
import { Waker, type WakeSignal } from './waker.js';

/** The thread's shared cells (Int32 each): the wake counter poll sleeps on. */
const WAKE = 0;
export const SHARED_CELLS = 1;

/** One per instance thread: made on the main thread, sent to the thread in its workerData. */
export function threadCells(): SharedArrayBuffer {
  return new SharedArrayBuffer(SHARED_CELLS * 4);
}

/** The thread's waker over `shared` (poll.ts's usePollWaker takes it). */
export function threadWaker(shared: SharedArrayBuffer): Waker {
  return new Waker(shared, WAKE);
}

/** From the main thread: something was posted to the thread, its `poll` looks again. */
export function wakeThread(shared: SharedArrayBuffer): void {
  Waker.wake(shared, WAKE);
}

// ---- the request body ----

export type BodyMessage = { kind: 'chunk'; bytes: Uint8Array } | { kind: 'end'; trailers?: FieldEntry[] } | { kind: 'fail'; reason: string };

/** The main thread's end of a request body: the bytes as the client sends them, then the end or a failure. */
export interface RequestBodyFeeder {
  push(bytes: Uint8Array): void;
  end(trailers?: FieldEntry[]): void;
  /** The body cannot be completed (the client went away, a limit was hit): the guest's next read fails. */
  fail(reason: string): void;
}

/** A request body that is all here already (a body buffered before the call, or none). */
export class BufferedBody implements RequestBodySource {
  #rest: Uint8Array;

  constructor(
    bytes: Uint8Array = new Uint8Array(0),
    private readonly endTrailers?: FieldEntry[],
  ) {
    this.#rest = bytes;
  }

  read(max: number): Uint8Array {
    const n = Math.min(max, this.#rest.length);
    const out = this.#rest.subarray(0, n);
    this.#rest = this.#rest.subarray(n);
    return out;
  }

  available(): number {
    return this.#rest.length;
  }

  status(): { kind: 'ended' } {
    return { kind: 'ended' };
  }

  trailers(): FieldEntry[] | undefined {
    return this.endTrailers;
  }
}

/**
 * Body bytes the guest reads before the thread tells the main thread (a
 * `taken` message), which holds at most BODY_WINDOW_BYTES unread ahead of it:
 * a guest that reads slowly slows its client down instead of filling memory.
 */
const TAKEN_BYTES = 64 * 1024;
export const BODY_WINDOW_BYTES = 4 * TAKEN_BYTES;

/**
 * A request body as the feeder's messages made it: bytes queued, then the
 * end (with trailers) or a failure. Its reader is the instance thread's
 * (PortBodySource, the messages drained from the port) or the main thread's
 * (local-channel.ts, the messages delivered as they come).
 */
export abstract class QueuedBody implements RequestBodySource {
  readonly #queue = new ChunkQueue();
  #status: { kind: 'open' } | { kind: 'ended' } | { kind: 'failed'; reason: string } = { kind: 'open' };
  #trailers: FieldEntry[] | undefined;

  /** Takes in what has arrived since the last look (a thread drains its port here). */
  protected arrive(): void {}

  /** The guest read `bytes` more. */
  protected abstract taken(bytes: number): void;

  /** Whether the body is still open, so that more messages may come. */
  protected get open(): boolean {
    return this.#status.kind === 'open';
  }

  /** Bytes queued, without looking for more. */
  protected get queued(): number {
    return this.#queue.available;
  }

  /** One of the feeder's messages. */
  protected apply(message: BodyMessage): void {
    if (message.kind === 'chunk') this.#queue.push(message.bytes);
    else if (message.kind === 'end') {
      this.#status = { kind: 'ended' };
      this.#trailers = message.trailers;
    } else this.#status = { kind: 'failed', reason: message.reason };
  }

  read(max: number): Uint8Array {
    this.arrive();
    const bytes = this.#queue.take(max);
    this.taken(bytes.length);
    return bytes;
  }

  available(): number {
    this.arrive();
    return this.#queue.available;
  }

  status(): { kind: 'open' } | { kind: 'ended' } | { kind: 'failed'; reason: string } {
    this.arrive();
    // Bytes that arrived before a failure are still read; the failure shows once they are.
    return this.#status.kind === 'failed' && this.#queue.available > 0 ? { kind: 'open' } : this.#status;
  }

  trailers(): FieldEntry[] | undefined {
    return this.#trailers;
  }

  /** The body's bytes as they arrive (arrivingChunks); a failed body ends it too (the main thread answers the failure: body-feed.ts). */
  chunks(waker: WakeSignal): AsyncGenerator<Uint8Array, void, undefined> {
    return arrivingChunks(this, waker);
  }
}

/** The thread's end: what the feeder posted, read without blocking. */
export class PortBodySource extends QueuedBody {
  /** Read since the last `taken` message. */
  #taken = 0;

  constructor(private readonly port: MessagePort) {
    super();
  }

  protected override arrive(): void {
    if (!this.open) return;
    for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
      this.apply(m.message as BodyMessage);
      if (!this.open) break;
    }
  }

  protected taken(bytes: number): void {
    this.#taken += bytes;
    if (this.#taken >= TAKEN_BYTES || (this.queued === 0 && this.#taken > 0)) {
      this.port.postMessage({ kind: 'taken', bytes: this.#taken } satisfies ResponseMessage);
      this.#taken = 0;
    }
  }
}

/**
 * `source`'s bytes as they arrive, for a guest that reads them through
 * JSPI (a stream<T> parameter, a WASI 0.3 body: jco's glue reads an async
 * iterable), which leaves the thread's event loop free meanwhile: `waker`
 * moves when the main thread posts. Ends with the body, or its failure.
 */
export async function* arrivingChunks(source: RequestBodySource, waker: WakeSignal): AsyncGenerator<Uint8Array, void, undefined> {
  try {
    for (;;) {
      const seen = waker.epoch();
      const available = source.available();
      if (available > 0) {
        yield source.read(available);
        continue;
      }
      if (source.status().kind !== 'open') return;
      await waker.moved(seen);
    }
  } finally {
    // The guest let go of the body before its end: the far side may stop sending.
    if (source.status().kind === 'open') source.release?.();
  }
}

// ---- the response ----

export type ResponseMessage =
  | { kind: 'head'; head: ResponseHead }
  | { kind: 'malformed'; problem: string }
  | { kind: 'refused'; code: ErrorCode }
  | { kind: 'finish'; trailers: FieldEntry[] | undefined }
  | { kind: 'abort'; reason: string }
  | { kind: 'settled'; settled: Settled }
  /** Not the response's: request body bytes the guest has read (PortBodySource). */
  | { kind: 'taken'; bytes: number };

/**
 * What `handle` left behind, posted last on the request's port: the outcome,
 * and the trap when it threw (a trap before the head is a 500; after it, the
 * body was cut: `abort` came first).
 */
export interface Settled {
  outcome: HandleOutcome;
  /** The trap's code in rt's catalogue (RT_ERR_COMPONENT_TRAPPED, …) and its message. */
  trap?: { code: RtErrorCode; message: string };
}

/** The thread's sink: the body into the request's ring, the rest as messages. */
export class PortResponseSink implements ResponseSink {
  readonly #ring: RingProducer;

  constructor(
    private readonly port: MessagePort,
    ring: SharedArrayBuffer,
  ) {
    this.#ring = new RingProducer(ring);
  }

  head(head: ResponseHead): void {
    this.port.postMessage({ kind: 'head', head } satisfies ResponseMessage);
  }

  malformed(problem: string): void {
    this.port.postMessage({ kind: 'malformed', problem } satisfies ResponseMessage);
  }

  refused(code: ErrorCode): void {
    this.port.postMessage({ kind: 'refused', code } satisfies ResponseMessage);
  }

  credit(): number {
    // Asked before the guest waits (check-write, its pollable): a full ring asks the main thread to wake it when it has room.
    const free = this.#ring.free;
    return free > 0 || !this.#ring.stall() ? this.#ring.free : 0;
  }

  open(): boolean {
    return !this.#ring.closed;
  }

  chunk(bytes: Uint8Array): void {
    // Within the credit, so it fits whole.
    this.#ring.put(bytes);
    this.#ring.publish();
  }

  finish(trailers: FieldEntry[] | undefined): void {
    this.port.postMessage({ kind: 'finish', trailers } satisfies ResponseMessage);
  }

  abort(reason: string): void {
    this.port.postMessage({ kind: 'abort', reason } satisfies ResponseMessage);
  }

  /** Last: what `handle` left behind. */
  settled(settled: Settled): void {
    this.port.postMessage({ kind: 'settled', settled } satisfies ResponseMessage);
  }
}

/** What the main thread does with a response as it arrives, and with what `handle` left behind (`settled`, last). */
export type ResponseListener = Pick<ResponseSink, 'head' | 'malformed' | 'refused' | 'chunk' | 'finish' | 'abort'> & {
  settled(settled: Settled): void;
  /** The guest has read `bytes` more of the request body (BODY_WINDOW_BYTES bounds what it has not). */
  taken?(bytes: number): void;
};

/**
 * The main thread's end of a request body on its way to an instance thread
 * (read there by a PortBodySource on `threadPort`). It exists from the
 * moment the request arrives, before any thread takes it: what is posted
 * before then waits in the port. Once the thread is done with the request
 * (`unbind`), it no longer wakes that thread, whose cells belong to the
 * thread's next request.
 */
abstract class BodyPoster implements RequestBodyFeeder {
  /** The ports, made when first needed: work that stays on the main thread (inline) never needs them. */
  #ports: { port: MessagePort; threadPort: MessagePort } | undefined;
  /** What the feeder sent before either a thread or the main thread took the body. */
  #pending: BodyMessage[] = [];
  /** The body's reader on the main thread, once an inline handler took it. */
  protected local: LocalDelivery | undefined;
  /** The cells of the thread that has the request, while it has it. */
  protected shared: SharedArrayBuffer | undefined;

  /** The main thread's port. */
  get port(): MessagePort {
    return this.#open().port;
  }

  /** The other port: goes to the thread with the request. */
  get threadPort(): MessagePort {
    return this.#open().threadPort;
  }

  #open(): { port: MessagePort; threadPort: MessagePort } {
    if (this.#ports) return this.#ports;
    const { port1: port, port2: threadPort } = new MessageChannel();
    this.#ports = { port, threadPort };
    this.opened(port);
    for (const message of this.#pending) port.postMessage(message);
    this.#pending = [];
    return this.#ports;
  }

  /** The ports were made: the subclass listens on `port`. */
  protected opened(port: MessagePort): void {
    void port;
  }

  /** The ports, if they were made (to close them). */
  protected get ports(): { port: MessagePort; threadPort: MessagePort } | undefined {
    return this.#ports;
  }

  /** The body goes to `local` from now on: what was sent before first. */
  protected deliverLocally(local: LocalDelivery): void {
    const ports = this.#ports;
    if (ports) {
      for (let m = receiveMessageOnPort(ports.threadPort); m; m = receiveMessageOnPort(ports.threadPort)) local.deliver(m.message as BodyMessage);
      ports.port.close();
      this.#ports = undefined;
    }
    for (const message of this.#pending) local.deliver(message);
    this.#pending = [];
    this.local = local;
  }

  /** The thread whose cells are `shared` takes the request now. */
  bind(shared: SharedArrayBuffer): void {
    this.shared = shared;
    Waker.wake(shared, WAKE);
  }

  /** The thread is done with the request. */
  unbind(): void {
    this.shared = undefined;
  }

  push(bytes: Uint8Array): void {
    if (bytes.length > 0) this.#send({ kind: 'chunk', bytes });
  }

  end(trailers?: FieldEntry[]): void {
    this.#send(trailers ? { kind: 'end', trailers } : { kind: 'end' });
  }

  fail(reason: string): void {
    this.#send({ kind: 'fail', reason });
  }

  #send(message: BodyMessage): void {
    if (this.local) return this.local.deliver(message);
    if (!this.#ports) return void this.#pending.push(message);
    this.#ports.port.postMessage(message);
    // After the post: the woken thread finds the message when it drains the port.
    if (this.shared) Waker.wake(this.shared, WAKE);
  }
}

/**
 * A body alone, for a call that reads it as it arrives (a stream<u8>
 * parameter: docs/api.md §5.9); `taken` hears what the guest has read.
 */
export class BodyChannel extends BodyPoster {
  constructor(taken: (bytes: number) => void) {
    super();
    this.port.on('message', (message: ResponseMessage) => {
      if (message.kind === 'taken') taken(message.bytes);
    });
  }

  /** Nothing more is heard from the thread. */
  dispose(): void {
    this.shared = undefined;
    this.port.close();
  }
}

/**
 * Where a request's body and its response go when the handler runs on the
 * main thread (local-channel.ts): the feeder's messages, and the client's
 * grants and departure.
 */
export interface LocalDelivery {
  deliver(message: BodyMessage): void;
  grant(bytes: number): void;
  close(): void;
}

/**
 * The main thread's end of one HTTP handler request's channel: its body
 * (BodyPoster), and its response, whose bytes wait in the ring until the
 * main thread takes them; or, when the handler runs inline (`takeLocally`),
 * neither ports nor ring: both pass on the main thread.
 */
export class MainEnd extends BodyPoster {
  /** The response body's ring, made when a thread takes the request. */
  #ring: RingReader | undefined;
  #closed = false;

  /** `window`: the bytes of response the guest may write before the client has taken any (its ring's size). */
  constructor(
    private readonly listener: ResponseListener,
    private readonly window: number,
  ) {
    super();
  }

  protected override opened(port: MessagePort): void {
    const listener = this.listener;
    port.on('message', (message: ResponseMessage) => {
      const ring = this.#ring!;
      switch (message.kind) {
        case 'head':
          listener.head(message.head);
          // The body's bytes follow the head.
          return ring.pull();
        case 'malformed':
          return listener.malformed(message.problem);
        case 'refused':
          return listener.refused(message.code);
        case 'finish':
          ring.pull();
          return listener.finish(message.trailers);
        case 'abort':
          ring.pull();
          return listener.abort(message.reason);
        case 'settled':
          // The thread is done with the ring.
          ring.end();
          return listener.settled(message.settled);
        case 'taken':
          return listener.taken?.(message.bytes);
      }
    });
  }

  /** The response body's ring, for the thread. */
  get ring(): SharedArrayBuffer {
    this.#ring ??= new RingReader(
      this.window,
      (bytes) => this.listener.chunk(bytes),
      () => this.shared && Waker.wake(this.shared, WAKE),
    );
    if (this.#closed) this.#ring.close();
    return this.#ring.shared;
  }

  /** The handler runs on the main thread: `make` gets the listener and the window, and what it makes takes the body and the grants. */
  takeLocally<T extends LocalDelivery>(make: (listener: ResponseListener, window: number) => T): T {
    const local = make(this.listener, this.window);
    this.deliverLocally(local);
    if (this.#closed) local.close();
    return local;
  }

  /** The client took `bytes` more of what the listener was given: the guest may write that much again. */
  grant(bytes: number): void {
    if (this.local) this.local.grant(bytes);
    else this.#ring?.release(bytes);
  }

  /** The client is gone: the guest's writes fail from now on. */
  close(): void {
    this.#closed = true;
    this.local?.close();
    this.#ring?.close();
  }

  /** Nothing more is heard from the thread (it may still be running, if it was cut off: its ring is not reused). */
  dispose(): void {
    this.#ring?.abandon();
    this.shared = undefined;
    this.ports?.port.close();
    this.local?.close();
  }
}
