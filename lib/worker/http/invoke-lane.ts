// The invoke lane: plain JSON invokes answered on node:http, ahead of Koa.
//
// Koa's context, its middleware chain and @koa/router's matching cost more
// per request than a WAT call does: measured on this project's machines, a
// lean Koa route answered at 0.64 × raw node:http, and rt's invoke through
// Koa at about the lean route's rate at best. This lane takes the requests
// that need nothing of Koa's: `POST /api/services/{domain}/{service}/invoke/{method}`
// to a method that exists, answers JSON (no stream, no list<u8> result to
// negotiate, no handles) and without an Origin header while CORS is on (a browser's
// request goes through Koa, where one middleware decides CORS). Every other
// request goes to Koa as before, including any path with escapes, which
// @koa/router decodes.
//
// What it answers is decided by the modules Koa's path uses too: the
// exchange (exchange.ts: arrival, deadline, request id, the headers every
// answer carries, the error body, the log line and metrics), the Invoker and
// readInput (invoke.ts: the method, its body, 413/415/408), and the
// hosted service and failures.ts (the call, and what its failures answer).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../errors.js';
import { arrival, departure, errorAnswer, exchangeHeaders, finished, type ExchangeSettings } from './exchange.js';
import type { HostedService } from '../execution/hosted-service.js';
import type { Method } from '../execution/method.js';
import type { Invocation } from '../execution/invocation.js';
import { Invoker, readInput, succeeded, type InvokeDeps, type InvokeNames } from './invoke.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import { overCapacity, type RequestListener } from './server.js';


const PREFIX = '/api/services/';
const JSON_TYPE = 'application/json; charset=utf-8';
const REQUEST_ID = REQUEST_ID_HEADER.toLowerCase();

export function invokeLane(deps: InvokeDeps & { exchange: ExchangeSettings }, koa: RequestListener): RequestListener {
  const { registry, exchange } = deps;
  const invoker = new Invoker(deps);
  const cors = deps.config.http.cors.enabled;
  // Caches must still tell these answers from those to a browser (app.ts, corsFor).
  const vary: string[] = cors ? ['Vary', 'Origin'] : [];

  return (req, res) => {
    const names = laneNames(req, cors);
    const hosted = names && registry.get(names.domain, names.service);
    const method = hosted?.method(names!.method);
    if (!method || !takes(method) || overCapacity(req.socket)) void koa(req, res);
    else void answer(req, res, names!, { hosted: hosted!, method });
  };

  async function answer(req: IncomingMessage, res: ServerResponse, names: InvokeNames, first: { hosted: HostedService; method: Method }): Promise<void> {
    const request = arrival(exchange, res, req.headers[REQUEST_ID] as string | undefined);
    let status = 200;
    try {
      invoker.note(first, request);
      const input = await readInput(req, first.method, invoker.maxBytes, request);
      // A reload or restart may have replaced the service while the body arrived.
      const { hosted, method } = registry.get(names.domain, names.service) === first.hosted ? first : invoker.current(names);
      // Replaced by a version whose method needs Koa's path: the body is read, so it cannot go there now.
      if (!takes(method)) throw new ApiError('RT_ERR_NOT_READY', `${hosted.name} was reloaded while the request arrived, and ${method.descriptor.name} changed; send it again`, { service: hosted.name, method: method.descriptor.name }, { 'Retry-After': '0' });
      const invocation: Invocation = { method, input, deadline: request.deadline, answer: 'json', signal: departure(res) };
      const result = succeeded(hosted, invocation, await hosted.invoke(invocation));
      send(res, 200, [...exchangeHeaders(exchange, request), ...vary], JSON.stringify({ result: result.kind === 'json' ? result.value : null }));
    } catch (e) {
      const { error, body } = errorAnswer(exchange, request, e, { service: request.service, method: request.method });
      status = error.status;
      send(res, status, [...exchangeHeaders(exchange, request), ...vary, ...Object.entries(error.headers).flat()], JSON.stringify(body));
    } finally {
      finished(exchange, request, { method: req.method ?? 'POST', url: req.url ?? '' }, res, status);
    }
  }
}

/**
 * A method whose answers the lane gives: JSON, not a stream, not raw bytes
 * (which depend on Accept, and are the component's content, with its headers:
 * exchange.ts), no handles (which another worker may hold: peers.ts). So the
 * lane's answers are all rt's own JSON, made in this worker.
 */
function takes(method: Method): boolean {
  return method.codec !== undefined && !method.descriptor.stream && !method.bytesResult && !method.descriptor.handles;
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

/**
 * The answer in one writeHead: headers as a flat list of names and values,
 * which Node takes without a setHeader per header. Nothing is written for a
 * client that left (as Koa writes nothing then): its request is logged 499.
 */
function send(res: ServerResponse, status: number, headers: string[], body: string): void {
  if (res.destroyed) return;
  headers.push('Content-Type', JSON_TYPE, 'Content-Length', String(Buffer.byteLength(body)));
  res.writeHead(status, headers);
  res.end(body);
}
