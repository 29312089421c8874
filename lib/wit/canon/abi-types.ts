// The component model's canonical ABI for the value types rt's own host
// passes (design/mvp/CanonicalABI.md): how a value lies in a guest's linear
// memory (size, alignment, load, store) and in core values (flattening, lift
// and lower). Values are what jco's glue makes of them, so that rt's host
// objects (wasi-host/p3) serve either host: a u64 is a bigint, a list<u8> a
// Uint8Array, an option its value or undefined, a variant or result
// `{ tag, val }`, a record an object keyed in camelCase, another numeric list
// a typed array, an option of an option `{ tag: 'none' | 'some', val }`.
//
// Handles, streams and futures are the instance's business (its table, its
// copies: lib/worker/execution/async-abi): they go through the `Handles` a
// lift or lower is given.

import { AbiTrap, type GuestMemory } from './guest-memory.js';
import { jsIdentifier } from '../js-names.js';

/** A resource type's host class: a handle is checked against it when lifted (its constructor may be private). */
export interface HostClass {
  readonly prototype: object;
  readonly name: string;
}

/** Which future or stream a value of that type is, as the instance's copies know it (copies.ts). */
export type PayloadKind = string;

export type AbiType =
  | { kind: 'bool' | 'u8' | 's8' | 'u16' | 's16' | 'u32' | 's32' | 'u64' | 's64' | 'f32' | 'f64' | 'string' | 'bytes' }
  /** `typed`: the typed array jco gives a list of numbers as (a list<u8> is `bytes`). */
  | { kind: 'list'; of: AbiType; typed?: TypedArrayClass }
  | { kind: 'record'; fields: readonly (readonly [string, AbiType])[] }
  | { kind: 'tuple'; of: readonly AbiType[] }
  | { kind: 'variant'; cases: readonly (readonly [string, AbiType | undefined])[] }
  | { kind: 'enum'; names: readonly string[] }
  /** `tagged`: written `{ tag: 'none' | 'some', val }`, as jco writes an option whose payload is an option it writes as `T | undefined`. */
  | { kind: 'option'; of: AbiType; tagged?: boolean }
  | { kind: 'result'; ok: AbiType | undefined; err: AbiType | undefined }
  | { kind: 'own' | 'borrow'; resource: HostClass }
  /** A stream's `element`: absent for a stream<u8>, whose items go as bytes. */
  | { kind: 'stream'; payload: PayloadKind; element?: AbiType }
  | { kind: 'future'; payload: PayloadKind };

/** A stream or future type. */
export type Carrier = Extract<AbiType, { kind: 'stream' | 'future' }>;

/** A typed array's class, as a list of numbers is lifted to. */
export type TypedArrayClass = new (buffer: ArrayBuffer, byteOffset?: number, length?: number) => ArrayLike<number | bigint>;

/** A host function as rt's own host serves it: its WIT types, and what it does with lifted values (a result-typed one returns `{ tag, val }`). */
export interface HostFunction {
  params: readonly AbiType[];
  result?: AbiType;
  call: (...args: never[]) => unknown;
}

/** Items rt hands a guest: what it reads its stream from (a stream<u8>'s bytes, others' items; undefined at the end). */
export interface StreamSource {
  read(max: number): Promise<Uint8Array | readonly unknown[] | undefined>;
  close(): void;
}

/** What a future of a kind holds, and what rt's side gets if the guest drops its writable end unwritten: `dropped`, or a failure saying `droppedFails`. */
export interface FuturePayload {
  type: AbiType;
  dropped: unknown;
  droppedFails?: string;
}

/** What an instance's streams and futures carry, by kind (the WASI layer's: wasi-host/p3/canon-functions.ts). */
export interface Payloads {
  /** A stream of this kind that rt hands a guest (`value`): how its items are read. */
  streamSource(kind: PayloadKind, value: unknown): StreamSource;
  future(kind: PayloadKind): FuturePayload;
}

/** What a lift or lower does with handles: the instance's table and copies. */
export interface Handles {
  /** A new owned handle to `object` in the guest's table. */
  own(object: object): number;
  /** The object an owned handle held (the handle is gone from the table). */
  take(handle: number, resource: HostClass): object;
  /** The object a borrowed handle refers to. */
  borrow(handle: number, resource: HostClass): object;
  /** The host's side of a readable end the guest hands over (gone from its table). */
  liftReadable(handle: number, type: Carrier): unknown;
  /** A new readable end in the guest's table for what the host hands it. */
  lowerReadable(value: unknown, type: Carrier): number;
}

