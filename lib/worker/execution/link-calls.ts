// Calls across a link (docs/api.md §5.9) of any interface but a middleware's
// handler (handler-link.ts): the importer's instance thread calls a function
// of an imported interface, and the service linked to it in the same worker
// makes the call as it makes any call of that exported function
// (HostedService.callExport: inline or on its threads, within its limits).
// The values cross as jco holds them (numbers, bigints, strings, typed
// arrays, records and variants as objects): both sides have the same types
// (the catalog checked), so the importer's glue lowers what the target's
// lifted, and no JSON is made between them.
//
// The importer's thread posts each call on a port of its own and waits on
// its cells' wake counter (wasi-host/core/waker.ts) for the answer: a
// synchronous function blocks the thread (its guest is blocked in the call
// anyway), an async one (WASI 0.3) suspends only its task.
//
// Streams and futures of an async function (service-links.ts says which
// cross) go as invoke takes them: a future<T> parameter is awaited here and
// crosses as T, a future<T> result is awaited by the target's thread and
// handed to the importer as a future of T; a stream<T> parameter's items, and
// a stream<T> result's, cross as bytes on the same port (a stream<u8>'s as
// they are, other items as NDJSON, as a request body and a streamed answer
// carry them), each way within a window of bytes the reader has not yet
// taken, so neither side holds more than that of a stream the other is slow
// to read.

import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { HANDLER_LINK, serviceKey, type ServiceDescriptor, type ServiceId, type ServiceLink } from '../../service.js';
import { typeCodec } from '../../wit/codec.js';
import { interfaceKey, unversioned } from '../../wit/interface-key.js';
import { jsIdentifier } from '../../wit/js-names.js';
import { bodyStreamItems, futureParams, isByteElement, type BodyStream } from '../../wit/async-abi.js';
import type { WitFunction, WitType } from '../../wit/types.js';
import { BodyChannel, threadWaker, wakeThread, type Waker } from '../wasi-host/index.js';
import type { Failure, StreamControl, StreamFailure } from './invocation.js';
import type { LinkedServices } from './link-target.js';
import { NdjsonItems } from './ndjson-items.js';
import { readCount, type GlueStream } from './stream-items.js';

/** Importer's thread → main: a call of `fn` of the linked interface `link` (without its stream parameter, its futures as their values); then that stream's bytes, and what the importer's guest took of the result stream's. */
export type LinkMessage =
  | { kind: 'call'; id: number; link: string; fn: string; args: unknown[] }
  | { kind: 'chunk'; id: number; bytes: Uint8Array }
  | { kind: 'end'; id: number; failure?: string }
  | { kind: 'took'; id: number; bytes: number }
  | { kind: 'drop'; id: number };

/** Main → importer's thread: the call's value, its err case (of a result<T, E>), or why it failed (the importer traps). For a stream result, `ok` says it opened. */
export type LinkAnswer = { id: number; kind: 'ok'; value: unknown } | { id: number; kind: 'err'; payload: unknown } | { id: number; kind: 'failed'; message: string };

/** Main → importer's thread: an answer; what the target took of the stream parameter; the result stream's bytes and end. */
export type LinkReply = LinkAnswer | { kind: 'taken'; id: number; bytes: number } | { kind: 'chunk'; id: number; bytes: Uint8Array } | { kind: 'end'; id: number; failure?: string };

/** Bytes of a stream across a link that may be on their way before the reader has taken them (a power of two: the target's ring). */
const STREAM_WINDOW = 262_144;

/** The links of `d` that LinkCaller and serveLinkCalls carry: every one but a middleware's handler. */
export function valueLinks(d: ServiceDescriptor): ServiceDescriptor['links'] {
  return d.links.filter((l) => unversioned(l.interface) !== HANDLER_LINK);
}

/** The functions of `link`'s interface, as `d` imports them. */
function linkedFunctions(d: ServiceDescriptor, link: ServiceLink): WitFunction[] {
  return d.interface.imports.find((i) => i.name === link.interface)?.functions ?? [];
}

/** How a function's streams and futures cross: its stream parameter as a request body would carry it (raw bytes or NDJSON items), which parameters are futures, and what its result is. */
interface Crossing {
  stream?: BodyStream;
  futures: number[];
  result: 'value' | 'future' | { stream: WitType };
}

function crossing(fn: WitFunction): Crossing {
  const stream = bodyStreamItems(fn);
  const r = fn.result;
  const result = r?.kind === 'future' ? 'future' : r?.kind === 'stream' && r.element ? { stream: r.element } : 'value';
  return { ...(stream ? { stream } : {}), futures: futureParams(fn), result };
}

