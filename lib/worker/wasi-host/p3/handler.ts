// One request to a WASI 0.3 handler (docs/api.md §5.9), on its instance
// thread: the request `handle` takes, and what rt does with the response it
// returns. Unlike 0.2, where the guest writes its body inside `handle`, a 0.3
// guest returns the response first and writes its body from its task after;
// so rt reads the body as the client takes it (the sink's credit: a slow
// client stops the guest's writes, as in 0.2), then the trailers, and tells
// the guest how the response went out (the future `response.new` gave it).
// Many exchanges run side by side on one instance: each waits on the thread's
// waker, which the main thread moves when any of them has body bytes or room.

import type { QueuedBody } from '../core/channel.js';
import type { ErrorCode, HandleOutcome, HandlerRequest, ResponseSink } from '../core/handler-io.js';
import { headerProblem, statusProblem } from '../core/message-parts.js';
import type { WakeSignal } from '../core/waker.js';
import { byteReader, ending, type ByteReader, type TrailersResult } from './bodies.js';
import { Request, Response, type ResponseParts } from './http-types.js';

/** The most bytes asked of the guest's body stream at once (the sink's credit bounds it further). */
const READ_BYTES = 64 * 1024;

/** How a guest's promise is awaited: rejecting if its instance trapped meanwhile (nothing it promised comes any more). */
export type Guard = <T>(promise: PromiseLike<T>) => Promise<T>;

export class HandlerExchange {
  /** What `handle` is called with. */
  readonly request: Request;
  readonly #sink: ResponseSink;
  readonly #waker: WakeSignal;
  /** The response's parts (and its body's reader) once its head went to the sink: a trap after that cuts its body. */
  #sending: { parts: ResponseParts; reader: ByteReader | undefined } | undefined;
  #bodyBytes = 0;

  constructor(head: HandlerRequest, body: QueuedBody, sink: ResponseSink, waker: WakeSignal) {
    this.#sink = sink;
    this.#waker = waker;
    let ended!: (trailers: TrailersResult) => void;
    const trailers = new Promise<TrailersResult>((resolve) => (ended = resolve));
    async function* contents(): AsyncGenerator<Uint8Array, void, undefined> {
      yield* body.chunks(waker);
      ended(ending(body)!);
    }
    this.request = new Request(head, contents(), trailers);
  }

  /** `handle` returned err(code): the client gets rt's 500 naming it. */
  refused(code: ErrorCode): HandleOutcome {
    this.#sink.refused(code);
    return { kind: 'refused', code };
  }

  /**
   * `handle` returned `response`: its head goes out (or the 502 for a status
   * or header rt cannot send), then its body as the client takes it, then
   * its trailers. Resolves with how it went; rejects if the guest trapped
   * (`cut` then ends what was sent).
   */
  async send(response: unknown, guard: Guard): Promise<HandleOutcome> {
    const parts = response instanceof Response ? response.parts() : undefined;
    if (!parts) return this.#malformed('the handler returned a response whose body it had taken out (consume-body)');
    const checked = headerProblem(parts.headers);
    const problem = statusProblem(parts.status) ?? ('problem' in checked ? checked.problem : undefined);
    if (problem !== undefined) {
      parts.transmitted({ tag: 'err', val: { tag: 'internal-error', val: `the response was not sent: ${problem}` } });
      return this.#malformed(problem);
    }
    const length = 'contentLength' in checked ? checked.contentLength : undefined;
    this.#sink.head({ status: parts.status, headers: parts.headers });
    const reader = parts.contents && byteReader(parts.contents);
    this.#sending = { parts, reader };
    if (reader) {
      for (;;) {
        if (!this.#sink.open()) return this.cut('the client went away');
        const seen = this.#waker.epoch();
        const credit = this.#sink.credit();
        if (credit === 0) {
          await this.#waker.moved(seen);
          continue;
        }
        const bytes = await guard(reader.read(Math.min(credit, READ_BYTES)));
        if (!bytes) {
          // The host's end of the stream, read to its end, is dropped as the guest's would be.
          reader.close();
          break;
        }
        if (length !== undefined && this.#bodyBytes + bytes.length > length) return this.cut(`the handler wrote more than its content-length (${length})`);
        this.#sink.chunk(bytes);
        this.#bodyBytes += bytes.length;
      }
    }
    if (length !== undefined && this.#bodyBytes !== length) return this.cut(`the handler ended its body at ${this.#bodyBytes} of its content-length's ${length} bytes`);
    const trailers = await guard(parts.trailers);
    if (trailers.tag === 'err') return this.cut(`the handler ended its body with an error: ${JSON.stringify(trailers.val)}`);
    const sent = trailers.val?.list();
    const trailerProblem = sent && headerProblem(sent);
    if (trailerProblem && 'problem' in trailerProblem) return this.cut(`the handler's trailers cannot be sent: ${trailerProblem.problem}`);
    this.#sink.finish(sent);
    this.#sending = undefined;
    parts.transmitted({ tag: 'ok', val: undefined });
    return { kind: 'responded', status: parts.status, complete: true, bodyBytes: this.#bodyBytes };
  }

  /** The response stops short (a trap, the client gone, a body that broke its own rules): the guest's stream is dropped, its future told. */
  cut(reason: string): HandleOutcome {
    if (!this.#sending) return { kind: 'no-response' };
    const { parts, reader } = this.#sending;
    this.#sending = undefined;
    this.#sink.abort(reason);
    reader?.close();
    parts.transmitted({ tag: 'err', val: { tag: 'HTTP-response-incomplete' } });
    return { kind: 'responded', status: parts.status, complete: false, bodyBytes: this.#bodyBytes };
  }

  #malformed(problem: string): HandleOutcome {
    this.#sink.malformed(problem);
    return { kind: 'malformed', problem };
  }
}
