// The worker's main thread's end of a handler guest's outgoing requests
// (outgoing-protocol.ts): performs them on node:http and https, to the
// service's allowed hosts only, checking the allow-list again before it
// connects, and keeps memory bounded both ways (a request body within the
// credit it grants back as node flushes it; a response paused once
// `responseWindow` bytes sit unread by the guest).

import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { MessagePort } from 'node:worker_threads';
import { OutboundPolicy } from '../../../outbound-hosts.js';
import { wakeThread } from './channel.js';
import { errorCodeOf } from './error-codes.js';
import type { FieldEntry } from './field-rules.js';
import type { ErrorCode } from './handler-io.js';
import type { OutgoingToMain, OutgoingToThread } from './outgoing-protocol.js';
import type { OutgoingHead, OutgoingTimeouts } from './outgoing-transport.js';
import type { OutgoingTrace } from '../../../tracing/traces.js';

/** Response bytes the main thread lets sit unread by the guest before it pauses the response. */
export const RESPONSE_WINDOW = 256 * 1024;

export interface OutgoingClientOptions {
  /** Response bytes sent to the thread and not yet read by the guest before the response is paused (default 256 KiB). */
  responseWindow?: number;
  /** Serves the requests that name a link (OutgoingHead.link) in this worker: undefined for one the service is not granted. */
  linked?: LinkedRequests;
  /** A client span for each request sent (traces on): its traceparent goes with the request. */
  trace?: (method: string, url: string) => OutgoingTrace;
}

/** One of the guest's requests on the main thread, whoever serves it: node:http (Outbound), or a linked service. */
export interface OutboundRequest {
  /** A request body chunk from the guest: its credit goes back (a `credit` message) once the far side took it. */
  write(bytes: Uint8Array): void;
  end(trailers: FieldEntry[] | undefined): void;
  /** The request ends with `code` for the thread; everything is let go. */
  fail(code: ErrorCode): void;
  /** The guest read `bytes` more of the response. */
  read(bytes: number): void;
  /** The guest wants only the end (and trailers) of the response body. */
  skip(): void;
  /** Everything let go, nothing told (the thread is gone). */
  destroy(): void;
}

/** How a request tells the thread of its progress (messages for its id), and that it is over. */
export interface OutboundSide {
  post(message: OutgoingToThread, transfer?: ArrayBuffer[]): void;
  forget(id: number): void;
}

/** The request `id` to the link its head names, carried by the service behind it; undefined: no such link is granted. */
export type LinkedRequests = (id: number, head: OutgoingHead, side: OutboundSide) => OutboundRequest | undefined;

export interface OutgoingStats {
  /** Requests started and not yet over. */
  inFlight: number;
  /** The most response bytes any one request ever had sent to the thread and unread by the guest. */
  maxUnreadBytes: number;
}

/** What an Outbound needs of its client. */
interface ClientSide extends OutboundSide {
  readonly window: number;
  readonly trace: ((method: string, url: string) => OutgoingTrace) | undefined;
  agent(scheme: 'http' | 'https'): HttpAgent;
  noteUnread(bytes: number): void;
}

/**
 * The main thread's end of one instance thread's outgoing port: performs the
 * requests the guest sends, to `allowedHosts` only (the sidecar's
 * `allowed_outbound_hosts`; none: every request is denied). It ends by itself
 * when the thread does (the port closes), or with `close()`.
 */
export class OutgoingClient {
  readonly #port: MessagePort;
  readonly #shared: SharedArrayBuffer;
  readonly #policy: OutboundPolicy;
  readonly #requests = new Map<number, OutboundRequest>();
  readonly #linked: LinkedRequests | undefined;
  readonly #agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  readonly #side: ClientSide;
  #maxUnread = 0;
  #closed = false;

