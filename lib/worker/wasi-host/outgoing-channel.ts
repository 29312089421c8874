// Outgoing HTTP requests of a handler guest, between its instance thread
// (OutgoingChannel: the OutgoingTransport of outgoing.ts) and the worker's
// main thread (OutgoingClient: node:http/https), over one MessagePort per
// thread.
//
// As for the handler's own request (channel.ts): the guest's thread sleeps in
// Atomics.wait, so the main thread posts and bumps the thread's wake counter,
// and the thread drains the port with receiveMessageOnPort whenever readiness
// is asked. Messages carry a request id: several requests may be in flight
// from one guest. Memory stays bounded both ways: the guest writes a request
// body within a credit the main thread grants back as node flushes it, and
// the main thread pauses a response once `responseWindow` bytes sit unread by
// the guest, resuming as the thread reports its reads.
//
// The allow-list is the main thread's: the client sends it to the thread
// first thing, so that `handle` refuses a denied request at once (what
// StarlingMonkey's fetch handles best), and checks it again before it
// connects.

import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { allowsRequest, parseHostPattern, type HostPattern } from '../../outbound-hosts.js';
import { threadWaker, wakeThread } from './channel.js';
import type { BodySink, ErrorCode, RequestBodySource, ResponseHead } from './exchange.js';
import type { FieldEntry } from './fields.js';
import { UNSENT_WINDOW } from './http-types.js';
import type { OutgoingCall, OutgoingHead, OutgoingResponseState, OutgoingTimeouts, OutgoingTransport } from './outgoing.js';
import type { Waker } from './poll.js';
import { ChunkQueue } from './streams.js';

/** Thread → main. */
export type OutgoingToMain =
  | { kind: 'start'; id: number; head: OutgoingHead; timeouts: OutgoingTimeouts }
  | { kind: 'chunk'; id: number; bytes: Uint8Array }
  | { kind: 'end'; id: number; trailers: FieldEntry[] | undefined }
  /** The guest broke the request off (dropped its body unfinished, lost interest, returned from `handle`). */
  | { kind: 'abort'; id: number; reason: string }
  /** The guest read this many response bytes. */
  | { kind: 'read'; id: number; bytes: number }
  /** The guest wants only the end (and trailers) of the response body. */
  | { kind: 'skip'; id: number };

/** Main → thread. */
export type OutgoingToThread =
  | { kind: 'policy'; hosts: string[] }
  /** Request body bytes flushed: the guest may write that many more. */
  | { kind: 'credit'; id: number; bytes: number }
  | { kind: 'head'; id: number; head: ResponseHead }
  | { kind: 'chunk'; id: number; bytes: Uint8Array }
  | { kind: 'end'; id: number; trailers: FieldEntry[] | undefined }
  /** The request failed: before the head, its error-code; after it, why the body broke. Nothing follows. */
  | { kind: 'error'; id: number; code: ErrorCode };

/** A request body's credit to start with: what OutgoingBody holds before `handle` must fit in it. */
const REQUEST_WINDOW = UNSENT_WINDOW;
/** Response bytes the main thread lets sit unread by the guest before it pauses the response. */
export const RESPONSE_WINDOW = 256 * 1024;
/** How long `handle` waits for the client's allow-list before deciding rt is miswired. */
const POLICY_WAIT_MS = 10_000;

function patternsOf(hosts: string[]): HostPattern[] {
  return hosts.map((entry) => {
    const pattern = parseHostPattern(entry);
    // The sidecar check has already refused anything else.
    if (!pattern) throw new Error(`allowed_outbound_hosts: ${JSON.stringify(entry)} is not a host pattern`);
    return pattern;
  });
}

const describe = (code: ErrorCode): string => (code.val === undefined ? code.tag : `${code.tag}: ${typeof code.val === 'string' ? code.val : JSON.stringify(code.val)}`);

// ---- the thread's end ----

/**
 * One per instance thread, over the port handed in its workerData. Pass it to
 * handlerImports; call `abandon` when a `handle` call returned, since nothing
 * of that guest runs again to finish its requests.
 */
export class OutgoingChannel implements OutgoingTransport {
  readonly #port: MessagePort;
  readonly #waker: Waker;
  readonly #flights = new Map<number, Flight>();
  #patterns: HostPattern[] | undefined;
  #nextId = 1;

  /** `shared`: the thread's cells (channel.ts threadCells), whose wake counter `poll` sleeps on. */
  constructor(port: MessagePort, shared: SharedArrayBuffer) {
    this.#port = port;
    this.#waker = threadWaker(shared);
  }