export type CoreValue = number | bigint;
type Flat = 'i32' | 'i64' | 'f32' | 'f64';

export const t = {
  bool: { kind: 'bool' },
  u8: { kind: 'u8' },
  s8: { kind: 's8' },
  u16: { kind: 'u16' },
  s16: { kind: 's16' },
  u32: { kind: 'u32' },
  s32: { kind: 's32' },
  s64: { kind: 's64' },
  u64: { kind: 'u64' },
  f32: { kind: 'f32' },
  f64: { kind: 'f64' },
  string: { kind: 'string' },
  bytes: { kind: 'bytes' },
  list: (of: AbiType): AbiType => ({ kind: 'list', of }),
  tuple: (...of: AbiType[]): AbiType => ({ kind: 'tuple', of }),
  record: (...fields: [string, AbiType][]): AbiType => ({ kind: 'record', fields }),
  variant: (...cases: [string, AbiType?][]): AbiType => ({ kind: 'variant', cases: cases.map(([name, type]) => [name, type] as const) }),
  enum: (...names: string[]): AbiType => ({ kind: 'enum', names }),
  option: (of: AbiType): AbiType => ({ kind: 'option', of }),
  result: (ok?: AbiType, err?: AbiType): AbiType => ({ kind: 'result', ok, err }),
  own: (resource: HostClass): AbiType => ({ kind: 'own', resource }),
  borrow: (resource: HostClass): AbiType => ({ kind: 'borrow', resource }),
  stream: (payload: PayloadKind, element?: AbiType): AbiType => (element ? { kind: 'stream', payload, element } : { kind: 'stream', payload }),
  future: (payload: PayloadKind): AbiType => ({ kind: 'future', payload }),
} as const satisfies Record<string, AbiType | ((...args: never[]) => AbiType)>;

interface Layout {
  size: number;
  align: number;
  /** A variant's: the discriminant's size, and where the payload begins. */
  discSize?: number;
  payloadOffset?: number;
  /** A record's or tuple's: each field's offset. */
  offsets?: number[];
}

const layouts = new WeakMap<AbiType, Layout>();
const flats = new WeakMap<AbiType, Flat[]>();

const alignTo = (n: number, align: number) => Math.ceil(n / align) * align;

/** How wide a discriminant of `cases` cases is. */
const discSizeOf = (cases: number) => (cases <= 256 ? 1 : cases <= 65_536 ? 2 : 4);

function enumName(type: Extract<AbiType, { kind: 'enum' }>, i: number): string {
  if (i >= type.names.length) throw new AbiTrap(`invalid enum value ${i}`);
  return type.names[i];
}

function enumIndex(type: Extract<AbiType, { kind: 'enum' }>, value: unknown): number {
  const i = type.names.indexOf(value as string);
  if (i < 0) throw new Error(`no case ${String(value)} in the enum`);
  return i;
}

/** The cases of a variant-like type: a variant's own, an option's none and some, a result's ok and err. */
function casesOf(type: Extract<AbiType, { kind: 'variant' | 'option' | 'result' }>): readonly (AbiType | undefined)[] {
  if (type.kind === 'variant') return type.cases.map(([, c]) => c);
  if (type.kind === 'option') return [undefined, type.of];
  return [type.ok, type.err];
}

function fieldsOf(type: Extract<AbiType, { kind: 'record' | 'tuple' }>): readonly AbiType[] {
  return type.kind === 'record' ? type.fields.map(([, f]) => f) : type.of;
}

/** The stream and future types within `types`, in order, depth first: how wit-component numbers a function's (its parameters, then its result). */
export function streamsAndFutures(types: readonly (AbiType | undefined)[]): Carrier[] {
  return types.flatMap((type): Carrier[] => {
    switch (type?.kind) {
      case undefined:
        return [];
      case 'stream':
      case 'future':
        return [type];
      case 'list':
      case 'option':
        return streamsAndFutures([type.of]);
      case 'record':
      case 'tuple':
        return streamsAndFutures(fieldsOf(type));
      case 'variant':
      case 'result':
        return streamsAndFutures(casesOf(type));
      default:
        return [];
    }
  });
}

