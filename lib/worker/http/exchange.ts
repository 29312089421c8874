// What every request a worker answers goes through, whichever transport
// answers it (the Koa app, app.ts, or the invoke lane in front of it,
// invoke-lane.ts): serveExchange. Its arrival and deadline, its request id
// (docs/api.md §5.7), the headers every answer carries, those of an answer the
// component made (docs/api.md §5.6), the error body of a failure (docs/api.md
// §5.5), whether its client left, and its log line and metrics when it is
// done. One function, so the two transports cannot answer the same request
// differently.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, asApiError, CLIENT_CLOSED_REQUEST, type ErrorContext } from '../../errors.js';
import type { Logger } from '../../log.js';
import { connectionError } from './connection-errors.js';
import { redactHandleIds } from '../execution/handle-ids.js';
import type { TrustedProxies } from '../../client-address.js';
import { cameFromPeer, CLIENT_HEADER } from './peers.js';
import { noteRequestId, REQUEST_ID_HEADER, requestId } from './request-id.js';
import type { RequestStats, Series } from './request-stats.js';
import type { RequestState } from './request-state.js';
import { json, writeReply } from './api-call.js';
import { lingerIfUnread } from './lingering-close.js';
import type { Traces } from '../../tracing/traces.js';

/** What a worker's requests share: where lines and counts go, and who answers. */
export interface ExchangeSettings {
  /** Undefined when request lines are off (`log.requests = false`, or a level above info). */
  requestLog: Logger | undefined;
  /** For unexpected errors (500s that are not rt's own). */
  log: Logger;
  requests: RequestStats;
  workerId: string;
  timeoutMs: number;
  /** `http.trusted_proxies`: who the client is behind them (client-address.ts), for the log line. */
  proxies: TrustedProxies;
  /** Where requests' spans go; undefined when traces are off (docs/api.md §7). */
  traces?: Traces | undefined;
}

/** What a transport does with one request, for serveExchange. */
export interface Transport {
  /** Headers of this transport's own for every answer (a flat list of names and values), after the exchange's. */
  readonly headers: readonly string[];
  /** Answers the request (whatever it writes carries `state.answerHeaders`); resolves with the answer's status. */
  answer(state: RequestState): Promise<number>;
  /** The names the request's path gives, for a failure's error body before its operation noted them on the state. */
  named(): ErrorContext;
}

const REQUEST_ID = REQUEST_ID_HEADER.toLowerCase();

/**
 * One request, from its arrival to its log line: `transport` answers it, a
 * failure is answered with the error body (docs/api.md §5.5) naming the
 * service and method the request addressed.
 */
export async function serveExchange(settings: ExchangeSettings, req: IncomingMessage, res: ServerResponse, transport: Transport): Promise<void> {
  const state = arrival(settings, res, req.headers[REQUEST_ID] as string | undefined, transport.headers);
  let status = 500;
  try {
    status = await transport.answer(state);
  } catch (e) {
    const named = transport.named();
    const { error, body } = errorAnswer(settings, state, e, { service: state.service ?? named.service, method: state.method ?? named.method });
    lingerIfUnread(req);
    status = writeReply(res, json(body, error.status, error.headers), state.answerHeaders);
  } finally {
    finished(settings, state, { method: req.method ?? 'GET', url: req.url ?? '' }, res, status);
  }
}

/**
 * The request's state from its arrival at `res`: deadline counted from now,
 * its id the client's when sane (noted for answers Node gives itself:
 * server.ts), the headers its answers carry: its id and the worker that
 * answered (the log lines carry the same id), then `more`.
 */
