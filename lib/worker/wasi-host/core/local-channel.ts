// A request's body and its response when the handler runs on the worker's
// main thread (a WASI 0.3 handler on rt's own host, inline): channel.ts's
// twin without a thread between the two ends. The body's bytes go straight
// from the client's feed to the guest's reads, and the response's straight
// to the listener that writes it to the socket; the same rules hold as
// across threads: the guest reads at most the body window ahead of what it
// was told it may (`taken`), and writes at most the response window ahead of
// what the client has taken (`grant`).

import { QueuedBody, type BodyMessage, type LocalDelivery, type ResponseListener, type Settled } from './channel.js';
import type { FieldEntry } from './field-rules.js';
import type { ErrorCode, ResponseHead, ResponseSink } from './handler-io.js';
import { LocalWaker } from './waker.js';

class LocalBody extends QueuedBody {
  constructor(
    private readonly waker: LocalWaker,
    private readonly told: (bytes: number) => void,
  ) {
    super();
  }

  /** What the feeder sent (channel.ts's BodyMessage, as across threads). */
  deliver(message: BodyMessage): void {
    if (!this.open) return;
    this.apply(message);
    this.waker.wake();
  }

  protected taken(bytes: number): void {
    if (bytes > 0) this.told(bytes);
  }
}

class LocalSink implements ResponseSink {
  /** Bytes the listener was given that the client has not taken yet. */
  #outstanding = 0;
  #closed = false;

  constructor(
    private readonly listener: ResponseListener,
    private readonly window: number,
    private readonly waker: LocalWaker,
  ) {}

  head(head: ResponseHead): void {
    this.listener.head(head);
  }

  malformed(problem: string): void {
    this.listener.malformed(problem);
  }

  refused(code: ErrorCode): void {
    this.listener.refused(code);
  }

  credit(): number {
    return this.#closed ? 0 : Math.max(0, this.window - this.#outstanding);
  }

  open(): boolean {
    return !this.#closed;
  }

  chunk(bytes: Uint8Array): void {
    this.#outstanding += bytes.length;
    this.listener.chunk(bytes);
  }

  finish(trailers: FieldEntry[] | undefined): void {
    this.listener.finish(trailers);
  }

  abort(reason: string): void {
    this.listener.abort(reason);
  }

  settled(settled: Settled): void {
    this.listener.settled(settled);
  }

  grant(bytes: number): void {
    this.#outstanding = Math.max(0, this.#outstanding - bytes);
    this.waker.wake();
  }

  close(): void {
    this.#closed = true;
    this.waker.wake();
  }
}

/**
 * Both ends on one thread: what the inline handler reads (`body`) and writes
 * (`sink`), and what the main thread's channel (MainEnd.takeLocally) feeds
 * and grants.
 */
export class LocalEnd implements LocalDelivery {
  readonly waker = new LocalWaker();
  readonly body: LocalBody;
  readonly sink: LocalSink;

  constructor(listener: ResponseListener, window: number) {
    this.body = new LocalBody(this.waker, (bytes) => listener.taken?.(bytes));
    this.sink = new LocalSink(listener, window, this.waker);
  }

  deliver(message: BodyMessage): void {
    this.body.deliver(message);
  }

  grant(bytes: number): void {
    this.sink.grant(bytes);
  }

  close(): void {
    this.sink.close();
  }
}

export type { LocalBody, LocalSink };