export function layout(type: AbiType): Layout {
  let known = layouts.get(type);
  if (known) return known;
  switch (type.kind) {
    case 'bool':
    case 'u8':
    case 's8':
      known = { size: 1, align: 1 };
      break;
    case 'u16':
    case 's16':
      known = { size: 2, align: 2 };
      break;
    case 'u32':
    case 's32':
    case 'f32':
    case 'own':
    case 'borrow':
    case 'stream':
    case 'future':
      known = { size: 4, align: 4 };
      break;
    case 'u64':
    case 's64':
    case 'f64':
      known = { size: 8, align: 8 };
      break;
    case 'enum': {
      const size = discSizeOf(type.names.length);
      known = { size, align: size };
      break;
    }
    case 'string':
    case 'bytes':
    case 'list':
      known = { size: 8, align: 4 };
      break;
    case 'record':
    case 'tuple': {
      let size = 0;
      let align = 1;
      const offsets: number[] = [];
      for (const field of fieldsOf(type)) {
        const l = layout(field);
        size = alignTo(size, l.align);
        offsets.push(size);
        size += l.size;
        align = Math.max(align, l.align);
      }
      known = { size: alignTo(size, align), align, offsets };
      break;
    }
    default: {
      const cases = casesOf(type);
      const discSize = discSizeOf(cases.length);
      let caseAlign = 1;
      let caseSize = 0;
      for (const c of cases) {
        if (!c) continue;
        const l = layout(c);
        caseAlign = Math.max(caseAlign, l.align);
        caseSize = Math.max(caseSize, l.size);
      }
      const align = Math.max(discSize, caseAlign);
      const payloadOffset = alignTo(discSize, caseAlign);
      known = { size: alignTo(payloadOffset + caseSize, align), align, discSize, payloadOffset };
    }
  }
  layouts.set(type, known);
  return known;
}

/** The core value types `type` flattens to. */
export function flatten(type: AbiType): Flat[] {
  let known = flats.get(type);
  if (known) return known;
  switch (type.kind) {
    case 'u64':
    case 's64':
      known = ['i64'];
      break;
    case 'f32':
    case 'f64':
      known = [type.kind];
      break;
    case 'string':
    case 'bytes':
    case 'list':
      known = ['i32', 'i32'];
      break;
    case 'record':
    case 'tuple':
      known = fieldsOf(type).flatMap(flatten);
      break;
    case 'variant':
    case 'option':
    case 'result': {
      const joined: Flat[] = [];
      for (const c of casesOf(type)) {
        if (!c) continue;
        flatten(c).forEach((f, i) => (joined[i] = joined[i] === undefined ? f : join(joined[i], f)));
      }
      known = ['i32', ...joined];
      break;
    }
    default:
      known = ['i32'];
  }
  flats.set(type, known);
  return known;
}

/** The core type a variant's slot takes when two cases put `a` and `b` there (the canonical ABI's join). */
function join(a: Flat, b: Flat): Flat {
  if (a === b) return a;
  return (a === 'i32' || a === 'f32') && (b === 'i32' || b === 'f32') ? 'i32' : 'i64';
}

/** `value`, a core value of type `from`, as the same bits in a slot of type `to` (a variant's joined slot: `to` is `join(from, …)`). */
function intoSlot(from: Flat, to: Flat, value: CoreValue): CoreValue {
  if (from === to) return value;
  if (from === 'f32') {
    BITS.setFloat32(0, value as number, true);
    return to === 'i32' ? BITS.getInt32(0, true) : BigInt(BITS.getUint32(0, true));
  }
  if (from === 'f64') {
    BITS.setFloat64(0, value as number, true);
    return BITS.getBigInt64(0, true);
  }
  return BigInt.asUintN(32, BigInt(value)); // an i32 in an i64 slot
}

/** The inverse of intoSlot: a case's core value of type `want` from a slot of type `slot`. */
function fromSlot(slot: Flat, want: Flat, value: CoreValue): CoreValue {
  if (slot === want) return value;
  if (slot === 'i64') BITS.setBigUint64(0, BigInt.asUintN(64, value as bigint), true);
  else BITS.setInt32(0, value as number, true);
  switch (want) {
    case 'i32':
      return BITS.getInt32(0, true);
    case 'f32':
      return BITS.getFloat32(0, true);
    default:
      return BITS.getFloat64(0, true);
  }
}

const BITS = new DataView(new ArrayBuffer(8));

/** The flat values of `types` together: over `max` of them, they go by pointer instead. */
export function flatCount(types: readonly AbiType[]): number {
  return types.reduce((n, type) => n + flatten(type).length, 0);
}

