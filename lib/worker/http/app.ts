// The Koa application of a worker: the request's exchange (its arrival, id,
// headers, log line and metrics), error answers, CORS, the connection cap, routes.

import cors from '@koa/cors';
import Koa, { type Context, type Next } from 'koa';
import { ApiError } from '../../errors.js';
import type { Config } from '../../config/index.js';
import { controlOriginAllowed, controlPolicy, followsControlOrigins, type ControlPolicy } from './control-guard.js';
import { arrival, errorAnswer, exchangeHeaders, finished, type ExchangeSettings } from './exchange.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import type { RequestState, RtContext } from './request-state.js';
import { consoleFiles, readConsoleFiles } from './console.js';
import { apiRouter, type RouteDeps } from './routes.js';
import { wasiHttpMounts } from './wasi-http-route.js';
import { overCapacity } from './server.js';
import { pathNames } from './lookup.js';

export function createApp(deps: RouteDeps & { exchange: ExchangeSettings }): Koa<RequestState> {
  const { config, exchange } = deps;
  const policy = controlPolicy(config.http.control);
  const app = new Koa<RequestState>();
  // Errors are answered (and logged) by our own middleware, not Koa's default handler.
  app.silent = true;
  app.use(requestExchange(exchange));
  app.use(errorAnswers(exchange));
  if (config.http.cors.enabled) app.use(corsFor(config, policy));
  app.use(connectionCap(config.http.max_connections));
  const router = apiRouter(deps, policy);
  app.use(emptyAnswers);
  // Routes sidecars mount outside /api (docs/api.md §5.8): they never overlap it or the console, so order among them does not matter.
  app.use(wasiHttpMounts({ registry: deps.registry, state: deps.state, maxBodyBytes: config.http.max_body_bytes, log: deps.log }));
  app.use(router.routes());
  app.use(router.allowedMethods());
  // After the API routes, so the invoke path never passes through it.
  if (config.console.enabled) app.use(consoleFiles(readConsoleFiles()));
  return app;
}

/**
 * The request's exchange (exchange.ts): its arrival, deadline and request
 * id, the headers every answer carries, and once answered its log line
 * (with the service and method when the route named them) and metrics.
 */
function requestExchange(exchange: ExchangeSettings) {
  return async (ctx: RtContext, next: Next) => {
    ctx.state = arrival(exchange, ctx.res, ctx.get(REQUEST_ID_HEADER));
    const headers = exchangeHeaders(exchange, ctx.state);
    for (let i = 0; i < headers.length; i += 2) ctx.set(headers[i], headers[i + 1]);
    try {
      await next();
    } finally {
      finished(exchange, ctx.state, { method: ctx.method, url: ctx.url }, ctx.res, ctx.status);
    }
  };
}

/**
 * Turns every failure into the error body (docs/api.md §5.5) with the right
 * status, naming the service and method whenever the path names them (a
 * 413 from reading the body knows neither by itself; a 404 names the
 * service and method that do not exist). The names the route resolved win
 * over the path's (a method's aliases resolve to its name).
 */
function errorAnswers(exchange: ExchangeSettings) {
  return async (ctx: RtContext, next: Next) => {
    try {
      await next();
    } catch (e) {
      const named = pathNames((ctx as { params?: Record<string, string> }).params ?? {});
      const where = { service: ctx.state.service ?? named.service, method: ctx.state.method ?? named.method };
      const { error, body } = errorAnswer(exchange, ctx.state, e, where);
      ctx.status = error.status;
      ctx.set(error.headers);
      ctx.body = body;
    }
  };
}

/**
 * Gives the error body (docs/api.md §5.5) to answers the router left empty: 404 when
 * no route matched, 405/501 (with the Allow header it set) for a wrong method.
 * It runs after the chain returns, when @koa/router has made that decision.
 */
async function emptyAnswers(ctx: Context, next: Next): Promise<void> {
  await next();
  if (ctx.body !== undefined || ctx.status < 400) return;
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
  const options = { allowMethods: allowed_methods, exposeHeaders: [REQUEST_ID_HEADER] };
  const general = cors({
    ...options,
    // A list of origins: echo the request's origin when listed, else send no CORS headers.
    origin: allowed_origins.includes('*') ? '*' : (ctx: Context) => (allowed_origins.includes(ctx.get('Origin')) ? ctx.get('Origin') : ''),
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
