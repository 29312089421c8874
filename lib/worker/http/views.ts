// The JSON a worker answers about its services (docs/api.md §5): the listing
// entry of each, and one service in full with its WIT and JSON Schemas.

import { serviceKey, type MethodDescriptor, type Placement } from '../../service.js';
import { errorValueSchema, requestSchema, responseSchema, typeSchema } from '../../wit/json-schema.js';
import { printComponentWit, printSignature } from '../../wit/print.js';
import { SSE_MEDIA_TYPE, streamMediaType } from '../../wit/streaming.js';
import type { HostedService } from '../execution/hosted-service.js';
import type { WorkerState } from './worker-state.js';

/** For a streaming method: that it streams, and the media types its answer may have (its items', or SSE). */
function streaming(m: MethodDescriptor): { streaming: true; media_types: string[] } | Record<string, never> {
  if (!m.stream) return {};
  return { streaming: true, media_types: [streamMediaType(m.stream.encoding, m.mediaType), SSE_MEDIA_TYPE] };
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
      /** In the worker that answered: calls waiting for an instance thread (at most max_queue). */
      waiting: hosted.waitingCalls(),
      /** In the worker that answered: calls run `inline` on its main thread, or on instance `threads` (docs/architecture.md). */
      placement: hosted.placement ?? null,
      /** In every worker, by worker id (docs/architecture.md: a worker moves a service on its own evidence). */
      placements: placements(hosted, state),
      max_queue: d.instances.maxQueue,
    },
  };
}

/** One service in full: the listing entry, its WIT, and each method's JSON Schemas. */
export function description(hosted: HostedService, state: WorkerState) {
  const d = hosted.descriptor;
  return {
    ...summary(hosted, state),
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
