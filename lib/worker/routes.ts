// The `/api` routes a worker answers (contract §5).

import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { ApiError } from '../api-error.js';
import type { Config } from '../config/index.js';
import { printSignature } from '../wit/print.js';
import type { HostedService } from './hosted-service.js';
import type { ServiceRegistry } from './registry.js';

export interface WorkerState {
  /** This worker has instantiated the service set it was sent. */
  loaded: boolean;
  /** Every worker has (the primary says so). */
  clusterReady: boolean;
}

export interface RouteDeps {
  config: Config;
  registry: ServiceRegistry;
  state: WorkerState;
}

export function apiRouter({ config, registry, state }: RouteDeps): Router {
  const router = new Router({ prefix: '/api' });
  const parseJson = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: config.http.max_body_bytes,
    text: false,
    urlencoded: false,
    multipart: false,
  });

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
    ctx.body = summary(findService(registry, state, ctx.params.domain!, ctx.params.service!));
  });

  router.post('/services/:domain/:service/invoke/:method', async (ctx) => {
    const hosted = findService(registry, state, ctx.params.domain!, ctx.params.service!);
    const name = ctx.params.method!;
    ctx.state.service = hosted.name;
    const method = hosted.method(name);
    if (!method) {
      const known = hosted.descriptor.methods.map((m) => m.name).join(', ');
      throw new ApiError(404, 'unknown method', `${hosted.name} has no method "${name}" (methods: ${known})`, { service: hosted.name, method: name });
    }
    ctx.state.method = method.descriptor.name;
    const body = await readArguments(ctx, parseJson, config.http.max_body_bytes);
    ctx.body = { result: await hosted.invoke(method, body) };
  });

  return router;
}

function findService(registry: ServiceRegistry, state: WorkerState, domain: string, service: string): HostedService {
  const hosted = registry.get(domain, service);
  if (hosted) return hosted;
  if (!state.loaded) throw new ApiError(503, 'not ready', 'this worker is still loading the components', { service: `${domain}.${service}` });
  throw new ApiError(404, 'unknown service', `no service ${domain}.${service} is loaded`, { service: `${domain}.${service}` });
}

/** The request body as JSON, or undefined when there is none (a method without parameters). */
async function readArguments(ctx: Context, parseJson: (ctx: Context, next: Next) => Promise<unknown>, maxBytes: number): Promise<unknown> {
  // No body, or an empty one whatever its declared type: a call without arguments.
  if (ctx.request.length === 0) return undefined;
  const type = ctx.request.is('application/json', '+json');
  if (type === null) return undefined;
  if (type === false) {
    throw new ApiError(
      415,
      'unsupported content type',
      `send application/json (got ${ctx.request.type || 'no content type'})`,
      { service: ctx.state.service as string, method: ctx.state.method as string },
    );
  }
  if (ctx.request.length > maxBytes) throw tooLarge(maxBytes);
  await parseJson(ctx, async () => {});
  return (ctx.request as { body?: unknown }).body;
}

export function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, 'request body too large', `the body exceeds http.max_body_bytes (${maxBytes} bytes)`);
}

function summary(hosted: HostedService) {
  const d = hosted.descriptor;
  return {
    domain: d.id.domain,
    service: d.id.service,
    version: d.version ?? null,
    source: d.source,
    state: 'active',
    methods: d.methods.map((m) => ({
      name: m.name,
      signature: printSignature(m.function),
      invocable: m.invocable,
      ...(m.reason ? { reason: m.reason } : {}),
    })),
    unsatisfied_imports: d.unsatisfiedImports,
  };
}
