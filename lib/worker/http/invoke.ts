// The invoke route (docs/api.md §5.1): the method the path names, its
// arguments from the body, the call, and the answer. It is the hot path of
// rt, so it does no more than that: the body is read by body.ts (no
// koa-body), and the call runs inline when its service allows (execution.ts). Plain JSON
// calls do not come this way at all: the invoke lane (invoke-lane.ts)
// answers them before Koa, with the Invoker, readInput and succeeded below.
// Both hand the execution layer an Invocation (execution/invocation.ts).

import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import { streamMediaType } from '../../wit/streaming.js';
import { ApiError } from '../../errors.js';
import type { HostedService } from '../execution/hosted-service.js';
import type { Input, Invocation, InvokeResult } from '../execution/invocation.js';
import type { Method } from '../execution/method.js';
import { framingFor } from '../execution/stream-framing.js';
import { bodyLength, isJson, mediaType, readBody } from './body.js';
import { COMPONENT_CONTENT_HEADERS, departure, seriesOf } from './exchange.js';
import { failureError } from './failures.js';
import { HANDLE_SCOPE_HEADER, requestedScope } from './handle-scope.js';
import { findMethod, findService } from './lookup.js';
import type { ServiceRegistry } from '../execution/registry.js';
import type { RequestStats } from './request-stats.js';
import type { RequestState, RtContext } from './request-state.js';
import { cameFromPeer, type Peers } from './peers.js';
import { answerWithStream } from './stream-response.js';
import type { WorkerState } from './worker-state.js';

export interface InvokeDeps {
  config: Config;
  registry: ServiceRegistry;
  state: WorkerState;
  requests: RequestStats;
  log: Logger;
  /** The other workers, which answer for the handles they hold. */
  peers: Peers;
}

/** What an invoke path names. */
export interface InvokeNames {
  domain: string;
  service: string;
  method: string;
}

/**
 * What both invoke paths (this route, and the lane in front of Koa:
 * invoke-lane.ts) do with a request: find the method the path names, read
 * its input, and find it again once it is in.
 */
export class Invoker {
  readonly maxBytes: number;

  constructor(private readonly deps: InvokeDeps) {
    this.maxBytes = deps.config.http.max_body_bytes;
  }

  /** The method `names` name, noted on the request's state (for its log line, metrics and error bodies); ApiErrors when there is none. */
  resolve(names: InvokeNames, request: RequestState): { hosted: HostedService; method: Method } {
    const found = this.current(names);
    this.note(found, request);
    return found;
  }

  /** Notes a method found already on the request's state. */
  note(found: { hosted: HostedService; method: Method }, request: RequestState): void {
    request.service = found.hosted.name;
    request.method = found.method.descriptor.name;
  }

  /** The method as it is served now: a reload or restart may have replaced the service while the body arrived, and the replaced one is draining. */
  current(names: InvokeNames): { hosted: HostedService; method: Method } {
    return findMethod(findService(this.deps.registry, this.deps.state, names.domain, names.service), names.method);
  }
}

export function invokeRoute(deps: InvokeDeps) {
  const { config, log } = deps;
  const invoker = new Invoker(deps);
  const streamTimeoutMs = config.http.stream_timeout_seconds * 1000;

  return async (ctx: RtContext & { params: Record<string, string> }): Promise<void> => {
    const names = ctx.params as unknown as InvokeNames;
    const first = invoker.resolve(names, ctx.state);
    const input = await readInput(ctx.req, first.method, invoker.maxBytes, ctx.state);
    const { hosted, method } = invoker.current(names);
    const where = { service: hosted.name, method: method.descriptor.name };
    const invocation = invocationFor(ctx, method, input);
    const stream = method.descriptor.stream;
    if (stream) {
      const framing = framingFor(stream, ctx.get('Accept'));
      const streamDeadline = ctx.state.arrived + streamTimeoutMs;
      return answerWithStream(ctx, {
        mediaType: streamMediaType(stream.encoding, method.descriptor.mediaType),
        framing,
        series: seriesOf(deps.requests, ctx.state),
        log: log.child({ reqId: ctx.state.requestId, ...where }),
        failure: (failure) => failureError(failure, where),
        open: async (sink, window) => {
          const opening = await hosted.openStream(invocation, { framing, window, streamDeadline, sink });
          if (opening.kind === 'open') return opening.control;
          throw failureError(opening, where);
        },
      });
    }
    const result = await callOrForward(ctx, deps.peers, hosted, invocation);
    if (result) answerResult(ctx, result);
  };
}