function tagIndex(type: Extract<AbiType, { kind: 'variant' | 'option' | 'result' }>, value: unknown): [number, unknown] {
  if (type.kind === 'option' && !type.tagged) return value === undefined || value === null ? [0, undefined] : [1, value];
  const { tag, val } = value as { tag: string; val?: unknown };
  if (type.kind === 'option') return [tag === 'some' ? 1 : 0, val];
  if (type.kind === 'result') return [tag === 'ok' ? 0 : 1, val];
  const i = type.cases.findIndex(([name]) => name === tag);
  if (i < 0) throw new Error(`no case ${tag} in the variant`);
  return [i, val];
}

function tagged(type: Extract<AbiType, { kind: 'variant' | 'option' | 'result' }>, i: number, val: unknown): unknown {
  const cases = casesOf(type);
  if (i >= cases.length) throw new AbiTrap(`invalid discriminant ${i}`);
  if (type.kind === 'option') return type.tagged ? (i === 0 ? { tag: 'none' } : { tag: 'some', val }) : i === 0 ? undefined : val;
  if (type.kind === 'result') return { tag: i === 0 ? 'ok' : 'err', val };
  const name = type.cases[i][0];
  return cases[i] ? { tag: name, val } : { tag: name };
}

const keyOf = jsIdentifier;

/** Reads a value of `type` at `ptr`. */
export function load(mem: GuestMemory, handles: Handles, type: AbiType, ptr: number): unknown {
  const v = mem.view();
  mem.check(ptr, layout(type).size);
  switch (type.kind) {
    case 'bool':
      return v.getUint8(ptr) !== 0;
    case 'u8':
      return v.getUint8(ptr);
    case 's8':
      return v.getInt8(ptr);
    case 'u16':
      return v.getUint16(ptr, true);
    case 's16':
      return v.getInt16(ptr, true);
    case 'u32':
      return v.getUint32(ptr, true);
    case 's32':
      return v.getInt32(ptr, true);
    case 'u64':
      return v.getBigUint64(ptr, true);
    case 's64':
      return v.getBigInt64(ptr, true);
    case 'f32':
      return v.getFloat32(ptr, true);
    case 'f64':
      return v.getFloat64(ptr, true);
    case 'enum': {
      const size = layout(type).size;
      return enumName(type, size === 1 ? v.getUint8(ptr) : size === 2 ? v.getUint16(ptr, true) : v.getUint32(ptr, true));
    }
    case 'string':
      return mem.string(v.getUint32(ptr, true), v.getUint32(ptr + 4, true));
    case 'bytes':
      return mem.bytes(v.getUint32(ptr, true), v.getUint32(ptr + 4, true));
    case 'list': {
      return loadList(mem, handles, type, v.getUint32(ptr, true), v.getUint32(ptr + 4, true));
    }
    case 'record':
    case 'tuple': {
      const { offsets } = layout(type);
      const values = fieldsOf(type).map((f, i) => load(mem, handles, f, ptr + offsets![i]));
      return type.kind === 'tuple' ? values : Object.fromEntries(type.fields.map(([name], i) => [keyOf(name), values[i]]));
    }
    case 'variant':
    case 'option':
    case 'result': {
      const { discSize, payloadOffset } = layout(type);
      const i = discSize === 1 ? v.getUint8(ptr) : discSize === 2 ? v.getUint16(ptr, true) : v.getUint32(ptr, true);
      const c = casesOf(type)[i];
      return tagged(type, i, c ? load(mem, handles, c, ptr + payloadOffset!) : undefined);
    }
    case 'own':
      return handles.take(v.getUint32(ptr, true), type.resource);
    case 'borrow':
      return handles.borrow(v.getUint32(ptr, true), type.resource);
    case 'stream':
    case 'future':
      return handles.liftReadable(v.getUint32(ptr, true), type);
  }
}

