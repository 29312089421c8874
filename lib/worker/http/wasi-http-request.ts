// What an HTTP handler component is told of a request (docs/api.md §5.8):
// wasi:http's incoming-request is a method, a path with query, a scheme, an
// authority and headers; its body comes apart, as a stream. Hop-by-hop
// headers (RFC 9110 §7.6.1) are the connection's, not the request's: the
// handler never sees them, as it would not behind a proxy.

import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

/** The request's head as the guest's incoming-request gives it. */
export interface HandlerRequestHead {
  /** As sent (wasi:http's method variant is made from it on the thread). */
  method: string;
  /** `/{path…}?{query}`: for `/api/services/{d}/{s}/http/{path…}`, what follows `/http`; for a mount, the request's whole path. */
  pathWithQuery: string;
  scheme: 'http' | 'https';
  /** The Host header (HTTP/1.1 requires it; server.ts refuses a request without one). */
  authority: string;
  /** Name and value pairs in the order sent, names lowercase, hop-by-hop ones left out; values as bytes are the thread's business. */
  headers: [name: string, value: string][];
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * The head of `req` for a handler, its path being `path` (with the query
 * string as the request gave it). Headers the Connection header names are
 * hop-by-hop too.
 */
export function handlerRequestHead(req: IncomingMessage, path: string): HandlerRequestHead {
  const connection = String(req.headers.connection ?? '')
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  const dropped = new Set([...HOP_BY_HOP, ...connection]);
  const headers: [string, string][] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (!dropped.has(name)) headers.push([name, raw[i + 1]]);
  }
  return {
    method: req.method ?? 'GET',
    pathWithQuery: path,
    scheme: (req.socket as Partial<TLSSocket>).encrypted ? 'https' : 'http',
    authority: req.headers.host ?? '',
    headers,
  };
}

/** The path with query a handler gets for `url` (a request's URL) below `prefix` (`/api/services/{d}/{s}/http`): what follows it, `/` at least. */
export function pathBelow(url: string, prefix: string): string {
  const rest = url.slice(prefix.length);
  return rest === '' || rest.startsWith('?') ? `/${rest}` : rest;
}
