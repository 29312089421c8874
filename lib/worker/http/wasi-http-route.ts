// Requests to HTTP handler components (docs/api.md §5.8): at
// `/api/services/{d}/{s}/http/{path…}`, and at the routes sidecars mount
// outside `/api`. The request's head goes to the instance thread with the
// request; its body follows as it arrives, at most BODY_WINDOW_BYTES ahead of
// what the guest has read; the response is written as the guest writes it,
// paid for with credit granted as bytes leave for the socket (the same
// window as streamed answers: credited-writes.ts), so neither a slow client
// nor a slow guest makes the worker buffer. The request's deadline bounds
// the whole exchange: a 504 before the headers, the body cut short after.
// A request whose body is still arriving holds a thread that waits on it:
// within its client's share (fair-shares.ts), and at
// `http.min_body_bytes_per_second` while the guest waits for it (408 if no
// byte of the answer went out yet: body-pace.ts).
//
// What rt answers itself (a failure before the headers) is its error body,
// as for every other operation (exchange.ts); the request's log line and
// metrics carry the route that reached the handler. The handler's headers
// never replace rt's own (its request id, its worker, the CSP: §5.10).

import type { Logger } from 'pino';
import { ApiError } from '../../errors.js';
import { apiHandlerPath, mountFor } from '../../http-mounts.js';
import type { ServiceId } from '../../service.js';
import type { HostedService } from '../execution/hosted-service.js';
import type { Failure } from '../execution/invocation.js';
import type { ServiceRegistry } from '../execution/registry.js';
import { MainEnd, type FieldEntry, type HandlerRequest, type ResponseHead, type ResponseListener, type Settled } from '../wasi-host/index.js';
import { tooLarge, bodyLength, type BodyLimits } from './body.js';
import { feedBody } from './body-feed.js';
import type { FairShares } from './fair-shares.js';
import { departure } from './exchange.js';
import { COMPONENT_CONTENT_HEADERS, setAnswerHeaders, WRITTEN, type ApiCall, type ApiOperation, type Reply } from './api-call.js';
import { failureError } from './failures.js';
import { handlerRequestHead, pathBelow } from './wasi-http-request.js';
import { serviceFor } from './lookup.js';
import { CreditedWrites, WINDOW_BYTES } from './credited-writes.js';
import type { WorkerState } from './worker-state.js';

export interface HandlerDeps {
  registry: ServiceRegistry;
  state: WorkerState;
  bodies: BodyLimits;
  shares: FairShares;
  log: Logger;
}

/** The route's own part of a URL: `/api/services/{d}/{s}/http`. */
const API_PREFIX = /^(?:\/[^/?]*){5}/;

/** `/api/services/{d}/{s}/http/{path…}`: the handler of the service the path names. */
export function wasiHttpOperation(deps: HandlerDeps): ApiOperation {
  return {
    name: 'http-handler',
    method: 'ALL',
    path: '/services/:domain/:service/http{/*path}',
    run: (call) => {
      const { domain, service } = call.params;
      const hosted = serviceFor(deps, call);
      if (!hosted.descriptor.http) {
        throw new ApiError('RT_ERR_NOT_FOUND', `${hosted.name} is not an HTTP handler: it exports no wasi:http/incoming-handler or wasi:http/handler (call its methods at /api/services/${domain}/${service}/invoke/{method})`, { service: hosted.name });
      }
      // As sent: the path below it goes to the guest as the client encoded it.
      const url = call.req.url ?? '';
      const prefix = API_PREFIX.exec(url)![0];
      return serveHandler(call, hosted, apiHandlerPath(hosted.descriptor.id), pathBelow(url, prefix), deps);
    },
  };
}

/**
 * The routes sidecars mount (`http_route`), which the app looks at in front
 * of its API (app.ts): the handler mounted at or above `path`, with the route
 * it is mounted at; the mount table follows the registry's service set.
 */
