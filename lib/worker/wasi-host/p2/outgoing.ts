// wasi:http/outgoing-handler for handlers on an instance thread, and the
// resources of wasi:http/types it takes and gives: outgoing-request,
// request-options, future-incoming-response, incoming-response.
//
// The guest's thread cannot await, and the sockets are the worker's main
// thread's: `handle` hands the request to a transport (core/outgoing-channel.ts)
// and returns at once. The guest then waits on the future, reads the response
// body and writes the request body through the same pollables and streams as
// for its own request and response, so one poll list covers all of them and
// several requests can be in flight at once. What needs no I/O (the request's
// shape, the allow-list) is answered by `handle` itself, as wasmtime and Spin
// do; what needs the network comes through the future. The bodies are
// http-types.ts's (outgoing-body, incoming-body, future-trailers): one
// resource type each in the WIT, whichever way the message goes.

import { endToEnd, isHttpToken } from '../core/field-rules.js';
import type { ErrorCode, ResponseHead } from '../core/handler-io.js';
import { assignRep, GuestMisuse, WasiError } from '../core/host-objects.js';
import { timerMs, type OutgoingCall, type OutgoingHead, type OutgoingTimeouts, type OutgoingTransport } from '../core/outgoing-transport.js';
import { Fields } from '../core/fields.js';
import { headerProblem, type Method, type Result, type Scheme } from '../core/message-parts.js';
import { IncomingBody, OutgoingBody } from './http-types.js';
import { Pollable } from './poll.js';

const unitError = (): WasiError<undefined> => new WasiError(undefined);

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;
/** `host[:port]`, host a reg-name or a bracketed IP literal; no userinfo (RFC 9110 §4.2.4). */
const AUTHORITY = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::(\d{0,5}))?$/;
/** Origin-form (`/path?query`, visible ASCII, no fragment) or `*`. */
const PATH_WITH_QUERY = /^(?:\/[\x21\x22\x24-\x7e]*|\*)$/;

export class OutgoingRequest {
  readonly #headers: Fields;
  #method: Method = { tag: 'get' };
  #scheme: Scheme | undefined;
  #authority: string | undefined;
  #pathWithQuery: string | undefined;
  #body: OutgoingBody | undefined;
  #sent = false;

  /** GET, no scheme, authority or path yet; the request owns `headers` from now on (immutable). */
  constructor(headers: Fields) {
    headers.freeze();
    this.#headers = headers;
    assignRep(this);
  }

