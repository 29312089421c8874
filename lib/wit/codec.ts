// The WIT⇄JSON codec of the invoke path (docs/api.md §6): request JSON → the
// arguments jco's glue takes, and jco's return values → response JSON.
// This module is the function level (parameters, the top-level result that jco
// throws on err); each type's closures are in codec-types.ts.

import { CodecError, Mismatch, preview } from './codec-errors.js';
import { expectedName } from './codec-names.js';
import { printType } from './print.js';
import { build, fieldsReader, payload, type FieldMisfit } from './codec-types.js';
import { closeArena, openArena } from './typed-arena.js';
import type { WitFunction, WitType } from './types.js';

export { CodecError } from './codec-errors.js';

export interface FunctionCodec {
  /**
   * The parsed JSON body → the jco argument list. Accepts an object keyed by WIT
   * parameter names (unknown/missing → CodecError naming the parameter), or an
   * array of the arguments in order (wrong length → CodecError), or undefined
   * (empty body) / {} / [] for a function without parameters.
   * Takes `body` over: its arrays may hold the decoded values afterwards.
   */
  decodeArgs(body: unknown): unknown[];
  /** The jco return value → a JSON-ready value. For a top-level result<T, E>, encodes T; null for a function without result. */
  encodeResult(value: unknown): unknown;
  /** For a function whose result is result<T, E>: the ComponentError payload E → JSON (null for `_`). */
  encodeError(payload: unknown): unknown;
}

interface TypeCodec {
  /** JSON → jco value; throws CodecError whose path starts with `path`. Takes `json` over: its arrays may hold the decoded values afterwards. */
  decode(json: unknown, path: string): unknown;
  /** jco value → JSON-ready value (no BigInt, no typed arrays, no undefined). */
  encode(value: unknown): unknown;
}

/** The codec of one type. Throws an Error for types JSON cannot carry (streams, futures, error-context); handles go through the handle scope (handles.ts). */
export function typeCodec(type: WitType): TypeCodec {
  const { decode, encode } = build(type);
  return {
    decode(json, path) {
      try {
        return decode(json);
      } catch (e) {
        if (e instanceof Mismatch) throw e.toCodecError(path);
        throw e;
      }
    },
    encode,
  };
}

/** The codec of a function's parameters and result. Throws an Error when one of them cannot be carried in JSON. */
export function functionCodec(fn: WitFunction): FunctionCodec {
  const decodeArgs = argumentsDecoder(fn);
  const top = fn.result;
  if (top === null) return { decodeArgs, encodeResult: () => null, encodeError: () => null };
  if (top.kind === 'result') {
    // jco returns the ok value itself and throws a ComponentError carrying the err value.
    return { decodeArgs, encodeResult: payload(top.ok).encode, encodeError: payload(top.err).encode };
  }
  return { decodeArgs, encodeResult: build(top).encode, encodeError: () => null };
}

function argumentsDecoder(fn: WitFunction): (body: unknown) => unknown[] {
  const n = fn.params.length;
  const names = fn.params.map((p) => p.name);
  const decoders = fn.params.map((p) => build(p.type).decode);
  const expected = fn.params.map((p) => expectedName(p.type));
  const signature = fn.params.map((p) => `${p.name}: ${printType(p.type)}`).join(', ');
  const fields = fieldsReader(names);
  const arity = n === 0 ? 'no arguments' : `${n} argument${n === 1 ? '' : 's'} (${signature})`;
  const bodyShape =
    n === 0
      ? 'no body, {} or []'
      : `an object keyed by the parameter names (${names.join(', ')}) or an array of the ${n === 1 ? 'argument' : `${n} arguments`}`;

  const decodeAt = (json: unknown, i: number): unknown => {
    try {
      return decoders[i](json);
    } catch (e) {
      if (e instanceof Mismatch) throw e.toCodecError(names[i]);
      throw e;
    }
  };
  const problem = (misfit: FieldMisfit): CodecError => {
    if ('unknown' in misfit) {
      const key = misfit.unknown;
      const listing = n === 0 ? `${fn.name} takes no parameters` : `parameters: ${names.join(', ')}`;
      return new CodecError(key, n === 0 ? 'no parameters' : `one of the parameters ${names.join(', ')}`, `unknown parameter ${JSON.stringify(key)} (${listing})`);
    }
    const i = misfit.missing;
    return new CodecError(names[i], expected[i], `missing parameter ${JSON.stringify(names[i])} (${printType(fn.params[i].type)})`);
  };
  const take = (args: unknown[], i: number, v: unknown): void => {
    args[i] = decodeAt(v, i);
  };

  const decode = (body: unknown): unknown[] => {
    if (Array.isArray(body)) {
      if (body.length !== n) throw new CodecError('', arity, `expected ${arity}, got ${body.length}`);
      const args = new Array<unknown>(n);
      for (let i = 0; i < n; i++) args[i] = decodeAt(body[i], i);
      return args;
    }
    if (typeof body === 'object' && body !== null) {
      const args = new Array<unknown>(n);
      const misfit = fields(body, args, take);
      if (misfit) throw problem(misfit);
      return args;
    }
    if (body === undefined && n === 0) return [];
    throw new CodecError('', bodyShape, `expected ${bodyShape}, got ${preview(body)}`);
  };
  return (body) => {
    openArena();
    try {
      return decode(body);
    } finally {
      closeArena();
    }
  };
}
