// The handles a call names (docs/api.md §5.1.2), from its path (a method's
// `self`) and its JSON body (own and borrow parameters at any depth), looked
// up in the worker's directory. They must all live in one instance (the call
// runs there), or all in one other worker (the HTTP layer sends the request
// there). The body is decoded here to find them, and
// checked with it, before any instance is asked; the instance decodes it
// again with its own table (handle-table.ts), which holds the objects.

import type { ServiceDescriptor } from '../../service.js';
import type { FunctionCodec } from '../../wit/codec.js';
import { HandleMismatch, handleExpected, resourceKey, withHandleScope, type HandleType } from '../../wit/handles.js';
import { callArguments } from './arguments.js';
import type { HandleDirectory, HandleHolder } from './handle-directory.js';
import { redactHandleId, redactScope } from './handle-ids.js';
import type { Failure, Input } from './invocation.js';
import type { Method } from './method.js';

export class CallHandles {
  /** The instance the named handles live in. */
  holder: HandleHolder | undefined;
  /** The other worker they live in. */
  otherWorker: number | undefined;
  /** The handles named, live here (their last use is now). */
  readonly used: string[] = [];
  /** The handle scopes of the handles named, live here. */
  readonly #scopes = new Set<string>();
  /** Named handles live in two instances of this worker. */
  #apart = false;
  /** Named handles live in two other workers. */
  #workersApart = false;

  constructor(
    private readonly directory: HandleDirectory,
    private readonly descriptor: ServiceDescriptor,
  ) {}

  /** A method's `self` handle, from the path; a failure when it cannot be called there. */
  self(id: string, method: Method): Failure | undefined {
    const selfType = method.descriptor.function.params[0]?.type;
    if (method.descriptor.member?.kind !== 'method' || (selfType?.kind !== 'borrow' && selfType?.kind !== 'own')) {
      return { kind: 'invalid-arguments', details: `${method.descriptor.name} is not a method of a resource` };
    }
    try {
      this.#find(id, selfType);
      return undefined;
    } catch (e) {
      if (!(e instanceof HandleMismatch)) throw e;
      if (e.problem === 'wrong-resource') return { kind: 'invalid-arguments', details: e.detail };
      return { kind: e.problem === 'unknown' ? 'unknown-handle' : 'handle-ended', details: e.detail };
    }
  }

  /** The handle scope of the handles named, when they live here (a call runs in it). */
  get scope(): string | undefined {
    return this.#scopes.size === 1 ? this.#scopes.values().next().value : undefined;
  }

  /** Checks the body (decoding it, with the handles it names looked up); why it cannot be called, if it cannot. */
  check(codec: FunctionCodec, input: Input): Failure | undefined {
    const decoded = withHandleScope({ resolve: (id, t) => this.#find(id, t), issue: () => '' }, () => callArguments(codec, input));
    if (decoded.kind !== 'arguments' && decoded.kind !== 'large-json') return decoded;
    if (this.#scopes.size > 1) {
      const scopes = [...this.#scopes].map(redactScope).join(', ');
      return { kind: 'handles-refused', details: `the handles it names belong to different handle scopes (${scopes}): a call runs in one scope's instance` };
    }
    if (this.#workersApart || (this.otherWorker !== undefined && this.used.length > 0)) {
      // A scope's handles all live in its home worker: handles in two workers belong to two scopes.
      const here = this.scope === undefined ? '' : ` (one of them ${redactScope(this.scope)})`;
      return { kind: 'handles-refused', details: `the handles it names live in different workers, so they belong to different handle scopes${here}: a call runs in one scope's instance` };
    }
    if (this.#apart) return { kind: 'handles-refused', details: 'the handles it names live in different instances: a call reaches one instance' };
    return undefined;
  }

  #find(id: string, t: HandleType): string {
    const where = this.directory.locate(id);
    switch (where.kind) {
      case 'unknown':
        throw new HandleMismatch('unknown', handleExpected(t), neverIssued(id));
      case 'ended':
        throw new HandleMismatch('ended', handleExpected(t), endedBecause(where.why));
      case 'other-worker':
        if (this.otherWorker !== undefined && this.otherWorker !== where.worker) this.#workersApart = true;
        this.otherWorker = where.worker;
        return id;
      case 'live':
        break;
    }
    const found = where.handle;
    if (found.key !== resourceKey(t)) {
      const actual = this.descriptor.resources.find((r) => r.key === found.key)?.name ?? found.key;
      throw new HandleMismatch('wrong-resource', handleExpected(t), `the handle is a ${actual}, not a ${t.resource}`);
    }
    if (this.holder !== undefined && this.holder !== found.holder) this.#apart = true;
    this.holder = found.holder;
    this.#scopes.add(found.scope);
    this.used.push(id);
    return id;
  }
}

/** Why an id cannot be used: rt never issued it (404). Only part of it is shown: a guess at a live one must not be echoed whole. */
export function neverIssued(id: string): string {
  return `no handle ${JSON.stringify(redactHandleId(id))} was ever issued`;
}

/** Why a handle rt issued cannot be used any more (410). */
export function endedBecause(why: string): string {
  return `the handle has ended: ${why}`;
}
