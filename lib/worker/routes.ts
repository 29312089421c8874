// The `/api` routes a worker answers (contract §5).

import Router from '@koa/router';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { ApiError } from '../api-error.js';
import type { Config } from '../config/index.js';
import type { ControlAnswer, ControlRequest } from '../ipc.js';
import { openApiDocument } from '../openapi.js';
import type { MethodDescriptor } from '../service.js';
import { errorValueSchema, requestSchema, responseSchema, typeSchema } from '../wit/json-schema.js';
import { SSE_MEDIA_TYPE, streamMediaType } from '../wit/streaming.js';
import { printComponentWit, printSignature } from '../wit/print.js';
import { bodyLength, readBody } from './body.js';
import { controlGuard, controlPolicy } from './control-guard.js';
import type { HostedService } from './hosted-service.js';
import { invokeRoute } from './invoke.js';
import { findService, type WorkerState } from './lookup.js';
import type { ServiceRegistry } from './registry.js';
import type { RequestState } from './request-state.js';
import type { RequestStats } from './request-stats.js';

export interface RouteDeps {
  /** rt's version, for the OpenAPI document. */
  version: string;
  config: Config;
  registry: ServiceRegistry;
  state: WorkerState;
  /** Where requests are counted (the invoke route resolves each method's series once). */
  requests: RequestStats;
  /** Has the primary carry out a control operation on every worker. */
  control: (request: ControlRequest) => Promise<ControlAnswer>;
  log: Logger;
}

export function apiRouter({ version, config, registry, state, control, requests, log }: RouteDeps): Router {
  const router = new Router({ prefix: '/api' });
  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok' };
  });

  router.get('/ready', (ctx) => {
    if (!(state.loaded && state.clusterReady)) throw new ApiError(503, 'not ready', 'workers are still loading the components');
    ctx.body = { status: 'ready' };
  });

  router.get('/services', (ctx) => {
    ctx.body = { services: registry.list().map(summary), failed: registry.failures() };
  });

  router.get('/services/:domain/:service', (ctx) => {
    ctx.body = description(findService(registry, state, ctx.params.domain!, ctx.params.service!));
  });

  // Built once per service set: it changes only when the primary sends a new one.
  let openapi: { generation: number; document: Record<string, unknown> } | undefined;
  router.get('/openapi.json', (ctx) => {
    if (openapi?.generation !== registry.generation) {
      openapi = { generation: registry.generation, document: openApiDocument(registry.list().map((s) => s.descriptor), version) };
    }
    ctx.body = openapi.document;
  });

  router.post('/services/:domain/:service/invoke/:method', invokeRoute({ config, registry, state, requests, log }));

  // Restart, quiesce and reload change what runs: not from a foreign web page, and only with the token when one is set (contract §5.6).
  const guard = controlGuard(controlPolicy(config.http.control));
  const timeoutMs = config.http.request_timeout_seconds * 1000;

  router.post('/services/:domain/:service/restart', guard, async (ctx) => {
    const hosted = findService(registry, state, ctx.params.domain!, ctx.params.service!);
    ctx.state.service = hosted.name;
    // The body is the new configuration, whatever its format: it goes to the component as it is.
    const deadline = (ctx.state as RequestState).arrived + timeoutMs;
    const bytes = bodyLength(ctx.req).present ? await readBody(ctx.req, config.http.max_body_bytes, deadline) : undefined;
    const request: ControlRequest = { op: 'restart', service: hosted.descriptor.id };
    if (bytes && bytes.length > 0) request.config = { bytes, contentType: ctx.request.type || 'application/octet-stream' };
    answer(ctx, await control(request));
  });

  router.put('/services/:domain/:service/quiesce', guard, async (ctx) => {
    const hosted = findService(registry, state, ctx.params.domain!, ctx.params.service!);
    ctx.state.service = hosted.name;
    answer(ctx, await control({ op: 'quiesce', service: hosted.descriptor.id }));
  });

  router.get('/metrics', async (ctx) => {
    answer(ctx, await control({ op: 'metrics' }));
  });

  router.post('/reload', guard, async (ctx) => {
    answer(ctx, await control({ op: 'reload' }));
  });

  return router;
}

/** For a streaming method: that it streams, and the media types its answer may have (its items', or SSE). */
function streaming(m: MethodDescriptor): { streaming: true; media_types: string[] } | Record<string, never> {
  if (!m.stream) return {};
  return { streaming: true, media_types: [streamMediaType(m.stream.encoding, m.mediaType), SSE_MEDIA_TYPE] };
}

function answer(ctx: Context, { status, body, contentType }: ControlAnswer): void {
  ctx.status = status;
  ctx.body = body;
  if (contentType) ctx.type = contentType;
}

function summary(hosted: HostedService) {
  const d = hosted.descriptor;
  return {
    domain: d.id.domain,
    service: d.id.service,
    version: d.version ?? null,
    source: d.source,
    state: hosted.quiesced ? 'quiesced' : 'active',
    /** Where the configuration its instances got came from: a file's path or "restart body". */
    config: d.config ? { origin: d.config.origin, content_type: d.config.contentType, bytes: d.config.bytes.length } : null,
    methods: d.methods.map((m) => ({
      name: m.name,
      signature: printSignature(m.function),
      invocable: m.invocable,
      ...(m.reason ? { reason: m.reason } : {}),
      ...streaming(m),
    })),
    unsatisfied_imports: d.unsatisfiedImports,
    instances: {
      pool_size: d.instances.poolSize,
      max_invocations: d.instances.recycleAfter || null,
      /** In the worker that answered: the pool plus overflow instances serving calls queued behind stuck ones. */
      live: hosted.liveInstances(),
      /** In the worker that answered: calls run `inline` on its main thread, or on instance `threads` (docs/architecture.md). */
      placement: hosted.placement ?? null,
      max_queue: d.instances.maxQueue,
    },
  };
}

/** One service in full: the listing entry, its WIT, and each method's JSON Schemas. */
function description(hosted: HostedService) {
  const d = hosted.descriptor;
  return {
    ...summary(hosted),
    wit: printComponentWit(d.interface, d.id.service),
    methods: d.methods.map((m) => {
      const fn = m.function;
      const schemas = !m.invocable
        ? {}
        : m.stream
          ? { request_schema: requestSchema(fn), item_schema: typeSchema(m.stream.item, 'response'), ...(m.stream.fallible ? { error_schema: m.stream.error ? typeSchema(m.stream.error, 'response') : { type: 'null' } } : {}) }
          : { request_schema: requestSchema(fn), response_schema: responseSchema(fn), ...(errorValueSchema(fn) ? { error_schema: errorValueSchema(fn) } : {}) };
      return { name: m.name, aliases: m.aliases, interface: m.interface, signature: printSignature(fn), invocable: m.invocable, ...(m.reason ? { reason: m.reason } : {}), ...streaming(m), ...schemas };
    }),
  };
}
