// WIT numbers as JSON numbers (and, where JSON numbers fall short, strings).
//
// JSON numbers are IEEE doubles once parsed, so:
// - 64-bit integers travel as numbers only while they are exact (±(2^53−1));
//   beyond that as decimal strings, both ways.
// - NaN and ±Infinity, which JSON cannot write, travel as "NaN", "Infinity", "-Infinity".
// jco itself wraps out-of-range integers silently (`toUint8(300)` is 44), so
// every range is checked here before a value reaches it.

import { mismatch } from './codec-errors.js';

export type SmallIntName = 'u8' | 'u16' | 'u32' | 's8' | 's16' | 's32';
export type BigIntName = 'u64' | 's64';
export type FloatName = 'f32' | 'f64';

export const SMALL_RANGES: Record<SmallIntName, readonly [number, number]> = {
  u8: [0, 0xff],
  u16: [0, 0xffff],
  u32: [0, 0xffff_ffff],
  s8: [-0x80, 0x7f],
  s16: [-0x8000, 0x7fff],
  s32: [-0x8000_0000, 0x7fff_ffff],
};

export const BIG_RANGES: Record<BigIntName, readonly [bigint, bigint]> = {
  u64: [0n, 0xffff_ffff_ffff_ffffn],
  s64: [-0x8000_0000_0000_0000n, 0x7fff_ffff_ffff_ffffn],
};

/** `u8 (0..255)`: how messages name an integer type, with its range. */
export function integerTypeName(name: SmallIntName | BigIntName): string {
  const [min, max] = name === 'u64' || name === 's64' ? BIG_RANGES[name] : SMALL_RANGES[name];
  return `${name} (${min}..${max})`;
}

/** A decoder for a 32-bit-or-smaller integer: the JSON number itself, once checked. */
export function smallIntDecoder(name: SmallIntName): (json: unknown) => number {
  const [min, max] = SMALL_RANGES[name];
  const expected = integerTypeName(name);
  return (json) => {
    if (typeof json === 'number' && Number.isInteger(json) && json >= min && json <= max) return json;
    throw mismatch(expected, json);
  };
}

const DECIMAL = /^-?[0-9]+$/;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;
const UNSAFE_HINT = 'a number beyond ±(2^53−1) is not exact in JSON: send it as a decimal string';

/** A decoder for u64/s64: a safe-integer JSON number or a decimal string, as the BigInt jco wants. */
export function bigIntDecoder(name: BigIntName): (json: unknown) => bigint {
  const [min, max] = BIG_RANGES[name];
  const unsigned = name === 'u64';
  const expected = integerTypeName(name);
  return (json) => {
    if (typeof json === 'number') {
      if (Number.isSafeInteger(json)) {
        if (unsigned && json < 0) throw mismatch(expected, json);
        return BigInt(json);
      }
      throw mismatch(expected, json, Number.isInteger(json) ? UNSAFE_HINT : undefined);
    }
    if (typeof json === 'string' && DECIMAL.test(json)) {
      const value = BigInt(json);
      if (value >= min && value <= max) return value;
    }
    throw mismatch(expected, json);
  };
}

/** u64/s64 out: a number while exact, else a decimal string. */
export function encodeBigInt(value: unknown): number | string {
  if (typeof value === 'bigint') return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
  if (typeof value === 'number') return value;
  throw new TypeError(`expected a BigInt from the component, got ${typeof value}`);
}

const FLOAT_STRINGS_HINT = 'a number, or "NaN", "Infinity", "-Infinity"';

function specialFloat(json: string): number | undefined {
  switch (json) {
    case 'NaN':
      return NaN;
    case 'Infinity':
      return Infinity;
    case '-Infinity':
      return -Infinity;
    default:
      return undefined;
  }
}

/** A decoder for f32/f64. A finite number that f32 cannot hold (it would become ±Infinity) is refused. */
export function floatDecoder(name: FloatName): (json: unknown) => number {
  const single = name === 'f32';
  return (json) => {
    if (typeof json === 'number') {
      if (single && Number.isFinite(json) && !Number.isFinite(Math.fround(json))) {
        throw mismatch(name, json, 'beyond the range of f32');
      }
      return json;
    }
    if (typeof json === 'string') {
      const special = specialFloat(json);
      if (special !== undefined) return special;
    }
    throw mismatch(name, json, typeof json === 'string' ? FLOAT_STRINGS_HINT : undefined);
  };
}

function nonFinite(value: number): string {
  return value !== value ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
}

/** f64 out: the number, or its name when JSON cannot write it. */
export function encodeF64(value: unknown): number | string {
  const v = value as number;
  return Number.isFinite(v) ? v : nonFinite(v);
}

/**
 * f32 out: the shortest decimal that reads back as the same f32, so that a
 * component echoing 0.1 answers 0.1 and not 0.10000000149011612 (the f32's
 * exact value as a double). This is what serde_json prints for an f32 too.
 */
export function encodeF32(value: unknown): number | string {
  const v = value as number;
  if (!Number.isFinite(v)) return nonFinite(v);
  if (Number.isInteger(v) && v <= 0x100_0000 && v >= -0x100_0000) return v;
  for (let digits = 1; digits < 9; digits++) {
    const shorter = Number(v.toPrecision(digits));
    if (Math.fround(shorter) === v) return shorter;
  }
  return v;
}

/** The typed array jco uses for `list<T>` of each numeric T. */
export const TYPED_ARRAYS = {
  u8: Uint8Array,
  s8: Int8Array,
  u16: Uint16Array,
  s16: Int16Array,
  u32: Uint32Array,
  s32: Int32Array,
  u64: BigUint64Array,
  s64: BigInt64Array,
  f32: Float32Array,
  f64: Float64Array,
} as const;

export type NumericName = keyof typeof TYPED_ARRAYS;

export function isNumericName(name: string): name is NumericName {
  return Object.hasOwn(TYPED_ARRAYS, name);
}
