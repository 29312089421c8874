// The handles of one component instance, where the instance is (inline on
// the worker's main thread, or on an instance thread): id → the resource
// object jco's glue made. A call that involves handles runs here as one
// synchronous unit (`callWithHandles`): its JSON arguments are decoded with
// this table resolving the ids they name, the call is made, and its result
// is encoded with this table issuing ids for the resources it returns. What
// changed (handles issued, handles moved into the call) goes back to the
// worker's directory (handle-directory.ts), which routes later requests here.

import type { MethodDescriptor } from '../../service.js';
import type { FunctionCodec } from '../../wit/codec.js';
import { decodeJson, decodeValue, type DecodedJson } from '../../wit/decode-json.js';
import { HandleMismatch, handleExpected, resourceKey, withHandleScope, type HandleScope, type HandleType } from '../../wit/handles.js';
import type { CallOutcome, ComponentInstance } from './component-instance.js';
import { mintHandleId, type HandleIssuer } from './handle-ids.js';
import type { Input } from './invocation.js';
import { callCodec } from './method.js';

/** A handle made by a call: its id and its resource (resourceKey). */
export interface IssuedHandle {
  id: string;
  key: string;
}

/** A call that involves handles, as the instance gets it: the method, a method's `self` handle, and the request's input (decoded here). */
export interface HandleCall {
  method: number;
  self?: string;
  input: Input;
}

/**
 * What came of a handle call: the outcome, and the handles it made and took.
 * A result that holds handles is JSON already (encoded here, where its
 * resources are); any other is the jco value, encoded where every result is.
 */
export type HandleCallResult =
  | { kind: 'called'; outcome: CallOutcome; issued: IssuedHandle[]; consumed: string[] }
  /** The input did not decode: the call was not made. */
  | Exclude<DecodedJson, { kind: 'arguments' }>;

interface Entry {
  object: unknown;
  key: string;
}

export class HandleTable {
  readonly #entries = new Map<string, Entry>();
  readonly #codecs: (FunctionCodec | undefined)[] = [];

  constructor(
    private readonly issuer: HandleIssuer,
    private readonly methods: MethodDescriptor[],
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  ids(): string[] {
    return [...this.#entries.keys()];
  }

  /** Makes `call` on `instance` (whose handles these are). */
  call(instance: ComponentInstance, call: HandleCall): HandleCallResult {
    const method = this.methods[call.method];
    const codec = (this.#codecs[call.method] ??= callCodec(method));
    const issued: IssuedHandle[] = [];
    const consumed: string[] = [];
    const scope: HandleScope = {
      resolve: (id, t) => {
        const entry = this.#entries.get(id);
        if (!entry) throw new HandleMismatch('ended', handleExpected(t), `the handle ${JSON.stringify(id)} has ended`);
        if (entry.key !== resourceKey(t)) throw new HandleMismatch('wrong-resource', handleExpected(t), `the handle is not a ${t.resource}`);
        if (t.kind === 'own') consumed.push(id);
        return entry.object;
      },
      issue: (value, t) => {
        const id = mintHandleId(this.issuer);
        this.#entries.set(id, { object: value, key: resourceKey(t) });
        issued.push({ id, key: resourceKey(t) });
        return id;
      },
    };
    const decoded = withHandleScope(scope, () => (call.input.kind === 'json' ? decodeJson(codec, call.input.bytes) : decodeValue(codec, call.input.kind === 'bytes' ? [call.input.bytes] : undefined)));
    if (decoded.kind !== 'arguments') return decoded;
    let args = decoded.args;
    if (call.self !== undefined) {
      const self = this.#entries.get(call.self);
      const selfType = method.function.params[0].type as HandleType;
      if (!self || self.key !== resourceKey(selfType)) return { kind: 'handle-ended', details: `the handle ${JSON.stringify(call.self)} has ended` };
      args = [self.object, ...args];
    }
    // Moved into the call: jco's glue has taken the resource from its object, which now holds nothing.
    for (const id of consumed) this.#entries.delete(id);
    let outcome = instance.call(call.method, args);
    if (method.handles?.result) {
      const made = outcome;
      outcome = withHandleScope(scope, (): CallOutcome => {
        if (made.kind === 'ok') return { kind: 'ok', value: codec.encodeResult(made.value) };
        if (made.kind === 'component-error') return { kind: 'component-error', payload: codec.encodeError(made.payload) };
        return made;
      });
    }
    return { kind: 'called', outcome, issued, consumed };
  }

  /** Drops handle `id`: the guest's destructor runs. Undefined when there is no such handle. */
  drop(instance: ComponentInstance, id: string): CallOutcome | undefined {
    const entry = this.#entries.get(id);
    if (!entry) return undefined;
    this.#entries.delete(id);
    return instance.drop(entry.object);
  }
}
