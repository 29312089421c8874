// A request body fed to the guest that reads it on an instance thread as it
// arrives (an HTTP handler's request, a stream<T> parameter): at most
// BODY_WINDOW_BYTES ahead of what the guest has read, within
// http.max_body_bytes, and at http.min_body_bytes_per_second while the guest
// waits for it and nothing of the answer went out (body-pace.ts). Both
// refusals are the caller's to answer.

import type { ApiError } from '../../errors.js';
import { BODY_WINDOW_BYTES, type FieldEntry, type RequestBodyFeeder } from '../wasi-host/index.js';
import type { ApiCall } from './api-call.js';
import { bodyLength, tooLarge, type BodyLimits } from './body.js';
import { BodyPace, watchBody } from './body-pace.js';
import { holdUnread } from './lingering-close.js';

/** A request body on its way to the guest, as feedBody feeds it. */
export interface BodyFeed {
  /** The guest has read `bytes` more (its thread says so): the body flows again once less than BODY_WINDOW_BYTES is unread. */
  taken(bytes: number): void;
  /** Stops feeding (the call is over): what still comes is not the guest's. */
  stop(): void;
}

/**
 * Feeds the request body to `feeder` as it arrives: paused while the guest
 * has BODY_WINDOW_BYTES unread, failed when the client goes away, the body
 * passes http.max_body_bytes or falls behind http.min_body_bytes_per_second
 * before any of the answer went out (`refused` hears the 413 or 408 to
 * answer, and the rest of the body is held: lingering-close.ts). `done` is
 * told once the body is over, whichever way.
 */
export function feedBody(call: ApiCall, feeder: RequestBodyFeeder, limits: BodyLimits, refused: (error: ApiError) => void, done: () => void): BodyFeed {
  const { req, res } = call;
  if (!bodyLength(req).present) {
    done();
    feeder.end();
    return { taken: () => {}, stop: () => {} };
  }
  const { maxBytes } = limits;
  let unread = 0;
  let over = false;
  const pace = new BodyPace(limits.minBytesPerSecond);
  const taken = (bytes: number) => {
    unread -= bytes;
    if (!over && unread < BODY_WINDOW_BYTES && req.isPaused()) {
      pace.resume();
      req.resume();
    }
  };
  const refuse = (reason: string, error: ApiError) => {
    stop();
    holdUnread(req);
    feeder.fail(reason);
    refused(error);
  };
  const onData = (chunk: Buffer) => {
    pace.received(chunk.length);
    if (pace.bytes > maxBytes) return refuse(`the body exceeds http.max_body_bytes (${maxBytes} bytes)`, tooLarge(maxBytes));
    unread += chunk.length;
    feeder.push(chunk);
    if (unread >= BODY_WINDOW_BYTES) {
      pace.pause();
      req.pause();
    }
  };
  // Once the answer has begun, a slow body is the exchange's pace, not a refusal: the deadline bounds it.
  const unwatch = watchBody((now) => {
    if (!res.headersSent && pace.tooSlow(now)) refuse('the body arrived too slowly (http.min_body_bytes_per_second)', limits.tooSlow(call.state));
  });
  const onEnd = () => {
    stop();
    const trailers = req.rawTrailers;
    const entries: FieldEntry[] = [];
    for (let i = 0; i < trailers.length; i += 2) entries.push([trailers[i].toLowerCase(), Buffer.from(trailers[i + 1], 'latin1')]);
    feeder.end(entries.length > 0 ? entries : undefined);
  };
  const onAborted = () => {
    if (!over) feeder.fail('the client closed the connection before its body arrived');
    stop();
  };
  const stop = () => {
    if (over) return;
    over = true;
    unwatch();
    done();
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('aborted', onAborted);
  };
  req.on('data', onData);
  req.once('end', onEnd);
  req.once('aborted', onAborted);
  return { taken, stop };
}