  start(head: OutgoingHead, timeouts: OutgoingTimeouts): { call: OutgoingCall } | { refused: ErrorCode } {
    if (!allowsRequest(this.#policy(), head.scheme, head.authority)) return { refused: { tag: 'HTTP-request-denied' } };
    const id = this.#nextId++;
    const flight = new Flight(id, this);
    this.#flights.set(id, flight);
    this.post({ kind: 'start', id, head, timeouts });
    return { call: flight };
  }

  /** Every request still in flight is stopped (the guest that sent them returned). */
  abandon(reason = 'the handler returned'): void {
    this.drain();
    for (const flight of [...this.#flights.values()]) flight.cancel(reason);
    this.#flights.clear();
  }

  /** Requests whose messages this end still expects (for tests and metrics). */
  get inFlight(): number {
    return this.#flights.size;
  }

  /** @internal Takes what the main thread posted; never blocks. */
  drain(): void {
    for (let m = receiveMessageOnPort(this.#port); m; m = receiveMessageOnPort(this.#port)) {
      const message = m.message as OutgoingToThread;
      if (message.kind === 'policy') this.#patterns = patternsOf(message.hosts);
      else this.#flights.get(message.id)?.receive(message);
    }
  }

  /** @internal */ post(message: OutgoingToMain, transfer: ArrayBuffer[] = []): void {
    this.#port.postMessage(message, transfer);
  }

  /** @internal No more messages for `id` matter; whether it was still here. */
  forget(id: number): boolean {
    return this.#flights.delete(id);
  }

  /** The client's allow-list, posted when it was made: normally here already. */
  #policy(): HostPattern[] {
    const until = Date.now() + POLICY_WAIT_MS;
    for (;;) {
      const seen = this.#waker.epoch();
      this.drain();
      if (this.#patterns) return this.#patterns;
      const left = until - Date.now();
      // rt's wiring, not the guest's doing: the call traps.
      if (left <= 0) throw new Error('wasi:http/outgoing-handler: no OutgoingClient answers on this thread’s outgoing port');
      this.#waker.sleep(seen, left);
    }
  }
}

type BodyStatus = { kind: 'open' } | { kind: 'ended' } | { kind: 'failed'; reason: string; code: ErrorCode };

/** One request as the thread sees it: the guest's objects read and write through it. */
class Flight implements OutgoingCall {
  readonly #id: number;
  readonly #channel: OutgoingChannel;
  #response: OutgoingResponseState = { kind: 'waiting' };
  readonly #queue = new ChunkQueue();
  #body: BodyStatus = { kind: 'open' };
  #trailers: FieldEntry[] | undefined;
  #credit = REQUEST_WINDOW;
  /** The main thread gave up on the request: body writes are swallowed (the future or the response body says why). */
  #failed = false;
  /** The guest finished or aborted its request body. */
  #requestDone = false;
  #skipping = false;
  #cancelled = false;

  constructor(id: number, channel: OutgoingChannel) {
    this.#id = id;
    this.#channel = channel;
  }

  receive(message: Exclude<OutgoingToThread, { kind: 'policy' }>): void {
    switch (message.kind) {
      case 'credit':
        this.#credit += message.bytes;
        return;
      case 'head':
        this.#response = { kind: 'head', head: message.head };
        return;
      case 'chunk':
        // After a skip, what was already on its way is dropped too.
        if (this.#skipping) return;
        this.#queue.push(message.bytes);
        return;
      case 'end':
        this.#body = { kind: 'ended' };
        this.#trailers = message.trailers;
        return this.#settle();
      case 'error':
        this.#failed = true;
        if (this.#response.kind === 'waiting') this.#response = { kind: 'failed', code: message.code };
        if (this.#body.kind === 'open') this.#body = { kind: 'failed', reason: describe(message.code), code: message.code };
        return this.#settle();
    }
  }

  response(): OutgoingResponseState {
    this.#channel.drain();
    return this.#response;
  }

  /**
   * Writes after a failure are taken and dropped rather than failed:
   * StarlingMonkey asserts that its body writes succeed, and learns of the
   * failure from the future as it should.
   */
  readonly requestBody: BodySink = {
    credit: () => {
      this.#channel.drain();
      return this.#failed || this.#cancelled ? REQUEST_WINDOW : Math.max(0, this.#credit);
    },
    open: () => true,
    chunk: (bytes) => {
      if (this.#failed || this.#cancelled) return;
      this.#credit -= bytes.length;
      // Copied by the post: the array may be a view of one the caller goes on using.
      this.#channel.post({ kind: 'chunk', id: this.#id, bytes });
    },
    finish: (trailers) => {
      this.#requestDone = true;
      if (!this.#failed && !this.#cancelled) this.#channel.post({ kind: 'end', id: this.#id, trailers });
      this.#settle();
    },
    abort: (reason) => {
      this.#requestDone = true;
      // The main thread stops the request and answers with an error for the future or the response body.
      if (!this.#failed && !this.#cancelled) this.#channel.post({ kind: 'abort', id: this.#id, reason });
    },
  };

  readonly responseBody: RequestBodySource = {
    read: (max) => {
      this.#channel.drain();
      const bytes = this.#queue.take(max);
      if (bytes.length > 0 && this.#body.kind === 'open') this.#channel.post({ kind: 'read', id: this.#id, bytes: bytes.length });
      return bytes;
    },
    available: () => {
      this.#channel.drain();
      return this.#queue.available;
    },
    status: () => {
      this.#channel.drain();
      // Bytes that arrived before a failure are still read; the failure shows once they are.
      return this.#body.kind === 'failed' && this.#queue.available > 0 ? { kind: 'open' } : this.#body;
    },
    trailers: () => this.#trailers,
    release: () => this.cancel('the guest dropped the response body before its end'),
    skipRest: () => {
      this.#channel.drain();
      this.#queue.clear();
      if (this.#body.kind !== 'open' || this.#skipping) return;
      this.#skipping = true;
      this.#channel.post({ kind: 'skip', id: this.#id });
    },
  };

  cancel(reason: string): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    if (this.#channel.forget(this.#id)) this.#channel.post({ kind: 'abort', id: this.#id, reason });
    // What the guest still holds reads as failed from now on.
    const code: ErrorCode = { tag: 'internal-error', val: reason };
    if (this.#response.kind === 'waiting') this.#response = { kind: 'failed', code };
    if (this.#body.kind === 'open') this.#body = { kind: 'failed', reason, code };
  }

  /** Both directions done: no message for this id matters any more. */
  #settle(): void {
    if (this.#body.kind !== 'open' && (this.#requestDone || this.#failed)) this.#channel.forget(this.#id);
  }
}

// ---- the main thread's end ----

export interface OutgoingClientOptions {
  /** Response bytes sent to the thread and not yet read by the guest before the response is paused (default 256 KiB). */
  responseWindow?: number;
}

export interface OutgoingStats {
  /** Requests started and not yet over. */
  inFlight: number;
  /** The most response bytes any one request ever had sent to the thread and unread by the guest. */
  maxUnreadBytes: number;
}

/** What an Outbound needs of its client. */
interface ClientSide {
  readonly window: number;
  post(message: OutgoingToThread, transfer?: ArrayBuffer[]): void;
  forget(id: number): void;
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
  readonly #patterns: HostPattern[];
  readonly #requests = new Map<number, Outbound>();
  readonly #agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  readonly #side: ClientSide;
  #maxUnread = 0;
  #closed = false;

  /** `port`: this end of the channel whose other end the thread got; `shared`: the thread's cells (threadCells). */
  constructor(port: MessagePort, shared: SharedArrayBuffer, allowedHosts: string[], options: OutgoingClientOptions = {}) {
    this.#port = port;
    this.#shared = shared;
    this.#patterns = patternsOf(allowedHosts);
    this.#side = {
      window: options.responseWindow ?? RESPONSE_WINDOW,
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
      const outbound = new Outbound(message.id, this.#side);
      this.#requests.set(message.id, outbound);
      return outbound.start(message.head, message.timeouts, allowsRequest(this.#patterns, message.head.scheme, message.head.authority));
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

const TLS_CERTIFICATE = /^(CERT_|ERR_TLS_CERT|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT)/;

/** A node error (a socket's, DNS's, TLS's, the parser's) as the wasi:http error-code it stands for. */
export function errorCodeOf(error: unknown): ErrorCode {
  type NodeError = Error & { code?: string };
  let e = error as NodeError | undefined;
  // Happy eyeballs (autoSelectFamily) fails with an AggregateError of each address's error.
  if (e instanceof AggregateError && (e as NodeError).code === undefined && e.errors.length > 0) e = e.errors[0] as NodeError;
  const code = e?.code ?? '';
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_NONAME':
    case 'EAI_NODATA':
    case 'EAI_FAIL':
      return { tag: 'DNS-error', val: { rcode: code, infoCode: undefined } };
    case 'EAI_AGAIN':
      return { tag: 'DNS-timeout' };
    case 'ECONNREFUSED':
      return { tag: 'connection-refused' };
    case 'ECONNRESET':
    case 'EPIPE':
      return { tag: 'connection-terminated' };
    case 'ETIMEDOUT':
      return { tag: 'connection-timeout' };
    case 'EHOSTUNREACH':
      return { tag: 'destination-IP-unroutable' };
    case 'ENETUNREACH':
      return { tag: 'destination-unavailable' };
  }
  if (code.startsWith('HPE_')) return { tag: 'HTTP-protocol-error' };
  if (TLS_CERTIFICATE.test(code)) return { tag: 'TLS-certificate-error' };
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO') return { tag: 'TLS-protocol-error' };
  return { tag: 'internal-error', val: e instanceof Error ? `${code ? `${code}: ` : ''}${e.message}` : String(error) };
}

/** One request on the main thread, from `start` until both its body and its response are over. */
class Outbound {
  readonly #id: number;
  readonly #side: ClientSide;
  #req: ClientRequest | undefined;
  #res: IncomingMessage | undefined;
  #timeouts: OutgoingTimeouts = {};
  /** A body that came whole with the start: held until its end, then sent with its length. */
  #whole: Uint8Array[] | undefined;
  readonly #timers: { connect?: NodeJS.Timeout; firstByte?: NodeJS.Timeout; between?: NodeJS.Timeout } = {};
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
    this.#side.post({ kind: 'error', id: this.#id, code });
    this.destroy();
  }

  /** Everything let go, nothing told (the thread is gone). */
  destroy(): void {
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