  /** `port`: this end of the channel whose other end the thread got; `shared`: the thread's cells (threadCells). */
  constructor(port: MessagePort, shared: SharedArrayBuffer, allowedHosts: string[], options: OutgoingClientOptions = {}) {
    this.#port = port;
    this.#shared = shared;
    this.#policy = new OutboundPolicy(allowedHosts);
    this.#linked = options.linked;
    this.#side = {
      window: options.responseWindow ?? RESPONSE_WINDOW,
      trace: options.trace,
      post: (message, transfer) => this.#post(message, transfer),
      forget: (id) => this.#requests.delete(id),
      agent: (scheme) => this.#agents[scheme],
      noteUnread: (bytes) => (this.#maxUnread = Math.max(this.#maxUnread, bytes)),
    };
    port.on('message', (message: OutgoingToMain) => this.#receive(message));
    port.once('close', () => this.close());
    this.#post({ kind: 'policy', hosts: allowedHosts });
  }

  stats(): OutgoingStats {
    return { inFlight: this.#requests.size, maxUnreadBytes: this.#maxUnread };
  }

  /** Stops every request in flight and closes the port (the thread is gone, or going). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const outbound of this.#requests.values()) outbound.destroy();
    this.#requests.clear();
    this.#port.close();
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }

  #receive(message: OutgoingToMain): void {
    if (this.#closed) return;
    if (message.kind === 'start') {
      const { id, head } = message;
      if (head.link !== undefined) {
        const linked = this.#linked?.(id, head, this.#side);
        if (linked) this.#requests.set(id, linked);
        // The thread serves only the links its service was given; this is the check that holds.
        else this.#post({ kind: 'error', id, code: { tag: 'internal-error', val: `${head.link} is not linked to a service` } });
        return;
      }
      const outbound = new Outbound(id, this.#side);
      this.#requests.set(id, outbound);
      return outbound.start(head, message.timeouts, this.#policy.allows(head.scheme, head.authority));
    }
    const outbound = this.#requests.get(message.id);
    if (!outbound) return;
    switch (message.kind) {
      case 'chunk':
        return outbound.write(message.bytes);
      case 'end':
        return outbound.end(message.trailers);
      case 'abort':
        return outbound.fail({ tag: 'internal-error', val: message.reason });
      case 'read':
        return outbound.read(message.bytes);
      case 'skip':
        return outbound.skip();
    }
  }

  #post(message: OutgoingToThread, transfer: ArrayBuffer[] = []): void {
    if (this.#closed) return;
    this.#port.postMessage(message, transfer);
    // After the post: the woken thread finds the message when it drains the port.
    wakeThread(this.#shared);
  }
}

/** `host[:port]` → what node:http takes (an IP literal without its brackets). */
function target(authority: string, scheme: 'http' | 'https'): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d*))?$/.exec(authority);
  if (!m) return undefined;
  const port = m[3] ? Number(m[3]) : scheme === 'https' ? 443 : 80;
  return port >= 1 && port <= 65535 ? { host: m[1] ?? m[2], port } : undefined;
}

/** node's raw header list → rt's entries (the bytes as they came: node reads header values as latin1). */
function entries(raw: string[]): FieldEntry[] {
  const out: FieldEntry[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i].toLowerCase(), new Uint8Array(Buffer.from(raw[i + 1], 'latin1'))]);
  return out;
}

/** One request on the main thread, from `start` until both its body and its response are over. */
class Outbound implements OutboundRequest {
  readonly #id: number;
  readonly #side: ClientSide;
  #req: ClientRequest | undefined;
  #res: IncomingMessage | undefined;
  #timeouts: OutgoingTimeouts = {};
  /** A body that came whole with the start: held until its end, then sent with its length. */
  #whole: Uint8Array[] | undefined;
  readonly #timers: { connect?: NodeJS.Timeout; firstByte?: NodeJS.Timeout; between?: NodeJS.Timeout } = {};
  #trace: OutgoingTrace | undefined;
  #unread = 0;
  #paused = false;
  #skipping = false;
  #requestDone = false;
  #responseDone = false;
  #over = false;

  constructor(id: number, side: ClientSide) {
    this.#id = id;
    this.#side = side;
  }

