// Whether a component uses the component model's async ABI, as WASI 0.3
// components do (`async func`, `stream<T>`, `future<T>`). jco's glue runs such
// a component only through JSPI (`WebAssembly.Suspending`), which some Node
// lines lack (lib/platform.ts): rt names what needs it when it cannot load one.

import { innerTypes, type ComponentInterface, type WitFunction, type WitType } from './types.js';

/** What in `iface` first uses the async ABI, in words for an error ("its export `f` is an async function"); undefined when nothing does. */
export function asyncAbiUse(iface: ComponentInterface): string | undefined {
  const exported: [string, WitFunction][] = [
    ...iface.functions.map((fn): [string, WitFunction] => [fn.name, fn]),
    ...iface.interfaces.flatMap((i) => i.functions.map((fn): [string, WitFunction] => [`${i.name}#${fn.name}`, fn])),
  ];
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
