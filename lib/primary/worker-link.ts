// One worker as the primary talks to it: messages held until it listens (its
// first message, `started`), its replies matched to the requests they answer,
// and the requests still waiting failed when it exits.
//
// Nothing here lives as long as the worker and gathers something per request.
// Racing each reply against a promise of the worker's exit did, once:
// every race left a reaction on that promise, holding the settled reply, until
// the worker died; a metrics scrape every few seconds piled up the workers'
// snapshots until the primary ran out of heap. Here a reply is held by the one
// request that waits for it, and an exit fails the requests it finds waiting.

import { Correlator, type PrimaryMessage, type ReplyTo, type UnsentRequest, type WorkerReply, type WorkerRequest } from '../ipc.js';

/** A message, or a function that makes it when it is sent (with what is current then). */
type Outgoing = PrimaryMessage | (() => PrimaryMessage);

export class WorkerLink {
  readonly #replies = new Correlator<WorkerReply>();
  /** Messages for a worker that does not listen yet, in order; undefined once it does. */
  #held: Outgoing[] | undefined = [];
  #exited = false;

  constructor(
    /** How the worker is named in errors (its cluster id). */
    private readonly name: string,
    /** Sends a message to the worker now. */
    private readonly deliver: (message: PrimaryMessage) => void,
  ) {}

  /** The worker listens now: what was held for it goes out, in order. */
  started(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const message of held) this.#deliver(message);
  }

  /** Sends `message` now, or once the worker listens. */
  post(message: Outgoing): void {
    if (this.#exited) return;
    if (this.#held) this.#held.push(message);
    else this.#deliver(message);
  }

  /**
   * Sends a request (once the worker listens; a function makes it then) and
   * resolves with its reply; rejects when the worker exits first, or when
   * `timeoutMs` passes.
   */
  ask<T extends WorkerRequest['type']>(request: UnsentRequest<T> | (() => UnsentRequest<T>), timeoutMs?: number): Promise<ReplyTo<T>> {
    if (this.#exited) return Promise.reject(this.#exitError());
    const { id, reply } = this.#replies.request(timeoutMs, `worker ${this.name} did not answer`);
    this.post(() => ({ ...(typeof request === 'function' ? request() : request), id }));
    // The worker answers each request with its reply type (lib/worker/main.ts).
    return reply as Promise<ReplyTo<T>>;
  }

  /** A reply from the worker: settles the request it answers, if that still waits. */
  settle(reply: WorkerReply): void {
    this.#replies.settle(reply);
  }

  /** The worker exited: the requests still waiting fail, and nothing more is sent. */
  exited(): void {
    this.#exited = true;
    this.#held = undefined;
    this.#replies.failAll(this.#exitError());
  }

  #deliver(message: Outgoing): void {
    this.deliver(typeof message === 'function' ? message() : message);
  }

  #exitError(): Error {
    return new Error(`worker ${this.name} exited`);
  }
}