  body(): OutgoingBody {
    if (this.#body) throw unitError();
    this.#body = new OutgoingBody('request');
    return this.#body;
  }

  method(): Method {
    return this.#method;
  }

  setMethod(method: Method): void {
    if (method.tag === 'other' && !isHttpToken(method.val)) throw unitError();
    this.#method = method;
  }

  pathWithQuery(): string | undefined {
    return this.#pathWithQuery;
  }

  setPathWithQuery(pathWithQuery: string | undefined): void {
    if (pathWithQuery !== undefined && !PATH_WITH_QUERY.test(pathWithQuery)) throw unitError();
    this.#pathWithQuery = pathWithQuery;
  }

  scheme(): Scheme | undefined {
    return this.#scheme;
  }

  setScheme(scheme: Scheme | undefined): void {
    if (scheme?.tag === 'other' && !SCHEME.test(scheme.val)) throw unitError();
    this.#scheme = scheme;
  }

  authority(): string | undefined {
    return this.#authority;
  }

  setAuthority(authority: string | undefined): void {
    if (authority !== undefined) {
      const port = AUTHORITY.exec(authority)?.[1];
      if (!AUTHORITY.test(authority) || (port !== undefined && port !== '' && Number(port) > 65535)) throw unitError();
    }
    this.#authority = authority;
  }

  headers(): Fields {
    return this.#headers;
  }

  /**
   * @internal What goes on the wire, or the error-code `handle` answers with.
   * Marks the request sent (the glue hands it over as an owned handle).
   */
  send(): { head: OutgoingHead; body: OutgoingBody | undefined; contentLength: number | undefined } {
    if (this.#sent) throw new GuestMisuse('outgoing-handler.handle: the request was already sent');
    this.#sent = true;
    const fail = (code: ErrorCode): never => {
      throw new WasiError<ErrorCode>(code);
    };
    // The shim's choice, and wasi:http leaves it to the host: no scheme is https.
    const scheme = this.#scheme === undefined || this.#scheme.tag === 'HTTPS' ? 'https' : this.#scheme.tag === 'HTTP' ? 'http' : fail({ tag: 'HTTP-protocol-error' });
    const authority = this.#authority || fail({ tag: 'HTTP-request-URI-invalid' });
    const method = this.#method.tag === 'other' ? this.#method.val : this.#method.tag.toUpperCase();
    // Connection-level headers are the transport's (fields from rt's own, cloned, may carry host).
    const headers = endToEnd(this.#headers.list());
    const checked = headerProblem(headers);
    if ('problem' in checked) fail({ tag: 'internal-error', val: `the request cannot be sent: ${checked.problem}` });
    const contentLength = 'contentLength' in checked ? checked.contentLength : undefined;
    const bodyFollows = this.#body !== undefined && !this.#body.finished;
    return { head: { method, scheme, authority, pathWithQuery: this.#pathWithQuery ?? '/', headers, bodyFollows }, body: this.#body, contentLength };
  }

  [Symbol.dispose](): void {}
}

export class RequestOptions {
  #connect: bigint | undefined;
  #firstByte: bigint | undefined;
  #betweenBytes: bigint | undefined;

  constructor() {
    assignRep(this);
  }

  connectTimeout(): bigint | undefined {
    return this.#connect;
  }

  setConnectTimeout(duration: bigint | undefined): void {
    this.#connect = duration;
  }

  firstByteTimeout(): bigint | undefined {
    return this.#firstByte;
  }

  setFirstByteTimeout(duration: bigint | undefined): void {
    this.#firstByte = duration;
  }

  betweenBytesTimeout(): bigint | undefined {
    return this.#betweenBytes;
  }

  setBetweenBytesTimeout(duration: bigint | undefined): void {
    this.#betweenBytes = duration;
  }

  /** @internal */ timeouts(): OutgoingTimeouts {
    return { connectMs: timerMs(this.#connect), firstByteMs: timerMs(this.#firstByte), betweenBytesMs: timerMs(this.#betweenBytes) };
  }

  [Symbol.dispose](): void {}
}

export class FutureIncomingResponse {
  readonly #call: OutgoingCall;
  #taken = false;

  /** rt's constructor: `handle` makes one per request sent. */
  constructor(call: OutgoingCall) {
    this.#call = call;
    assignRep(this);
  }

  subscribe(): Pollable {
    const call = this.#call;
    return new Pollable({ ready: () => call.response().kind !== 'waiting', pending: () => call.response().kind === 'waiting' });
  }

  /** none while waiting; then once the response (or the error-code), and err after that. */
  get(): Result<Result<IncomingResponse, ErrorCode>, undefined> | undefined {
    const state = this.#call.response();
    if (state.kind === 'waiting') return undefined;
    if (this.#taken) return { tag: 'err', val: undefined };
    this.#taken = true;
    if (state.kind === 'failed') return { tag: 'ok', val: { tag: 'err', val: state.code } };
    return { tag: 'ok', val: { tag: 'ok', val: new IncomingResponse(this.#call, state.head) } };
  }

  [Symbol.dispose](): void {
    if (!this.#taken) this.#call.cancel('the guest dropped the future-incoming-response');
  }
}

export class IncomingResponse {
  readonly #call: OutgoingCall;
  readonly #status: number;
  readonly #headers: Fields;
  #consumed = false;

  constructor(call: OutgoingCall, head: ResponseHead) {
    this.#call = call;
    this.#status = head.status;
    // As wasmtime does: connection-level headers (transfer-encoding, keep-alive) were the transport's business.
    this.#headers = Fields.fromHost(endToEnd(head.headers));
    assignRep(this);
  }

  status(): number {
    return this.#status;
  }

  /** The same immutable fields every time (a child of the response). */
  headers(): Fields {
    return this.#headers;
  }

  consume(): IncomingBody {
    if (this.#consumed) throw unitError();
    this.#consumed = true;
    return new IncomingBody(this.#call.responseBody);
  }

  [Symbol.dispose](): void {
    // Consumed, the body lives on by itself; unread, nobody will read it.
    if (!this.#consumed) this.#call.cancel('the guest dropped the response without reading its body');
  }
}

/** wasi:http/outgoing-handler over `transport`. */
export function outgoingHandler(transport: OutgoingTransport): { handle(request: OutgoingRequest, options: RequestOptions | undefined): FutureIncomingResponse } {
  return {
    handle(request, options) {
      const { head, body, contentLength } = request.send();
      const started = transport.start(head, options?.timeouts() ?? {});
      if ('refused' in started) throw new WasiError<ErrorCode>(started.refused);
      const { call } = started;
      // Bytes written before handle go out now, the rest as the guest writes them; no body asked for: none.
      if (body) body.attach(call.requestBody, contentLength);
      else call.requestBody.finish(undefined);
      return new FutureIncomingResponse(call);
    },
  };
}

/** Without a transport (no outgoing port for this thread): handle traps, saying why. */
export const noOutgoingHandler = {
  handle(): never {
    throw new GuestMisuse('wasi:http/outgoing-handler: this handler instance has no outgoing HTTP (no transport was given to handlerImports)');
  },
};
