// The codec of each WIT type: a pair of closures (JSON → jco value, jco value
// → JSON) built once per type when a component loads. A call walks only the
// closures chosen for its types, never a switch on `kind`.
//
// Decoding validates everything, because jco does not: it wraps integers
// (`toUint8(300)` is 44), reads one code point of a longer "char", turns lone
// surrogates into U+FFFD, and reads plain arrays given for `list<u32>` as
// garbage (it wants typed arrays).
//
// jco 1.12 conventions this follows (checked against real glue in
// test/unit/codec-jco.test.ts): record fields and flags are lowerCamelCase
// properties; variants `{tag, val}` with WIT case names; enums their case name;
// u64/s64 BigInt; numeric lists typed arrays; `option<T>` is `T | undefined`
// unless T is itself an option jco writes as `T | undefined`, in which case
// `{tag: 'none'} | {tag: 'some', val}`; nested results `{tag: 'ok'|'err', val}`.
//
// Decoders throw `Mismatch` (see codec-errors.ts) and leave paths to the caller.
// A list decoder may write the decoded items into the JSON array it was given.

import { Mismatch, mismatch, preview } from './codec-errors.js';
import { expectedName } from './codec-names.js';
import { decodeHandle, encodeHandle } from './handles.js';
import { jsIdentifier } from './js-names.js';
import { printType } from './print.js';
import { bytesDecoder, encodeBytes } from './json-bytes.js';
import {
  TYPED_ARRAYS,
  bigIntDecoder,
  encodeBigInt,
  encodeF32,
  encodeF64,
  floatDecoder,
  isNumericName,
  smallIntDecoder,
  type NumericName,
} from './json-numbers.js';
import { typedArray, type TypedArrayClass } from './typed-arena.js';
import type { Case, Field, PrimitiveName, WitType } from './types.js';

export type Decode = (json: unknown) => unknown;
export type Encode = (value: unknown) => unknown;

export interface Codec {
  decode: Decode;
  encode: Encode;
  /** decode(json) returns json itself whenever it succeeds: containers may then hand the JSON over as is. */
  sameIn?: boolean;
  /** encode(v) returns v itself: containers may hand jco's value over as is. */
  sameOut?: boolean;
}

const identity = (v: unknown): unknown => v;

/**
 * The codec of `t`. Throws an Error for types JSON cannot carry (streams,
 * futures, error-context). Handles (own, borrow) decode and encode through
 * the handle scope of the call (handles.ts); which resources may be passed
 * is decided before a codec is built (lib/primary/addressing.ts).
 */
export function build(t: WitType): Codec {
  switch (t.kind) {
    case 'primitive':
      return primitive(t.name);
    case 'list':
      return list(t, t.element);
    case 'fixed-list':
      return fixedList(t, t.element, t.length);
    case 'tuple':
      return tuple(t, t.elements);
    case 'option':
      return option(t, t.inner);
    case 'result':
      return result(t, t.ok, t.err);
    case 'record':
      return record(t, t.fields);
    case 'variant':
      return variant(t, t.cases);
    case 'enum':
      return enumeration(t, t.cases);
    case 'flags':
      return flags(t, t.flags);
    case 'own':
    case 'borrow':
      return { decode: (json) => decodeHandle(t, json), encode: (value) => encodeHandle(t, value) };
    case 'stream':
    case 'future':
      throw new Error(`${printType(t)}: a ${t.kind} cannot be carried in JSON`);
  }
}

function primitive(name: PrimitiveName): Codec {
  switch (name) {
    case 'bool':
      return {
        decode: (json) => {
          if (typeof json === 'boolean') return json;
          throw mismatch('bool', json);
        },
        encode: identity,
        sameIn: true,
        sameOut: true,
      };
    case 'u8':
    case 'u16':
    case 'u32':
    case 's8':
    case 's16':
    case 's32':
      return { decode: smallIntDecoder(name), encode: identity, sameIn: true, sameOut: true };
    case 'u64':
    case 's64':
      return { decode: bigIntDecoder(name), encode: encodeBigInt };
    case 'f32':
      return { decode: floatDecoder(name), encode: encodeF32 };
    case 'f64':
      return { decode: floatDecoder(name), encode: encodeF64 };
    case 'char':
      return { decode: decodeChar, encode: identity, sameIn: true, sameOut: true };
    case 'string':
      return { decode: decodeString, encode: identity, sameIn: true, sameOut: true };
    case 'error-context':
      throw new Error('error-context: an error context cannot be carried in JSON');
  }
}

