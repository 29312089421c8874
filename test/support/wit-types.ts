// WIT types built by hand, as the component reader (lib/wit/reader.ts) gives
// them (lib/wit/types.ts): for the tests of the codec, the JSON Schemas and
// whatever else takes a WitType. Each builder makes the type without a name;
// named() gives it the origin of a named type (`record person`, `type id = u32`).

import type { PrimitiveName, TypeOrigin, WitFunction, WitType } from '../../lib/wit/types.js';

/** The WitType of kind `K`. */
export type WitTypeOf<K extends WitType['kind']> = WitType & { kind: K };

export const prim = (name: PrimitiveName): WitTypeOf<'primitive'> => ({ kind: 'primitive', name });
export const list = (element: WitType): WitTypeOf<'list'> => ({ kind: 'list', element });
/** `list<T, N>` */
export const fixedList = (element: WitType, length: number): WitTypeOf<'fixed-list'> => ({ kind: 'fixed-list', element, length });
export const tuple = (...elements: WitType[]): WitTypeOf<'tuple'> => ({ kind: 'tuple', elements });
export const option = (inner: WitType): WitTypeOf<'option'> => ({ kind: 'option', inner });
/** `result<ok, err>`; `null` for a side without a payload (`result<_, E>`, `result<T>`, `result`). */
export const result = (ok: WitType | null, err: WitType | null): WitTypeOf<'result'> => ({ kind: 'result', ok, err });

/** A record of `fields`, in the order given (WIT names begin with a letter, so an object keeps them in order). */
export const record = (fields: Record<string, WitType>): WitTypeOf<'record'> => ({
  kind: 'record',
  fields: Object.entries(fields).map(([name, type]) => ({ name, type })),
});

/** A variant of `cases`, in the order given; `null` for a case without payload. */
export const variant = (cases: Record<string, WitType | null>): WitTypeOf<'variant'> => ({
  kind: 'variant',
  cases: Object.entries(cases).map(([name, type]) => ({ name, type })),
});

export const enumOf = (...cases: string[]): WitTypeOf<'enum'> => ({ kind: 'enum', cases });
export const flags = (...names: string[]): WitTypeOf<'flags'> => ({ kind: 'flags', flags: names });
export const own = (resource: string): WitTypeOf<'own'> => ({ kind: 'own', resource });
export const borrow = (resource: string): WitTypeOf<'borrow'> => ({ kind: 'borrow', resource });
export const stream = (element: WitType | null): WitTypeOf<'stream'> => ({ kind: 'stream', element });
export const future = (element: WitType | null): WitTypeOf<'future'> => ({ kind: 'future', element });

/** `type`, named: exported as `origin.name` by `origin.interface`. */
export const named = <T extends WitType>(origin: TypeOrigin, type: T): T => ({ ...type, origin });

/** The origins of the types interface `iface` exports (`''`: the world's): `originIn('acme:demo/types@1.0.0')('person')`. */
export const originIn =
  (iface: string) =>
  (name: string): TypeOrigin => ({ interface: iface, name });

/** A function taking `params` (in the order given) and returning `result` (`null`: nothing). */
export const func = (name: string, params: Record<string, WitType>, result: WitType | null): WitFunction => ({
  name,
  params: Object.entries(params).map(([param, type]) => ({ name: param, type })),
  result,
});