export function wasiHttpMounts(deps: HandlerDeps): (path: string) => ApiOperation | undefined {
  let mounts: { generation: number; routes: Map<string, ServiceId> } | undefined;
  return (path) => {
    if (mounts?.generation !== deps.registry.generation) {
      const routes = new Map<string, ServiceId>();
      for (const hosted of deps.registry.list()) if (hosted.descriptor.http?.route) routes.set(hosted.descriptor.http.route, hosted.descriptor.id);
      mounts = { generation: deps.registry.generation, routes };
    }
    if (mounts.routes.size === 0) return undefined;
    const found = mountFor(mounts.routes, path);
    if (!found) return undefined;
    return {
      name: 'http-handler',
      method: 'ALL',
      path: found.route,
      run: (call) => {
        const hosted = serviceFor(deps, call, found.mounted);
        return serveHandler(call, hosted, found.route, call.req.url ?? '', deps);
      },
    };
  };
}

/** Serves the request in `call` with `hosted`'s handler, as `pathWithQuery`; resolves once the answer is complete or cut off. */
async function serveHandler(call: ApiCall, hosted: HostedService, route: string, pathWithQuery: string, deps: HandlerDeps): Promise<Reply> {
  call.state.route = route;
  const { req, res } = call;
  const { maxBytes } = deps.bodies;
  const { present, length } = bodyLength(req);
  if ((length ?? 0) > maxBytes) throw tooLarge(maxBytes);
  const head = handlerRequestHead(req, pathWithQuery);
  const request: HandlerRequest = { ...head, headers: head.headers.map(([name, value]): FieldEntry => [name, Buffer.from(value, 'latin1')]) };
  // A body that has not all arrived holds the thread the request runs on while it does: given back once it has (feedBody).
  const release = present && !req.complete ? deps.shares.take(hosted, call.state.client, 'request_bodies') : () => {};
  const answer = new HandlerAnswer(call, hosted.name, deps.log);
  const channel = new MainEnd(answer, WINDOW_BYTES);
  answer.channel = channel;
  const body = feedBody(call, channel, deps.bodies, (error) => answer.refuse(error), release);
  answer.bodyTaken = body.taken;
  res.once('close', () => {
    if (!res.writableFinished) channel.close();
  });
  try {
    const result = await hosted.serveHttp(request, channel, call.state.deadline, departure(res), call.state.trace);
    if (result.kind === 'ok') await answer.settledOrClosed;
    else answer.failed(result);
  } finally {
    body.stop();
    channel.dispose();
  }
  answer.conclude();
  return WRITTEN;
}

/**
 * The answer to one handler request, as the guest's response arrives on the
 * channel: its head and body written as they come; or rt's error answer when
 * the guest gave none (thrown from `conclude`, for the exchange to answer).
 */
class HandlerAnswer implements ResponseListener {
  channel!: MainEnd;
  /** The guest read request body bytes (the route sets it: body-feed.ts). */
  bodyTaken: (bytes: number) => void = () => {};
  /** Resolves once what `handle` left behind is known, or the channel closed without saying. */
  readonly settledOrClosed: Promise<void>;
  #settle!: () => void;
  /** rt's own answer, when the guest's is not sent: thrown by `conclude` if the headers have not gone out. */
  #error: ApiError | undefined;
  /** The response is over (complete, cut, or answered by rt): nothing more is written. */
  #over = false;
  /** The guest's head, until the first byte of its body (head). */
  #head: ResponseHead | undefined;
  /** The body ended unfinished before any of it was written: why (abort). */
  #unfinished: string | undefined;
  readonly #writes: CreditedWrites;
  readonly #where: { service: string };

