// Whether a component uses the component model's async ABI, as WASI 0.3
// components do (`async func`, `stream<T>`, `future<T>`). jco's glue runs such
// a component only through JSPI (`WebAssembly.Suspending`), which some Node
// lines lack (lib/platform.ts): rt names what needs it when it cannot load one.

import { innerTypes, type ComponentInterface, type WitFunction, type WitType } from './types.js';

/** Every function `iface` exports, by the name jco knows it by (`f`, `ns:pkg/iface@1.0.0#f`). */
export function exportedFunctions(iface: ComponentInterface): [string, WitFunction][] {
  return [...iface.functions.map((fn): [string, WitFunction] => [fn.name, fn]), ...iface.interfaces.flatMap((i) => i.functions.map((fn): [string, WitFunction] => [`${i.name}#${fn.name}`, fn]))];
}

/** Whether a call of `fn` answers later than it returns: an async function, or one that takes or returns a future<T>, or takes a stream<T> (docs/api.md §5.9). */
export function answersLater(fn: WitFunction): boolean {
  return fn.async === true || fn.result?.kind === 'future' || fn.params.some((p) => p.type.kind === 'future' || p.type.kind === 'stream');
}

/**
 * `fn` as invoke takes and answers it: a future<T> parameter is written as
 * T (the function gets a future resolved with it: futureParams), a
 * stream<T> parameter is not among the arguments (it is the request body:
 * bodyStreamParam), a future<T> result is answered as T once the future
 * resolves (future without a payload: null).
 */
export function asInvoked(fn: WitFunction): WitFunction {
  const written = bodyStreamParam(fn) === undefined ? fn.params : fn.params.filter((p) => p.type.kind !== 'stream');
  const params = futureParams(fn).length === 0 ? written : written.map((p) => (p.type.kind === 'future' && p.type.element ? { ...p, type: p.type.element } : p));
  const result = fn.result?.kind === 'future' ? fn.result.element : fn.result;
  return params === fn.params && result === fn.result ? fn : { ...fn, params, result };
}

/** The position of `fn`'s stream<T> parameter, which invoke reads from the request body as it arrives (docs/api.md §5.9); undefined when it has none. */
export function bodyStreamParam(fn: WitFunction): number | undefined {
  const at = fn.params.findIndex((p) => p.type.kind === 'stream');
  return at === -1 ? undefined : at;
}

/** NDJSON's media type: a stream<T> parameter of items other than bytes is read as one JSON value per line. */
export const NDJSON_MEDIA_TYPE = 'application/x-ndjson';

/** `fn`'s stream parameter as the request body carries it: at position `at`, a stream<u8>'s raw bytes (`bytes`), or a stream<T>'s items as NDJSON (`items`, of type `element`). */
export type BodyStream = { at: number; kind: 'bytes'; mediaType: string } | { at: number; kind: 'items'; mediaType: string; element: WitType };

/** Whether a stream of `element`s is a stream<u8>, whose items go as raw bytes (others' as JSON values). */
export function isByteElement(element: WitType | null): boolean {
  return element?.kind === 'primitive' && element.name === 'u8';
}

/** How the request body carries `fn`'s stream parameter (bodyStreamParam); undefined when it takes none, or one without items. */
export function bodyStreamItems(fn: WitFunction): BodyStream | undefined {
  const at = bodyStreamParam(fn);
  if (at === undefined) return undefined;
  const { type } = fn.params[at];
  const element = type.kind === 'stream' ? type.element : null;
  if (isByteElement(element)) return { at, kind: 'bytes', mediaType: 'application/octet-stream' };
  return element ? { at, kind: 'items', mediaType: NDJSON_MEDIA_TYPE, element } : undefined;
}

/** The positions of `fn`'s future<T> parameters: what invoke decodes as T, the call gets as a future resolved with it. */
export function futureParams(fn: WitFunction): number[] {
  const found: number[] = [];
  fn.params.forEach((p, i) => {
    if (p.type.kind === 'future') found.push(i);
  });
  return found;
}

/** What in `iface` first uses the async ABI, in words for an error ("its export `f` is an async function"); undefined when nothing does. */
export function asyncAbiUse(iface: ComponentInterface): string | undefined {
  const exported = exportedFunctions(iface);
  const imported: [string, WitFunction][] = iface.imports.flatMap((item) => [
    ...(item.function ? [[item.name, item.function] as [string, WitFunction]] : []),
    ...(item.functions ?? []).map((fn): [string, WitFunction] => [`${item.name}#${fn.name}`, fn]),
  ]);
  for (const [side, functions] of [['export', exported], ['import', imported]] as const) {
    for (const [name, fn] of functions) {
      if (fn.async) return `its ${side} \`${name}\` is an async function`;
      const carried = [...fn.params.map((p) => p.type), ...(fn.result ? [fn.result] : [])].map(asyncValue).find((kind) => kind !== undefined);
      if (carried) return `its ${side} \`${name}\` takes or returns a ${carried}`;
    }
  }
  return undefined;
}

/** `stream` or `future` when `t` carries one, anywhere inside it. */
function asyncValue(t: WitType): 'stream' | 'future' | undefined {
  if (t.kind === 'stream' || t.kind === 'future') return t.kind;
  for (const inner of innerTypes(t)) {
    const found = asyncValue(inner);
    if (found) return found;
  }
  return undefined;
}
