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

import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { HANDLER_LINK, serviceKey, type ServiceDescriptor } from '../../service.js';
import { interfaceKey, unversioned } from '../../wit/interface-key.js';
import { jsIdentifier } from '../../wit/js-names.js';
import { threadWaker, wakeThread, type Waker } from '../wasi-host/index.js';
import type { Failure } from './invocation.js';
import type { LinkedServices } from './link-target.js';

/** Importer's thread → main: call `fn` of the linked interface `link`. */
export interface LinkCall {
  id: number;
  link: string;
  fn: string;
  args: unknown[];
}

/** Main → importer's thread: the call's value, its err case (of a result<T, E>), or why it failed (the importer traps). */
export type LinkAnswer = { id: number; kind: 'ok'; value: unknown } | { id: number; kind: 'err'; payload: unknown } | { id: number; kind: 'failed'; message: string };

/** The links of `d` that LinkCaller and serveLinkCalls carry: every one but a middleware's handler. */
export function valueLinks(d: ServiceDescriptor): ServiceDescriptor['links'] {
  return d.links.filter((l) => unversioned(l.interface) !== HANDLER_LINK);
}

/** The importer thread's end: the linked interfaces' imports, each function posting its call and waiting for the answer. */
export class LinkCaller {
  readonly #port: MessagePort;
  readonly #waker: Waker;
  readonly #answers = new Map<number, LinkAnswer>();
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
      for (const fn of d.interface.imports.find((i) => i.name === link.interface)?.functions ?? []) {
        members[jsIdentifier(fn.name)] = fn.async ? (...args) => this.#callAsync(link.interface, fn.name, args) : (...args) => this.#callSync(link.interface, fn.name, args);
      }
      table[interfaceKey(link.interface)] = members;
    }
    return table;
  }

  #post(link: string, fn: string, args: unknown[]): number {
    const id = this.#nextId++;
    this.#port.postMessage({ id, link, fn, args } satisfies LinkCall);
    return id;
  }

  #callSync(link: string, fn: string, args: unknown[]): unknown {
    const id = this.#post(link, fn, args);
    for (;;) {
      const seen = this.#waker.epoch();
      const answer = this.#take(id);
      if (answer) return settle(answer);
      // Bounded by the call's deadline: past it, the pool ends this thread.
      this.#waker.sleep(seen, Infinity);
    }
  }

  async #callAsync(link: string, fn: string, args: unknown[]): Promise<unknown> {
    const id = this.#post(link, fn, args);
    for (;;) {
      const seen = this.#waker.epoch();
      const answer = this.#take(id);
      if (answer) return settle(answer);
      await this.#waker.moved(seen);
    }
  }

  #take(id: number): LinkAnswer | undefined {
    for (let m = receiveMessageOnPort(this.#port); m; m = receiveMessageOnPort(this.#port)) {
      const answer = m.message as LinkAnswer;
      this.#answers.set(answer.id, answer);
    }
    const answer = this.#answers.get(id);
    this.#answers.delete(id);
    return answer;
  }
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

/**
 * The main thread's end for one importer thread: makes each call `port`
 * brings with the service linked now (looked up per call, so a reload or
 * restart of it is seen by the next), within `timeoutMs`, and wakes the
 * thread (its `cells`) with the answer.
 */
export function serveLinkCalls(port: MessagePort, cells: SharedArrayBuffer, d: ServiceDescriptor, services: LinkedServices, timeoutMs: number): void {
  port.on('message', (call: LinkCall) => {
    void answer(call, d, services, timeoutMs).then((answered) => {
      port.postMessage(answered);
      // After the post: the woken thread finds the answer when it drains the port.
      wakeThread(cells);
    });
  });
}

async function answer({ id, link, fn, args }: LinkCall, d: ServiceDescriptor, services: LinkedServices, timeoutMs: number): Promise<LinkAnswer> {
  const linked = valueLinks(d).find((l) => l.interface === link);
  if (!linked) return { id, kind: 'failed', message: `${link} is not linked to a service` };
  const name = serviceKey(linked.target);
  const target = services(linked.target);
  if (!target) return { id, kind: 'failed', message: `the linked service ${name} is not served here now` };
  const result = await target.callExport(link, fn, args, performance.now() + timeoutMs);
  if (result.kind === 'ok') return { id, kind: 'ok', value: result.value };
  if (result.kind === 'component-error') return { id, kind: 'err', payload: result.payload };
  return { id, kind: 'failed', message: `${link}#${fn} across the link to ${name} failed: ${failureText(result)}` };
}

function failureText(failure: Exclude<Failure, { kind: 'component-error' }>): string {
  switch (failure.kind) {
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