/** One call across a link as the importer's thread sees it: its answer once there, and its streams' progress. */
class Pending {
  answer: LinkAnswer | undefined;
  /** Bytes of the stream parameter sent, and taken by the target's guest. */
  sent = 0;
  taken = 0;
  /** The result stream's bytes not yet given to the guest; how it ended (undefined while open). */
  readonly chunks: Uint8Array[] = [];
  ended: { failure?: string } | undefined;
}

/** The importer thread's end: the linked interfaces' imports, each function posting its call and waiting for the answer. */
export class LinkCaller {
  readonly #port: MessagePort;
  readonly #waker: Waker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  /** `cells`: the thread's (wasi-host/core/channel.ts threadCells), whose wake counter the main thread bumps when it answers. */
  constructor(port: MessagePort, cells: SharedArrayBuffer) {
    this.#port = port;
    this.#waker = threadWaker(cells);
  }

  /** The imports of `d`'s value links, keyed as the sandbox's tables are (wit/interface-key.ts). */
  imports(d: ServiceDescriptor): Record<string, object> {
    const table: Record<string, object> = {};
    for (const link of valueLinks(d)) {
      const members: Record<string, (...args: unknown[]) => unknown> = {};
      for (const fn of linkedFunctions(d, link)) {
        const how = crossing(fn);
        members[jsIdentifier(fn.name)] = fn.async ? (...args) => this.#callAsync(link.interface, fn.name, args, how) : (...args) => this.#callSync(link.interface, fn.name, args);
      }
      table[interfaceKey(link.interface)] = members;
    }
    return table;
  }

  #post(message: LinkMessage): void {
    this.#port.postMessage(message);
  }

  #start(link: string, fn: string, args: unknown[]): [number, Pending] {
    const id = this.#nextId++;
    const pending = new Pending();
    this.#pending.set(id, pending);
    this.#post({ kind: 'call', id, link, fn, args });
    return [id, pending];
  }

  #callSync(link: string, fn: string, args: unknown[]): unknown {
    const [id, pending] = this.#start(link, fn, args);
    for (;;) {
      const seen = this.#waker.epoch();
      this.#drain();
      if (pending.answer) {
        this.#pending.delete(id);
        return settle(pending.answer);
      }
      // Bounded by the call's deadline: past it, the pool ends this thread.
      this.#waker.sleep(seen, Infinity);
    }
  }

  async #callAsync(link: string, fn: string, args: unknown[], how: Crossing): Promise<unknown> {
    // A future<T> parameter (the glue's thenable) crosses as T: the target's function gets a future resolved with it.
    for (const i of how.futures) args[i] = await args[i];
    const param = how.stream && { stream: args.splice(how.stream.at, 1)[0] as GlueStream, carried: how.stream };
    const [id, pending] = this.#start(link, fn, args);
    if (param) void this.#send(id, pending, param.stream, param.carried);
    await this.#until(pending, () => pending.answer !== undefined);
    const answer = pending.answer!;
    if (answer.kind !== 'ok' || typeof how.result !== 'object') {
      this.#over(id, pending);
      const value = settle(answer);
      return how.result === 'future' ? Promise.resolve(value) : value;
    }
    return this.#resultStream(id, pending, how.result.stream);
  }

  /**
   * The result stream as the glue takes it from the host: an async iterable
   * of chunks (a stream<u8>) or of items. Dropped by the importer's guest,
   * read or not, it is dropped on the target's side too.
   */
  #resultStream(id: number, pending: Pending, element: WitType): AsyncIterable<unknown> {
    const chunks = this.#received(id, pending);
    const items = isByteElement(element) ? chunks : new NdjsonItems(element, 'stream').items(chunks);
    const iterator: AsyncIterator<unknown, void> = {
      next: () => items.next(),
      return: (value?: unknown) => {
        this.#over(id, pending);
        return items.return(value as undefined);
      },
    };
    return { [Symbol.asyncIterator]: () => iterator };
  }

  /** The importer is done with call `id`'s streams: a result stream the target has not ended is dropped there. */
  #over(id: number, pending: Pending): void {
    if (!this.#pending.delete(id)) return;
    if (!pending.ended) this.#post({ kind: 'drop', id });
  }

  /** Resolves once `ready()` holds, reading what the main thread posted meanwhile. */
  async #until(pending: Pending, ready: () => boolean): Promise<void> {
    for (;;) {
      const seen = this.#waker.epoch();
      this.#drain();
      if (ready()) return;
      await this.#waker.moved(seen);
    }
  }

  /** The importer's stream parameter to the target, as its guest writes it, within the window the target's guest has taken. */
  async #send(id: number, pending: Pending, stream: GlueStream, carried: BodyStream): Promise<void> {
    const encode = carried.kind === 'items' ? typeCodec(carried.element).encode : undefined;
    // Nobody reads it any more: the target answered a value or failed (the importer is done with the call), or its result stream is over.
    const unread = () => !this.#pending.has(id) || pending.ended !== undefined;
    let failure: string | undefined;
    try {
      for (;;) {
        await this.#until(pending, () => unread() || pending.sent - pending.taken < STREAM_WINDOW);
        if (unread()) return;
        const { done, value } = await stream.read(readCount(!encode));
        if (done) break;
        const chunk = encode ? Buffer.from(Array.from(value as ArrayLike<unknown>, (item) => `${JSON.stringify(encode(item))}\n`).join('')) : asBytes(value as Uint8Array | number[]);
        if (chunk.length === 0) continue;
        pending.sent += chunk.length;
        this.#post({ kind: 'chunk', id, bytes: chunk });
      }
    } catch (e) {
      failure = `the caller's stream failed: ${(e as Error).message}`;
    } finally {
      stream.return().catch(() => {});
    }
    this.#post(failure ? { kind: 'end', id, failure } : { kind: 'end', id });
  }

  /** The result stream's bytes as the target's guest writes them; each chunk the guest has taken is credit back. */
  async *#received(id: number, pending: Pending): AsyncGenerator<Uint8Array, void, undefined> {
    try {
      for (;;) {
        await this.#until(pending, () => pending.chunks.length > 0 || pending.ended !== undefined);
        const chunk = pending.chunks.shift();
        if (chunk) {
          yield chunk;
          this.#post({ kind: 'took', id, bytes: chunk.length });
          continue;
        }
        // A stream that failed (the target trapped, ran out of time) fails the importer's task: its items stopped short.
        if (pending.ended?.failure) throw new Error(pending.ended.failure);
        return;
      }
    } finally {
      this.#over(id, pending);
    }
  }

  #drain(): void {
    for (let m = receiveMessageOnPort(this.#port); m; m = receiveMessageOnPort(this.#port)) {
      const reply = m.message as LinkReply;
      const pending = this.#pending.get(reply.id);
      if (!pending) continue;
      switch (reply.kind) {
        case 'taken':
          pending.taken += reply.bytes;
          break;
        case 'chunk':
          pending.chunks.push(reply.bytes);
          break;
        case 'end':
          pending.ended = reply.failure ? { failure: reply.failure } : {};
          break;
        default:
          pending.answer = reply;
      }
    }
  }
}

