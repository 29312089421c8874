// The Koa application of a worker: request log, error answers, CORS, routes.

import cors from '@koa/cors';
import Koa, { type Context, type Next } from 'koa';
import { ApiError } from '../api-error.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import type { RequestStats } from './request-stats.js';
import type { RequestState, RtContext } from './request-state.js';
import { consoleFiles, readConsoleFiles } from './console.js';
import { apiRouter, type RouteDeps } from './routes.js';

export function createApp(deps: RouteDeps & { workerId: number }): Koa<RequestState> {
  const { config, log, requests, workerId } = deps;
  const app = new Koa<RequestState>();
  // Errors are answered (and logged) by our own middleware, not Koa's default handler.
  app.silent = true;
  // A line costs only when written: pino's info() is a no-op below its level.
  app.use(requestLog(config.log.requests && log.isLevelEnabled('info') ? log : undefined, requests, String(workerId)));
  app.use(errorAnswers(log));
  if (config.http.cors.enabled) app.use(corsFor(config));
  const router = apiRouter(deps);
  app.use(emptyAnswers);
  app.use(router.routes());
  app.use(router.allowedMethods());
  // After the API routes, so the invoke path never passes through it.
  if (config.console.enabled) app.use(consoleFiles(readConsoleFiles()));
  return app;
}

/**
 * One log line per request (unless `log.requests` is off), with the service
 * and method when the route named them; its metrics; and an `X-Rt-Worker`
 * header naming the worker (the log lines carry the same id), so an answer
 * can be traced to its process. The arrival time it notes is where the
 * request's deadline counts from.
 */
function requestLog(log: Logger | undefined, requests: RequestStats, workerId: string) {
  return async (ctx: RtContext, next: Next) => {
    const arrived = performance.now();
    ctx.state.arrived = arrived;
    ctx.set('X-Rt-Worker', workerId);
    try {
      await next();
    } finally {
      const seconds = (performance.now() - arrived) / 1000;
      const { service, method, series, stream } = ctx.state;
      log?.info({ req: { method: ctx.method, url: ctx.url }, status: ctx.status, ms: Math.round(seconds * 1e6) / 1000, service, method, stream }, 'request');
      (series ?? requests.series(service ?? '', method ?? '')).observe(ctx.status, seconds);
    }
  };
}

/**
 * Turns every failure into the contract's error body (§5.5) with the right
 * status, naming the service and method whenever the route had found them
 * (a 413 from reading the body knows neither by itself).
 */
function errorAnswers(log: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (e) {
      const error = asApiError(e);
      if (error.status >= 500 && !(e instanceof ApiError)) log.error({ err: e }, 'unexpected error');
      const { service, method } = ctx.state as RequestState;
      ctx.status = error.status;
      ctx.set(error.headers);
      // The rest of a body too large to read is not read: the connection cannot carry another request.
      if (error.status === 413) ctx.set('Connection', 'close');
      ctx.body = { ...(service ? { service } : {}), ...(method ? { method } : {}), ...error.body() };
    }
  };
}

/**
 * Gives the contract's error body to answers the router left empty: 404 when
 * no route matched, 405/501 (with the Allow header it set) for a wrong method.
 * It runs after the chain returns, when @koa/router has made that decision.
 */
async function emptyAnswers(ctx: Context, next: Next): Promise<void> {
  await next();
  if (ctx.body !== undefined || ctx.status < 400) return;
  switch (ctx.status) {
    case 404:
      throw new ApiError(404, 'not found', `no route for ${ctx.method} ${ctx.path}`);
    case 405:
      throw new ApiError(405, 'method not allowed', `${ctx.method} is not allowed on ${ctx.path} (allowed: ${ctx.response.get('Allow')})`);
    default:
      throw new ApiError(ctx.status, 'not implemented', `${ctx.method} is not supported`);
  }
}

/**
 * rt's own failures are ApiErrors; an error from Koa or a middleware with a
 * 4xx status (http-errors) keeps it, with our body; anything else is a 500.
 */
function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const status = (e as { status?: unknown })?.status;
  const message = e instanceof Error ? e.message : String(e);
  return typeof status === 'number' && status >= 400 && status < 500 ? new ApiError(status, 'bad request', message) : new ApiError(500, 'internal error', message);
}

function corsFor(config: Config) {
  const { allowed_origins, allowed_methods } = config.http.cors;
  const any = allowed_origins.includes('*');
  return cors({
    allowMethods: allowed_methods,
    // A list of origins: echo the request's origin when listed, else send no CORS headers.
    origin: any ? '*' : (ctx: Context) => (allowed_origins.includes(ctx.get('Origin')) ? ctx.get('Origin') : ''),
  });
}
