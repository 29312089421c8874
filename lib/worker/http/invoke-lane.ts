// The lane: `POST /api/services/{domain}/{service}/invoke/{method}` and an
// HTTP handler's requests (`/api/services/{domain}/{service}/http/...`, and
// the routes sidecars mount) answered on node:http, ahead of Koa.
//
// Koa's context, its middleware chain and @koa/router's matching cost more
// per request than a WAT call does: measured on this project's machines, a
// lean Koa route answered at 0.64 × raw node:http, and rt's invoke through
// Koa at about the lean route's rate at best. A handler's request waiting on
// its guest held Koa's context and a suspended call of each middleware
// besides (~12 suspended async functions a request in a heap snapshot).
// The lane is a second transport to the same operations (operations.ts),
// not a second implementation of them: the same exchange (exchange.ts), the
// same `perform`, the same answers (writeReply), those of an unknown service
// or method included. It takes the requests that need nothing of Koa's: on a
// connection within `http.max_connections` (Koa answers the others 503),
// without an Origin header while CORS is on (a browser's request goes
// through Koa, where one middleware decides CORS).
// Every other request goes to Koa, including any path with escapes, which
// @koa/router decodes.

import type { IncomingMessage, ServerResponse } from 'node:http';
import accepts from 'accepts';
import { serveExchange, type ExchangeSettings } from './exchange.js';
import type { Operations } from './operations.js';
import { overCapacity, type RequestListener } from './server.js';
import { writeReply, type ApiCall, type ApiOperation } from './api-call.js';
import { pathNames } from './lookup.js';
import type { RequestState } from './request-state.js';

const PREFIX = '/api/services/';

export function invokeLane(deps: { operations: Operations; exchange: ExchangeSettings; cors: boolean }, koa: RequestListener): RequestListener {
  const { operations, exchange, cors } = deps;
  // Caches must still tell these answers from those to a browser (app.ts, corsFor).
  const headers: string[] = cors ? ['Vary', 'Origin'] : [];

  return (req, res) => {
    const route = laneRoute(req, cors, operations);
    if (!route || overCapacity(req.socket)) return void koa(req, res);
    const { operation, params } = route;
    void serveExchange(exchange, req, res, {
      headers,
      named: () => pathNames(params),
      answer: async (state) => writeReply(res, await operations.perform(operation, new LaneCall(req, res, state, params)), state.answerHeaders),
    });
  };
}

/** A request as the invoke operation sees it (api-call.ts), read as Koa would read it. */
class LaneCall implements ApiCall {
  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly state: RequestState,
    readonly params: Readonly<Record<string, string>>,
  ) {}

  header(name: string): string {
    const value = this.req.headers[name.toLowerCase()];
    return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : value;
  }

  accepts(...types: string[]): string | false {
    return accepts(this.req).type(types) as string | false;
  }
}

/** The operation the lane performs for `req`, and the path's names as the router would give them; undefined for a request that goes to Koa. */
function laneRoute(req: IncomingMessage, cors: boolean, operations: Operations): { operation: ApiOperation; params: Record<string, string> } | undefined {
  if (cors && req.headers.origin !== undefined) return undefined;
  const url = req.url ?? '';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  // Escapes are @koa/router's to decode.
  if (path.includes('%')) return undefined;
  if (!path.startsWith(PREFIX)) {
    // A route a sidecar mounts (never under /api: docs/api.md §5.8), as the app looks for it in front of its API.
    const mounted = operations.mounted(path);
    return mounted && { operation: mounted, params: {} };
  }
  const parts = path.slice(PREFIX.length).split('/');
  const [domain, service, kind] = parts;
  if (!domain || !service) return undefined;
  if (kind === 'invoke' && req.method === 'POST' && parts.length === 4 && parts[3]) return { operation: operations.invoke, params: { domain, service, method: parts[3] } };
  // The router's `/services/:domain/:service/http{/*path}`: the handler's path below is its own (wasi-http-route.ts reads the URL).
  if (kind === 'http') return { operation: operations.httpHandler, params: { domain, service } };
  return undefined;
}
