// wasi:http/types#fields, as 0.2 has it (0.3's adds two names: p3/fields.ts):
// headers and trailers, validated as wasi:http says.
//
// Names are HTTP tokens, kept lowercase (as wasmtime's, through the http
// crate); values are bytes without control characters other than tab.
// Forbidden names are wasmtime's default set: a guest cannot set them, since
// the connection's framing is the host's. Fields attached to a request or
// response (or handed in by rt) are immutable: set, delete and append answer
// `immutable`. Which of a client's headers reach the guest (hop-by-hop ones
// stripped) is the caller's decision, not checked here.

import { FORBIDDEN_HEADERS, isValidFieldName, isValidFieldValue, type FieldEntry } from './field-rules.js';
import { assignRep, WasiError } from './host-objects.js';

export type { FieldEntry } from './field-rules.js';

export type HeaderError = { tag: 'invalid-syntax' } | { tag: 'forbidden' } | { tag: 'immutable' };

const headerError = (tag: HeaderError['tag']): WasiError<HeaderError> => new WasiError<HeaderError>({ tag });

export class Fields {
  #entries: FieldEntry[] = [];
  #immutable = false;

  constructor() {
    assignRep(this);
  }

  // `this`, not Fields: 0.3's fields (p3/fields.ts) are made as their own class, which its glue checks for.
  static fromList<T extends Fields>(this: new () => T, entries: [string, Uint8Array][]): T {
    const fields = new this();
    for (const [name, value] of entries) {
      checkEntry(name, value);
      fields.#entries.push([name.toLowerCase(), value.slice()]);
    }
    return fields;
  }

  /** rt's constructor for headers it hands in (a request's): taken as given, and immutable. */
  static fromHost<T extends Fields>(this: new () => T, entries: readonly FieldEntry[]): T {
    const fields = new this();
    fields.#entries = entries.map(([name, value]) => [name.toLowerCase(), value]);
    fields.#immutable = true;
    return fields;
  }

  /** @internal Attaching to a request, response or trailers makes fields read-only for the guest. */
  freeze(): void {
    this.#immutable = true;
  }

  /** @internal A copy of the entries for rt's side. */
  list(): FieldEntry[] {
    return this.#entries.map(([name, value]) => [name, value]);
  }

  get(name: string): Uint8Array[] {
    const key = name.toLowerCase();
    return this.#entries.filter(([n]) => n === key).map(([, v]) => v.slice());
  }

  has(name: string): boolean {
    const key = name.toLowerCase();
    return this.#entries.some(([n]) => n === key);
  }

  set(name: string, values: Uint8Array[]): void {
    this.#mutable();
    for (const value of values) checkEntry(name, value);
    if (values.length === 0) checkName(name);
    const key = name.toLowerCase();
    this.#entries = this.#entries.filter(([n]) => n !== key);
    for (const value of values) this.#entries.push([key, value.slice()]);
  }

  delete(name: string): void {
    this.#mutable();
    checkName(name);
    const key = name.toLowerCase();
    this.#entries = this.#entries.filter(([n]) => n !== key);
  }

  append(name: string, value: Uint8Array): void {
    this.#mutable();
    checkEntry(name, value);
    this.#entries.push([name.toLowerCase(), value.slice()]);
  }

  entries(): [string, Uint8Array][] {
    return this.#entries.map(([n, v]) => [n, v.slice()]);
  }

  /** A mutable copy, whatever this one is. */
  clone(): Fields {
    const copy = new (this.constructor as new () => Fields)();
    copy.#entries = this.list();
    return copy;
  }

  #mutable(): void {
    if (this.#immutable) throw headerError('immutable');
  }

  [Symbol.dispose](): void {}
}

function checkName(name: string): void {
  if (!isValidFieldName(name)) throw headerError('invalid-syntax');
  if (FORBIDDEN_HEADERS.has(name.toLowerCase())) throw headerError('forbidden');
}

function checkEntry(name: string, value: Uint8Array): void {
  checkName(name);
  if (!isValidFieldValue(value)) throw headerError('invalid-syntax');
}