function asBytes(value: Uint8Array | number[]): Uint8Array {
  return value instanceof Uint8Array ? value : Uint8Array.from(value);
}

/** The err case of a result<T, E> the target returned: jco's glue lowers a thrown error's own `payload` as the importer's err. */
class LinkedErr extends Error {
  constructor(readonly payload: unknown) {
    super('the linked service returned its error case');
  }
}

/** What the importer's glue takes from its import: the value, or for an err case a thrown `payload`; any other error traps the importer. */
function settle(answer: LinkAnswer): unknown {
  if (answer.kind === 'ok') return answer.value;
  if (answer.kind === 'err') throw new LinkedErr(answer.payload);
  throw new Error(answer.message);
}

/** How long a call across a link may take to answer, and a stream it returns to end. */
export interface LinkTimeouts {
  callMs: number;
  streamMs: number;
}

/**
 * The main thread's end for one importer thread: makes each call `port`
 * brings with the service linked now (looked up per call, so a reload or
 * restart of it is seen by the next), within the timeouts, and wakes the
 * thread (its `cells`) with the answer and with what its streams bring.
 */
export function serveLinkCalls(port: MessagePort, cells: SharedArrayBuffer, d: ServiceDescriptor, services: LinkedServices, timeouts: LinkTimeouts): void {
  const calls = new LinkCallServer(port, cells, d, services, timeouts);
  port.on('message', (message: LinkMessage) => calls.receive(message));
  // The importer's thread is gone (retired, ended at a deadline): what it was calling stops.
  port.on('close', () => calls.abandon());
}

/** A call the main thread is making for an importer: its stream parameter's channel to the target, its result stream's control. */
interface Flow {
  body?: BodyChannel;
  control?: StreamControl;
  /** The importer dropped the result stream before it opened. */
  dropped?: boolean;
}

