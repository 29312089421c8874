// wasi:http/types@0.3: fields, requests, responses and request options. In
// 0.3 a body is a stream<u8> and its trailers a future, both values of the
// component model's async ABI that jco's glue carries between the guest and
// the host. A body rt makes (a request handed to a handler, a response that
// came back to client.send) goes to the guest as an async iterable, its
// trailers as a promise; a body the guest makes comes to rt as the glue's
// readable stream and a thenable (bodies.ts reads either). Which one a
// message holds depends on who made it, not on whether it is a request or a
// response: a proxy hands back what it was handed.

import type { FieldEntry } from '../core/field-rules.js';
import type { ErrorCode, HandlerRequest, ResponseHead } from '../core/handler-io.js';
import { assignRep, GuestMisuse, WasiError } from '../core/host-objects.js';
import { methodOf, schemeOf, type Method, type Result, type Scheme } from '../core/message-parts.js';
import type { Body, TrailersResult } from './bodies.js';
import { Fields } from './fields.js';

/** A result-typed import without a payload (`result`): the glue maps a thrown payload to err. */
const unitError = (): WasiError<undefined> => new WasiError(undefined);

/** A future the guest writes, as the glue hands it to the host, or one rt made. */
export type Trailers = PromiseLike<TrailersResult>;

/** How a message's transmission went: the future `request.new` and `response.new` give the guest. */
export type Transmitted = (result: Result<undefined, ErrorCode>) => void;

/** A message's body: its bytes (none: empty) and trailers, until taken. */
interface MessageBody {
  contents: Body | undefined;
  trailers: Trailers;
}

function takeBody(message: { body: MessageBody | undefined }, what: string): MessageBody {
  const body = message.body;
  if (!body) throw new GuestMisuse(`${what}.consume-body: the body was already taken`);
  message.body = undefined;
  return body;
}

/** What consume-body gives: the body (an empty one if it had none) and its trailers. `res` is the guest's word on how it used them; rt reads it so that the guest's write completes, and needs nothing from it. */
function consumed(body: MessageBody, res: PromiseLike<unknown>): [Body, Trailers] {
  Promise.resolve(res).catch(() => {});
  return [body.contents ?? noBytes(), body.trailers];
}

async function* noBytes(): AsyncGenerator<Uint8Array, void, undefined> {}

/** The future the guest gets with a message it made, and its resolver. */
function transmission(): [Promise<Result<undefined, ErrorCode>>, Transmitted] {
  let resolve!: Transmitted;
  return [new Promise((r) => (resolve = r)), (result) => resolve(result)];
}

/** request-options: timeouts in nanoseconds (wasi:clocks duration), for a request the guest sends. */
export class RequestOptions {
  connectTimeout: bigint | undefined;
  firstByteTimeout: bigint | undefined;
  betweenBytesTimeout: bigint | undefined;
  #immutable = false;

  constructor() {
    assignRep(this);
  }

  getConnectTimeout(): bigint | undefined {
    return this.connectTimeout;
  }

  setConnectTimeout(ns: bigint | undefined): void {
    this.#mutable();
    this.connectTimeout = ns;
  }

  getFirstByteTimeout(): bigint | undefined {
    return this.firstByteTimeout;
  }

  setFirstByteTimeout(ns: bigint | undefined): void {
    this.#mutable();
    this.firstByteTimeout = ns;
  }

  getBetweenBytesTimeout(): bigint | undefined {
    return this.betweenBytesTimeout;
  }

  setBetweenBytesTimeout(ns: bigint | undefined): void {
    this.#mutable();
    this.betweenBytesTimeout = ns;
  }

  clone(): RequestOptions {
    const copy = new RequestOptions();
    Object.assign(copy, { connectTimeout: this.connectTimeout, firstByteTimeout: this.firstByteTimeout, betweenBytesTimeout: this.betweenBytesTimeout });
    return copy;
  }

  /** @internal Attached to a request: the guest reads them, and sets them no more. */
  freeze(): void {
    this.#immutable = true;
  }

  #mutable(): void {
    if (this.#immutable) throw new WasiError({ tag: 'immutable' });
  }

  [Symbol.dispose](): void {}
}

export class Request {
  readonly #headers: Fields;
  #method: string;
  #pathWithQuery: string | undefined;
  #scheme: string | undefined;
  #authority: string | undefined;
  readonly #options: RequestOptions | undefined;
  body: MessageBody | undefined;
  /** A request the guest made: how its sending went (the future request.new gave it). */
  readonly transmitted: Transmitted | undefined;

