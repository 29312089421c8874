// A call of a method that takes a stream<T> (docs/api.md §5.9): the request
// body is that stream (a stream<u8>'s raw bytes, other items as NDJSON that
// the instance thread decodes), fed to the guest as it arrives
// (body-feed.ts: at most a window ahead of what the guest has read, within
// http.max_body_bytes and the body pace), and the answer may begin before
// the body has ended (a stream<T> result). Its other arguments come from
// the query string by name, each a JSON value, or the text itself for a
// `string`.

import type { Logger } from 'pino';
import { ApiError } from '../../errors.js';
import { asInvoked, bodyStreamItems } from '../../wit/async-abi.js';
import { printType } from '../../wit/print.js';
import type { HostedService } from '../execution/hosted-service.js';
import type { Input } from '../execution/invocation.js';
import type { Method } from '../execution/method.js';
import { BodyChannel } from '../wasi-host/index.js';
import type { ApiCall, Reply } from './api-call.js';
import { bodyLength, mediaType, type BodyLimits } from './body.js';
import { feedBody } from './body-feed.js';
import type { FairShares } from './fair-shares.js';
import { lingerIfUnread } from './lingering-close.js';

export interface BodyStreamDeps {
  bodies: BodyLimits;
  shares: FairShares;
  log: Logger;
}

/**
 * The arguments of `method` but its stream, from the query string: 415
 * unless the body (if it has any bytes) is application/octet-stream (a
 * stream<u8>) or application/x-ndjson (other items) and not encoded (its
 * bytes go to the thread as they come); 400 for a value that
 * is not JSON (the codec says what else is wrong: an unknown name, a
 * missing parameter, a value of the wrong type).
 */
export function queryInput(call: ApiCall, method: Method): Input {
  const fn = method.descriptor.function;
  const { at, mediaType: expected, kind } = bodyStreamItems(fn)!;
  const param = fn.params[at];
  const streamed = `the ${printType(param.type)} parameter "${param.name}"`;
  const where = { service: call.state.service, method: method.descriptor.name };
  const type = mediaType(call.req);
  const { present, length } = bodyLength(call.req);
  // No body, or an empty one whatever its declared type: an empty stream.
  if (present && length !== 0 && type !== expected) {
    const what = kind === 'bytes' ? expected : `${expected}, one JSON value per line`;
    throw new ApiError('RT_ERR_UNSUPPORTED_CONTENT_TYPE', `the body is ${streamed}: send ${what} (got ${type || 'no content type'}), and the other parameters in the query string`, where);
  }
  const encoding = call.req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    throw new ApiError('RT_ERR_UNSUPPORTED_CONTENT_ENCODING', `the body is ${streamed}, given to the component as it arrives: send it without a Content-Encoding (got ${encoding})`, where);
  }
  const params = new Map(asInvoked(fn).params.map((p) => [p.name, p.type]));
  const args: Record<string, unknown> = {};
  // Everything after the first `?`: a value may hold another, unescaped.
  const url = call.req.url ?? '';
  const mark = url.indexOf('?');
  for (const [name, text] of new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1))) {
    if (name in args) throw new ApiError('RT_ERR_INVALID_ARGUMENTS', `the query string gives parameter "${name}" more than once`, where);
    const type = params.get(name);
    args[name] = type?.kind === 'primitive' && type.name === 'string' ? text : queryJson(name, text, where);
  }
  return { kind: 'json', bytes: Buffer.from(JSON.stringify(args)) };
}

function queryJson(name: string, text: string, where: { service?: string | undefined; method?: string }): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError('RT_ERR_INVALID_ARGUMENTS', `query parameter "${name}" is not a JSON value (${(e as Error).message}): ${JSON.stringify(text.slice(0, 100))}`, where);
  }
}

/**
 * Runs `call` with the request body fed to `body`, its stream's channel to
 * the thread, as it arrives. A body refused before anything was answered
 * (413, 408) is the answer, whatever the call came to; refused after the
 * answer began, the answer is cut short.
 */
export async function readingBody(call: ApiCall, hosted: HostedService, deps: BodyStreamDeps, run: (body: BodyChannel) => Promise<Reply>): Promise<Reply> {
  const { req, res } = call;
  // A body still arriving holds the thread that reads it: within its client's share (fair-shares.ts).
  const release = req.complete ? () => {} : deps.shares.take(hosted, call.state.client, 'request_bodies');
  let refusal: ApiError | undefined;
  // The thread says what the guest read only once it runs, after the feed exists.
  const body = new BodyChannel((bytes) => feed.taken(bytes));
  const feed = feedBody(
    call,
    body,
    deps.bodies,
    (error) => {
      refusal = error;
      if (!res.headersSent) return;
      // Without its final chunk: no client takes what went out for the whole answer.
      deps.log.warn({ reqId: call.state.requestId, service: hosted.name, method: call.state.method, details: `${error.error}: ${error.details}` }, 'request body refused after the answer began: the answer is cut short');
      res.destroy();
    },
    release,
  );
  try {
    const reply = await run(body);
    if (refusal && !res.headersSent) throw refusal;
    return reply;
  } catch (e) {
    throw refusal ?? e;
  } finally {
    feed.stop();
    body.dispose();
    // What the guest left unread is read and dropped (a refused body's is, once its answer is written: exchange.ts).
    if (!refusal) lingerIfUnread(req);
  }
}
