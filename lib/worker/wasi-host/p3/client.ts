// wasi:http/client@0.3's send: a guest's request, sent by the worker's main
// thread through the thread's outgoing channel (core/outgoing-channel.ts:
// within the service's allowed_outbound_hosts, else HTTP-request-denied
// before anything connects), the same transport as 0.2's outgoing-handler.
// `send` is an async import: the guest's task waits (JSPI) while the thread
// serves on; the request body goes out as the guest writes it and the
// response comes back as soon as its head is here, its body read by the
// guest as it arrives. Everything here waits on the channel's waker, which
// the main thread moves when it posts.

import { arrivingChunks } from '../core/channel.js';
import type { ErrorCode } from '../core/handler-io.js';
import { endToEnd } from '../core/field-rules.js';
import { headerProblem, type Result } from '../core/message-parts.js';
import type { OutgoingChannel } from '../core/outgoing-channel.js';
import { timerMs, type OutgoingCall, type OutgoingTimeouts } from '../core/outgoing-transport.js';
import { byteReader, ending, type TrailersResult } from './bodies.js';
import { Request, Response, type RequestOptions, type Trailers } from './http-types.js';

const READ_BYTES = 64 * 1024;

const err = (code: ErrorCode): Result<never, ErrorCode> => ({ tag: 'err', val: code });

/** wasi:http/client's functions over `channel` (the thread's, to the main thread's OutgoingClient). */
export function client(channel: OutgoingChannel): { send: (request: Request) => Promise<Result<Response, ErrorCode>> } {
  return { send: (request) => send(request, channel) };
}

/**
 * A middleware's downstream wasi:http/handler: `handle` hands the request to
 * the service linked to it (docs/api.md §5.9), over the same channel as
 * client.send; the main thread serves it with that service, not the network.
 */
export function linkedHandler(channel: OutgoingChannel, link: string): { handle: (request: Request) => Promise<Result<Response, ErrorCode>> } {
  return { handle: (request) => send(request, channel, link) };
}

async function send(request: Request, channel: OutgoingChannel, link?: string): Promise<Result<Response, ErrorCode>> {
  const out = request.outgoing();
  const body = request.body;
  request.body = undefined;
  // As 0.2's: no scheme is https.
  const scheme = out.scheme?.toLowerCase() ?? 'https';
  const fail = (code: ErrorCode) => {
    request.transmitted?.(err(code));
    return err(code);
  };
  // A handler takes a request as it is; only one sent over the network needs a URL it can reach.
  if (link === undefined && ((scheme !== 'http' && scheme !== 'https') || !out.authority)) return fail({ tag: 'HTTP-request-URI-invalid' });
  // Connection-level headers are the transport's (a request handed in and sent on carries host).
  const headers = endToEnd(out.headers);
  const problem = headerProblem(headers);
  if ('problem' in problem) return fail({ tag: 'internal-error', val: `the request cannot be sent: ${problem.problem}` });
  const sent = { method: out.method, scheme: scheme === 'http' ? ('http' as const) : ('https' as const), authority: out.authority ?? '', pathWithQuery: out.pathWithQuery, headers, bodyFollows: body?.contents !== undefined };
  const started = channel.start(link === undefined ? sent : { ...sent, link }, timeouts(out.options));
  if ('refused' in started) return fail(started.refused);
  const call = started.call;
  // The body goes out while the response is awaited: a server may answer before it has all of it.
  void sendBody(call, body?.contents, body?.trailers, channel).then((sent) => request.transmitted?.(sent));
  for (;;) {
    const seen = channel.waker.epoch();
    const state = call.response();
    if (state.kind === 'failed') return err(state.code);
    if (state.kind === 'head') {
      const head = { status: state.head.status, headers: endToEnd(state.head.headers) };
      const abandon = () => call.cancel('the guest dropped the response unread');
      return { tag: 'ok', val: Response.fromHost(head, arrivingChunks(call.responseBody, channel.waker), trailersOf(call, channel), abandon) };
    }
    await channel.waker.moved(seen);
  }
}

/** The guest's request body into the call as the far side has room, then its trailers: how it went. */
async function sendBody(call: OutgoingCall, contents: Parameters<typeof byteReader>[0] | undefined, trailers: Trailers | undefined, channel: OutgoingChannel): Promise<Result<undefined, ErrorCode>> {
  const sink = call.requestBody;
  try {
    if (contents) {
      const reader = byteReader(contents);
      for (;;) {
        const seen = channel.waker.epoch();
        const credit = sink.credit();
        if (credit === 0) {
          await channel.waker.moved(seen);
          continue;
        }
        const bytes = await reader.read(Math.min(credit, READ_BYTES));
        if (!bytes) break;
        sink.chunk(bytes);
      }
      reader.close();
    }
    const ended: TrailersResult = trailers ? await trailers : { tag: 'ok', val: undefined };
    if (ended.tag === 'err') {
      sink.abort('the guest ended its request body with an error');
      return err(ended.val);
    }
    sink.finish(ended.val?.list());
    return { tag: 'ok', val: undefined };
  } catch (e) {
    sink.abort(`the request body failed: ${e instanceof Error ? e.message : String(e)}`);
    return err({ tag: 'internal-error', val: 'the request body failed' });
  }
}

/** The response's trailers once its body ended (or the error-code that broke it). */
async function trailersOf(call: OutgoingCall, channel: OutgoingChannel): Promise<TrailersResult> {
  for (;;) {
    const seen = channel.waker.epoch();
    const ended = ending(call.responseBody);
    if (ended) return ended;
    await channel.waker.moved(seen);
  }
}

function timeouts(options: RequestOptions | undefined): OutgoingTimeouts {
  return { connectMs: timerMs(options?.connectTimeout), firstByteMs: timerMs(options?.firstByteTimeout), betweenBytesMs: timerMs(options?.betweenBytesTimeout) };
}
