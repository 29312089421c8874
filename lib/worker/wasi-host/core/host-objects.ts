// What every object rt hands a guest through its own WASI interfaces carries.
//
// jco's glue keeps host objects in a Map per resource type, keyed by
// `obj[Symbol.for('cabiRep')] || ++captureCnt`. preview2-shim's pollables and
// streams set that key to their I/O worker's ids (1, 2, ...), and objects
// without one get the glue's own counter (also 1, 2, ...): if objects of both
// kinds ever meet in one table, a guest handle can resolve to the wrong object.
// rt's objects therefore take their reps from a range of their own, above both
// small counters and below 2^30, where the glue's handle flag (T_FLAG) begins.

/** A WIT variant value as jco's glue represents it: the case's name, and its payload if it has one. */
export interface Variant {
  tag: string;
  val?: unknown;
}

/** The key jco's glue reads a host object's representation from. */
export const CABI_REP = Symbol.for('cabiRep');

/** rt's reps: above the glue's and the shim's counters, below the glue's handle flag (T_FLAG, 1 << 30). */
export const REP_RANGE = { first: 1 << 28, last: (1 << 30) - 1 } as const;
const { first: FIRST_REP, last: LAST_REP } = REP_RANGE;
let nextRep = FIRST_REP;

/**
 * Gives `object` a rep from rt's range. After ~800 million objects the range
 * starts over: an object that old and still alive is the only way to collide.
 */
export function assignRep(object: object): void {
  Object.defineProperty(object, CABI_REP, { value: nextRep, enumerable: false });
  nextRep = nextRep === LAST_REP ? FIRST_REP : nextRep + 1;
}

/**
 * An `err` for a result-typed import: the glue turns a thrown value with an
 * own `payload` into `err(payload)`, while a plain Error traps the instance.
 * An Error subclass keeps lint and stack traces sane.
 */
export class WasiError<P> extends Error {
  constructor(readonly payload: P) {
    super(`WASI error ${JSON.stringify(payload, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v instanceof Error ? v.message : v))}`);
  }
}

/** A guest broke an interface's rules (wrong order, double use): the call traps, as in wasmtime. */
export class GuestMisuse extends Error {}