/** The invocation of `method` the request in `ctx` makes, with `input` (its body), on handle `self` if given. */
export function invocationFor(ctx: RtContext, method: Method, input: Input, self?: string): Invocation {
  // A list<u8> result is raw bytes unless the client asks for JSON (docs/api.md §5.1); the hosted
  // service decides that. Accept is negotiated (a few µs) only where its answer can matter.
  const answer = method.bytesResult && ctx.accepts('application/octet-stream', 'application/json') !== 'application/json' ? 'bytes' : 'json';
  const scope = method.descriptor.handles?.result ? requestedScope(ctx.get(HANDLE_SCOPE_HEADER) || undefined) : undefined;
  return { method, input, deadline: ctx.state.deadline, answer, signal: departure(ctx.res), ...(self !== undefined ? { self } : {}), ...(cameFromPeer(ctx.req) ? { forwarded: true } : {}), ...(scope ? { scope } : {}), client: ctx.state.client };
}

/**
 * Makes `invocation`: in this worker, its result; or undefined once the
 * worker that holds the handles it names (or where the handles it makes
 * belong) has answered the request (peers.ts). Which worker is decided here,
 * before execution is asked to make the call.
 */
export async function callOrForward(ctx: RtContext, peers: Peers, hosted: HostedService, invocation: Invocation): Promise<Extract<InvokeResult, { kind: 'json' | 'bytes' }> | undefined> {
  if (!hosted.involvesHandles(invocation)) return succeeded(hosted, invocation, await hosted.invoke(invocation));
  const route = hosted.routeHandleCall(invocation);
  if (route.kind === 'other-worker') {
    await peers.forward(ctx, route.worker, invocation.input, route.for);
    return undefined;
  }
  return succeeded(hosted, invocation, route.kind === 'here' ? await hosted.invoke(invocation, route) : route);
}

/** A call's result as the answer: its JSON, or raw bytes as the component's content, with the headers that keep it from running as rt's (docs/api.md §5.6). */
export function answerResult(ctx: RtContext, result: Extract<InvokeResult, { kind: 'json' | 'bytes' }>): void {
  if (result.kind === 'bytes') {
    ctx.set(COMPONENT_CONTENT_HEADERS);
    ctx.type = result.mediaType;
    ctx.body = Buffer.from(result.bytes.buffer, result.bytes.byteOffset, result.bytes.byteLength);
  } else {
    ctx.body = { result: result.value };
  }
}

/** What `invocation` of `hosted` came to, its failure thrown as the error it answers with (http/failures.ts). */
export function succeeded(hosted: HostedService, invocation: Invocation, result: InvokeResult): Extract<InvokeResult, { kind: 'json' | 'bytes' }> {
  if (result.kind === 'json' || result.kind === 'bytes') return result;
  throw failureError(result, { service: hosted.name, method: invocation.method.descriptor.name });
}

/**
 * The input in the request body for `method`: a JSON body's bytes, raw bytes
 * for a method taking one list<u8>, or none when there is no body at all.
 * 415 for a content type the method does not take; 413, 408, 400 from
 * reading it.
 */
export async function readInput(req: IncomingMessage, method: Method, maxBytes: number, request: RequestState): Promise<Input> {
  const type = mediaType(req);
  const { present, length } = bodyLength(req);
  const raw = type === 'application/octet-stream';
  // No body, or an empty one whatever its declared type: a call without arguments
  // (except empty raw bytes, which are an empty list<u8>).
  if (!present || (length === 0 && !(raw && method.bytesParam))) return NO_INPUT;
  const where = { service: request.service, method: request.method };
  if (raw) {
    if (!method.bytesParam) {
      throw new ApiError('RT_ERR_UNSUPPORTED_CONTENT_TYPE', 'application/octet-stream is only for methods whose only parameter is list<u8>; send application/json', where);
    }
    return { kind: 'bytes', bytes: await readBody(req, maxBytes, request.deadline) };
  }
  if (!isJson(type)) {
    const accepted = method.bytesParam ? 'application/json or application/octet-stream' : 'application/json';
    throw new ApiError('RT_ERR_UNSUPPORTED_CONTENT_TYPE', `send ${accepted} (got ${type || 'no content type'})`, where);
  }
  return { kind: 'json', bytes: await readBody(req, maxBytes, request.deadline) };
}

const NO_INPUT: Input = { kind: 'none' };
