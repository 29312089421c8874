// The invoke route (docs/api.md §5.1): the method the path names, its
// arguments from the body, the call, and the answer. It is the hot path of
// rt, so it does no more than that: the body is read by body.ts (no
// koa-body), the request's metric series is resolved once per method, and
// the call runs inline when its service allows (execution.ts).

import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { streamMediaType } from '../wit/streaming.js';
import { ApiError } from '../errors.js';
import { bodyLength, isJson, mediaType, parseJson, readBody } from './body.js';
import type { Method } from './hosted-service.js';
import { LargeJsonBody, MAIN_THREAD_JSON_BYTES } from './large-body.js';
import { findMethod, findService, type WorkerState } from './lookup.js';
import type { ServiceRegistry } from './registry.js';
import type { RequestStats, Series } from './request-stats.js';
import type { RtContext } from './request-state.js';
import { framingFor } from './stream-framing.js';
import { answerWithStream } from './stream-response.js';

export interface InvokeDeps {
  config: Config;
  registry: ServiceRegistry;
  state: WorkerState;
  requests: RequestStats;
  log: Logger;
}

export function invokeRoute({ config, registry, state, requests, log }: InvokeDeps) {
  const maxBytes = config.http.max_body_bytes;
  const streamTimeoutMs = config.http.stream_timeout_seconds * 1000;
  const seriesOf = new WeakMap<Method, Series>();

  return async (ctx: RtContext & { params: Record<string, string> }): Promise<void> => {
    const { domain, service, method: name } = ctx.params as Record<'domain' | 'service' | 'method', string>;
    const first = findMethod(findService(registry, state, domain, service), name);
    ctx.state.service = first.hosted.name;
    ctx.state.method = first.method.descriptor.name;
    let series = seriesOf.get(first.method);
    if (!series) seriesOf.set(first.method, (series = requests.series(first.hosted.name, first.method.descriptor.name)));
    ctx.state.series = series;

    const { deadline } = ctx.state;
    const args = await readArguments(ctx, first.method, maxBytes, deadline);
    // A reload or restart may have replaced the service while the body
    // arrived; the replaced one is draining, so call the one serving now.
    const { hosted, method } = findMethod(findService(registry, state, domain, service), name);
    const stream = method.descriptor.stream;
    if (stream) {
      const framing = framingFor(stream, ctx.get('Accept'));
      const streamDeadline = ctx.state.arrived + streamTimeoutMs;
      return answerWithStream(ctx, {
        mediaType: streamMediaType(stream.encoding, method.descriptor.mediaType),
        framing,
        series,
        log: log.child({ reqId: ctx.state.requestId, service: hosted.name, method: method.descriptor.name }),
        failure: (failure) => hosted.failure(method, failure),
        open: (sink, window) => hosted.openStream(method, args, deadline, { framing, window, streamDeadline, sink }),
      });
    }
    // A list<u8> result is raw bytes unless the client asks for JSON (docs/api.md §5.1).
    const rawBytes = method.bytesResult && ctx.accepts('application/octet-stream', 'application/json') !== 'application/json';
    const result = await hosted.invoke(method, args, { rawBytes, deadline });
    if (result.kind === 'bytes') {
      ctx.type = method.descriptor.mediaType ?? 'application/octet-stream';
      ctx.body = Buffer.from(result.bytes.buffer, result.bytes.byteOffset, result.bytes.byteLength);
    } else {
      ctx.body = { result: result.value };
    }
  };
}

/**
 * The arguments in the request body: parsed JSON, `[bytes]` for a raw body to
 * a method taking one list<u8>, undefined when there is no body at all, or a
 * JSON body too large to parse on the main thread (large-body.ts).
 */
async function readArguments(ctx: RtContext, method: Method, maxBytes: number, deadline: number): Promise<unknown> {
  const type = mediaType(ctx.req);
  const { present, length } = bodyLength(ctx.req);
  const raw = type === 'application/octet-stream';
  // No body, or an empty one whatever its declared type: a call without arguments
  // (except empty raw bytes, which are an empty list<u8>).
  if (!present || (length === 0 && !(raw && method.bytesParam))) return undefined;
  const where = { service: ctx.state.service, method: ctx.state.method };
  if (raw) {
    if (!method.bytesParam) {
      throw new ApiError('RT_ERR_UNSUPPORTED_CONTENT_TYPE', 'application/octet-stream is only for methods whose only parameter is list<u8>; send application/json', where);
    }
    return [await readBody(ctx.req, maxBytes, deadline)];
  }
  if (!isJson(type)) {
    const accepted = method.bytesParam ? 'application/json or application/octet-stream' : 'application/json';
    throw new ApiError('RT_ERR_UNSUPPORTED_CONTENT_TYPE', `send ${accepted} (got ${type || 'no content type'})`, where);
  }
  const bytes = await readBody(ctx.req, maxBytes, deadline);
  return bytes.length > MAIN_THREAD_JSON_BYTES ? new LargeJsonBody(bytes) : parseJson(bytes);
}