class LinkCallServer {
  readonly #flows = new Map<number, Flow>();
  /** Each linked function's target, and how its streams and futures cross, by `interface#function`. */
  readonly #linked = new Map<string, { target: ServiceId; how: Crossing }>();

  constructor(
    private readonly port: MessagePort,
    private readonly cells: SharedArrayBuffer,
    d: ServiceDescriptor,
    private readonly services: LinkedServices,
    private readonly timeouts: LinkTimeouts,
  ) {
    for (const link of valueLinks(d)) {
      for (const fn of linkedFunctions(d, link)) this.#linked.set(`${link.interface}#${fn.name}`, { target: link.target, how: crossing(fn) });
    }
  }

  receive(message: LinkMessage): void {
    const flow = this.#flows.get(message.id);
    switch (message.kind) {
      case 'call':
        void this.#answer(message).then((answered) => this.#reply(answered));
        break;
      case 'chunk':
        flow?.body?.push(message.bytes);
        break;
      case 'end':
        if (message.failure) flow?.body?.fail(message.failure);
        else flow?.body?.end();
        break;
      case 'took':
        flow?.control?.grant(message.bytes);
        break;
      case 'drop':
        if (flow?.control) flow.control.cancel();
        else if (flow) flow.dropped = true;
        this.#finish(message.id);
        break;
    }
  }

  abandon(): void {
    for (const [id, flow] of this.#flows) {
      flow.body?.fail('the caller is gone');
      flow.control?.cancel();
      this.#finish(id);
    }
  }

  #reply(message: LinkReply): void {
    this.port.postMessage(message);
    // After the post: the woken thread finds the message when it drains the port.
    wakeThread(this.cells);
  }

  #finish(id: number): void {
    this.#flows.get(id)?.body?.dispose();
    this.#flows.delete(id);
  }

  async #answer({ id, link, fn, args }: Extract<LinkMessage, { kind: 'call' }>): Promise<LinkAnswer> {
    const linked = this.#linked.get(`${link}#${fn}`);
    if (!linked) return { id, kind: 'failed', message: `${link}#${fn} is not linked to a service` };
    const { how } = linked;
    const name = serviceKey(linked.target);
    const target = this.services(linked.target);
    if (!target) return { id, kind: 'failed', message: `the linked service ${name} is not served here now` };
    const flow: Flow = {};
    this.#flows.set(id, flow);
    if (how.stream) flow.body = new BodyChannel((bytes) => this.#reply({ kind: 'taken', id, bytes }));
    const failed = (failure: Failure): LinkAnswer => (failure.kind === 'component-error' ? { id, kind: 'err', payload: failure.payload } : { id, kind: 'failed', message: `${link}#${fn} across the link to ${name} failed: ${failureText(failure)}` });
    const deadline = performance.now() + this.timeouts.callMs;
    if (typeof how.result !== 'object') {
      const result = await target.callExport(link, fn, args, deadline, flow.body);
      this.#finish(id);
      return result.kind === 'ok' ? { id, kind: 'ok', value: result.value } : failed(result);
    }
    // The result is a stream: its bytes go to the importer as the target writes them, each chunk granted back once the importer's guest has taken it.
    const sink = {
      // A view of the target's ring: copied out before the post.
      chunk: (chunk: Uint8Array) => this.#reply({ kind: 'chunk', id, bytes: chunk.slice() }),
      end: (failure?: StreamFailure) => {
        this.#reply(failure ? { kind: 'end', id, failure: `${link}#${fn} across the link to ${name} failed mid-stream: ${failureText(failure)}` } : { kind: 'end', id });
        this.#finish(id);
      },
    };
    const framing = isByteElement(how.result.stream) ? 'raw' : 'ndjson';
    const opening = await target.openExportStream(link, fn, args, deadline, { framing, window: STREAM_WINDOW, streamDeadline: performance.now() + this.timeouts.streamMs, sink }, flow.body);
    if (opening.kind !== 'open') {
      this.#finish(id);
      return failed(opening);
    }
    flow.control = opening.control;
    if (flow.dropped) opening.control.cancel();
    return { id, kind: 'ok', value: null };
  }
}

function failureText(failure: Failure): string {
  switch (failure.kind) {
    case 'component-error':
      return 'it returned its error case';
    case 'trap':
      return `it trapped: ${failure.message}`;
    case 'timeout':
      return 'it did not answer in time';
    case 'not-invocable':
      return failure.reason;
    case 'invalid-json':
    case 'invalid-arguments':
    case 'unknown-handle':
    case 'handle-ended':
    case 'handles-refused':
      return failure.details;
    default:
      return failure.kind;
  }
}
