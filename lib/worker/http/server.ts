// A worker's HTTP and HTTPS servers: Node's servers with rt's deadlines, a
// cap on open connections, and the error body (docs/api.md §5.5) on the
// answers Node gives by itself.
//
// Deadlines. Node's `requestTimeout` (default 300 s) bounds the time to
// *receive* a request, headers and body: a client that sends part of a body
// and stalls would otherwise hold its connection for five minutes, whatever
// `http.request_timeout_seconds` says. It does not bound the answer (Node
// stops the clock once the request is complete), so a long call or a stream
// of `http.stream_timeout_seconds` is not cut by it. Bodies rt reads have
// their own deadline in body.ts (a 408 through the app, logged with its
// service and method); Node's, a second later so as not to pre-empt that
// answer, covers the rest: slow headers, and bodies of requests that were
// answered without reading them.
//
// Connections. Past `http.max_connections` open connections in a worker, a
// new connection's request is answered 503 (with Retry-After, through the
// app: logged and counted) and the connection is closed. Those refusals take
// sockets too, so past twice the cap new connections are closed unanswered.
// One client address may hold its share of the cap (`http.client_share_percent`,
// docs/api.md §5.10; not a trusted proxy, whose connections carry many
// clients): a connection past it is answered 503 at once, before any
// request (a client holding idle or slow connections would otherwise keep
// them until its headers' deadline, and fill the cap and Node's limit for
// everyone), nothing it sends is read, and it closes; it does not count
// against the cap (nor twice the cap) meanwhile.
//
// Requests Node would answer by itself, or not at all, are answered here
// with the error body and a request id (docs/api.md §5.5, §5.7), the
// connection closed: no Host, or several (RFC 9112 §3.2: 400); an
// `Expect: 100-continue` whose Content-Length is over `http.max_body_bytes`
// (413, before the client is invited to send it); any other expectation
// (417); CONNECT, which rt does not proxy (501, as for other methods it has
// no route for; Node would close the socket unanswered).

import { createServer as createHttpServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ApiError, type ErrorCode, type ErrorContext } from '../../errors.js';
import { TrustedProxies } from '../../client-address.js';
import type { Config } from '../../config/index.js';
import { shareOf, type FairShares } from './fair-shares.js';
import { connectionError } from './connection-errors.js';
import { lingerIfUnread } from './lingering-close.js';
import { pathNames } from './lookup.js';
import { REQUEST_ID_HEADER, requestId, requestIdOf } from './request-id.js';

/** A node:http request listener. Koa's `app.callback()` answers every request itself, failures included, so its promise is not the server's to await. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => unknown;

/** Node's default: headers that take longer are a slow-loris, not a slow network, whatever the call deadline. */
const MAX_HEADERS_MS = 60_000;
/** How long an idle keep-alive connection stays open (Node's default, stated). */
const KEEP_ALIVE_MS = 5_000;
/** How often Node looks for requests past their timeout; a stalled request is cut within this of its deadline. */
const CHECK_INTERVAL_MS = 1_000;
/** Node's request timer runs this much past the deadline, after body.ts's (which answers with more). */
const BACKSTOP_MS = 1_000;
/** How long a connection past its client's share stays open once answered: closed at once, the request it sent meanwhile unread would reset it before the client read the 503. */
const OVER_SHARE_LINGER_MS = 1_000;

type HttpSettings = Pick<Config['http'], 'request_timeout_seconds' | 'max_connections' | 'max_body_bytes' | 'client_share_percent' | 'trusted_proxies'>;

export function createServer(http: HttpSettings, handler: RequestListener, shares: FairShares): Server {
  const checked = oneHost(handler);
  return harden(createHttpServer(options(http), checked), http, checked, 'connection', shares);
}

export function createHttpsServer(http: HttpSettings, tls: { cert: Buffer; key: Buffer }, handler: RequestListener, shares: FairShares): Server {
  const settings = options(http);
  // A TLS handshake is a slow client's first chance to hold a connection.
  const checked = oneHost(handler);
  const server = createTlsServer({ ...tls, ...settings, handshakeTimeout: settings.headersTimeout }, checked);
  // Requests arrive on the TLS socket the handshake made, so that is the one refused.
  return harden(server, http, checked, 'secureConnection', shares);
}

/** Connections accepted past `http.max_connections`: their requests are refused. */
const overCap = new WeakSet<Duplex>();

/** Whether the connection a request came on was accepted past `http.max_connections` (it gets 503). */
export function overCapacity(socket: Duplex): boolean {
  return overCap.has(socket);
}

function options(http: HttpSettings) {
  const deadline = http.request_timeout_seconds * 1000;
  return {
    requestTimeout: deadline + BACKSTOP_MS,
    headersTimeout: Math.min(deadline, MAX_HEADERS_MS),
    connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, deadline / 4),
    // Checked by oneHost instead, which answers with the error body.
    requireHostHeader: false,
  };
}

/**
 * A request names its host once, and an HTTP/1.1 one must name it (RFC 9112
 * §3.2): Node's own check answers 400 without a body, and Node keeps only
 * the first of several Host headers, which a proxy in front may have read
 * otherwise.
 */
function oneHost(handler: RequestListener): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const missing = req.headers.host === undefined && req.httpVersion === '1.1';
    if (!missing && !severalHosts(req.rawHeaders)) {
      void handler(req, res);
      return;
    }
    refuse(req, res, 'RT_ERR_BAD_REQUEST', missing ? 'an HTTP/1.1 request needs a Host header' : 'the request has several Host headers');
  };
}

