// wasi:http/types@0.3 for handlers: the request rt hands in and the response
// the guest returns. In 0.3 a body is a stream<u8> and its trailers a future,
// both values of the component model's async ABI that jco's glue carries
// between the guest and the host: rt hands the guest an async iterable (the
// request body as it arrives) and a promise (its trailers); the guest hands rt
// its response body as the glue's readable stream and its trailers as a
// thenable, which handler.ts reads as the client takes the bytes.
//
// A request rt builds for a guest's outgoing call (`request.new`, client.send)
// is not served yet: those functions trap, saying so.

import type { FieldEntry } from '../core/field-rules.js';
import type { ErrorCode, HandlerRequest } from '../core/handler-io.js';
import { assignRep, GuestMisuse, WasiError } from '../core/host-objects.js';
import { methodOf, schemeOf, type Method, type Result, type Scheme } from '../core/message-parts.js';
import { Fields } from './fields.js';

/** A result-typed import without a payload (`result`): the glue maps a thrown payload to err. */
const unitError = (): WasiError<undefined> => new WasiError(undefined);

/** What a body's trailers future resolves to. */
export type TrailersResult = Result<Fields | undefined, ErrorCode>;

/** A stream<u8> the guest writes, as the glue hands it to the host: read as the guest writes it. */
export interface GuestByteStream {
  read(count: number): Promise<{ done: boolean; value?: Uint8Array | number[] }>;
  /** Drops the readable end: the guest's next write finds it gone. */
  return?(): Promise<unknown>;
}

/** A future the guest writes, as the glue hands it to the host. */
export type GuestFuture<T> = PromiseLike<T>;

export class Request {
  readonly #head: HandlerRequest;
  readonly #headers: Fields;
  #method: string;
  #pathWithQuery: string | undefined;
  #scheme: string | undefined;
  #authority: string | undefined;
  #body: [contents: AsyncIterable<Uint8Array>, trailers: Promise<TrailersResult>] | undefined;

  /** rt's constructor for the request a handler serves: its body's bytes as they arrive, and its trailers once it ended. */
  constructor(head: HandlerRequest, contents: AsyncIterable<Uint8Array>, trailers: Promise<TrailersResult>) {
    this.#head = head;
    this.#headers = Fields.fromHost(head.headers);
    this.#method = head.method;
    this.#pathWithQuery = head.pathWithQuery;
    this.#scheme = head.scheme;
    this.#authority = head.authority;
    this.#body = [contents, trailers];
    assignRep(this);
  }

  static new(): never {
    throw new GuestMisuse('wasi:http/types@0.3 request.new: outgoing requests (wasi:http/client) are not served yet');
  }

  getMethod(): Method {
    return methodOf(this.#method);
  }

  setMethod(method: Method): void {
    this.#method = method.tag === 'other' ? method.val : method.tag.toUpperCase();
  }

  getPathWithQuery(): string | undefined {
    return this.#pathWithQuery;
  }

  setPathWithQuery(pathWithQuery: string | undefined): void {
    this.#pathWithQuery = pathWithQuery;
  }

  getScheme(): Scheme | undefined {
    return this.#scheme === undefined ? undefined : schemeOf(this.#scheme);
  }

  setScheme(scheme: Scheme | undefined): void {
    this.#scheme = scheme === undefined ? undefined : scheme.tag === 'other' ? scheme.val : scheme.tag.toLowerCase();
  }

  getAuthority(): string | undefined {
    return this.#authority;
  }

  setAuthority(authority: string | undefined): void {
    this.#authority = authority;
  }

  /** A request handed in has no options (they are for requests a guest sends). */
  getOptions(): undefined {
    return undefined;
  }

  /** The same immutable fields every time (a child of the request). */
  getHeaders(): Fields {
    return this.#headers;
  }

  /**
   * The body as it arrives and its trailers. `res` is the guest's word on how
   * it used them (for a request it forwards); rt reads it so that the guest's
   * write completes, and needs nothing from it.
   */
  static consumeBody(request: Request, res: GuestFuture<unknown>): [AsyncIterable<Uint8Array>, Promise<TrailersResult>] {
    const body = request.#body;
    if (!body) throw new GuestMisuse('request.consume-body: the body was already taken');
    request.#body = undefined;
    Promise.resolve(res).catch(() => {});
    return body;
  }

  /** The request as rt was given it (for the log), whatever the guest set since. */
  get head(): HandlerRequest {
    return this.#head;
  }

  [Symbol.dispose](): void {}
}

/** What rt does with a response once `handle` returned it (handler.ts): its parts, and how to tell the guest how its transmission ended. */
export interface ResponseParts {
  status: number;
  headers: FieldEntry[];
  contents: GuestByteStream | undefined;
  trailers: GuestFuture<TrailersResult>;
  /** Resolves the future `response.new` gave the guest: ok once sent whole, or why not. */
  transmitted(result: Result<undefined, ErrorCode>): void;
}

async function* noBytes(): AsyncGenerator<Uint8Array, void, undefined> {}

export class Response {
  readonly #headers: Fields;
  #status = 200;
  #body: { contents: GuestByteStream | undefined; trailers: GuestFuture<TrailersResult> } | undefined;
  #transmitted!: (result: Result<undefined, ErrorCode>) => void;

  private constructor(headers: Fields, contents: GuestByteStream | undefined, trailers: GuestFuture<TrailersResult>) {
    headers.freeze();
    this.#headers = headers;
    this.#body = { contents, trailers };
    assignRep(this);
  }

  /** The guest's response: its headers become immutable; the future it gets back says how the response went out. */
  static new(headers: Fields, contents: GuestByteStream | undefined, trailers: GuestFuture<TrailersResult>): [Response, Promise<Result<undefined, ErrorCode>>] {
    const response = new Response(headers, contents, trailers);
    const transmitted = new Promise<Result<undefined, ErrorCode>>((resolve) => (response.#transmitted = resolve));
    return [response, transmitted];
  }

  getStatusCode(): number {
    return this.#status;
  }

  setStatusCode(status: number): void {
    // status-code is a u16: anything from 100 to 999 is a status the guest may set; whether rt can send it is checked when it goes out.
    if (status < 100 || status > 999) throw unitError();
    this.#status = status;
  }

  getHeaders(): Fields {
    return this.#headers;
  }

  /** Takes the body back out (a middleware reading the response it got): its stream and trailers. */
  static consumeBody(response: Response, res: GuestFuture<unknown>): [GuestByteStream | AsyncIterable<Uint8Array>, GuestFuture<TrailersResult>] {
    const body = response.#body;
    if (!body) throw new GuestMisuse('response.consume-body: the body was already taken');
    response.#body = undefined;
    Promise.resolve(res).catch(() => {});
    return [body.contents ?? noBytes(), body.trailers];
  }

  /** @internal The parts rt sends, once `handle` returned the response; undefined if its body was taken out. */
  parts(): ResponseParts | undefined {
    const body = this.#body;
    if (!body) return undefined;
    this.#body = undefined;
    return { status: this.#status, headers: this.#headers.list(), ...body, transmitted: this.#transmitted };
  }

  [Symbol.dispose](): void {}
}