/** Writes `value` of `type` at `ptr` (lists and strings into memory the guest's realloc gives). */
export function store(mem: GuestMemory, handles: Handles, type: AbiType, value: unknown, ptr: number): void {
  mem.check(ptr, layout(type).size);
  switch (type.kind) {
    case 'bool':
    case 'u8':
    case 's8':
      return mem.view().setUint8(ptr, Number(value));
    case 'u16':
    case 's16':
      return mem.view().setUint16(ptr, value as number, true);
    case 'u32':
    case 's32':
      return mem.view().setUint32(ptr, value as number, true);
    case 'u64':
    case 's64':
      return mem.view().setBigUint64(ptr, BigInt.asUintN(64, value as bigint), true);
    case 'f32':
      return mem.view().setFloat32(ptr, Number(value), true);
    case 'f64':
      return mem.view().setFloat64(ptr, Number(value), true);
    case 'enum': {
      const size = layout(type).size;
      const i = enumIndex(type, value);
      if (size === 1) mem.view().setUint8(ptr, i);
      else if (size === 2) mem.view().setUint16(ptr, i, true);
      else mem.view().setUint32(ptr, i, true);
      return;
    }
    case 'string':
    case 'bytes':
    case 'list': {
      const [base, length] = storeList(mem, handles, type, value);
      const v = mem.view();
      v.setUint32(ptr, base, true);
      v.setUint32(ptr + 4, length, true);
      return;
    }
    case 'record':
    case 'tuple': {
      const { offsets } = layout(type);
      const values = type.kind === 'tuple' ? (value as unknown[]) : type.fields.map(([name]) => (value as Record<string, unknown>)[keyOf(name)]);
      fieldsOf(type).forEach((f, i) => store(mem, handles, f, values[i], ptr + offsets![i]));
      return;
    }
    case 'variant':
    case 'option':
    case 'result': {
      const { discSize, payloadOffset } = layout(type);
      const [i, val] = tagIndex(type, value);
      const v = mem.view();
      if (discSize === 1) v.setUint8(ptr, i);
      else if (discSize === 2) v.setUint16(ptr, i, true);
      else v.setUint32(ptr, i, true);
      const c = casesOf(type)[i];
      if (c) store(mem, handles, c, val, ptr + payloadOffset!);
      return;
    }
    case 'own':
      return mem.view().setUint32(ptr, handles.own(value as object), true);
    case 'borrow':
      throw new Error('a borrow is never handed to a guest by rt');
    case 'stream':
    case 'future':
      return mem.view().setUint32(ptr, handles.lowerReadable(value, type), true);
  }
}

/** `length` items of a list at `base`: a typed array's copy of them, or each loaded. */
function loadList(mem: GuestMemory, handles: Handles, type: Extract<AbiType, { kind: 'list' }>, base: number, length: number): unknown {
  const { size } = layout(type.of);
  mem.check(base, length * size);
  if (type.typed) return new type.typed(mem.u8().slice(base, base + length * size).buffer, 0, length);
  return Array.from({ length }, (_, i) => load(mem, handles, type.of, base + i * size));
}

function storeList(mem: GuestMemory, handles: Handles, type: AbiType, value: unknown): [number, number] {
  if (type.kind === 'string') return mem.putBytes(Buffer.from(value as string, 'utf8'), 1);
  if (type.kind !== 'list') return mem.putBytes(value as Uint8Array, 1);
  const items = value as ArrayLike<unknown>;
  const { size, align } = layout(type.of);
  const base = mem.alloc(items.length * size, align);
  for (let i = 0; i < items.length; i++) store(mem, handles, type.of, items[i], base + i * size);
  return [base, items.length];
}

/** A cursor over core values: a lift reads them in order. */
class Reader {
  i = 0;
  constructor(readonly values: readonly CoreValue[]) {}
  /** The next value, of type `_want` (a variant's case reads its own values: liftOne converts them from the joined slots). */
  next(_want: Flat): CoreValue {
    if (this.i >= this.values.length) throw new AbiTrap('too few core values');
    return this.values[this.i++];
  }
}

/** The value `types` flatten to, read from `values` (a core function's arguments or task.return's). */
export function liftFlat(mem: GuestMemory, handles: Handles, types: readonly AbiType[], values: readonly CoreValue[]): unknown[] {
  const reader = new Reader(values);
  return types.map((type) => liftOne(mem, handles, type, reader));
}