function arrival(settings: ExchangeSettings, res: ServerResponse, givenId: string | undefined, more: readonly string[]): RequestState {
  const arrived = performance.now();
  const id = requestId(givenId ?? '');
  noteRequestId(res, id);
  const answerHeaders = [REQUEST_ID_HEADER, id, 'X-Rt-Worker', settings.workerId, ...more];
  const state: RequestState = { arrived, deadline: arrived + settings.timeoutMs, requestId: id, client: clientOf(settings, res.req), answerHeaders };
  // A request another worker forwarded is traced (and logged) by that worker, as the client saw it.
  if (settings.traces && !cameFromPeer(res.req)) state.trace = settings.traces.request(res.req, id, state.client);
  return state;
}

/**
 * The client's address: the one the worker the client reached saw, for a
 * request another worker forwarded (peers.ts says it, and only a peer's
 * word is taken); else from the connection and trusted proxies.
 */
function clientOf(settings: ExchangeSettings, req: IncomingMessage): string {
  const forwarded = cameFromPeer(req) ? req.headers[CLIENT_HEADER] : undefined;
  if (typeof forwarded === 'string') return forwarded;
  const xff = req.headers['x-forwarded-for'];
  return settings.proxies.client(req.socket.remoteAddress, Array.isArray(xff) ? xff.join(',') : xff);
}

/**
 * Whether the client left before its answer was written. A connection Node
 * ended itself with an answer of its own (a malformed body, server.ts) was
 * not the client's doing: its request keeps the status of that answer.
 */
function clientLeft(res: ServerResponse): boolean {
  if (!res.destroyed || res.writableFinished) return false;
  const cause = res.socket?.errored;
  return !(cause && connectionError(cause));
}

/**
 * Aborts when the client leaves before its answer is written: a call still
 * waiting for an instance then is never run (docs/api.md §5.5).
 */
export function departure(res: ServerResponse): AbortSignal {
  const left = new AbortController();
  const check = () => {
    if (clientLeft(res)) left.abort();
  };
  if (res.destroyed) check();
  else res.once('close', check);
  return left.signal;
}

/**
 * The request's log line (unless they are off) and its metrics, once it is
 * answered. A client that left before its answer was written is a client
 * abort, 499, whatever its call came to (docs/api.md §5.5); a stream that
 * began keeps the status its headers carried (its outcome says how it ended).
 */
function finished(settings: ExchangeSettings, state: RequestState, req: { method: string; url: string }, res: ServerResponse, answered: number): void {
  // The worker the client reached logs and counts a forwarded request (peers.ts): once, as the client saw it.
  if (cameFromPeer(res.req)) return;
  const status = state.stream === undefined && clientLeft(res) ? CLIENT_CLOSED_REQUEST : answered;
  const seconds = (performance.now() - state.arrived) / 1000;
  const { requestId: reqId, service, method, route, stream, code, forwardedTo: forwarded, trace } = state;
  trace?.end(status);
  settings.requestLog?.info({ reqId, traceId: trace?.traceId, req: { method: req.method, url: redactHandleIds(req.url) }, client: state.client, status, ms: Math.round(seconds * 1e6) / 1000, service, method, route, stream, code, forwarded }, 'request');
  seriesOf(settings.requests, state).observe(status, seconds);
}

/** Where the request is counted: the series of the service and method its route named (empty labels for routes without them), or of the handler route that reached it; resolved once per request. */
export function seriesOf(requests: RequestStats, state: RequestState): Series {
  return (state.series ??= requests.series(state.service ?? '', state.method ?? '', state.route));
}

/**
 * A failure as its answer: the error body naming the service and method the
 * request addressed, when known, with the status and headers of its error;
 * unexpected errors (not rt's own) are logged.
 */
function errorAnswer(settings: ExchangeSettings, state: RequestState, e: unknown, where: { service?: string | undefined; method?: string | undefined }): { error: ApiError; body: Record<string, unknown> } {
  const error = asApiError(e);
  state.code = error.code;
  if (error.status >= 500 && !(e instanceof ApiError)) settings.log.error({ err: e, reqId: state.requestId }, 'unexpected error');
  const { service, method } = where;
  return { error, body: { ...(service ? { service } : {}), ...(method ? { method } : {}), ...error.body() } };
}