  /** rt's constructor for the request a handler serves: its body's bytes as they arrive, and its trailers once it ended. */
  constructor(head: HandlerRequest, contents: AsyncIterable<Uint8Array>, trailers: Trailers);
  constructor(head: HandlerRequest | undefined, contents: Body | undefined, trailers: Trailers, made?: { headers: Fields; options: RequestOptions | undefined; transmitted: Transmitted });
  constructor(head: HandlerRequest | undefined, contents: Body | undefined, trailers: Trailers, made?: { headers: Fields; options: RequestOptions | undefined; transmitted: Transmitted }) {
    this.#headers = made?.headers ?? Fields.fromHost(head?.headers ?? []);
    this.#headers.freeze();
    this.#method = head?.method ?? 'GET';
    this.#pathWithQuery = head?.pathWithQuery;
    this.#scheme = head?.scheme;
    this.#authority = head?.authority;
    this.#options = made?.options;
    this.#options?.freeze();
    this.body = { contents, trailers };
    this.transmitted = made?.transmitted;
    assignRep(this);
  }

  /** A request the guest sends (wasi:http/client): GET, no path, scheme or authority until it sets them. */
  static new(headers: Fields, contents: Body | undefined, trailers: Trailers, options: RequestOptions | undefined): [Request, Promise<Result<undefined, ErrorCode>>] {
    const [future, transmitted] = transmission();
    return [new Request(undefined, contents, trailers, { headers, options, transmitted }), future];
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

  /** The options the guest gave (a copy it may change). */
  getOptions(): RequestOptions | undefined {
    return this.#options?.clone();
  }

  /** The same immutable fields every time (a child of the request). */
  getHeaders(): Fields {
    return this.#headers;
  }

  static consumeBody(request: Request, res: PromiseLike<unknown>): [Body, Trailers] {
    return consumed(takeBody(request, 'request'), res);
  }

  /** @internal What client.send sends. */
  outgoing(): { method: string; scheme: string | undefined; authority: string | undefined; pathWithQuery: string; headers: FieldEntry[]; options: RequestOptions | undefined } {
    return { method: this.#method, scheme: this.#scheme, authority: this.#authority, pathWithQuery: this.#pathWithQuery ?? '/', headers: this.#headers.list(), options: this.#options };
  }

  [Symbol.dispose](): void {}
}

export class Response {
  readonly #headers: Fields;
  #status: number;
  body: MessageBody | undefined;
  /** A response the guest made: how it went out (the future response.new gave it). */
  readonly #transmitted: Transmitted | undefined;
  /** A response rt made: stops what brings its body, if the guest drops it unread. */
  readonly #abandon: (() => void) | undefined;

  private constructor(status: number, headers: Fields, body: MessageBody, transmitted: Transmitted | undefined, abandon?: () => void) {
    headers.freeze();
    this.#status = status;
    this.#headers = headers;
    this.body = body;
    this.#transmitted = transmitted;
    this.#abandon = abandon;
    assignRep(this);
  }

  /** The guest's response: its headers become immutable; the future it gets back says how the response went out. */
  static new(headers: Fields, contents: Body | undefined, trailers: Trailers): [Response, Promise<Result<undefined, ErrorCode>>] {
    const [future, transmitted] = transmission();
    return [new Response(200, headers, { contents, trailers }, transmitted), future];
  }

  /** rt's constructor for the response to a guest's client.send: its body as it arrives, its trailers once it ended; `abandon` if the guest drops it unread. */
  static fromHost(head: ResponseHead, contents: AsyncIterable<Uint8Array>, trailers: Trailers, abandon: () => void): Response {
    return new Response(head.status, Fields.fromHost(head.headers), { contents, trailers }, undefined, abandon);
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
  static consumeBody(response: Response, res: PromiseLike<unknown>): [Body, Trailers] {
    return consumed(takeBody(response, 'response'), res);
  }

  /** @internal The parts rt sends, once `handle` returned the response; undefined if its body was taken out. */
  parts(): ResponseParts | undefined {
    const body = this.body;
    if (!body) return undefined;
    this.body = undefined;
    return { status: this.#status, headers: this.#headers.list(), ...body, transmitted: this.#transmitted ?? (() => {}) };
  }

  /** Dropped by the guest with its body never taken: nobody will read it. */
  [Symbol.dispose](): void {
    if (this.body) this.#abandon?.();
  }
}

/** What rt does with a response once `handle` returned it (handler.ts): its parts, and how to tell the guest how its transmission ended. */
export interface ResponseParts {
  status: number;
  headers: FieldEntry[];
  contents: Body | undefined;
  trailers: Trailers;
  /** Resolves the future `response.new` gave the guest: ok once sent whole, or why not. */
  transmitted: Transmitted;
}
