// Request ids (docs/api.md §5.7): every answer carries `X-Request-Id`, the
// client's own when it is sane, else one rt makes; the request's log line
// carries the same id, so a client's report can be found in the log.

import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * What a client's id may be: 1 to 200 letters, digits and `._:+/=-`. That
 * takes UUIDs, ULIDs, hex and base64 ids and those of common proxies
 * (Heroku's, nginx's $request_id); anything else (spaces, quotes, control
 * characters, a list of ids from repeated headers, a flood of bytes) is
 * not echoed into answers and logs, and the request gets an id of rt's own.
 */
const SANE = /^[A-Za-z0-9._:+/=-]{1,200}$/;

/** The id a request goes by: the one it came with (`X-Request-Id`; '' when none), when sane, or a new UUID. */
export function requestId(given: string): string {
  return SANE.test(given) ? given : randomUUID();
}

// The id rides on the response itself: a WeakMap keyed by it cost a
// loaded worker 1.5 % of its time (the key's identity hash, an ephemeron
// for the collector), for a lookup made only when Node answers by itself.
const NOTED = Symbol('rt.requestId');
type Noted = ServerResponse & { [NOTED]?: string };

/** Notes `id` as the id of the request `res` answers. */
export function noteRequestId(res: ServerResponse, id: string): void {
  (res as Noted)[NOTED] = id;
}

/** The id noted for the request `res` answers, if any: for an answer Node gives before the app's (server.ts). */
export function requestIdOf(res: ServerResponse): string | undefined {
  return (res as Noted)[NOTED];
}
