// The invoke operation (docs/api.md §5.1): the method the path names, its
// arguments from the body, the call, and the answer. It is the hot path of
// rt, so it does no more than that: the body is read by body.ts (no
// koa-body), and the call runs inline when its service allows
// (execution.ts). Whichever transport reached it (the invoke lane for most
// requests, Koa for a browser's: invoke-lane.ts), it is this one function.
// It hands the execution layer an Invocation (execution/invocation.ts).

import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import { streamMediaType } from '../../wit/streaming.js';
import { ApiError } from '../../errors.js';
import type { HostedService } from '../execution/hosted-service.js';
import type { Input, Invocation, InvokeResult } from '../execution/invocation.js';
import type { Method } from '../execution/method.js';
import { framingFor } from '../execution/stream-framing.js';
import { bodyLength, isJson, mediaType, readBody, type BodyLimits } from './body.js';
import { departure, seriesOf } from './exchange.js';
import { json, WRITTEN, type ApiCall, type Reply } from './api-call.js';
import { failureError } from './failures.js';
import { HANDLE_SCOPE_HEADER, requestedScope } from './handle-scope.js';
import { findMethod, findService } from './lookup.js';
import type { ServiceRegistry } from '../execution/registry.js';
import type { RequestStats } from './request-stats.js';
import type { RequestState } from './request-state.js';
import { cameFromPeer, type Peers } from './peers.js';
import { answerWithStream } from './stream-response.js';
import { queryInput, readingBody } from './body-stream-call.js';
import type { FairShares } from './fair-shares.js';
import type { WorkerState } from './worker-state.js';

export interface InvokeDeps {
  config: Config;
  registry: ServiceRegistry;
  state: WorkerState;
  requests: RequestStats;
  log: Logger;
  /** The other workers, which answer for the handles they hold. */
  peers: Peers;
  bodies: BodyLimits;
  shares: FairShares;
}

/** What an invoke path names. */
export interface InvokeNames {
  domain: string;
  service: string;
  method: string;
}

/** Finds the method a path names, noting it on the request's state (for its log line, metrics and error bodies); ApiErrors when there is none. */
export class Invoker {
  constructor(private readonly deps: InvokeDeps) {}

  /** The method `names` name, noted on the request's state. */
  resolve(names: InvokeNames, request: RequestState): { hosted: HostedService; method: Method } {
    const found = this.current(names);
    request.service = found.hosted.name;
    request.method = found.method.descriptor.name;
    return found;
  }

  /** The method as it is served now: a reload or restart may have replaced the service while the body arrived, and the replaced one is draining. */
  current(names: InvokeNames): { hosted: HostedService; method: Method } {
    return findMethod(findService(this.deps.registry, this.deps.state, names.domain, names.service), names.method);
  }
}

export function invokeOperation(deps: InvokeDeps): (call: ApiCall) => Promise<Reply> {
  const { registry } = deps;
  const invoker = new Invoker(deps);
  const answer = answerer(deps);

  return async (call) => {
    const names = call.params as unknown as InvokeNames;
    const first = invoker.resolve(names, call.state);
    if (first.method.bodyStream) {
      const { hosted, method } = first;
      const input = queryInput(call, method);
      return readingBody(call, hosted, deps, (body) => answer(call, hosted, method, { ...invocationFor(call, method, input), body }));
    }
    const input = await readInput(call.req, first.method, deps.bodies, call.state);
    const { hosted, method } = registry.get(names.domain, names.service) === first.hosted ? first : invoker.current(names);
    return answer(call, hosted, method, invocationFor(call, method, input));
  };
}

/** Makes an invocation and answers with what it came to: its result, or its stream (docs/api.md §5.1.1). */
type Answerer = (call: ApiCall, hosted: HostedService, method: Method, invocation: Invocation) => Promise<Reply>;

function answerer(deps: InvokeDeps): Answerer {
  const { config, log } = deps;
  const streamTimeoutMs = config.http.stream_timeout_seconds * 1000;
  return async (call, hosted, method, invocation) => {
    const stream = method.descriptor.stream;
    if (!stream) return answerOf(await callOrForward(call, deps.peers, hosted, invocation));
    const where = { service: hosted.name, method: method.descriptor.name };
    const framing = framingFor(stream, call.header('accept'));
    const streamDeadline = call.state.arrived + streamTimeoutMs;
    // A stream holds its thread for as long as its client reads: within the client's share (fair-shares.ts).
    const release = deps.shares.take(hosted, call.state.client, 'streams');
    try {
      await answerWithStream(call, {
        mediaType: streamMediaType(stream.encoding, method.descriptor.mediaType),
        framing,
        series: seriesOf(deps.requests, call.state),
        log: log.child({ reqId: call.state.requestId, ...where }),
        failure: (failure) => failureError(failure, where),
        open: async (sink, window) => {
          const opening = await hosted.openStream(invocation, { framing, window, streamDeadline, sink });
          if (opening.kind === 'open') return opening.control;
          throw failureError(opening, where);
        },
      });
    } finally {
      release();
    }
    return WRITTEN;
  };
}

