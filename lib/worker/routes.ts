// The `/api` routes a worker answers (contract §5).

import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { ApiError } from '../api-error.js';
import type { Config } from '../config/index.js';
import type { ControlAnswer, ControlRequest } from '../ipc.js';
import { openApiDocument } from '../openapi.js';
import { errorValueSchema, requestSchema, responseSchema } from '../wit/json-schema.js';
import { printComponentWit, printSignature } from '../wit/print.js';
import type { HostedService, Method } from './hosted-service.js';
import type { ServiceRegistry } from './registry.js';

export interface WorkerState {
  /** This worker has instantiated the service set it was sent. */
  loaded: boolean;
  /** Every worker has (the primary says so). */
  clusterReady: boolean;
}

export interface RouteDeps {
  /** rt's version, for the OpenAPI document. */
  version: string;
  config: Config;
  registry: ServiceRegistry;
  state: WorkerState;
  /** Has the primary carry out a control operation on every worker. */
  control: (request: ControlRequest) => Promise<ControlAnswer>;
}

export function apiRouter({ version, config, registry, state, control }: RouteDeps): Router {
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

  router.post('/services/:domain/:service/invoke/:method', async (ctx) => {
    const { domain, service, method: name } = ctx.params as Record<'domain' | 'service' | 'method', string>;
    const first = findMethod(findService(registry, state, domain, service), name);
    ctx.state.service = first.hosted.name;
    ctx.state.method = first.method.descriptor.name;
    const body = await readArguments(ctx, first.method, parseJson, config.http.max_body_bytes);
    // A reload or restart may have replaced the service while the body
    // arrived; the replaced one is draining, so call the one serving now.
    const { hosted, method } = findMethod(findService(registry, state, domain, service), name);
    // A list<u8> result is raw bytes unless the client asks for JSON (contract §5.1).
    const rawBytes = method.bytesResult && ctx.accepts('application/octet-stream', 'application/json') !== 'application/json';
    const result = await hosted.invoke(method, body, rawBytes);
    if (rawBytes) {
      ctx.type = method.descriptor.mediaType ?? 'application/octet-stream';
      ctx.body = Buffer.from((result as Uint8Array).buffer, (result as Uint8Array).byteOffset, (result as Uint8Array).byteLength);
    } else {
      ctx.body = { result };
    }
  });

  router.post('/services/:domain/:service/restart', async (ctx) => {
    const hosted = findService(registry, state, ctx.params.domain!, ctx.params.service!);
    ctx.state.service = hosted.name;
    // The body is the new configuration, whatever its format: it goes to the component as it is.
    const bytes = ctx.request.length === 0 ? undefined : await readRaw(ctx, config.http.max_body_bytes);
    const request: ControlRequest = { op: 'restart', service: hosted.descriptor.id };
    if (bytes && bytes.length > 0) request.config = { bytes, contentType: ctx.request.type || 'application/octet-stream' };
    answer(ctx, await control(request));
  });

  router.put('/services/:domain/:service/quiesce', async (ctx) => {
    const hosted = findService(registry, state, ctx.params.domain!, ctx.params.service!);
    ctx.state.service = hosted.name;
    answer(ctx, await control({ op: 'quiesce', service: hosted.descriptor.id }));
  });

  router.get('/metrics', async (ctx) => {
    answer(ctx, await control({ op: 'metrics' }));
  });

  router.post('/reload', async (ctx) => {
    answer(ctx, await control({ op: 'reload' }));
  });

  return router;
}

function answer(ctx: Context, { status, body, contentType }: ControlAnswer): void {
  ctx.status = status;
  ctx.body = body;
  if (contentType) ctx.type = contentType;
}

function findMethod(hosted: HostedService, name: string): { hosted: HostedService; method: Method } {
  const method = hosted.method(name);
  if (method) return { hosted, method };
  const known = hosted.descriptor.methods.map((m) => m.name).join(', ');
  throw new ApiError(404, 'unknown method', `${hosted.name} has no method "${name}" (methods: ${known})`, { service: hosted.name, method: name });
}

function findService(registry: ServiceRegistry, state: WorkerState, domain: string, service: string): HostedService {
  const hosted = registry.get(domain, service);
  if (hosted) return hosted;
  if (!state.loaded) throw new ApiError(503, 'not ready', 'this worker is still loading the components', { service: `${domain}.${service}` });
  throw new ApiError(404, 'unknown service', `no service ${domain}.${service} is loaded`, { service: `${domain}.${service}` });
}

/**
 * The arguments in the request body: parsed JSON, `[bytes]` for a raw body to
 * a method taking one list<u8>, or undefined when there is no body at all.
 */
async function readArguments(ctx: Context, method: Method, parseJson: (ctx: Context, next: Next) => Promise<unknown>, maxBytes: number): Promise<unknown> {
  const type = ctx.request.is('application/json', '+json', 'application/octet-stream');
  // No body, or an empty one whatever its declared type: a call without arguments
  // (except empty raw bytes, which are an empty list<u8>).
  if (ctx.request.length === 0 && !(type === 'application/octet-stream' && method.bytesParam)) return undefined;
  if (type === null) return undefined;
  const where = { service: ctx.state.service as string, method: ctx.state.method as string };
  if (ctx.request.length !== undefined && ctx.request.length > maxBytes) throw tooLarge(maxBytes);
  if (type === 'application/octet-stream') {
    if (!method.bytesParam) {
      throw new ApiError(415, 'unsupported content type', 'application/octet-stream is only for methods whose only parameter is list<u8>; send application/json', where);
    }
    return [await readRaw(ctx, maxBytes)];
  }
  if (type === false) {
    const accepted = method.bytesParam ? 'application/json or application/octet-stream' : 'application/json';
    throw new ApiError(415, 'unsupported content type', `send ${accepted} (got ${ctx.request.type || 'no content type'})`, where);
  }
  await parseJson(ctx, async () => {});
  return (ctx.request as { body?: unknown }).body;
}

async function readRaw(ctx: Context, maxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
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
    state: hosted.quiesced ? 'quiesced' : 'active',
    /** Where the configuration its instances got came from: a file's path or "restart body". */
    config: d.config ? { origin: d.config.origin, content_type: d.config.contentType, bytes: d.config.bytes.length } : null,
    methods: d.methods.map((m) => ({
      name: m.name,
      signature: printSignature(m.function),
      invocable: m.invocable,
      ...(m.reason ? { reason: m.reason } : {}),
    })),
    unsatisfied_imports: d.unsatisfiedImports,
    instances: {
      pool_size: d.instances.poolSize,
      max_invocations: d.instances.recycleAfter || null,
      /** In the worker that answered: the pool plus overflow instances serving calls queued behind stuck ones. */
      live: hosted.liveInstances(),
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
      const schemas = m.invocable
        ? { request_schema: requestSchema(fn), response_schema: responseSchema(fn), ...(errorValueSchema(fn) ? { error_schema: errorValueSchema(fn) } : {}) }
        : {};
      return { name: m.name, aliases: m.aliases, interface: m.interface, signature: printSignature(fn), invocable: m.invocable, ...(m.reason ? { reason: m.reason } : {}), ...schemas };
    }),
  };
}
