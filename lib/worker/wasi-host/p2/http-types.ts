// wasi:http/types for handlers: the request rt hands in, the response the
// guest builds, and the response-outparam that sends it to a ResponseSink.
// The bodies (incoming-body, future-trailers, outgoing-body) serve outgoing
// requests too (outgoing.ts): a request's body is an outgoing-body, the
// response to it an incoming-body, as in the WIT.
//
// preview2-shim's classes cannot serve here: it deletes the factories of its
// request and outparam objects after load, and its bodies are streams of its
// own I/O worker, which a guest blocked in `poll` on rt's thread never sees.

import type { ByteSink } from '../core/byte-queue.js';
import type { FieldEntry } from '../core/field-rules.js';
import { headerProblem, methodOf, schemeOf, statusProblem, type Method, type Result, type Scheme } from '../core/message-parts.js';
import { UNSENT_WINDOW, type BodySink, type ErrorCode, type HandleOutcome, type HandlerRequest, type RequestBodySource, type ResponseSink } from '../core/handler-io.js';
import { assignRep, GuestMisuse, WasiError } from '../core/host-objects.js';
import { Fields } from '../core/fields.js';
import { Pollable } from './poll.js';
import { InputStream, IoError, OutputStream } from './streams.js';

export type { Method, Result, Scheme } from '../core/message-parts.js';

/** A result-typed import without a payload (`result` / `result<T>`): the glue maps any thrown non-Error to err. */
const unitError = (): WasiError<undefined> => new WasiError(undefined);

export class IncomingRequest {
  readonly #request: HandlerRequest;
  readonly #headers: Fields;
  #body: RequestBodySource | undefined;

  /** rt's constructor (the glue never builds one): `body` is read through consume(). */
  constructor(request: HandlerRequest, body: RequestBodySource) {
    this.#request = request;
    this.#headers = Fields.fromHost(request.headers);
    this.#body = body;
    assignRep(this);
  }

