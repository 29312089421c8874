// The JSON a worker answers about its services (docs/api.md §5): the listing
// entry of each, and one service in full with its WIT and JSON Schemas, its
// resources (docs/api.md §5.1.2) among them.

import { handlerRoutes } from '../../http-mounts.js';
import { serviceKey, type MethodDescriptor, type Placement, type ResourceDescriptor, type ServiceDescriptor } from '../../service.js';
import { createdHandleSchema, errorValueSchema, handleMethodRequestSchema, handleSchema, namedArgumentsSchema, requestSchema, responseSchema, typeSchema } from '../../wit/json-schema.js';
import { bodyStreamItems } from '../../wit/async-abi.js';
import type { WitFunction } from '../../wit/types.js';
import { printComponentWit, printMemberSignature, printSignature } from '../../wit/print.js';
import { SSE_MEDIA_TYPE, streamMediaType } from '../../wit/streaming.js';
import type { HostedService } from '../execution/hosted-service.js';
import type { WorkerState } from './worker-state.js';

/** For a streaming method: that it streams, and the media types its answer may have (its items', or SSE). */
function streaming(m: MethodDescriptor): { streaming: true; media_types: string[] } | Record<string, never> {
  if (!m.stream) return {};
  return { streaming: true, media_types: [streamMediaType(m.stream.encoding, m.mediaType), SSE_MEDIA_TYPE] };
}

/** What an invoke of `fn` sends: a JSON body of its arguments; or, for one that takes a stream<T>, that stream as the body (its bytes, or NDJSON items of `item_schema`) and the others in the query string (docs/api.md §5.9). */
function requested(fn: WitFunction) {
  const body = bodyStreamItems(fn);
  if (!body) return { request_schema: requestSchema(fn) };
  const items = body.kind === 'items' ? { item_schema: typeSchema(body.element, 'request') } : {};
  return { query_schema: namedArgumentsSchema(fn), request_body: { parameter: fn.params[body.at].name, media_type: body.mediaType, ...items } };
}

/** What the invoke path reaches: functions and statics; a resource's constructor and methods answer to no method name (docs/api.md §5.1.2). */
function invokable(d: ServiceDescriptor): MethodDescriptor[] {
  return d.methods.filter((m) => m.aliases.length > 0);
}

/** A constructor or method of a resource, as the listing shows it: its signature as the resource's WIT body writes it (a method's without `self`). */
function member(m: MethodDescriptor) {
  return { signature: printMemberSignature(m.function), invocable: m.invocable, ...(m.reason ? { reason: m.reason } : {}) };
}

/** A resource as the listing shows it: its constructor, its methods, and the names of its statics among the service's methods. */
function resourceSummary(d: ServiceDescriptor, r: ResourceDescriptor) {
  return {
    name: r.name,
    aliases: r.aliases,
    interface: r.interface,
    constructor: r.constructorMethod === null ? null : member(d.methods[r.constructorMethod]),
    methods: r.methods.map((i) => ({ name: d.methods[i].name, ...member(d.methods[i]) })),
    statics: r.statics.map((i) => d.methods[i].name),
  };
}

/** The JSON Schemas of a constructor (its arguments; it answers the new handle) or of a method called through a handle (its arguments but `self`). */
function memberSchemas(m: MethodDescriptor, resource: string) {
  if (!m.invocable) return {};
  const fn = m.function;
  const error = errorValueSchema(fn);
  return m.member?.kind === 'constructor'
    ? { request_schema: requestSchema(fn), response_schema: createdHandleSchema(resource), ...(error ? { error_schema: error } : {}) }
    : { request_schema: handleMethodRequestSchema(fn), response_schema: responseSchema(fn), ...(error ? { error_schema: error } : {}) };
}

/** A resource in full: the listing's entry, each member's JSON Schemas, and a handle's JSON form (what own<R> and borrow<R> values are). */
function resourceDescription(d: ServiceDescriptor, r: ResourceDescriptor) {
  const listed = resourceSummary(d, r);
  const ctor = r.constructorMethod === null ? null : d.methods[r.constructorMethod];
  return {
    ...listed,
    constructor: ctor && { ...listed.constructor, ...memberSchemas(ctor, r.name) },
    methods: r.methods.map((i, n) => ({ ...listed.methods[n], ...memberSchemas(d.methods[i], r.name) })),
    // As own<R> and borrow<R> are in the methods' schemas: named by the resource's WIT name.
    handle: handleSchema(r.key.slice(r.key.indexOf('#') + 1)),
  };
}

