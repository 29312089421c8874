// The API a worker answers (docs/api.md §5), as one table of operations:
// each transport that reaches them (the Koa app, app.ts; the invoke lane in
// front of it, invoke-lane.ts) runs them through `perform`, the one place
// where what applies to an operation as such is applied (the control guard).
// What applies to every request (its id, deadline, error body, log line)
// is the exchange's (exchange.ts).

import type { Logger } from 'pino';
import { ApiError } from '../../errors.js';
import type { Config } from '../../config/index.js';
import type { ControlOutcome, ControlRequest } from '../../control.js';
import type { TrustedProxies } from '../../client-address.js';
import { openApiDocument, serialize, withServers, type SerializedDocument } from '../../openapi/document.js';
import { serverUrl } from '../../openapi/servers.js';
import { mediaType, type BodyLimits } from './body.js';
import { CONTROL_ROUTES, controlRefusal, credentialsOf, type ControlPolicy, type ControlRoute } from './control-guard.js';
import { resourceOperations } from './resource-operations.js';
import { wasiHttpMounts, wasiHttpOperation } from './wasi-http-route.js';
import { invokeOperation, readWhole } from './invoke.js';
import { findService, serviceFor } from './lookup.js';
import type { WorkerState } from './worker-state.js';
import type { ServiceRegistry } from '../execution/registry.js';
import type { RequestStats } from './request-stats.js';
import type { Peers } from './peers.js';
import type { FairShares } from './fair-shares.js';
import { description, summary } from './views.js';
import { json, JSON_TYPE, type ApiCall, type ApiOperation, type Reply } from './api-call.js';

export interface OperationDeps {
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
  bodies: BodyLimits;
  shares: FairShares;
  /** `http.trusted_proxies`: whose X-Forwarded-Host and -Proto say where the client sent a request. */
  proxies: TrustedProxies;
}

/** The operations, and `perform`, which runs one for a request. */
export interface Operations {
  readonly all: readonly ApiOperation[];
  /** `POST /services/:domain/:service/invoke/:method`: one the lane takes (invoke-lane.ts). */
  readonly invoke: ApiOperation;
  /** `/services/:domain/:service/http{/*path}`, any method: a handler's request, which the lane takes too. */
  readonly httpHandler: ApiOperation;
  /** The handler mounted at or above a path (`http_route`), whose requests the lane and the app take in front of the API. */
  readonly mounted: (path: string) => ApiOperation | undefined;
  perform(operation: ApiOperation, call: ApiCall): Promise<Reply>;
}