/** The invocation of `method` the request in `call` makes, with `input` (its body), on handle `self` if given. */
export function invocationFor(call: ApiCall, method: Method, input: Input, self?: string): Invocation {
  // A list<u8> result is raw bytes unless the client asks for JSON (docs/api.md §5.1); the hosted
  // service decides that. Accept is negotiated (a few µs) only where its answer can matter.
  const answer = method.bytesResult && call.accepts('application/octet-stream', 'application/json') !== 'application/json' ? 'bytes' : 'json';
  const invocation: Invocation = { method, input, deadline: call.state.deadline, answer, signal: departure(call.res), client: call.state.client };
  if (call.state.trace) invocation.trace = call.state.trace;
  // Set only when there: the hot path builds this once a request, and spreads of empty objects cost more than the call of a WAT add.
  if (self !== undefined) invocation.self = self;
  // What only a call that involves handles reads (hosted-service.ts: routeHandleCall).
  if (self !== undefined || method.descriptor.handles) {
    if (cameFromPeer(call.req)) invocation.forwarded = true;
    const scope = method.descriptor.handles?.result ? requestedScope(call.header(HANDLE_SCOPE_HEADER) || undefined) : undefined;
    if (scope) invocation.scope = scope;
  }
  return invocation;
}

/** A call's result, or the answer of the worker it was forwarded to. */
export type Called = { result: CallResult } | { relayed: Reply };

export type CallResult = Extract<InvokeResult, { kind: 'json' | 'bytes' }>;

/**
 * Makes `invocation`: in this worker, its result; or, when another worker
 * holds the handles it names (or is where the handles it makes belong), that
 * worker's answer (peers.ts). Which worker is decided here, before execution
 * is asked to make the call.
 */
export async function callOrForward(call: ApiCall, peers: Peers, hosted: HostedService, invocation: Invocation): Promise<Called> {
  if (!hosted.involvesHandles(invocation)) return { result: succeeded(hosted, invocation, await hosted.invoke(invocation)) };
  const route = hosted.routeHandleCall(invocation);
  if (route.kind === 'other-worker') return { relayed: await peers.forward(call, route.worker, invocation.input, route.for) };
  return { result: succeeded(hosted, invocation, route.kind === 'here' ? await hosted.invoke(invocation, route) : route) };
}

/** A call's answer: its JSON, or raw bytes as the component's content (docs/api.md §5.6); another worker's as it gave it. */
export function answerOf(called: Called): Reply {
  if ('relayed' in called) return called.relayed;
  const { result } = called;
  return result.kind === 'bytes' ? { kind: 'content', type: result.mediaType, body: result.bytes } : json({ result: result.value });
}

/** What `invocation` of `hosted` came to, its failure thrown as the error it answers with (http/failures.ts). */
export function succeeded(hosted: HostedService, invocation: Invocation, result: InvokeResult): CallResult {
  if (result.kind === 'json' || result.kind === 'bytes') return result;
  throw failureError(result, { service: hosted.name, method: invocation.method.descriptor.name });
}

/**
 * The input in the request body for `method`: a JSON body's bytes, raw bytes
 * for a method taking one list<u8>, or none when there is no body at all.
 * 415 for a content type the method does not take; 413, 408, 400 from
 * reading it.
 */
export async function readInput(req: IncomingMessage, method: Method, limits: BodyLimits, request: RequestState): Promise<Input> {
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
    return { kind: 'bytes', bytes: await readBody(req, limits, request) };
  }
  if (!isJson(type)) {
    const accepted = method.bytesParam ? 'application/json or application/octet-stream' : 'application/json';
    throw new ApiError('RT_ERR_UNSUPPORTED_CONTENT_TYPE', `send ${accepted} (got ${type || 'no content type'})`, where);
  }
  return { kind: 'json', bytes: await readBody(req, limits, request) };
}

/** The request's body as it came, whatever its type (for another worker to read as a call's: peers.ts), or none. */
export async function readWhole(req: IncomingMessage, limits: BodyLimits, request: RequestState): Promise<Input> {
  return bodyLength(req).present ? { kind: 'bytes', bytes: await readBody(req, limits, request) } : NO_INPUT;
}

const NO_INPUT: Input = { kind: 'none' };
