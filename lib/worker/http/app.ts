// The Koa application of a worker: every request the invoke lane does not
// take (invoke-lane.ts) — the exchange (exchange.ts), CORS, the connection
// cap, the handlers sidecars mount, the API's operations (operations.ts), and
// the console.

import cors from '@koa/cors';
import Router from '@koa/router';
import Koa, { type Context, type Next } from 'koa';
import { ApiError } from '../../errors.js';
import { normalOrigin } from '../../origin.js';
import type { Config } from '../../config/index.js';
import { controlOriginAllowed, followsControlOrigins, type ControlPolicy } from './control-guard.js';
import { serveExchange, type ExchangeSettings } from './exchange.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import type { RequestState, RtContext } from './request-state.js';
import { consoleFiles, readConsoleFiles } from './console.js';
import type { Operations } from './operations.js';
import type { HandlerDeps } from './wasi-http-route.js';
import { overCapacity } from './server.js';
import { pathNames } from './lookup.js';
import { setAnswerHeaders, writeReply, type ApiCall, type ApiOperation } from './api-call.js';

export interface AppDeps extends HandlerDeps {
  config: Config;
  exchange: ExchangeSettings;
  operations: Operations;
  policy: ControlPolicy;
}

export function createApp(deps: AppDeps): Koa<RequestState> {
  const { config, exchange, operations, policy } = deps;
  const app = new Koa<RequestState>();
  // Every failure is answered (and logged) by the exchange, never by Koa's default handler.
  app.silent = true;
  app.use(koaExchange(exchange));
  if (config.http.cors.enabled) app.use(corsFor(config, policy));
  app.use(connectionCap(config.http.max_connections));
  app.use(emptyAnswers);
  // Routes sidecars mount outside /api (docs/api.md §5.8): they never overlap it or the console, so order among them does not matter.
  app.use(mountedHandlers(operations));
  const router = new Router<RequestState>({ prefix: '/api' });
  for (const operation of operations.all) {
    const answer = (ctx: RtContext & { params: Record<string, string> }) => perform(ctx, operations, operation);
    if (operation.method === 'ALL') router.all(operation.path, answer);
    else router.register(operation.path, [operation.method], [answer]);
  }
  app.use(router.routes());
  app.use(router.allowedMethods());
  // After the API routes, so the invoke path never passes through it.
  if (config.console.enabled) app.use(consoleFiles(readConsoleFiles()));
  return app;
}

/**
 * The request's exchange (exchange.ts) around the rest of the chain. What
 * Koa writes itself (the console, a preflight) gets the headers every answer
 * carries here; what an operation answers, and a failure, are written by
 * writeReply with them.
 */
function koaExchange(settings: ExchangeSettings) {
  return (ctx: RtContext, next: Next) =>
    serveExchange(settings, ctx.req, ctx.res, {
      headers: [],
      named: () => pathNames((ctx as { params?: Record<string, string> }).params ?? {}),
      answer: async (state) => {
        ctx.state = state;
        await next();
        if (ctx.respond !== false && !ctx.res.headersSent) setAnswerHeaders(ctx.res, state.answerHeaders);
        return ctx.status;
      },
    });
}

/** Runs `operation` for the request in `ctx`, and writes its answer (Koa leaves the response alone). */
async function perform(ctx: RtContext & { params: Record<string, string> }, operations: Operations, operation: ApiOperation): Promise<void> {
  const call: ApiCall = {
    req: ctx.req,
    res: ctx.res,
    state: ctx.state,
    params: ctx.params,
    header: (name) => ctx.get(name),
    accepts: (...types) => ctx.accepts(...types),
  };
  const reply = await operations.perform(operation, call);
  ctx.respond = false;
  writeReply(ctx.res, reply, ctx.state.answerHeaders);
}

/** The handler mounted where the request's path is (`http_route`), if any, in front of the API's routes. */
function mountedHandlers(operations: Operations) {
  return (ctx: RtContext, next: Next): Promise<void> => {
    const operation = operations.mounted(ctx.path);
    if (!operation) return next();
    return perform(ctx as RtContext & { params: Record<string, string> }, operations, operation);
  };
}

/**
 * Gives the error body (docs/api.md §5.5) to answers the router left empty: 404 when
 * no route matched, 405/501 (with the Allow header it set) for a wrong method.
 * It runs after the chain returns, when @koa/router has made that decision.
 */
async function emptyAnswers(ctx: Context, next: Next): Promise<void> {
  await next();
  if (ctx.body !== undefined || ctx.status < 400 || ctx.respond === false) return;
  switch (ctx.status) {
    case 404:
      throw new ApiError('RT_ERR_NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`);
    case 405:
      throw new ApiError('RT_ERR_METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path} (allowed: ${ctx.response.get('Allow')})`);
    default:
      throw new ApiError('RT_ERR_NOT_IMPLEMENTED', `${ctx.method} is not supported`, {}, {}, ctx.status);
  }
}

/**
 * CORS per `http.cors.*`, except on the control routes: there only the
 * origins that may make control requests (docs/api.md §5.6) are granted, so a
 * preflight never invites a foreign page to send one. Pages may read the
 * request id of an answer. A request without an Origin is not a browser's
 * cross-origin request: its answer gets no CORS headers, whose cost showed
 * on the invoke path (measured: ~2 µs a request for two headers).
 */
function corsFor(config: Config, control: ControlPolicy) {
  const { allowed_origins, allowed_methods } = config.http.cors;
  const allowed = new Set(allowed_origins.map(normalOrigin));
  const options = { allowMethods: allowed_methods, exposeHeaders: [REQUEST_ID_HEADER] };
  const general = cors({
    ...options,
    // A list of origins: echo the request's origin when listed (as a browser writes it: `https://App.example:443/` is `https://app.example`), else send no CORS headers.
    origin: allowed.has('*') ? '*' : (ctx: Context) => (allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : ''),
  });
  const controlRoutes = cors({ ...options, origin: (ctx: Context) => (controlOriginAllowed(ctx.get('Origin'), ctx.get('Host'), control) ? ctx.get('Origin') : '') });
  return (ctx: Context, next: Next) => {
    if (followsControlOrigins(ctx.path)) return controlRoutes(ctx, next) as Promise<void>;
    if (ctx.get('Origin')) return general(ctx, next) as Promise<void>;
    // Caches must still tell this answer from one to a browser.
    ctx.vary('Origin');
    return next();
  };
}

/**
 * A connection accepted past `http.max_connections` (server.ts) gets a 503
 * for its request, and is closed: the client learns why, and when to retry.
 */
function connectionCap(max: number) {
  return (ctx: Context, next: Next) => {
    if (!overCapacity(ctx.req.socket)) return next();
    throw new ApiError('RT_ERR_TOO_MANY_CONNECTIONS', `this worker has http.max_connections (${max}) connections open; retry later`, {}, { 'Retry-After': '1', Connection: 'close' });
  };
}
