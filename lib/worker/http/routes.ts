// The `/api` routes a worker answers (docs/api.md §5).

import Router, { type RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { ApiError } from '../../errors.js';
import type { Config } from '../../config/index.js';
import type { ControlOutcome, ControlRequest } from '../../control.js';
import { openApiDocument } from '../../openapi.js';
import { bodyLength, readBody } from './body.js';
import { CONTROL_ROUTES, controlGuard, type ControlPolicy, type ControlRoute } from './control-guard.js';
import { resourceRoutes } from './resource-routes.js';
import { wasiHttpApiRoute } from './wasi-http-route.js';
import { invokeRoute } from './invoke.js';
import { findService } from './lookup.js';
import type { WorkerState } from './worker-state.js';
import type { ServiceRegistry } from '../execution/registry.js';
import type { RequestState } from './request-state.js';
import type { RequestStats } from './request-stats.js';
import type { Peers } from './peers.js';
import { description, summary } from './views.js';

export interface RouteDeps {
  /** rt's version, for the OpenAPI document. */
  version: string;
  config: Config;
  registry: ServiceRegistry;
  state: WorkerState;
  /** Where requests are counted. */
  requests: RequestStats;
  /** Has the primary carry out a control operation on every worker. */
  control: (request: ControlRequest) => Promise<ControlOutcome>;
  log: Logger;
  peers: Peers;
}

export function apiRouter({ version, config, registry, state, control, requests, log, peers }: RouteDeps, policy: ControlPolicy): Router {
  const router = new Router<RequestState>({ prefix: '/api' });
  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok' };
  });

  router.get('/ready', (ctx) => {
    if (!(state.loaded && state.clusterReady)) throw new ApiError('RT_ERR_NOT_READY', 'workers are still loading the components');
    ctx.body = { status: 'ready' };
  });

  router.get('/services', (ctx) => {
    ctx.body = { services: registry.list().map((hosted) => summary(hosted, state)), failed: registry.failures() };
  });

  router.get('/services/:domain/:service', (ctx) => {
    ctx.body = description(findService(registry, state, ctx.params.domain, ctx.params.service), state);
  });

  // Built once per service set: it changes only when the primary sends a new one.
  let openapi: { generation: number; document: Record<string, unknown> } | undefined;
  router.get('/openapi.json', (ctx) => {
    if (openapi?.generation !== registry.generation) {
      openapi = { generation: registry.generation, document: openApiDocument(registry.list().map((s) => s.descriptor), version) };
    }
    ctx.body = openapi.document;
  });

  router.post('/services/:domain/:service/invoke/:method', invokeRoute({ config, registry, state, requests, log, peers }));
  resourceRoutes(router, { config, registry, state, requests, log, peers }, policy);
  router.all('/services/:domain/:service/http{/*path}', wasiHttpApiRoute({ registry, state, maxBodyBytes: config.http.max_body_bytes, log }));

  // Restart, quiesce and reload change what runs: not from a foreign web page, and only with the token when one is set (docs/api.md §5.6).
  const guard = controlGuard(policy);
  const operations: Record<ControlRoute['op'], RouterMiddleware<RequestState>> = {
    restart: async (ctx) => {
      const hosted = findService(registry, state, ctx.params.domain, ctx.params.service);
      ctx.state.service = hosted.name;
      // The body is the new configuration, whatever its format: it goes to the component as it is.
      const bytes = bodyLength(ctx.req).present ? await readBody(ctx.req, config.http.max_body_bytes, ctx.state.deadline) : undefined;
      const request: ControlRequest = { op: 'restart', service: hosted.descriptor.id };
      if (bytes && bytes.length > 0) request.config = { bytes, contentType: ctx.request.type || 'application/octet-stream' };
      answer(ctx, await control(request));
    },
    quiesce: async (ctx) => {
      const hosted = findService(registry, state, ctx.params.domain, ctx.params.service);
      ctx.state.service = hosted.name;
      answer(ctx, await control({ op: 'quiesce', service: hosted.descriptor.id }));
    },
    reload: async (ctx) => {
      answer(ctx, await control({ op: 'reload' }));
    },
  };
  for (const route of CONTROL_ROUTES) router.register(route.path, [route.method], [guard, operations[route.op]]);

  router.get('/metrics', async (ctx) => {
    answer(ctx, await control({ op: 'metrics' }));
  });

  return router;
}

/** A control operation's outcome as its HTTP answer: a failure is the catalogue's error (thrown to the error mapper like any other). */
function answer(ctx: Context, outcome: ControlOutcome): void {
  switch (outcome.kind) {
    case 'failed':
      throw new ApiError(outcome.code, outcome.details, outcome.context);
    case 'metrics':
      ctx.type = outcome.contentType;
      ctx.body = outcome.text;
      return;
    case 'reloaded': {
      const { added, updated, removed, failed } = outcome;
      ctx.body = { status: 'reloaded', added, updated, removed, failed };
      return;
    }
    default:
      ctx.body = { status: outcome.kind, service: outcome.service };
  }
}