function liftOne(mem: GuestMemory, handles: Handles, type: AbiType, r: Reader): unknown {
  switch (type.kind) {
    case 'bool':
      return r.next('i32') !== 0;
    case 'u8':
      return (r.next('i32') as number) & 0xff;
    case 's8':
      return ((r.next('i32') as number) << 24) >> 24;
    case 'u16':
      return (r.next('i32') as number) & 0xffff;
    case 's16':
      return ((r.next('i32') as number) << 16) >> 16;
    case 'u32':
      return (r.next('i32') as number) >>> 0;
    case 's32':
      return (r.next('i32') as number) | 0;
    case 'enum':
      return enumName(type, (r.next('i32') as number) >>> 0);
    case 'u64':
      return BigInt.asUintN(64, r.next('i64') as bigint);
    case 's64':
      return BigInt.asIntN(64, r.next('i64') as bigint);
    case 'f32':
    case 'f64':
      return r.next(type.kind);
    case 'string':
      return mem.string((r.next('i32') as number) >>> 0, (r.next('i32') as number) >>> 0);
    case 'bytes':
      return mem.bytes((r.next('i32') as number) >>> 0, (r.next('i32') as number) >>> 0);
    case 'list': {
      const base = (r.next('i32') as number) >>> 0;
      return loadList(mem, handles, type, base, (r.next('i32') as number) >>> 0);
    }
    case 'record':
    case 'tuple': {
      const values = fieldsOf(type).map((f) => liftOne(mem, handles, f, r));
      return type.kind === 'tuple' ? values : Object.fromEntries(type.fields.map(([name], i) => [keyOf(name), values[i]]));
    }
    case 'variant':
    case 'option':
    case 'result': {
      const i = (r.next('i32') as number) >>> 0;
      const joined = flatten(type).slice(1);
      const c = casesOf(type)[i];
      const start = r.i;
      r.i = start + joined.length;
      if (!c) return tagged(type, i, undefined);
      // The case's own values, as its types from the joined slots; the rest of the slots are skipped.
      const own = flatten(c).map((want, k) => fromSlot(joined[k], want, r.values[start + k]));
      return tagged(type, i, liftOne(mem, handles, c, new Reader(own)));
    }
    case 'own':
      return handles.take(r.next('i32') as number, type.resource);
    case 'borrow':
      return handles.borrow(r.next('i32') as number, type.resource);
    case 'stream':
    case 'future':
      return handles.liftReadable(r.next('i32') as number, type);
  }
}

/**
 * The core values `values` of `types` flatten to (an export's arguments,
 * lowered into the guest: lists and strings go into memory its realloc
 * gives). A variant's joined slots take a case's i32 as an i64.
 */
export function lowerFlat(mem: GuestMemory, handles: Handles, types: readonly AbiType[], values: readonly unknown[]): CoreValue[] {
  const out: CoreValue[] = [];
  types.forEach((type, i) => lowerOne(mem, handles, type, values[i], out));
  return out;
}

function lowerOne(mem: GuestMemory, handles: Handles, type: AbiType, value: unknown, out: CoreValue[]): void {
  switch (type.kind) {
    case 'bool':
      out.push(value ? 1 : 0);
      return;
    case 'u8':
    case 's8':
    case 'u16':
    case 's16':
    case 'u32':
    case 's32':
      out.push(Number(value) | 0);
      return;
    case 'u64':
    case 's64':
      out.push(BigInt.asIntN(64, BigInt(value as bigint)));
      return;
    case 'f32':
      out.push(Math.fround(Number(value)));
      return;
    case 'f64':
      out.push(Number(value));
      return;
    case 'enum':
      out.push(enumIndex(type, value));
      return;
    case 'string':
    case 'bytes':
    case 'list':
      out.push(...storeList(mem, handles, type, value));
      return;
    case 'record':
    case 'tuple': {
      const values = type.kind === 'tuple' ? (value as unknown[]) : type.fields.map(([name]) => (value as Record<string, unknown>)[keyOf(name)]);
      fieldsOf(type).forEach((f, i) => lowerOne(mem, handles, f, values[i], out));
      return;
    }
    case 'variant':
    case 'option':
    case 'result': {
      const [i, val] = tagIndex(type, value);
      const joined = flatten(type).slice(1);
      out.push(i);
      const start = out.length;
      const c = casesOf(type)[i];
      const own = c ? flatten(c) : [];
      if (c) lowerOne(mem, handles, c, val, out);
      // The case's values in the joined slots (as the same bits where the slot's type differs), the rest zero.
      for (let k = 0; k < joined.length; k++) {
        const at = start + k;
        if (at >= out.length) out.push(joined[k] === 'i64' ? 0n : 0);
        else out[at] = intoSlot(own[k], joined[k], out[at]);
      }
      return;
    }
    case 'own':
      out.push(handles.own(value as object));
      return;
    case 'borrow':
      throw new Error('a borrow is never handed to a guest by rt');
    case 'stream':
    case 'future':
      out.push(handles.lowerReadable(value, type));
      return;
  }
}