const CHAR = expectedName({ kind: 'primitive', name: 'char' });

function decodeChar(json: unknown): unknown {
  if (typeof json === 'string') {
    const a = json.charCodeAt(0);
    // One code unit that is not a surrogate, or a high surrogate followed by a low one.
    if (json.length === 1 ? a < 0xd800 || a > 0xdfff : json.length === 2 && a >= 0xd800 && a <= 0xdbff && isLowSurrogate(json.charCodeAt(1))) {
      return json;
    }
  }
  throw mismatch(CHAR, json);
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

interface WellFormed {
  isWellFormed(): boolean;
}

function decodeString(json: unknown): unknown {
  if (typeof json === 'string') {
    if ((json as string & WellFormed).isWellFormed()) return json;
    throw mismatch('string', json, 'contains a lone surrogate, which is not a Unicode scalar value');
  }
  throw mismatch('string', json);
}

function list(t: WitType, element: WitType): Codec {
  const expected = expectedName(t);
  if (element.kind === 'primitive' && isNumericName(element.name)) {
    if (element.name === 'u8') return { decode: bytesDecoder(expected), encode: encodeBytes };
    return numericList(expected, element.name);
  }
  const item = build(element);
  const itemDecode = item.decode;
  const itemEncode = item.encode;
  const decode: Decode = item.sameIn
    ? (json) => {
        if (!Array.isArray(json)) throw mismatch(expected, json);
        let i = 0;
        try {
          for (; i < json.length; i++) itemDecode(json[i]);
        } catch (e) {
          Mismatch.within(e, `[${i}]`);
        }
        return json as unknown[];
      }
    : (json) => {
        if (!Array.isArray(json)) throw mismatch(expected, json);
        // In place: the JSON is the request's own (parsed for this call), and
        // each item it held can be collected as soon as its value replaces it.
        // Measured: a 10 MiB body of [] x3.5M for a list<list<u32>> decodes
        // within 384 MB of heap this way, and needs 640 MB with a new array.
        const n = json.length;
        let i = 0;
        try {
          for (; i < n; i++) json[i] = itemDecode(json[i]);
        } catch (e) {
          Mismatch.within(e, `[${i}]`);
        }
        return json as unknown[];
      };
  // jco builds a fresh array for every list it returns, so it can be answered as is.
  const encode: Encode = item.sameOut ? identity : (value) => mapArray(value as ArrayLike<unknown>, itemEncode);
  return { decode, encode, sameIn: item.sameIn === true, sameOut: item.sameOut === true };
}

function mapArray(items: ArrayLike<unknown>, f: Encode): unknown[] {
  const n = items.length;
  const out = new Array<unknown>(n);
  for (let i = 0; i < n; i++) out[i] = f(items[i]);
  return out;
}

/** `list<T>` of a numeric T other than u8: a JSON array in, the typed array jco wants (and returns). */
function numericList(expected: string, name: Exclude<NumericName, 'u8'>): Codec {
  const TypedArray: TypedArrayClass<Record<number, unknown>> = TYPED_ARRAYS[name];
  const item = primitive(name);
  const itemDecode = item.decode;
  const itemEncode = item.encode;
  return {
    decode(json) {
      if (!Array.isArray(json)) throw mismatch(expected, json);
      const n = json.length;
      const out = typedArray(TypedArray, n);
      let i = 0;
      try {
        for (; i < n; i++) out[i] = itemDecode(json[i]);
      } catch (e) {
        Mismatch.within(e, `[${i}]`);
      }
      return out;
    },
    encode: (value) => mapArray(value as ArrayLike<unknown>, itemEncode),
  };
}

/** Sequences of a fixed shape (tuples, fixed-length lists): an array of exactly `decoders.length` items. */
function fixedArray(expected: string, items: Codec[]): Codec {
  const n = items.length;
  const decoders = items.map((c) => c.decode);
  const encoders = items.map((c) => c.encode);
  const sameIn = items.every((c) => c.sameIn);
  const sameOut = items.every((c) => c.sameOut);
  const decode: Decode = (json) => {
    if (!Array.isArray(json)) throw mismatch(expected, json);
    if (json.length !== n) throw mismatch(expected, json, `${json.length} ${json.length === 1 ? 'item' : 'items'} instead of ${n}`);
    const out = sameIn ? json : new Array<unknown>(n);
    let i = 0;
    try {
      for (; i < n; i++) out[i] = decoders[i](json[i]);
    } catch (e) {
      Mismatch.within(e, `[${i}]`);
    }
    return out as unknown[];
  };
  const encode: Encode = sameOut
    ? identity
    : (value) => {
        const v = value as ArrayLike<unknown>;
        const out = new Array<unknown>(n);
        for (let i = 0; i < n; i++) out[i] = encoders[i](v[i]);
        return out;
      };
  return { decode, encode, sameIn, sameOut };
}

function tuple(t: WitType, elements: WitType[]): Codec {
  return fixedArray(expectedName(t), elements.map(build));
}

// jco 1.12 cannot transpile fixed-length lists yet ("support not implemented
// for fixed-size-lists"), so their JS form is a guess: a plain array, as for tuples.
function fixedList(t: WitType, element: WitType, length: number): Codec {
  const item = build(element);
  return fixedArray(expectedName(t), new Array<Codec>(length).fill(item));
}

const NONE = Object.freeze({ tag: 'none' });

/**
 * Whether jco writes `option<inner>` as `inner | undefined`, rather than as
 * `{tag: 'none'|'some', val}`: yes unless `inner` is itself an option written
 * that way (which would make none and some(none) the same `undefined`).
 */
function nullableOption(inner: WitType): boolean {
  return !(inner.kind === 'option' && nullableOption(inner.inner));
}

function option(t: WitType, innerType: WitType): Codec {
  const inner = build(innerType);
  const innerDecode = inner.decode;
  const innerEncode = inner.encode;
  const expected = expectedName(t);
  // An option of an option needs `{"some": ...}` in JSON to tell some(none) from none.
  if (innerType.kind !== 'option') {
    return {
      // jco takes null for none as well as undefined.
      decode: (json) => (json === null ? null : innerDecode(json)),
      encode: (value) => (value === undefined || value === null ? null : innerEncode(value)),
      sameIn: inner.sameIn === true,
    };
  }
  const unwrap = (json: unknown): unknown => {
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw mismatch(expected, json, 'null or {"some": ...}');
    const some = (json as { some?: unknown }).some;
    if (some === undefined || keyCount(json) !== 1) throw mismatch(expected, json, 'null or {"some": ...}');
    try {
      return innerDecode(some);
    } catch (e) {
      return Mismatch.within(e, '.some');
    }
  };
  if (!nullableOption(innerType)) {
    return {
      decode: (json) => (json === null ? NONE : { tag: 'some', val: unwrap(json) }),
      encode: (value) => {
        const v = value as { tag: string; val?: unknown };
        return v.tag === 'none' ? null : { some: innerEncode(v.val) };
      },
    };
  }
  return {
    decode: (json) => (json === null ? null : unwrap(json)),
    encode: (value) => (value === undefined || value === null ? null : { some: innerEncode(value) }),
  };
}

function result(t: WitType, okType: WitType | null, errType: WitType | null): Codec {
  const expected = expectedName(t);
  const ok = payload(okType);
  const err = payload(errType);
  return {
    decode(json) {
      if (typeof json === 'object' && json !== null && !Array.isArray(json) && keyCount(json) === 1) {
        const r = json as { ok?: unknown; err?: unknown };
        if (r.ok !== undefined) return { tag: 'ok', val: inside(ok.decode, r.ok, '.ok') };
        if (r.err !== undefined) return { tag: 'err', val: inside(err.decode, r.err, '.err') };
      }
      throw mismatch(expected, json, '{"ok": ...} or {"err": ...}');
    },
    encode(value) {
      const v = value as { tag: string; val?: unknown };
      return v.tag === 'ok' ? { ok: ok.encode(v.val) } : { err: err.encode(v.val) };
    },
  };
}

/** A payload slot: the type's codec, or for `_` null in JSON and undefined in JS. */
export function payload(type: WitType | null): Codec {
  if (type !== null) return build(type);
  return {
    decode: (json) => {
      if (json === null) return undefined;
      throw mismatch('null (no payload)', json);
    },
    encode: () => null,
  };
}

function inside(decode: Decode, json: unknown, step: string): unknown {
  try {
    return decode(json);
  } catch (e) {
    return Mismatch.within(e, step);
  }
}

function record(t: WitType, fields: Field[]): Codec {
  const expected = expectedName(t);
  const n = fields.length;
  const names = fields.map((f) => f.name);
  const props = names.map(jsIdentifier);
  const steps = names.map((name) => `.${name}`);
  const codecs = fields.map((f) => build(f.type));
  const decoders = codecs.map((c) => c.decode);
  const encoders = codecs.map((c) => c.encode);
  const readFields = fieldsReader(names);
  const listing = names.join(', ');
  const problem = (misfit: FieldMisfit): Mismatch =>
    'unknown' in misfit
      ? new Mismatch(expected, `unknown field ${JSON.stringify(misfit.unknown)} in ${expected} (fields: ${listing})`)
      : new Mismatch(expected, `missing field ${JSON.stringify(names[misfit.missing])} in ${expected}`);
  // When JS and WIT spell every field alike, valid JSON is already the value jco wants, and the reverse.
  const sameNames = names.every((name, i) => name === props[i]);
  const sameIn = sameNames && codecs.every((c) => c.sameIn);
  const sameOut = sameNames && codecs.every((c) => c.sameOut);
  const take = (out: Record<string, unknown>, i: number, v: unknown): void => {
    let decoded: unknown;
    try {
      decoded = decoders[i](v);
    } catch (e) {
      Mismatch.within(e, steps[i]);
    }
    if (!sameIn) out[props[i]] = decoded;
  };
  const decode: Decode = (json) => {
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw mismatch(expected, json);
    const out: Record<string, unknown> = sameIn ? (json as Record<string, unknown>) : {};
    const misfit = readFields(json, out, take);
    if (misfit) throw problem(misfit);
    return out;
  };
  const encode: Encode = sameOut
    ? identity
    : (value) => {
        const v = value as Record<string, unknown>;
        const out: Record<string, unknown> = {};
        for (let i = 0; i < n; i++) out[names[i]] = encoders[i](v[props[i]]);
        return out;
      };
  return { decode, encode, sameIn, sameOut };
}

/** Why a JSON object's keys are not the names expected: a key that is not one of them, or the index of a name that is absent. */
export type FieldMisfit = { unknown: string } | { missing: number };

/**
 * Reads the keys `names` of a JSON object, in order, handing each value to
 * `take` (with `target`, where it puts the decoded value: built once, `take`
 * allocates nothing per call). Records and a call's named arguments read
 * their JSON objects with it. An unknown key is reported before a missing
 * one: it is most often the missing one misspelt.
 */
export function fieldsReader(names: string[]): <T>(json: object, target: T, take: (target: T, i: number, value: unknown) => void) => FieldMisfit | undefined {
  const n = names.length;
  const read = ownReader(names);
  const misfit = (json: object, i: number): FieldMisfit => {
    const key = unknownKey(json, names);
    return key !== undefined ? { unknown: key } : { missing: i };
  };
  return (json, target, take) => {
    for (let i = 0; i < n; i++) {
      const v = read(json, i);
      if (v === undefined) return misfit(json, i);
      take(target, i, v);
    }
    return keyCount(json) === n ? undefined : misfit(json, -1);
  };
}

/**
 * Reads the i-th key of a JSON object. A key that Object.prototype also has
 * (a WIT field `%constructor`) must be an own property, or an absent field
 * would read as the prototype's function.
 */
function ownReader(keys: string[]): (json: object, i: number) => unknown {
  if (keys.some((k) => k in Object.prototype)) {
    return (json, i) => (Object.hasOwn(json, keys[i]) ? (json as Record<string, unknown>)[keys[i]] : undefined);
  }
  return (json, i) => (json as Record<string, unknown>)[keys[i]];
}

/** How many keys a JSON object has, without allocating the list of them. */
function keyCount(json: object): number {
  let n = 0;
  for (const _ in json) n++;
  return n;
}

/** The first key of `json` that is not in `known`. */
export function unknownKey(json: object, known: string[]): string | undefined {
  return Object.keys(json).find((key) => !known.includes(key));
}

function variant(t: WitType, cases: Case[]): Codec {
  const expected = expectedName(t);
  const names = cases.map((c) => c.name);
  const listing = names.join(', ');
  const byName = new Map<string, Codec | null>(cases.map((c) => [c.name, c.type === null ? null : build(c.type)]));
  const codecs = [...byName.values()];
  const sameIn = codecs.every((c) => c === null || c.sameIn);
  const sameOut = codecs.every((c) => c === null || c.sameOut);
  const shape = '{"tag": "<case>", "val": ...}';
  const decode: Decode = (json) => {
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw mismatch(expected, json, shape);
    const v = json as { tag?: unknown; val?: unknown };
    const tag = v.tag;
    if (typeof tag !== 'string') throw mismatch(expected, json, shape);
    const codec = byName.get(tag);
    if (codec === undefined) throw new Mismatch(expected, `unknown case ${JSON.stringify(tag)} in ${expected} (cases: ${listing})`);
    const hasVal = v.val !== undefined;
    if (keyCount(json) !== (hasVal ? 2 : 1)) {
      const key = unknownKey(json, ['tag', 'val']);
      throw new Mismatch(expected, `unknown field ${JSON.stringify(key)} in ${expected} (expected ${shape})`);
    }
    if (codec === null) {
      if (hasVal && v.val !== null) throw new Mismatch(expected, `case ${JSON.stringify(tag)} of ${expected} has no payload, got "val": ${JSON.stringify(v.val)}`);
      return sameIn ? json : { tag };
    }
    if (!hasVal) throw new Mismatch(expected, `missing "val" for case ${JSON.stringify(tag)} of ${expected}`);
    const val = inside(codec.decode, v.val, '.val');
    return sameIn ? json : { tag, val };
  };
  const encode: Encode = sameOut
    ? identity
    : (value) => {
        const v = value as { tag: string; val?: unknown };
        const codec = byName.get(v.tag);
        if (codec === undefined) throw new TypeError(`the component returned an unknown case ${JSON.stringify(v.tag)} of ${expected}`);
        return codec === null ? { tag: v.tag } : { tag: v.tag, val: codec.encode(v.val) };
      };
  return { decode, encode, sameIn, sameOut };
}

function enumeration(t: WitType, cases: string[]): Codec {
  const expected = expectedName(t);
  const known = new Set(cases);
  const listing = cases.join(', ');
  return {
    decode(json) {
      if (typeof json === 'string' && known.has(json)) return json;
      throw new Mismatch(expected, `expected one of the enum cases ${listing}, got ${preview(json)}`);
    },
    encode: identity,
    sameIn: true,
    sameOut: true,
  };
}

function flags(t: WitType, names: string[]): Codec {
  const expected = expectedName(t);
  const props = names.map(jsIdentifier);
  const byName = new Map(names.map((name, i) => [name, props[i]]));
  const listing = names.join(', ');
  return {
    decode(json) {
      if (!Array.isArray(json)) throw mismatch(expected, json, 'an array of flag names');
      const out: Record<string, boolean> = {};
      for (const p of props) out[p] = false;
      for (let i = 0; i < json.length; i++) {
        const name: unknown = json[i];
        const prop = typeof name === 'string' ? byName.get(name) : undefined;
        if (prop === undefined) {
          const m =
            typeof name === 'string'
              ? new Mismatch(expected, `unknown flag ${JSON.stringify(name)} in ${expected} (flags: ${listing})`)
              : mismatch(`a flag name of ${expected}`, name);
          m.suffix = `[${i}]`;
          throw m;
        }
        out[prop] = true;
      }
      return out;
    },
    encode(value) {
      const v = value as Record<string, unknown>;
      const out: string[] = [];
      for (let i = 0; i < props.length; i++) if (v[props[i]]) out.push(names[i]);
      return out;
    },
  };
}