export function apiOperations(deps: OperationDeps, policy: ControlPolicy): Operations {
  const { version, registry, state, control } = deps;
  // Built and serialized once per service set (it changes only when the primary sends a new one); only its servers are the request's.
  let openapi: { generation: number; document: SerializedDocument } | undefined;

  const invoke: ApiOperation = { name: 'invoke', method: 'POST', path: '/services/:domain/:service/invoke/:method', run: invokeOperation(deps) };
  const httpHandler = wasiHttpOperation(deps);
  const controls: Record<ControlRoute['op'], ApiOperation['run']> = {
    restart: async (call) => {
      const hosted = serviceFor(deps, call);
      // The body is the new configuration, whatever its format: it goes to the component as it is.
      const body = await readWhole(call.req, deps.bodies, call.state);
      const request: ControlRequest = { op: 'restart', service: hosted.descriptor.id };
      if (body.kind !== 'none' && body.bytes.length > 0) request.config = { bytes: body.bytes, contentType: mediaType(call.req) || 'application/octet-stream' };
      return outcomeReply(await control(request));
    },
    quiesce: async (call) => outcomeReply(await control({ op: 'quiesce', service: serviceFor(deps, call).descriptor.id })),
    reload: async () => outcomeReply(await control({ op: 'reload' })),
  };

  const all: ApiOperation[] = [
    { name: 'health', method: 'GET', path: '/health', run: async () => json({ status: 'ok' }) },
    {
      name: 'ready',
      method: 'GET',
      path: '/ready',
      run: async () => {
        if (!(state.loaded && state.clusterReady)) throw new ApiError('RT_ERR_NOT_READY', 'workers are still loading the components');
        return json({ status: 'ready' });
      },
    },
    { name: 'list-services', method: 'GET', path: '/services', run: async () => json({ services: registry.list().map((hosted) => summary(hosted, state)), failed: registry.failures() }) },
    { name: 'describe', method: 'GET', path: '/services/:domain/:service', run: async (call) => json(description(findService(registry, state, call.params.domain, call.params.service), state)) },
    {
      name: 'openapi',
      method: 'GET',
      path: '/openapi.json',
      run: async (call) => {
        if (openapi?.generation !== registry.generation) {
          const document = openApiDocument(
            registry.list().map((s) => s.descriptor),
            { version, token: policy.tokenDigest !== undefined },
          );
          openapi = { generation: registry.generation, document: serialize(document) };
        }
        return { kind: 'text', type: JSON_TYPE, body: withServers(openapi.document, requestedUrl(call, deps.proxies)) };
      },
    },
    invoke,
    ...resourceOperations(deps, policy),
    httpHandler,
    // Restart, quiesce and reload change what runs: not from a foreign web page, and only with the token when one is set (docs/api.md §5.6).
    ...CONTROL_ROUTES.map((route): ApiOperation => ({ name: route.op, method: route.method, path: route.path, control: true, run: controls[route.op] })),
    { name: 'metrics', method: 'GET', path: '/metrics', run: async () => outcomeReply(await control({ op: 'metrics' })) },
    { name: 'metrics-history', method: 'GET', path: '/metrics/history', run: async () => outcomeReply(await control({ op: 'metrics-history' })) },
  ];

  // A span's http.route: the API's routes under /api as templates; a handler's mount is its own (HTTP semantic conventions).
  const routes = new Map(all.map((operation) => [operation, `/api${routeTemplate(operation.path)}`]));
  return {
    all,
    invoke,
    httpHandler,
    mounted: wasiHttpMounts(deps),
    perform(operation, call) {
      call.state.trace?.route(routes.get(operation) ?? operation.path);
      if (operation.control) {
        // Before the body is read: a refused request costs nothing more.
        const refusal = controlRefusal(credentialsOf(call), policy);
        if (refusal) throw refusal;
      }
      return operation.run(call);
    },
  };
}

/** A path as @koa/router matches it (`/services/:domain`, `{/*path}`) as a route template (`/services/{domain}`, `/{path}`). */
export function routeTemplate(path: string): string {
  return path.replace(/\{\/\*(\w+)\}/g, '/{$1}').replace(/:(\w+)/g, '{$1}');
}

/** A control operation's outcome as its answer: a failure is the catalogue's error (thrown, as any other). */
function outcomeReply(outcome: ControlOutcome): Reply {
  switch (outcome.kind) {
    case 'failed':
      throw new ApiError(outcome.code, outcome.details, outcome.context);
    case 'metrics':
      return { kind: 'text', type: outcome.contentType, body: outcome.text };
    case 'metrics-history':
      return json(outcome.history);
    case 'reloaded': {
      const { added, updated, removed, failed } = outcome;
      return json({ status: 'reloaded', added, updated, removed, failed });
    }
    default:
      return json({ status: outcome.kind, service: outcome.service });
  }
}

/** The URL of the rt `call` reached, as its client sent it: through a trusted proxy, as the proxy says (lib/openapi/servers.ts). */
function requestedUrl(call: ApiCall, proxies: TrustedProxies): string {
  const { socket } = call.req;
  const header = (name: string) => call.header(name) || undefined;
  const viaProxy = socket.remoteAddress !== undefined && proxies.isProxy(socket.remoteAddress);
  return serverUrl({
    tls: 'encrypted' in socket && socket.encrypted === true,
    host: header('host'),
    local: { address: socket.localAddress, port: socket.localPort },
    ...(viaProxy ? { forwarded: { proto: header('x-forwarded-proto'), host: header('x-forwarded-host') } } : {}),
  });
}
