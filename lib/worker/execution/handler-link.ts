// A middleware's downstream handler (docs/api.md §5.9, links): the request a
// WASI 0.3 guest hands its imported wasi:http/handler arrives on the main
// thread as an outgoing request naming the link (OutgoingHead.link), and is
// served by the linked service's handler as a request from a client would be
// (HostedService.serveHttp), without a socket: its body fed as the
// middleware writes it, the response passed back as the target writes it.
// Both ways stay within a window: the middleware gets request body credit as
// the target reads, and the target gets response room as the middleware
// reads (its `read` messages), so neither side makes the worker buffer.
//
// The target is looked up when the request starts: a restart or reload of
// it is what the next request sees.

import { HANDLER_LINK, serviceKey, type ServiceDescriptor, type ServiceLink } from '../../service.js';
import { unversioned } from '../../wit/interface-key.js';
import { MainEnd, type ErrorCode, type FieldEntry, type HandlerRequest, type LinkedRequests, type OutboundRequest, type OutboundSide, type OutgoingHead, type ResponseHead, type ResponseListener, type Settled } from '../wasi-host/index.js';
import type { Failure } from './invocation.js';
import type { LinkedServices, LinkTarget } from './link-target.js';

/** Response bytes the target may write ahead of what the middleware has read. */
const WINDOW_BYTES = 256 * 1024;

/** The link of `d`'s downstream wasi:http/handler (a middleware's), if its sidecar makes one. */
export function handlerLink(d: ServiceDescriptor): ServiceLink | undefined {
  return d.links.find((l) => unversioned(l.interface) === HANDLER_LINK);
}

/** How the main thread serves `d`'s downstream handler's requests: with the service linked to it, each within `timeoutMs`. */
export function handlerLinks(d: ServiceDescriptor, services: LinkedServices, timeoutMs: number): LinkedRequests | undefined {
  const link = handlerLink(d);
  if (!link) return undefined;
  return (id, head, side) => {
    if (head.link !== link.interface) return undefined;
    const target = services(link.target);
    const exchange = new LinkedExchange(id, side, serviceKey(link.target));
    if (!target?.descriptor.http) exchange.fail({ tag: 'internal-error', val: `the linked service ${serviceKey(link.target)} is not served here now` });
    else exchange.serve(target, head, performance.now() + timeoutMs);
    return exchange;
  };
}

/** One request across the link: an OutboundRequest to the middleware's thread, a ResponseListener to the target's. */
class LinkedExchange implements OutboundRequest, ResponseListener {
  readonly #id: number;
  readonly #side: OutboundSide;
  readonly #target: string;
  readonly #channel: MainEnd;
  readonly #stop = new AbortController();
  /** Response bytes passed to the middleware and not yet read by it (room the target gets back as it reads). */
  #unread = 0;
  #skipping = false;
  #headSent = false;
  /** The middleware ended its request body. */
  #requestEnded = false;
  #over = false;

  constructor(id: number, side: OutboundSide, target: string) {
    this.#id = id;
    this.#side = side;
    this.#target = target;
    this.#channel = new MainEnd(this, WINDOW_BYTES);
  }

  serve(target: LinkTarget, head: OutgoingHead, deadline: number): void {
    const request: HandlerRequest = { method: head.method, scheme: head.scheme, authority: head.authority, pathWithQuery: head.pathWithQuery, headers: head.headers };
    target.serveHttp(request, this.#channel, deadline, this.#stop.signal).then(
      (result) => {
        if (result.kind !== 'ok') this.#failed(result);
      },
      (e: unknown) => this.fail({ tag: 'internal-error', val: `${this.#target} could not take the request: ${e instanceof Error ? e.message : String(e)}` }),
    );
  }

  // ---- from the middleware (OutboundRequest) ----

  write(bytes: Uint8Array): void {
    if (!this.#over) this.#channel.push(bytes);
  }

  end(trailers: FieldEntry[] | undefined): void {
    this.#requestEnded = true;
    if (!this.#over) this.#channel.end(trailers);
  }

  fail(code: ErrorCode): void {
    if (this.#over) return;
    this.#side.post({ kind: 'error', id: this.#id, code });
    this.destroy();
  }

  read(bytes: number): void {
    this.#unread -= bytes;
    this.#channel.grant(bytes);
  }

  skip(): void {
    this.#skipping = true;
    this.#channel.grant(this.#unread);
    this.#unread = 0;
  }

  destroy(): void {
    if (this.#over) return;
    this.#over = true;
    this.#side.forget(this.#id);
    this.#stop.abort();
    this.#channel.close();
    this.#channel.fail('the middleware let the request go');
    this.#channel.dispose();
  }

  // ---- from the target (ResponseListener) ----

  head(head: ResponseHead): void {
    if (this.#over || this.#headSent) return;
    this.#headSent = true;
    this.#side.post({ kind: 'head', id: this.#id, head });
  }

  chunk(bytes: Uint8Array): void {
    // A view of the ring, granted back once the middleware has read it (or at once, when it is not wanted).
    if (this.#over || this.#skipping) return this.#channel.grant(bytes.length);
    const copy = bytes.slice();
    this.#unread += copy.length;
    this.#side.post({ kind: 'chunk', id: this.#id, bytes: copy }, [copy.buffer]);
  }

  finish(trailers: FieldEntry[] | undefined): void {
    if (this.#over) return;
    this.#side.post({ kind: 'end', id: this.#id, trailers });
  }

  abort(reason: string): void {
    this.fail(this.#headSent ? { tag: 'HTTP-response-incomplete' } : { tag: 'internal-error', val: `${this.#target}'s response ended unfinished: ${reason}` });
  }

  malformed(problem: string): void {
    this.fail({ tag: 'internal-error', val: `${this.#target}'s response is not valid HTTP: ${problem}` });
  }

  refused(code: ErrorCode): void {
    // The target's own error-code, as the middleware would get it from the network.
    this.fail(code);
  }

  settled({ trap }: Settled): void {
    if (trap) return this.fail(this.#headSent ? { tag: 'HTTP-response-incomplete' } : { tag: 'internal-error', val: `${this.#target} failed: ${trap.message}` });
    if (!this.#over) this.#done();
  }

  taken(bytes: number): void {
    if (!this.#over) this.#side.post({ kind: 'credit', id: this.#id, bytes });
  }

  /** The request did not run, or was cut off (its deadline, the target's queue, its thread lost). */
  #failed(failure: Failure): void {
    const why = failure.kind === 'trap' ? failure.message : failure.kind;
    this.fail(failure.kind === 'timeout' && this.#headSent ? { tag: 'HTTP-response-incomplete' } : { tag: 'internal-error', val: `${this.#target} did not answer: ${why}` });
  }

  /** The target is done with the request: what it sent stays with the middleware's thread, nothing more comes. */
  #done(): void {
    // It answered without the rest of the body: the middleware's writes are taken and dropped from now on, as a server's that has answered.
    if (!this.#requestEnded) this.#side.post({ kind: 'error', id: this.#id, code: { tag: 'internal-error', val: `${this.#target} answered without reading the rest of the request body` } });
    this.#over = true;
    this.#side.forget(this.#id);
    this.#channel.dispose();
  }
}
