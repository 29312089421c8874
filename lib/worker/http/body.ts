// Request bodies, read the one way every route reads them: capped at
// http.max_body_bytes (413, before reading when Content-Length says so),
// decompressed when the client sent Content-Encoding (the cap applies to the
// decompressed size, so a compression bomb stops at it), by the request's
// deadline and at `http.min_body_bytes_per_second` (408: a stalled or
// trickling body must not hold its connection, docs/api.md §5.1, §5.10:
// body-pace.ts), and a body that cannot be decoded is the client's error
// (400), never a 500 (docs/api.md §5.5).
//
// This replaces koa-body on the invoke path: co-body, raw-body, inflation and
// type-is cost more per request than the whole call (measured in
// docs/performance-log.md), and rt needs only bytes and JSON.

import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, type Gunzip } from 'node:zlib';
import { ApiError } from '../../errors.js';
import { connectionError } from './connection-errors.js';
import { CappedBytes } from '../../capped-bytes.js';
import type { Config } from '../../config/index.js';
import { BodyPace, watchBody } from './body-pace.js';
import { holdUnread } from './lingering-close.js';
import type { FairShares } from './fair-shares.js';
import type { RequestState } from './request-state.js';

/** How much of a body rt takes, and how slowly (docs/api.md §5.10). */
export interface BodyLimits {
  maxBytes: number;
  /** 0: no minimum. */
  minBytesPerSecond: number;
  /** The 408 for a body of `state`'s slower than minBytesPerSecond: counted and logged as a fair share's refusal. */
  tooSlow(state: RequestState): ApiError;
}

export function bodyLimits(http: Pick<Config['http'], 'max_body_bytes' | 'min_body_bytes_per_second'>, shares: FairShares): BodyLimits {
  const rate = http.min_body_bytes_per_second;
  const details = `the body arrived slower than http.min_body_bytes_per_second (${rate} bytes a second)`;
  return { maxBytes: http.max_body_bytes, minBytesPerSecond: rate, tooSlow: (state) => shares.refusal('body_rate', state.service ?? '', state.client, details) };
}

/** The rest of a body that is not read cannot be skipped cheaply: these answers close their connection. */
const CLOSE = { Connection: 'close' };

export function tooLarge(maxBytes: number): ApiError {
  return new ApiError('RT_ERR_BODY_TOO_LARGE', `the body exceeds http.max_body_bytes (${maxBytes} bytes)`, {}, CLOSE);
}

function tooSlow(): ApiError {
  return new ApiError('RT_ERR_REQUEST_TIMEOUT', "the body did not arrive by the request's deadline (http.request_timeout_seconds)", {}, CLOSE);
}

/** What the request's Content-Type names, without parameters, lower-cased; '' when it has none. */
export function mediaType(req: IncomingMessage): string {
  const header = req.headers['content-type'];
  if (!header) return '';
  const semicolon = header.indexOf(';');
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

export function isJson(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

/**
 * Whether the request has a body at all (as HTTP frames it: a length or
 * chunked encoding), and its declared length when it gave one.
 */
export function bodyLength(req: IncomingMessage): { present: boolean; length: number | undefined } {
  const declared = req.headers['content-length'];
  const length = declared === undefined ? undefined : Number(declared);
  return { present: length !== undefined || req.headers['transfer-encoding'] !== undefined, length };
}

const DECODERS: Record<string, () => Gunzip> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};
const ACCEPTED_ENCODINGS = 'gzip, deflate, br';

/**
 * The whole body of `state`'s request as bytes, decompressed, within
 * `limits`, by its deadline (the request's arrival plus
 * http.request_timeout_seconds).
 */
export function readBody(req: IncomingMessage, limits: BodyLimits, state: RequestState): Promise<Buffer> {
  const { length } = bodyLength(req);
  const body = new CappedBytes(limits.maxBytes);
  if (body.refuses(length)) return Promise.reject(tooLarge(limits.maxBytes));
  const encoding = (req.headers['content-encoding'] || 'identity').trim().toLowerCase();
  if (encoding === 'identity') return collect(req, req, body, limits, state);
  const decoder = DECODERS[encoding];
  if (!decoder) {
    // 415, not 400: the body may be fine, in a coding rt does not know (RFC 9110 §15.5.16); Accept-Encoding names those it does.
    const error = new ApiError('RT_ERR_UNSUPPORTED_CONTENT_ENCODING', `Content-Encoding "${encoding}" is not supported (send gzip, deflate, br or none)`, {}, { 'Accept-Encoding': ACCEPTED_ENCODINGS });
    return Promise.reject(error);
  }
  const stream = decoder();
  req.pipe(stream);
  return collect(req, stream, body, limits, state);
}

function collect(req: IncomingMessage, source: Readable, body: CappedBytes, limits: BodyLimits, state: RequestState): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let done = false;
    // Bytes as they came over the wire: a compressed body is as slow as its sender.
    const pace = new BodyPace(limits.minBytesPerSecond);
    const decoded = source !== req;
    const onWire = (chunk: Buffer) => pace.received(chunk.length);
    const unwatch = watchBody((now) => {
      if (state.deadline <= now) fail(tooSlow());
      else if (pace.tooSlow(now)) fail(limits.tooSlow(state));
    });
    /** Ends the read's watching, once: whether this was the first end. */
    const settle = () => {
      if (done) return false;
      done = true;
      unwatch();
      if (decoded) req.removeListener('data', onWire);
      return true;
    };
    const fail = (error: ApiError) => {
      if (!settle()) return;
      source.removeListener('data', onData);
      req.unpipe();
      holdUnread(req);
      // A decoder left alone goes on inflating what it holds: a few KB of
      // brotli bomb kept a core busy for seconds after its 413.
      if (decoded) source.destroy();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      if (!decoded) pace.received(chunk.length);
      if (!body.add(chunk)) fail(tooLarge(body.maxBytes));
    };
    if (decoded) req.on('data', onWire);
    source.on('data', onData);
    source.once('end', () => {
      if (settle()) resolve(body.bytes());
    });
    source.once('error', (e: Error) => fail(!decoded ? new ApiError('RT_ERR_INVALID_BODY', e.message) : new ApiError('RT_ERR_INVALID_BODY', `the body does not decode as its Content-Encoding says: ${e.message}`)));
    req.once('aborted', () => fail(whyAborted(req)));
  });
}

/**
 * A request that ended before its body did: Node's parser or request timer
 * ended it (the connection's error says so, and the client got that answer:
 * server.ts), or else the client hung up.
 */
function whyAborted(req: IncomingMessage): ApiError {
  const cause = req.socket.errored;
  return (
    (cause && connectionError(cause)) ?? new ApiError('RT_ERR_CLIENT_CLOSED_REQUEST', 'the client closed the connection before its body arrived')
  );
}
