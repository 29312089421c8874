// A component's own function types (types.ts, as rt read them from the
// binary) as the canonical ABI's (abi-types.ts), for rt's own host to call
// its exports: the values are jco's (codec-types.ts makes them from JSON),
// so a numeric list is a typed array and an option of an option is tagged
// as jco tags it. A type rt's own host does not lift (floats, chars,
// flags, fixed-length lists, handles, a stream or future without a
// payload) says so: such a component is jco's glue's to run.

import type { WitFunction, WitType } from '../types.js';
import { TYPED_ARRAYS } from '../json-numbers.js';
import { t, type AbiType, type FuturePayload, type PayloadKind, type TypedArrayClass } from './abi-types.js';

/** The payload kinds of an export's streams: its bytes come as chunks (a request body), numbers in arrays (a chunk's NDJSON lines: ndjson-items.ts), other items one by one. */
export const STREAM_KINDS = { bytes: 'export-bytes', numbers: 'export-numbers', items: 'export-items' } as const satisfies Record<string, PayloadKind>;

/** An export's types, as rt's own host lowers its arguments and lifts its results. */
export interface ExportTypes {
  params: AbiType[];
  result: AbiType | undefined;
}

/** What a future of a component's own types carries, by the kind `exportTypes` gave it. */
export type FutureKinds = Map<PayloadKind, FuturePayload>;

/** A value type rt's own host does not lift: why. */
class Unlifted extends Error {}

/** `fn`'s types, or why rt's own host does not take them; its futures' payloads are registered in `futures`. */
export function exportTypes(fn: WitFunction, futures: FutureKinds): ExportTypes | { reason: string } {
  try {
    return { params: fn.params.map((p) => abiType(p.type, futures)), result: fn.result ? abiType(fn.result, futures) : undefined };
  } catch (e) {
    if (e instanceof Unlifted) return { reason: `its function ${fn.name} ${e.message}` };
    throw e;
  }
}

const PLAIN = {
  bool: t.bool,
  u8: t.u8,
  s8: t.s8,
  u16: t.u16,
  s16: t.s16,
  u32: t.u32,
  s32: t.s32,
  u64: t.u64,
  s64: t.s64,
  f32: t.f32,
  f64: t.f64,
  string: t.string,
} as const satisfies Record<string, AbiType>;

function abiType(type: WitType, futures: FutureKinds): AbiType {
  switch (type.kind) {
    case 'primitive': {
      const plain = (PLAIN as Record<string, AbiType | undefined>)[type.name];
      if (!plain) throw new Unlifted(`passes a ${type.name}`);
      return plain;
    }
    case 'list': {
      const of = abiType(type.element, futures);
      if (of.kind === 'u8') return t.bytes;
      const typed = (TYPED_ARRAYS as Record<string, TypedArrayClass | undefined>)[of.kind];
      return typed ? { kind: 'list', of, typed } : t.list(of);
    }
    case 'tuple':
      return t.tuple(...type.elements.map((e) => abiType(e, futures)));
    case 'record':
      return t.record(...type.fields.map((f): [string, AbiType] => [f.name, abiType(f.type, futures)]));
    case 'variant':
      return t.variant(...type.cases.map((c): [string, AbiType?] => [c.name, c.type ? abiType(c.type, futures) : undefined]));
    case 'enum':
      return t.enum(...type.cases);
    case 'option': {
      const of = abiType(type.inner, futures);
      // jco writes an option of an option it writes as `T | undefined` tagged (codec-types.ts).
      return of.kind === 'option' && !of.tagged ? { kind: 'option', of, tagged: true } : t.option(of);
    }
    case 'result':
      return t.result(type.ok ? abiType(type.ok, futures) : undefined, type.err ? abiType(type.err, futures) : undefined);
    case 'stream': {
      if (!type.element) throw new Unlifted('passes a stream without items');
      const element = abiType(type.element, futures);
      if (element.kind === 'u8') return t.stream(STREAM_KINDS.bytes);
      return t.stream(Object.hasOwn(TYPED_ARRAYS, element.kind) ? STREAM_KINDS.numbers : STREAM_KINDS.items, element);
    }
    case 'future': {
      if (!type.element) throw new Unlifted('passes a future without a value');
      const kind = `export-future-${futures.size}`;
      futures.set(kind, { type: abiType(type.element, futures), dropped: undefined, droppedFails: 'the guest dropped a future it had not written' });
      return t.future(kind);
    }
    default:
      throw new Unlifted(`passes a ${type.kind}`);
  }
}