  constructor(
    private readonly call: ApiCall,
    service: string,
    private readonly log: Logger,
  ) {
    this.#where = { service };
    this.#writes = new CreditedWrites(call.res, (bytes) => this.channel.grant(bytes));
    this.settledOrClosed = new Promise((resolve) => (this.#settle = resolve));
  }

  /**
   * The guest's response head, held until the first byte of its body, the
   * body's end, or a failure: a handler that fails before any of its body
   * gets rt's whole error answer instead, which a client can read.
   */
  head(head: ResponseHead): void {
    const { res } = this.call;
    if (this.#over || this.#head || res.headersSent || res.destroyed) return;
    this.#head = head;
  }

  /** Writes the held head, once. */
  #sendHead(): void {
    const head = this.#head;
    if (!head) return;
    this.#head = undefined;
    const { res } = this.call;
    res.statusCode = head.status;
    const byName = new Map<string, string[]>();
    for (const [name, value] of head.headers) {
      const values = byName.get(name) ?? [];
      values.push(Buffer.from(value).toString('latin1'));
      byName.set(name, values);
    }
    for (const [name, values] of byName) res.setHeader(name, values.length === 1 ? values[0] : values);
    setAnswerHeaders(res, this.call.state.answerHeaders);
    // The handler's own policy still applies: a second Content-Security-Policy only narrows it (docs/api.md §5.6).
    for (const [name, value] of Object.entries(COMPONENT_CONTENT_HEADERS)) {
      if (name === 'Content-Security-Policy' && res.hasHeader(name)) res.appendHeader(name, value);
      else res.setHeader(name, value);
    }
  }

  chunk(bytes: Uint8Array): void {
    // Not sent: its room goes back at once.
    if (this.#over || this.call.res.destroyed) return this.channel.grant(bytes.length);
    this.#sendHead();
    this.#writes.write(bytes);
  }

  finish(trailers: FieldEntry[] | undefined): void {
    const { res } = this.call;
    if (this.#over || res.destroyed) return;
    this.#over = true;
    this.#sendHead();
    if (trailers && trailers.length > 0) {
      // Trailers go only with a chunked body: one that ends before it began would otherwise go out as Content-Length: 0.
      res.flushHeaders();
      res.addTrailers(trailers.map(([name, value]): [string, string] => [name, Buffer.from(value).toString('latin1')]));
    }
    this.#writes.end();
  }

  abort(reason: string): void {
    // Before any of the body, why is known once the call has settled (a trap says more): refused then (conclude).
    if (this.#head) this.#unfinished = reason;
    else this.#cut(`the handler's response body ended unfinished: ${reason}`);
  }

  malformed(problem: string): void {
    this.refuse(new ApiError('RT_ERR_BAD_RESPONSE', `the handler's response is not valid HTTP: ${problem}`, this.#where));
  }

  refused(code: { tag: string; val?: unknown }): void {
    const detail = code.val === undefined ? code.tag : `${code.tag} (${JSON.stringify(code.val)})`;
    this.refuse(new ApiError('RT_ERR_HANDLER_ERROR', `the handler answered with the error code ${detail} instead of a response`, this.#where));
  }

  settled({ outcome, trap }: Settled): void {
    if (trap) this.refuse(new ApiError(trap.code, trap.message, this.#where));
    else if (outcome.kind === 'no-response') this.refuse(new ApiError('RT_ERR_NO_RESPONSE', 'the handler returned without setting a response (response-outparam.set was never called)', this.#where));
    this.#settle();
  }

  taken(bytes: number): void {
    this.bodyTaken(bytes);
  }

  /** The request did not run, or was cut off (its deadline, its thread lost). */
  failed(failure: Failure): void {
    this.refuse(failureError(failure, this.#where));
    this.#settle();
  }

  /** rt answers with `error` if no headers have gone out; else the body is cut short. */
  refuse(error: ApiError): void {
    if (this.#over) return;
    if (this.call.res.headersSent) return this.#cut(`${error.error}: ${error.details}`);
    this.#head = undefined;
    this.#over = true;
    this.#error ??= error;
    // The guest's writes fail from now on; its answer is not sent.
    this.channel.close();
  }

  /** Ends the request's part here: throws rt's error answer if it has one to give. */
  conclude(): void {
    const { res } = this.call;
    if (!this.#error && this.#head) {
      const ended = this.#unfinished === undefined ? 'the handler returned before it finished its response body' : `the handler's response body ended unfinished: ${this.#unfinished}`;
      this.refuse(new ApiError('RT_ERR_BAD_RESPONSE', `${ended}, before any of it was written`, this.#where));
    }
    if (this.#error && !res.headersSent) {
      if (this.#error.status >= 500) this.log.warn({ reqId: this.call.state.requestId, ...this.#where, error: this.#error.error, details: this.#error.details }, 'handler failed');
      throw this.#error;
    }
    if (!this.#over && !res.headersSent && !res.destroyed) {
      // The thread said nothing (it was lost between its answer and the response): no silent 200.
      throw new ApiError('RT_ERR_INSTANCE_LOST', 'the handler gave no answer', this.#where);
    }
  }

  /** Cuts the body short: without the final chunk, no client takes it for a whole one. */
  #cut(why: string): void {
    if (this.#over) return;
    this.#over = true;
    this.log.warn({ reqId: this.call.state.requestId, ...this.#where, details: why }, 'handler response cut short');
    // The bytes already written still go out; the connection ends without the final chunk.
    this.#writes.cut();
  }
}
