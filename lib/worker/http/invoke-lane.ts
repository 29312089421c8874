// The invoke lane: `POST /api/services/{domain}/{service}/invoke/{method}`
// answered on node:http, ahead of Koa.
//
// Koa's context, its middleware chain and @koa/router's matching cost more
// per request than a WAT call does: measured on this project's machines, a
// lean Koa route answered at 0.64 × raw node:http, and rt's invoke through
// Koa at about the lean route's rate at best. The lane is a second transport
// to the same invoke operation (operations.ts), not a second implementation
// of it: the same exchange (exchange.ts), the same `perform`, the same
// answers (writeReply), those of an unknown service or method included. It
// takes the invoke requests that need nothing of Koa's: on a connection within
// `http.max_connections` (Koa answers the others 503), without an Origin
// header while CORS is on (a browser's request goes through Koa, where one
// middleware decides CORS).
// Every other request goes to Koa, including any path with escapes, which
// @koa/router decodes.

import type { IncomingMessage, ServerResponse } from 'node:http';
import accepts from 'accepts';
import { serveExchange, type ExchangeSettings } from './exchange.js';
import type { InvokeNames } from './invoke.js';
import type { Operations } from './operations.js';
import { overCapacity, type RequestListener } from './server.js';
import { writeReply, type ApiCall } from './api-call.js';
import { pathNames } from './lookup.js';
import type { RequestState } from './request-state.js';

const PREFIX = '/api/services/';

export function invokeLane(deps: { operations: Operations; exchange: ExchangeSettings; cors: boolean }, koa: RequestListener): RequestListener {
  const { operations, exchange, cors } = deps;
  const invoke = operations.invoke;
  // Caches must still tell these answers from those to a browser (app.ts, corsFor).
  const headers: string[] = cors ? ['Vary', 'Origin'] : [];

  return (req, res) => {
    const names = laneNames(req, cors);
    if (!names || overCapacity(req.socket)) return void koa(req, res);
    void serveExchange(exchange, req, res, {
      headers,
      named: () => pathNames(names),
      answer: async (state) => writeReply(res, await operations.perform(invoke, new LaneCall(req, res, state, names)), state.answerHeaders),
    });
  };
}

/** A request as the invoke operation sees it (api-call.ts), read as Koa would read it. */
class LaneCall implements ApiCall {
  readonly params: Readonly<Record<string, string>>;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly state: RequestState,
    names: InvokeNames,
  ) {
    this.params = names as unknown as Record<string, string>;
  }

  header(name: string): string {
    const value = this.req.headers[name.toLowerCase()];
    return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : value;
  }

  accepts(...types: string[]): string | false {
    return accepts(this.req).type(types) as string | false;
  }
}

/** The names in an invoke path the lane takes, or undefined for a request that goes to Koa. */
function laneNames(req: IncomingMessage, cors: boolean): InvokeNames | undefined {
  if (req.method !== 'POST' || (cors && req.headers.origin !== undefined)) return undefined;
  const url = req.url ?? '';
  if (!url.startsWith(PREFIX)) return undefined;
  const query = url.indexOf('?');
  const path = query === -1 ? url.slice(PREFIX.length) : url.slice(PREFIX.length, query);
  // Escapes are @koa/router's to decode.
  if (path.includes('%')) return undefined;
  const parts = path.split('/');
  if (parts.length !== 4 || parts[2] !== 'invoke' || !parts[0] || !parts[1] || !parts[3]) return undefined;
  return { domain: parts[0], service: parts[1], method: parts[3] };
}