  method(): Method {
    return methodOf(this.#request.method);
  }

  pathWithQuery(): string | undefined {
    return this.#request.pathWithQuery;
  }

  scheme(): Scheme | undefined {
    return schemeOf(this.#request.scheme);
  }

  authority(): string | undefined {
    return this.#request.authority;
  }

  /** The same immutable fields every time (a child of the request). */
  headers(): Fields {
    return this.#headers;
  }

  consume(): IncomingBody {
    const body = this.#body;
    if (!body) throw unitError();
    this.#body = undefined;
    return new IncomingBody(body);
  }

  [Symbol.dispose](): void {}
}

export class IncomingBody {
  #source: RequestBodySource | undefined;
  readonly #trailersFrom: RequestBodySource;
  #finished = false;

  constructor(source: RequestBodySource) {
    this.#source = source;
    this.#trailersFrom = source;
    assignRep(this);
  }

  stream(): InputStream {
    const source = this.#source;
    if (!source) throw unitError();
    this.#source = undefined;
    return new InputStream(source);
  }

  static finish(body: IncomingBody): FutureTrailers {
    body.#finished = true;
    // What the guest did not read it never will: the trailers need only the rest to pass.
    body.#trailersFrom.skipRest?.();
    return new FutureTrailers(body.#trailersFrom);
  }

  [Symbol.dispose](): void {
    // Dropped without finish (the stream, its child, is gone by now): nobody reads the rest.
    if (!this.#finished) this.#trailersFrom.release?.();
  }
}

export class FutureTrailers {
  readonly #source: RequestBodySource;
  #taken = false;

  constructor(source: RequestBodySource) {
    this.#source = source;
    assignRep(this);
  }

  subscribe(): Pollable {
    const source = this.#source;
    return new Pollable({ ready: () => source.status().kind !== 'open', pending: () => source.status().kind === 'open' });
  }

  /** none until the body ended; then once its trailers (or the error), and err after that. */
  get(): Result<Result<Fields | undefined, ErrorCode>, undefined> | undefined {
    const status = this.#source.status();
    if (status.kind === 'open') return undefined;
    if (this.#taken) return { tag: 'err', val: undefined };
    this.#taken = true;
    if (status.kind === 'failed') return { tag: 'ok', val: { tag: 'err', val: status.code ?? { tag: 'internal-error', val: status.reason } } };
    const trailers = this.#source.trailers();
    return { tag: 'ok', val: { tag: 'ok', val: trailers ? Fields.fromHost(trailers) : undefined } };
  }

  [Symbol.dispose](): void {
    if (this.#source.status().kind === 'open') this.#source.release?.();
  }
}

export class OutgoingResponse {
  readonly #headers: Fields;
  #status = 200;
  #body: OutgoingBody | undefined;

  constructor(headers: Fields) {
    // The response owns its headers from now on; wasi:http makes them immutable.
    headers.freeze();
    this.#headers = headers;
    assignRep(this);
  }

  statusCode(): number {
    return this.#status;
  }

  setStatusCode(status: number): void {
    // wasi:http allows what the http crate does (100–999); whether it can be sent is decided at set.
    if (status < 100 || status > 999) throw unitError();
    this.#status = status;
  }

  headers(): Fields {
    return this.#headers;
  }

  body(): OutgoingBody {
    if (this.#body) throw unitError();
    this.#body = new OutgoingBody();
    return this.#body;
  }

  /** @internal */ get bodyTaken(): OutgoingBody | undefined {
    return this.#body;
  }
}

type BodyState = 'writing' | 'finished' | 'aborted';

/**
 * A response's body, or a request's (one resource type in the WIT). Until the
 * response is set (the request handed to outgoing-handler) its bytes wait
 * here, at most UNSENT_WINDOW; from then on they go straight to the sink,
 * within its credit.
 */
export class OutgoingBody {
  readonly #role: 'request' | 'response';
  #sink: BodySink | undefined;
  #held: Uint8Array[] = [];
  #heldBytes = 0;
  #state: BodyState = 'writing';
  #trailers: FieldEntry[] | undefined;
  #streamTaken = false;
  #written = 0;
  #contentLength: number | undefined;
  /** Set when writes must fail: the body was cut, the response was refused, the client left. */
  #failure: string | undefined;

  /** rt's constructor (the glue never builds one): `role` names the message, for errors. */
  constructor(role: 'request' | 'response' = 'response') {
    this.#role = role;
    assignRep(this);
  }

  write(): OutputStream {
    if (this.#streamTaken) throw unitError();
    this.#streamTaken = true;
    const sink: ByteSink = {
      capacity: () => (this.#state !== 'writing' ? 0 : this.#sink ? this.#sink.credit() : Math.max(0, UNSENT_WINDOW - this.#heldBytes)),
      open: () => this.#state === 'writing' && (this.#sink?.open() ?? true),
      write: (bytes) => this.#write(bytes),
      failure: () => this.#failure,
    };
    return new OutputStream(sink);
  }

  static finish(body: OutgoingBody, trailers: Fields | undefined): void {
    if (body.#state !== 'writing') throw new GuestMisuse('outgoing-body.finish: the body already ended');
    let list: FieldEntry[] | undefined;
    if (trailers) {
      trailers.freeze();
      list = trailers.list();
    }
    if (body.#contentLength !== undefined && body.#written !== body.#contentLength) {
      const problem = `the body has ${body.#written} bytes where content-length says ${body.#contentLength}`;
      body.#cut(problem);
      throw new WasiError<ErrorCode>({ tag: body.#role === 'request' ? 'HTTP-request-body-size' : 'HTTP-response-body-size', val: BigInt(body.#written) });
    }
    body.#state = 'finished';
    body.#trailers = list;
    if (body.#sink) body.#sink.finish(list);
  }

  /** @internal The response was set (the request sent): what was held goes out, and so does the end if it came already. */
  attach(sink: BodySink, contentLength: number | undefined): void {
    this.#sink = sink;
    this.#contentLength = contentLength;
    if (contentLength !== undefined && this.#written > contentLength) return this.#cut(`the body has more bytes than content-length says (${contentLength})`);
    for (const bytes of this.#held) sink.chunk(bytes);
    this.#held = [];
    this.#heldBytes = 0;
    if (this.#state === 'finished') {
      if (contentLength !== undefined && this.#written !== contentLength) return this.#cut(`the body has ${this.#written} bytes where content-length says ${contentLength}`);
      sink.finish(this.#trailers);
    }
  }

  /** @internal The response was never sent (malformed, refused): writes fail from now on. */
  reject(reason: string): void {
    this.#failure = reason;
    this.#held = [];
    this.#heldBytes = 0;
  }

  /** @internal After `handle` returned: a body still being written is cut off. */
  end(reason: string): boolean {
    if (this.#state === 'writing') this.#cut(reason);
    return this.#state === 'finished';
  }

  /** @internal */ get written(): number {
    return this.#written;
  }

  /** @internal Finished already (a request body written whole before the request was sent). */
  get finished(): boolean {
    return this.#state === 'finished';
  }

  #write(bytes: Uint8Array): void {
    this.#written += bytes.length;
    if (this.#contentLength !== undefined && this.#written > this.#contentLength) return this.#cut(`the body has more bytes than content-length says (${this.#contentLength})`);
    if (this.#sink) {
      this.#sink.chunk(bytes);
    } else {
      this.#held.push(bytes);
      this.#heldBytes += bytes.length;
    }
  }

  #cut(reason: string): void {
    this.#state = 'aborted';
    this.#failure = reason;
    this.#sink?.abort(reason);
  }

  [Symbol.dispose](): void {
    // wasi:http: dropping a body without finish means it is incomplete. (An
    // unfinished body that is never dropped is cut when `handle` returns.)
    if (this.#state === 'writing' && this.#sink) this.#cut(`the handler dropped its ${this.#role} body without finishing it`);
  }
}

/** What happened to one request's response: kept by its outparam, read back by `settle`. */
class ResponseRecord {
  outcome: { kind: 'unset' } | { kind: 'malformed'; problem: string } | { kind: 'refused'; code: ErrorCode } | { kind: 'sent'; status: number; response: OutgoingResponse } = { kind: 'unset' };
}

export class ResponseOutparam {
  readonly #sink: ResponseSink;
  readonly #record: ResponseRecord;

  constructor(sink: ResponseSink, record: ResponseRecord) {
    this.#sink = sink;
    this.#record = record;
    assignRep(this);
  }

  static set(param: ResponseOutparam, response: Result<OutgoingResponse, ErrorCode>): void {
    const record = param.#record;
    // The glue consumes the outparam handle, so a second set can only come from misuse.
    if (record.outcome.kind !== 'unset') throw new GuestMisuse('response-outparam.set: the response was already set');
    if (response.tag === 'err') {
      record.outcome = { kind: 'refused', code: response.val };
      return param.#sink.refused(response.val);
    }
    const res = response.val;
    const headers = res.headers().list();
    const checked = headerProblem(headers);
    const problem = statusProblem(res.statusCode()) ?? ('problem' in checked ? checked.problem : undefined);
    if (problem !== undefined) {
      record.outcome = { kind: 'malformed', problem };
      res.bodyTaken?.reject(`the response was not sent: ${problem}`);
      // Reported, not thrown: the guest did nothing the interface forbids; the client gets the 502.
      return param.#sink.malformed(problem);
    }
    record.outcome = { kind: 'sent', status: res.statusCode(), response: res };
    param.#sink.head({ status: res.statusCode(), headers });
    res.bodyTaken?.attach(param.#sink, 'contentLength' in checked ? checked.contentLength : undefined);
  }

  [Symbol.dispose](): void {}
}

/**
 * One request to a handler: the objects to pass to `handle`, and `settle`
 * to call once it returned (or threw).
 */
export class HandlerExchange {
  readonly request: IncomingRequest;
  readonly responseOut: ResponseOutparam;
  readonly #record = new ResponseRecord();
  readonly #sink: ResponseSink;

  constructor(request: HandlerRequest, body: RequestBodySource, sink: ResponseSink) {
    this.#sink = sink;
    this.request = new IncomingRequest(request, body);
    this.responseOut = new ResponseOutparam(sink, this.#record);
  }

  /**
   * What the call left behind. A response set without ever asking for its
   * body is complete and empty (as in wasmtime); a body still being written
   * is cut off, since in wasi:http 0.2 nothing of the guest runs after `handle`.
   */
  settle(): HandleOutcome {
    const outcome = this.#record.outcome;
    switch (outcome.kind) {
      case 'unset':
        return { kind: 'no-response' };
      case 'malformed':
        return { kind: 'malformed', problem: outcome.problem };
      case 'refused':
        return { kind: 'refused', code: outcome.code };
      case 'sent': {
        const body = outcome.response.bodyTaken;
        if (!body) {
          this.#sink.finish(undefined);
          return { kind: 'responded', status: outcome.status, complete: true, bodyBytes: 0 };
        }
        const complete = body.end('the handler returned before finishing its response body');
        return { kind: 'responded', status: outcome.status, complete, bodyBytes: body.written };
      }
    }
  }
}

/** wasi:http/types#http-error-code: the error-code behind a stream's io-error, when rt gave it one. */
export function httpErrorCode(error: IoError): ErrorCode | undefined {
  return error.code;
}
