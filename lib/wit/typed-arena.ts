// The memory behind the typed arrays one decode makes (numeric lists and
// list<u8> given as arrays of numbers: jco wants typed arrays for them).
//
// A body of many small lists (`[[1],[2],...]` for a list<list<u32>>) would
// otherwise make an ArrayBuffer for each: measured, ~216 B of heap and ~500 ns
// apiece, and each cloned on its own when the arguments go to an instance
// thread. While an arena is open (one `decodeArgs`), small typed arrays are
// views into shared chunks instead: ~104 B and ~250 ns apiece, and cloned with
// their chunk in one piece. jco reads a list through `buffer`, `byteOffset` and
// `length`, so a view lowers like an array of its own.
//
// Chunks are per call, never shared between calls: a call's arguments must not
// carry (or clone to another service's thread) bytes of another call. They
// start small and double, so a call with one short list clones a few hundred
// bytes, and at most half of a call's chunk memory is unused.

export interface TypedArrayClass<T> {
  new (length: number): T;
  new (buffer: ArrayBuffer, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

/** Typed arrays larger than this get a buffer of their own. */
const SHARED_MAX_BYTES = 4096;
const FIRST_CHUNK_BYTES = 256;
const LAST_CHUNK_BYTES = 256 * 1024;

let open = false;
let chunk: ArrayBuffer | undefined;
let used = 0;

/** Typed arrays made from now until `closeArena` may share chunks. Not reentrant: one decode at a time (decoding is synchronous). */
export function openArena(): void {
  open = true;
}

/** Ends the arena: the chunks belong to the typed arrays made in it, and the next decode starts its own. */
export function closeArena(): void {
  open = false;
  chunk = undefined;
  used = 0;
}

/** A zeroed typed array of `length` elements: a view into the open arena when it is small. */
export function typedArray<T>(Class: TypedArrayClass<T>, length: number): T {
  const size = Class.BYTES_PER_ELEMENT;
  const bytes = length * size;
  if (!open || bytes > SHARED_MAX_BYTES) return new Class(length);
  // Views must be aligned to their element size; chunks begin aligned to 8.
  let at = Math.ceil(used / size) * size;
  if (chunk === undefined || at + bytes > chunk.byteLength) {
    const grown = chunk === undefined ? FIRST_CHUNK_BYTES : Math.min(chunk.byteLength * 2, LAST_CHUNK_BYTES);
    chunk = new ArrayBuffer(Math.max(grown, bytes));
    at = 0;
  }
  used = at + bytes;
  return new Class(chunk, at, length);
}
