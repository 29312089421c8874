// Handles in JSON (docs/api.md §5.1.2): a value of type own<R> or borrow<R>,
// R a resource the component exports, is `{"$handle": "<id>"}`. The codec
// checks that shape; what an id stands for is the business of whoever holds
// the handles, so the codec asks a `HandleScope`, set around each decode or
// encode that meets handles (`withHandleScope`). A scope is ambient rather
// than passed down because decoders are built once per method and run
// synchronously: the scope of the call being decoded is the only one there is.

import { Mismatch, mismatch, type CodecError } from './codec-errors.js';
import type { TypeOrigin, WitType } from './types.js';

export type HandleType = Extract<WitType, { kind: 'own' | 'borrow' }>;

/** A handle as JSON carries it. */
export interface HandleJson {
  $handle: string;
}

/** What a handle's id means, where a call's handles are looked up (the worker's directory, or an instance's table). */
export interface HandleScope {
  /**
   * The value to pass for handle `id` as a parameter of type `t` (the
   * resource object, or the id itself where only ids are checked); throws a
   * HandleMismatch when `id` cannot be passed there.
   */
  resolve(id: string, t: HandleType): unknown;
  /** The id of a new handle to `value`, a resource the component returned as `t`. */
  issue(value: unknown, t: HandleType): string;
}

/** Why a handle cannot be passed: never issued, ended (its instance is gone, or it was dropped or moved), or a handle to another resource. */
export type HandleProblem = 'unknown' | 'ended' | 'wrong-resource';

/** A handle that does not fit where it was passed; the codec adds the JSON path, as for any mismatch. */
export class HandleMismatch extends Mismatch {
  constructor(
    readonly problem: HandleProblem,
    expected: string,
    detail: string,
  ) {
    super(expected, detail);
  }

  override toCodecError(path: string): CodecError {
    const e = super.toCodecError(path);
    if (this.problem !== 'wrong-resource') e.handle = this.problem;
    return e;
  }
}

let current: HandleScope | undefined;

/** Runs `fn` (a decode or an encode) with `scope` answering for the handles it meets. */
export function withHandleScope<T>(scope: HandleScope, fn: () => T): T {
  const outer = current;
  current = scope;
  try {
    return fn();
  } finally {
    current = outer;
  }
}

/** `resource` as the JSON form names it: its WIT name. */
export function handleExpected(t: HandleType): string {
  return `a handle {"$handle": "<id>"} to a ${t.resource}`;
}

/** The key that tells resources apart within a service: the interface that defines it, and its name. */
export function resourceKey(t: { resource: string; origin?: TypeOrigin }): string {
  return `${t.origin?.interface ?? ''}#${t.resource}`;
}

export function decodeHandle(t: HandleType, json: unknown): unknown {
  const id = (json as Partial<HandleJson> | null)?.$handle;
  if (typeof json !== 'object' || json === null || Array.isArray(json) || typeof id !== 'string' || Object.keys(json).length !== 1) {
    throw mismatch(handleExpected(t), json);
  }
  if (!current) throw new Error('a handle was decoded outside a handle scope');
  return current.resolve(id, t);
}

export function encodeHandle(t: HandleType, value: unknown): HandleJson {
  if (!current) throw new Error('a handle was encoded outside a handle scope');
  return { $handle: current.issue(value, t) };
}
