// The canonical definitions of a component's canon section (component-model
// Binary.md, `canon`), by opcode: the name the spec gives each, and the
// immediates that follow it, which is all the reader needs to step over the
// ones it does not evaluate. Only `lift` makes a component function (the
// reader evaluates it itself); every other definition makes a core function.
// Names as in wasm-tools' wasmparser (readers/component/canonicals.rs).

/**
 * What follows the opcode: `byte` a flag or a sort, `u32` an index, `opts`
 * a vector of canonical options. `lift`, `lower` and `task.return` have
 * shapes of their own and are read by the reader.
 */
export type Immediates = readonly ('byte' | 'u32' | 'opts')[];

export interface CanonOpcode {
  name: string;
  immediates: Immediates | 'own reader';
}

const own = 'own reader';

export const CANON_OPCODES: ReadonlyMap<number, CanonOpcode> = new Map<number, CanonOpcode>([
  [0x00, { name: 'lift', immediates: own }],
  [0x01, { name: 'lower', immediates: ['byte', 'u32', 'opts'] }],
  [0x02, { name: 'resource.new', immediates: ['u32'] }],
  [0x03, { name: 'resource.drop', immediates: ['u32'] }],
  [0x04, { name: 'resource.rep', immediates: ['u32'] }],
  [0x05, { name: 'task.cancel', immediates: [] }],
  [0x06, { name: 'subtask.cancel', immediates: ['byte'] }],
  [0x07, { name: 'resource.drop async', immediates: ['u32'] }],
  [0x08, { name: 'backpressure.set', immediates: [] }],
  [0x09, { name: 'task.return', immediates: own }],
  [0x0a, { name: 'context.get', immediates: ['byte', 'u32'] }],
  [0x0b, { name: 'context.set', immediates: ['byte', 'u32'] }],
  [0x0c, { name: 'thread.yield', immediates: ['byte'] }],
  [0x0d, { name: 'subtask.drop', immediates: [] }],
  [0x0e, { name: 'stream.new', immediates: ['u32'] }],
  [0x0f, { name: 'stream.read', immediates: ['u32', 'opts'] }],
  [0x10, { name: 'stream.write', immediates: ['u32', 'opts'] }],
  [0x11, { name: 'stream.cancel-read', immediates: ['u32', 'byte'] }],
  [0x12, { name: 'stream.cancel-write', immediates: ['u32', 'byte'] }],
  [0x13, { name: 'stream.drop-readable', immediates: ['u32'] }],
  [0x14, { name: 'stream.drop-writable', immediates: ['u32'] }],
  [0x15, { name: 'future.new', immediates: ['u32'] }],
  [0x16, { name: 'future.read', immediates: ['u32', 'opts'] }],
  [0x17, { name: 'future.write', immediates: ['u32', 'opts'] }],
  [0x18, { name: 'future.cancel-read', immediates: ['u32', 'byte'] }],
  [0x19, { name: 'future.cancel-write', immediates: ['u32', 'byte'] }],
  [0x1a, { name: 'future.drop-readable', immediates: ['u32'] }],
  [0x1b, { name: 'future.drop-writable', immediates: ['u32'] }],
  [0x1c, { name: 'error-context.new', immediates: ['opts'] }],
  [0x1d, { name: 'error-context.debug-message', immediates: ['opts'] }],
  [0x1e, { name: 'error-context.drop', immediates: [] }],
  [0x1f, { name: 'waitable-set.new', immediates: [] }],
  [0x20, { name: 'waitable-set.wait', immediates: ['byte', 'u32'] }],
  [0x21, { name: 'waitable-set.poll', immediates: ['byte', 'u32'] }],
  [0x22, { name: 'waitable-set.drop', immediates: [] }],
  [0x23, { name: 'waitable.join', immediates: [] }],
  [0x24, { name: 'backpressure.inc', immediates: [] }],
  [0x25, { name: 'backpressure.dec', immediates: [] }],
  [0x26, { name: 'thread.index', immediates: [] }],
  [0x27, { name: 'thread.new-indirect', immediates: ['u32', 'u32'] }],
  // The threading opcodes below were renumbered while the proposal moved;
  // these are the immediates of the toolchains rt was tested with.
  [0x28, { name: 'thread.resume-later', immediates: [] }],
  [0x29, { name: 'thread.suspend', immediates: ['byte'] }],
  [0x2a, { name: 'threading built-in 0x2a', immediates: ['byte'] }],
  [0x2b, { name: 'threading built-in 0x2b', immediates: ['byte'] }],
  [0x2c, { name: 'threading built-in 0x2c', immediates: ['byte'] }],
  [0x2d, { name: 'threading built-in 0x2d', immediates: ['byte'] }],
  [0x40, { name: 'thread.spawn-ref', immediates: ['byte', 'u32'] }],
  [0x41, { name: 'thread.spawn-indirect', immediates: ['byte', 'u32', 'u32'] }],
  [0x42, { name: 'thread.available-parallelism', immediates: ['byte'] }],
]);

/** The canonical options of `lift`, `lower` and the async built-ins: which carry an index after them. */
export const CANON_OPTIONS = {
  utf8: 0x00,
  utf16: 0x01,
  compactUtf16: 0x02,
  memory: 0x03,
  realloc: 0x04,
  postReturn: 0x05,
  async: 0x06,
  callback: 0x07,
} as const;