/** Where each worker runs the service, by worker id: the primary's table, with this worker's entry as it is now. */
function placements(hosted: HostedService, state: WorkerState): Record<string, Placement> {
  const all: Record<string, Placement> = { ...state.placements[serviceKey(hosted.descriptor.id)] };
  const own = String(state.workerId);
  if (hosted.placement) all[own] = hosted.placement;
  else delete all[own];
  return all;
}

export function summary(hosted: HostedService, state: WorkerState) {
  const d = hosted.descriptor;
  return {
    domain: d.id.domain,
    service: d.id.service,
    version: d.version ?? null,
    source: d.source,
    state: hosted.quiesced ? 'quiesced' : 'active',
    /** `http`: an HTTP handler (docs/api.md §5.8), served at `routes`; `methods`: its exported functions are its interface. */
    kind: d.http ? 'http' : 'methods',
    ...(d.http ? { routes: handlerRoutes(d.id, d.http.route), handler: d.http.interface, wasi: d.http.wasi } : {}),
    /** Where the configuration its instances got came from: a file's path or "restart body". */
    config: d.config ? { origin: d.config.origin, content_type: d.config.contentType, bytes: d.config.bytes.length } : null,
    methods: invokable(d).map((m) => ({
      name: m.name,
      signature: printSignature(m.function),
      invocable: m.invocable,
      ...(m.reason ? { reason: m.reason } : {}),
      ...streaming(m),
    })),
    /** Exported resources (docs/api.md §5.1.2): their constructors and methods are reached through /resources and /handles, their statics are methods. */
    resources: d.resources.map((r) => resourceSummary(d, r)),
    unsatisfied_imports: d.unsatisfiedImports,
    /** Imported interfaces other services serve (sidecar `[imports]`, docs/api.md §5.9): interface → `domain/service`. */
    links: Object.fromEntries(d.links.map((l) => [l.interface, serviceKey(l.target)])),
    instances: {
      pool_size: d.instances.poolSize,
      max_instances: d.instances.maxInstances,
      /** Calls of async functions (WASI 0.3) one instance serves side by side. */
      max_concurrency: d.instances.maxConcurrency,
      max_invocations: d.instances.recycleAfter || null,
      /** In the worker that answered: the pool plus the instances started beyond it (calls queued behind stuck ones, or async calls beyond max_concurrency). */
      live: hosted.liveInstances(),
      /** In the worker that answered: calls waiting for an instance thread (at most max_queue). */
      waiting: hosted.waitingCalls(),
      /** In the worker that answered: calls run `inline` on its main thread, or on instance `threads` (docs/architecture.md). */
      placement: hosted.placement ?? null,
      /** In every worker, by worker id (docs/architecture.md: a worker moves a service on its own evidence). */
      placements: placements(hosted, state),
      max_queue: d.instances.maxQueue,
      /** In the worker that answered: live handles to the service's resources (at most max_handles). */
      handles: hosted.liveHandles(),
      max_handles: d.instances.maxHandles,
      handle_idle_seconds: d.instances.handleIdleSeconds,
    },
  };
}

/** One service in full: the listing entry, its WIT, and each method's and resource member's JSON Schemas. */
export function description(hosted: HostedService, state: WorkerState) {
  const d = hosted.descriptor;
  return {
    ...summary(hosted, state),
    wit: printComponentWit(d.interface, d.id.service),
    methods: invokable(d).map((m) => {
      const fn = m.function;
      const schemas = !m.invocable
        ? {}
        : m.stream
          ? { ...requested(fn), item_schema: typeSchema(m.stream.item, 'response'), ...(m.stream.fallible ? { error_schema: m.stream.error ? typeSchema(m.stream.error, 'response') : { type: 'null' } } : {}) }
          : { ...requested(fn), response_schema: responseSchema(fn), ...(errorValueSchema(fn) ? { error_schema: errorValueSchema(fn) } : {}) };
      return { name: m.name, aliases: m.aliases, interface: m.interface, signature: printSignature(fn), invocable: m.invocable, ...(m.reason ? { reason: m.reason } : {}), ...streaming(m), ...schemas };
    }),
    resources: d.resources.map((r) => resourceDescription(d, r)),
  };
}