/** Every request goes through this: a loop over the header names, no allocation. */
function severalHosts(rawHeaders: string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}

/** `checked`: the request listener, behind oneHost. */
function harden(server: Server, http: HttpSettings, checked: RequestListener, readyEvent: 'connection' | 'secureConnection', shares: FairShares): Server {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  const share = shareOf(http.max_connections, http.client_share_percent);
  const proxies = new TrustedProxies(http.trusted_proxies);
  // Open connections; of them, those past their client's share (not counted against the cap); those within it by peer address.
  let open = 0;
  let pastShare = 0;
  const byPeer = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    // Node's own `maxConnections` would count those past their share, which close within a second, and let one client's churn of them shut others out.
    if (open - pastShare >= 2 * http.max_connections) return void socket.destroy();
    open++;
    socket.once('close', () => open--);
  });
  server.on(readyEvent, (socket: Socket) => {
    // A unix socket's (another worker's forwards: peers.ts) has no peer address.
    const address = socket.remoteAddress;
    // A share of the whole (100 %) is the cap's to refuse.
    if (address !== undefined && share < http.max_connections && !proxies.isProxy(address)) {
      // As the request's client is written (client-address.ts): `::ffff:10.0.0.1` is 10.0.0.1.
      const peer = proxies.client(address, undefined);
      const held = byPeer.get(peer) ?? 0;
      if (held >= share) {
        pastShare++;
        socket.once('close', () => pastShare--);
        const details = `this client has its share of this worker's connections open: ${share} of http.max_connections (${http.max_connections}; http.client_share_percent: ${http.client_share_percent}); retry later`;
        refuseConnection(socket, shares.refusal('connections', '', peer, details));
        return;
      }
      byPeer.set(peer, held + 1);
      socket.once('close', () => {
        const left = byPeer.get(peer)! - 1;
        if (left === 0) byPeer.delete(peer);
        else byPeer.set(peer, left);
      });
    }
    if (open - pastShare > http.max_connections) overCap.add(socket);
  });
  server.on('clientError', answerClientError);
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const declared = Number(req.headers['content-length']);
    if (declared > http.max_body_bytes) {
      refuse(req, res, 'RT_ERR_BODY_TOO_LARGE', `the body's Content-Length (${declared} bytes) exceeds http.max_body_bytes (${http.max_body_bytes} bytes)`);
      return;
    }
    res.writeContinue();
    checked(req, res);
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    refuse(req, res, 'RT_ERR_EXPECTATION_FAILED', `rt meets no expectation but 100-continue (got Expect: ${req.headers.expect})`);
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => {});
    socket.end(rawAnswer(new ApiError('RT_ERR_NOT_IMPLEMENTED', 'CONNECT is not supported: rt is not a proxy'), givenId(req)));
  });
  return server;
}

/**
 * A request refused before the app sees it, with the error body (naming the
 * service and method its path names, as the app's answers do) and its
 * request id; the connection closes.
 */
function refuse(req: IncomingMessage, res: ServerResponse, code: ErrorCode, details: string): void {
  const error = new ApiError(code, details, namedIn(req.url ?? ''));
  const { headers, body } = outsideAnswer(error, givenId(req));
  lingerIfUnread(req);
  res.writeHead(error.status, headers);
  res.end(body);
}

const NAMED = /^\/api\/services\/([^/?]+)\/([^/?]+)(?:\/invoke\/([^/?]+))?/;

/** The service (and method) a path names, decoded as the router decodes them (docs/api.md §5.5: named even when they do not exist). */
function namedIn(url: string): ErrorContext {
  const match = NAMED.exec(url);
  if (!match) return {};
  const [, domain, service, method] = match.map((part) => part && safeDecode(part));
  return pathNames({ domain, service, method });
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The client's request id when it is sane, else a new one. */
function givenId(req: IncomingMessage): string {
  return requestId(String(req.headers['x-request-id'] ?? ''));
}

/**
 * Node's own answer to a request it cannot take (Node writes a status line
 * without a body), with the error body (docs/api.md §5.5) and a request id. Written
 * straight to the socket, as Node does: there is no response object. A
 * request whose answer has begun, or a reset connection, gets nothing.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  const answer = connectionError(error);
  // Node's own check (_http_server.js socketOnError): the answer of a request in progress on this socket.
  const inProgress = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (answer && socket.writable && !inProgress?.headersSent) {
    // The app gave a request in progress its id already; its log line carries it.
    socket.write(rawAnswer(answer, (inProgress && requestIdOf(inProgress)) ?? requestId('')));
  }
  // With the error, so that a body read in progress knows why its request ended (body.ts).
  socket.destroy(error);
}

/** Answers a connection with `error` before it sends anything; what it sends is never read (no request runs), and it closes. */
function refuseConnection(socket: Socket, error: ApiError): void {
  socket.pause();
  socket.on('error', () => {});
  socket.end(rawAnswer(error, requestId('')));
  setTimeout(() => socket.destroy(), OVER_SHARE_LINGER_MS).unref();
}

function rawAnswer(error: ApiError, id: string): string {
  const { headers, body } = outsideAnswer(error, id);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n${lines.join('')}\r\n${body}`;
}

/** An answer given outside the app (no request log, no Koa): the error body (docs/api.md §5.5), its request id, and the connection closed. */
function outsideAnswer(error: ApiError, id: string): { headers: Record<string, string | number>; body: string } {
  const body = JSON.stringify(error.body());
  return { body, headers: { ...error.headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), [REQUEST_ID_HEADER]: id, Connection: 'close' } };
}
