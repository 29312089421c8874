// Streaming methods (docs/api.md §5.1.1, §5.9): a function that returns a
// `stream<T>` (WASI 0.3), whose items rt reads as the guest writes them; or,
// by the WASI 0.2 convention, an owned resource, exported by the component,
// with `next: func() -> option<T>` or `next: func() -> result<option<T>, E>`,
// which rt calls until none. Either way rt writes each item as it comes.
// This module recognises them in a component's interface; nothing here runs
// anything.

import { isByteElement } from './async-abi.js';
import { containsResource, isBytes, type ComponentInterface, type WitFunction, type WitType } from './types.js';

/** How items go on the wire when the client does not ask for Server-Sent Events. */
export type ItemEncoding = 'bytes' | 'text' | 'ndjson';

interface Items {
  /** An item's type: T of `next`'s option<T>; of a `stream<T>`, T, but list<u8> for a `stream<u8>`, whose items are its chunks as the guest writes them. */
  item: WitType;
  /** E of `next`'s result<option<T>, E>, or null when the stream cannot fail (or fails with `_`). */
  error: WitType | null;
  /** Whether `next` returns a result (jco throws its err). */
  fallible: boolean;
  encoding: ItemEncoding;
}

/** A resource's `next` gives the items (WASI 0.2). */
export interface NextStream extends Items {
  source: 'next';
  /** The resource the function returns. */
  resource: string;
  /**
   * `next` as the component exports it: `<interface>#[method]<resource>.next`,
   * or `[method]<resource>.next` at world level. wit-component names the core
   * function it lifts the same, which is how rt finds it (core-byte-next.ts).
   */
  nextExport: string;
}

/** The function returns a `stream<T>` (WASI 0.3): the guest writes the items, rt reads them. */
export interface AsyncStream extends Items {
  source: 'stream';
}

export type StreamSignature = NextStream | AsyncStream;

const U8: WitType = { kind: 'primitive', name: 'u8' };

/**
 * The stream `fn` returns, when it follows the convention; a string saying
 * why not when its result is an owned resource that does not, or a stream
 * that cannot be one (so the method listing can explain); undefined when its
 * result is neither.
 */
export function streamSignature(iface: ComponentInterface, fn: WitFunction): StreamSignature | string | undefined {
  const result = fn.result;
  if (result?.kind === 'stream') return asyncStream(result.element);
  if (result?.kind !== 'own') return undefined;
  const resource = result.resource;
  // The resource's methods are exported beside the function that returns it (its own interface first).
  const owners = [{ name: null as string | null, functions: iface.functions }, ...iface.interfaces];
  owners.sort((a, b) => Number(b.functions.includes(fn)) - Number(a.functions.includes(fn)));
  const nextName = `[method]${resource}.next`;
  const owner = owners.find((o) => o.functions.some((f) => f.name === nextName));
  const next = owner?.functions.find((f) => f.name === nextName);
  if (!owner || !next) return `it returns the resource ${resource}, which has no exported next method to stream its items`;
  if (next.params.length !== 1) return `${resource}.next takes parameters; a streaming next takes none`;
  let option = next.result;
  let error: WitType | null = null;
  const fallible = option?.kind === 'result';
  if (option?.kind === 'result') {
    error = option.err;
    option = option.ok;
  }
  if (option?.kind !== 'option') return `${resource}.next returns no option<T> (or result<option<T>, E>), so it cannot end a stream`;
  const item = option.inner;
  if (item.kind === 'option') return `${resource}.next returns an option of an option: none would be ambiguous`;
  if (containsResource(item) || (error && containsResource(error))) return `the items of ${resource}.next hold a resource handle, which JSON cannot carry`;
  const nextExport = owner.name === null ? nextName : `${owner.name}#${nextName}`;
  return { source: 'next', resource, nextExport, item, error, fallible, encoding: itemEncoding(item) };
}

/** A `stream<T>` result; whether JSON can carry its items is the method listing's to say (addressing.ts). */
function asyncStream(element: WitType | null): AsyncStream | string {
  if (element === null) return 'it returns a stream without items (stream), which has nothing to answer with';
  const item: WitType = isByteElement(element) ? { kind: 'list', element: U8 } : element;
  return { source: 'stream', item, error: null, fallible: false, encoding: itemEncoding(item) };
}

function itemEncoding(item: WitType): ItemEncoding {
  if (isBytes(item)) return 'bytes';
  if (item.kind === 'primitive' && item.name === 'string') return 'text';
  return 'ndjson';
}

export const SSE_MEDIA_TYPE = 'text/event-stream';

/** The media type of a stream's items as written without SSE; `declared` is the sidecar's, for byte items. */
export function streamMediaType(encoding: ItemEncoding, declared?: string): string {
  switch (encoding) {
    case 'bytes':
      return declared ?? 'application/octet-stream';
    case 'text':
      return 'text/plain; charset=utf-8';
    case 'ndjson':
      return 'application/x-ndjson';
  }
}