  start(head: OutgoingHead, timeouts: OutgoingTimeouts, allowed: boolean): void {
    // The thread checked already; this is the check that guards the connection.
    if (!allowed) return this.fail({ tag: 'HTTP-request-denied' });
    const to = target(head.authority, head.scheme);
    if (!to) return this.fail({ tag: 'HTTP-request-URI-invalid' });
    this.#timeouts = timeouts;
    let req: ClientRequest;
    try {
      const send = head.scheme === 'https' ? httpsRequest : httpRequest;
      req = send({ agent: this.#side.agent(head.scheme), method: head.method, host: to.host, port: to.port, path: head.pathWithQuery });
      for (const [name, value] of head.headers) req.appendHeader(name, Buffer.from(value).toString('latin1'));
    } catch (e) {
      return this.fail(errorCodeOf(e));
    }
    this.#traced(req, head);
    this.#req = req;
    if (head.bodyFollows) {
      // The head goes now (a server may answer before the body ends); a body of unknown length is
      // sent chunked whatever the method, as hyper does (node would not frame a GET's).
      if (!req.hasHeader('content-length')) req.setHeader('transfer-encoding', 'chunked');
      req.flushHeaders();
    } else {
      this.#whole = [];
    }
    req.on('error', (e) => this.fail(errorCodeOf(e)));
    req.on('socket', (socket: Socket) => {
      if (socket.connecting) socket.once('connect', () => this.#connected());
      else this.#connected();
    });
    req.on('response', (res) => this.#respond(res));
    this.#timer('connect', timeouts.connectMs, { tag: 'connection-timeout' });
  }

  /** Its client span, when traced: a guest that sets its own traceparent keeps it (it traces itself). */
  #traced(req: ClientRequest, head: OutgoingHead): void {
    const trace = this.#side.trace?.(head.method, `${head.scheme}://${head.authority}${head.pathWithQuery}`);
    if (!trace) return;
    this.#trace = trace;
    if (req.hasHeader('traceparent')) return;
    req.setHeader('traceparent', trace.traceparent);
    if (trace.tracestate !== undefined && !req.hasHeader('tracestate')) req.setHeader('tracestate', trace.tracestate);
  }

  /** A request body chunk from the guest; its credit goes back once node has flushed it. */
  write(bytes: Uint8Array): void {
    const req = this.#req;
    if (!req || this.#over || this.#requestDone) return;
    if (this.#whole) return void this.#whole.push(bytes);
    req.write(bytes, () => this.#side.post({ kind: 'credit', id: this.#id, bytes: bytes.length }));
  }

  end(trailers: FieldEntry[] | undefined): void {
    const req = this.#req;
    if (!req || this.#over || this.#requestDone) return;
    this.#requestDone = true;
    const hasTrailers = trailers !== undefined && trailers.length > 0;
    const whole = this.#whole && Buffer.concat(this.#whole);
    if (whole && !req.hasHeader('content-length')) {
      // Trailers need chunked framing; otherwise the length (node sends none for a GET's body).
      if (hasTrailers) req.setHeader('transfer-encoding', 'chunked');
      else if (whole.length > 0) req.setHeader('content-length', whole.length);
    }
    // With a content-length the trailers are dropped (node sends them only chunked).
    if (hasTrailers) req.addTrailers(trailers.map(([name, value]): [string, string] => [name, Buffer.from(value).toString('latin1')]));
    if (whole && whole.length > 0) req.end(whole);
    else req.end();
    this.#settle();
  }

  read(bytes: number): void {
    this.#unread -= bytes;
    if (this.#paused && this.#unread < this.#side.window) this.#resume();
  }

  skip(): void {
    this.#skipping = true;
    this.#unread = 0;
    if (this.#paused) this.#resume();
  }

  /** The request ends with `code` for the thread (its future, or its response body); everything is let go. */
  fail(code: ErrorCode): void {
    if (this.#over) return;
    this.#trace?.end(code.tag);
    this.#side.post({ kind: 'error', id: this.#id, code });
    this.destroy();
  }

  /** Everything let go, nothing told (the thread is gone). */
  destroy(): void {
    this.#trace?.end('aborted');
    this.#over = true;
    this.#clear('connect', 'firstByte', 'between');
    this.#side.forget(this.#id);
    this.#res?.destroy();
    this.#req?.destroy();
  }

  #connected(): void {
    this.#clear('connect');
    if (!this.#res) this.#timer('firstByte', this.#timeouts.firstByteMs, { tag: 'connection-read-timeout' });
  }

  #respond(res: IncomingMessage): void {
    if (this.#over) return void res.destroy();
    this.#clear('connect', 'firstByte');
    this.#res = res;
    this.#trace?.answered(res.statusCode ?? 0);
    this.#side.post({ kind: 'head', id: this.#id, head: { status: res.statusCode ?? 0, headers: entries(res.rawHeaders) } });
    res.on('data', (chunk: Buffer) => this.#data(chunk));
    res.on('end', () => {
      this.#clear('between');
      this.#responseDone = true;
      this.#side.post({ kind: 'end', id: this.#id, trailers: res.rawTrailers.length > 0 ? entries(res.rawTrailers) : undefined });
      this.#settle();
    });
    // The connection broke mid-body (node: 'aborted', ECONNRESET): the body is incomplete.
    res.on('error', () => this.fail({ tag: 'HTTP-response-incomplete' }));
    res.on('close', () => {
      if (!res.complete) this.fail({ tag: 'HTTP-response-incomplete' });
    });
    this.#timer('between', this.#timeouts.betweenBytesMs, { tag: 'connection-read-timeout' });
  }

  #data(chunk: Buffer): void {
    if (this.#over) return;
    this.#timer('between', this.#timeouts.betweenBytesMs, { tag: 'connection-read-timeout' });
    if (this.#skipping) return;
    // A copy of its own (node's chunks may share a pooled buffer), moved to the thread.
    const bytes = new Uint8Array(chunk);
    this.#unread += bytes.length;
    this.#side.noteUnread(this.#unread);
    this.#side.post({ kind: 'chunk', id: this.#id, bytes }, [bytes.buffer]);
    if (this.#unread >= this.#side.window) {
      this.#res?.pause();
      this.#paused = true;
      // A guest that reads slowly is not a server that sends slowly.
      this.#clear('between');
    }
  }

  #resume(): void {
    this.#paused = false;
    this.#res?.resume();
    if (!this.#responseDone) this.#timer('between', this.#timeouts.betweenBytesMs, { tag: 'connection-read-timeout' });
  }

  /** Both the request body and the response are complete: the socket goes back to the agent. */
  #settle(): void {
    if (!this.#requestDone || !this.#responseDone || this.#over) return;
    this.#over = true;
    this.#trace?.end();
    this.#clear('connect', 'firstByte', 'between');
    this.#side.forget(this.#id);
  }

  #timer(name: 'connect' | 'firstByte' | 'between', ms: number | undefined, code: ErrorCode): void {
    this.#clear(name);
    if (ms !== undefined && !this.#over) this.#timers[name] = setTimeout(() => this.fail(code), ms);
  }

  #clear(...names: ('connect' | 'firstByte' | 'between')[]): void {
    for (const name of names) {
      clearTimeout(this.#timers[name]);
      this.#timers[name] = undefined;
    }
  }
}
