// Pre-initializing a core module as wizer does, on V8 instead of wasmtime.
//
// componentize-js runs wizer on every build: it instantiates the engine
// (StarlingMonkey, ~10 MB, spliced with the world's bindings), calls its
// initialization function, which evaluates the component's JavaScript, and
// writes a module whose memory and globals start where initialization left
// them. wasmtime compiles all of the module with Cranelift before it runs
// any of it: 5.4 s of wizer's 5.7 s per build on this project's 2-core
// machines (measured: a second run on wasmtime's cache takes 0.3 s), and no
// two builds share that work, since every spliced engine differs. V8 compiles
// a function when it is first called, so here the same initialization takes
// well under a second.
//
// The snapshot and the rewrite follow wizer's (bytecodealliance/wizer,
// snapshot.rs and rewrite.rs): every defined global takes the value it has
// after initialization as its constant initializer, every defined memory's
// minimum becomes its size, its non-zero bytes become active data segments
// (runs closer than 4 bytes merged, at most 10,000 segments), and the start
// function, the initialization function and `_initialize` are gone. What
// wizer refuses, or what a V8 instance cannot show exactly, is refused here
// as `Unsupported` (preinitialize-cli.ts then runs wizer itself): imported
// memories, tables or globals; shared or 64-bit memories; passive data
// segments; globals other than numbers; a float global left holding a NaN
// (JavaScript does not keep its bits); a table that initialization changed
// (wizer does not snapshot tables).

import { BinaryReader, PREAMBLE, concatBytes, encodeSection, encodeSigned, encodeU32, sections, type BinaryFaults } from '../lib/wit/binary-reader.js';

/** Changes when what preinitialize writes does: builds made before are not reused (builder.ts). */
export const PREINITIALIZE_VERSION = '1';

/** What wizer would do with the module, or refuses too: the caller runs wizer itself. */
export class Unsupported extends Error {}

/** The initialization function (or `_initialize`, or the start function) trapped or exited. */
export class InitializationFailed extends Error {}

export interface PreinitializeOptions {
  /** The export that initializes the module (wizer's `--init-func`). */
  initFunc: string;
  /** Keep that export in the result (wizer's `--keep-init-func`). */
  keepInitFunc?: boolean;
  /** WASI preview 1 for initialization (wizer's `--allow-wasi`), or none: then every import traps. */
  wasi?: {
    env: Record<string, string>;
    /** Guest path → host directory, preopened in this order. */
    preopens: [guest: string, host: string][];
    /** Host file descriptors for the guest's stdin, stdout and stderr. */
    stdio: [number, number, number];
  };
}

const IMPORT = 2;
const TABLE = 4;
const MEMORY = 5;
const GLOBAL = 6;
const EXPORT = 7;
const START = 8;
const DATA = 11;
const DATA_COUNT = 12;
const CUSTOM = 0;

const EXTERN_FUNC = 0;
const EXTERN_TABLE = 1;
const EXTERN_MEMORY = 2;
const EXTERN_GLOBAL = 3;

const I32 = 0x7f;
const I64 = 0x7e;
const F32 = 0x7d;
const F64 = 0x7c;

const PAGE = 65_536;
/** The smallest an active data segment's own encoding can be: runs of non-zero bytes closer than this are cheaper merged. */
const MIN_SEGMENT_OVERHEAD = 4;
/** The most data segments written: engines accept more (V8 100,000), wizer leaves headroom. */
const MAX_DATA_SEGMENTS = 10_000;

const FAULTS: BinaryFaults = {
  truncated: (offset) => new Unsupported(`the module is truncated at byte ${offset}`),
  malformed: (offset, what) => new Unsupported(`the module is malformed at byte ${offset}: ${what}`),
};

interface Export {
  name: string;
  kind: number;
  index: number;
}

interface Memory {
  flags: number;
  max: number | undefined;
}

interface ModuleLayout {
  /** Each defined global's type: its value type and mutability bytes. */
  globals: { valtype: number; mutable: number }[];
  memories: Memory[];
  tables: number;
  exports: Export[];
  importedGlobals: number;
  importedMemories: number;
  importedTables: number;
}

interface DataSegment {
  memory: number;
  offset: number;
  length: number;
}

interface Snapshot {
  globals: (number | bigint)[];
  /** Each defined memory's size, in pages, and its bytes. */
  memories: { pages: number; bytes: Uint8Array }[];
  segments: DataSegment[];
}

/** `wasm` initialized: its initialization function run and its state written into the module. */
export function preinitialize(wasm: Uint8Array, options: PreinitializeOptions): Uint8Array {
  const layout = readLayout(wasm);
  const init = layout.exports.find((e) => e.name === options.initFunc);
  if (!init || init.kind !== EXTERN_FUNC) throw new InitializationFailed(`the Wasm module does not have a \`${options.initFunc}\` function export`);
  const module = new WebAssembly.Module(instrument(wasm, layout));
  const { instance, hadInitialize } = initialize(module, options);
  const snapshot = takeSnapshot(instance, layout);
  return rewrite(wasm, layout, snapshot, { ...options, hadInitialize });
}

function readLayout(wasm: Uint8Array): ModuleLayout {
  const layout: ModuleLayout = { globals: [], memories: [], tables: 0, exports: [], importedGlobals: 0, importedMemories: 0, importedTables: 0 };
  for (const { id, body } of sections(wasm, FAULTS)) {
    const r = new BinaryReader(body, 0, body.length, FAULTS);
    switch (id) {
      case IMPORT:
        r.vec(() => {
          r.string();
          r.string();
          const kind = r.byte();
          if (kind === EXTERN_FUNC) r.u32();
          else if (kind === EXTERN_TABLE) throw new Unsupported('it imports a table');
          else if (kind === EXTERN_MEMORY) throw new Unsupported('it imports a memory');
          else if (kind === EXTERN_GLOBAL) throw new Unsupported('it imports a global');
          else throw new Unsupported(`it has an import of kind ${kind}`);
        });
        break;
      case TABLE:
        layout.tables = r.u32();
        break;
      case MEMORY:
        layout.memories = r.vec(() => {
          const flags = r.byte();
          if (flags & ~1) throw new Unsupported('it has a shared, 64-bit or custom-page memory');
          r.u32();
          return { flags, max: flags & 1 ? r.u32() : undefined };
        });
        break;
      case GLOBAL:
        layout.globals = r.vec(() => {
          const valtype = r.byte();
          if (![I32, I64, F32, F64].includes(valtype)) throw new Unsupported('it has a global that is not a number');
          const mutable = r.byte();
          skipConstExpr(r);
          return { valtype, mutable };
        });
        break;
      case EXPORT:
        layout.exports = r.vec(() => ({ name: r.string(), kind: r.byte(), index: r.u32() }));
        break;
      case DATA:
        r.vec(() => {
          const flags = r.u32();
          if (flags === 1) throw new Unsupported('it has passive data segments');
          if (flags === 2) r.u32();
          else if (flags !== 0) throw new Unsupported(`it has a data segment of kind ${flags}`);
          skipConstExpr(r);
          r.skip(r.u32());
        });
        break;
    }
  }
  return layout;
}

/** Past a constant expression, as far as numbers and global reads go (what a global of a number type or a data offset holds). */
function skipConstExpr(r: BinaryReader): void {
  for (;;) {
    const op = r.byte();
    if (op === 0x0b) return;
    if (op === 0x41 || op === 0x42) r.skipLeb();
    else if (op === 0x43) r.skip(4);
    else if (op === 0x44) r.skip(8);
    else if (op === 0x23) r.u32();
    else if (op >= 0x6a && op <= 0x6c) continue;
    else if (op >= 0x7c && op <= 0x7e) continue;
    else throw new Unsupported(`a constant expression holds opcode 0x${op.toString(16)}`);
  }
}

/** The module with every defined global, memory and table exported as wizer names them, so that their state can be read. */
function instrument(wasm: Uint8Array, layout: ModuleLayout): Uint8Array<ArrayBuffer> {
  const added: Export[] = [
    ...layout.globals.map((_, i) => ({ name: `__wizer_global_${i}`, kind: EXTERN_GLOBAL, index: layout.importedGlobals + i })),
    ...layout.memories.map((_, i) => ({ name: `__wizer_memory_${i}`, kind: EXTERN_MEMORY, index: layout.importedMemories + i })),
    ...Array.from({ length: layout.tables }, (_, i) => ({ name: `__wizer_table_${i}`, kind: EXTERN_TABLE, index: layout.importedTables + i })),
  ];
  const parts: Uint8Array[] = [wasm.subarray(0, PREAMBLE)];
  for (const { id, raw } of sections(wasm, FAULTS)) {
    parts.push(...(id === EXPORT ? encodeSection(EXPORT, [encodeExports([...layout.exports, ...added])]) : [raw]));
  }
  return concatBytes(parts);
}

function initialize(module: WebAssembly.Module, options: PreinitializeOptions): { instance: WebAssembly.Instance; hadInitialize: boolean } {
  // Loaded here, not imported: loading node:wasi warns that it is experimental, which builder.ts (importing PREINITIALIZE_VERSION) has no use for.
  const { WASI } = process.getBuiltinModule('node:wasi');
  const wasi = options.wasi && new WASI({ version: 'preview1', args: [], env: options.wasi.env, preopens: Object.fromEntries(options.wasi.preopens), stdin: options.wasi.stdio[0], stdout: options.wasi.stdio[1], stderr: options.wasi.stdio[2], returnOnExit: true });
  const provided = (wasi?.getImportObject() ?? {}) as WebAssembly.Imports;
  const imports: WebAssembly.Imports = {};
  for (const { module: from, name } of WebAssembly.Module.imports(module)) {
    imports[from] ??= {};
    imports[from][name] = provided[from]?.[name] ?? trapping(from, name);
  }
  const fail = (what: string, e: unknown) => new InitializationFailed(`${what}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  let instance: WebAssembly.Instance;
  try {
    instance = new WebAssembly.Instance(module, imports);
  } catch (e) {
    throw fail('failed to instantiate the Wasm module', e);
  }
  if (wasi && !(instance.exports.memory instanceof WebAssembly.Memory)) throw new Unsupported('it exports no memory named `memory`, which WASI needs');
  if (instance.exports._start) throw new Unsupported('it is a WASI command (it exports `_start`)');
  const tablesBefore = tableStates(instance);
  const initializeExport = instance.exports._initialize;
  const hadInitialize = typeof initializeExport === 'function';
  try {
    if (wasi) wasi.initialize(instance);
    else if (hadInitialize) (initializeExport as () => void)();
  } catch (e) {
    throw fail('calling the Reactor initialization function', e);
  }
  try {
    (instance.exports[options.initFunc] as () => void)();
  } catch (e) {
    throw fail(`the \`${options.initFunc}\` function trapped`, e);
  }
  if (tableStates(instance).some((state, i) => state !== tablesBefore[i])) throw new Unsupported('initialization changed a table, which is not part of the snapshot');
  return { instance, hadInitialize };
}

/** An import wizer does not provide: calling it during initialization traps. */
function trapping(module: string, name: string): () => never {
  return () => {
    throw new Error(`the import ${module}#${name} was called during initialization, which only WASI imports may be`);
  };
}

/** Each defined table's entries, as the function indices V8 names its exported functions by. */
function tableStates(instance: WebAssembly.Instance): string[] {
  const states: string[] = [];
  for (let i = 0; ; i++) {
    const table = instance.exports[`__wizer_table_${i}`];
    if (!(table instanceof WebAssembly.Table)) return states;
    const entries: string[] = [];
    for (let j = 0; j < table.length; j++) entries.push((table.get(j) as { name?: string } | null)?.name ?? '-');
    states.push(entries.join(','));
  }
}

function takeSnapshot(instance: WebAssembly.Instance, layout: ModuleLayout): Snapshot {
  const globals = layout.globals.map((_, i) => {
    const value = (instance.exports[`__wizer_global_${i}`] as WebAssembly.Global).value as number | bigint;
    if (typeof value === 'number' && Number.isNaN(value)) throw new Unsupported(`global ${i} holds a NaN, whose bits JavaScript does not keep`);
    return value;
  });
  const memories = layout.memories.map((_, i) => {
    const { buffer } = instance.exports[`__wizer_memory_${i}`] as WebAssembly.Memory;
    return { pages: buffer.byteLength / PAGE, bytes: new Uint8Array(buffer) };
  });
  const segments = memories.flatMap(({ bytes }, memory) => nonZeroRuns(bytes, memory));
  return { globals, memories, segments: fewerThanTheLimit(segments) };
}

/** The runs of non-zero bytes of a memory, runs at most MIN_SEGMENT_OVERHEAD apart merged. */
function nonZeroRuns(bytes: Uint8Array, memory: number): DataSegment[] {
  const runs: DataSegment[] = [];
  let i = 0;
  const n = bytes.length;
  for (;;) {
    while (i < n && bytes[i] === 0) i++;
    if (i === n) return runs;
    const start = i;
    while (i < n && bytes[i] !== 0) i++;
    const last = runs[runs.length - 1];
    if (last && start - (last.offset + last.length) <= MIN_SEGMENT_OVERHEAD) last.length = i - last.offset;
    else runs.push({ memory, offset: start, length: i - start });
  }
}

/** `segments` with the ones closest together merged until fewer than MAX_DATA_SEGMENTS are left. */
function fewerThanTheLimit(segments: DataSegment[]): DataSegment[] {
  if (segments.length < MAX_DATA_SEGMENTS) return segments;
  const gaps: { gap: number; index: number }[] = [];
  for (let i = 0; i + 1 < segments.length; i++) {
    const [a, b] = [segments[i], segments[i + 1]];
    if (a.memory === b.memory) gaps.push({ gap: b.offset - (a.offset + a.length), index: i });
  }
  const merge = new Set(
    gaps
      .sort((x, y) => x.gap - y.gap || x.index - y.index)
      .slice(0, segments.length - MAX_DATA_SEGMENTS)
      .map((g) => g.index),
  );
  const out: DataSegment[] = [];
  for (let i = 0; i < segments.length; i++) {
    const merged = out[out.length - 1];
    if (merged && merge.has(i - 1)) merged.length = segments[i].offset + segments[i].length - merged.offset;
    else out.push({ ...segments[i] });
  }
  return out;
}

function rewrite(wasm: Uint8Array, layout: ModuleLayout, snapshot: Snapshot, options: PreinitializeOptions & { hadInitialize: boolean }): Uint8Array {
  const parts: Uint8Array[] = [wasm.subarray(0, PREAMBLE)];
  let data: Uint8Array[] | undefined = snapshot.segments.length ? encodeSection(DATA, [encodeData(snapshot)]) : undefined;
  const addData = () => {
    if (data) parts.push(...data);
    data = undefined;
  };
  const removed = new Set(options.keepInitFunc ? [] : [options.initFunc, ...(options.hadInitialize ? ['_initialize'] : [])]);
  for (const { id, body, raw } of sections(wasm, FAULTS)) {
    switch (id) {
      case MEMORY:
        parts.push(...encodeSection(MEMORY, [encodeMemories(layout.memories, snapshot)]));
        break;
      case GLOBAL:
        parts.push(...encodeSection(GLOBAL, [encodeGlobals(layout, snapshot)]));
        break;
      case EXPORT:
        parts.push(...encodeSection(EXPORT, [encodeExports(layout.exports.filter((e) => !removed.has(e.name)))]));
        break;
      case START:
        break;
      case DATA_COUNT:
        parts.push(...encodeSection(DATA_COUNT, [Uint8Array.from(encodeU32(snapshot.segments.length))]));
        break;
      case DATA:
        addData();
        break;
      case CUSTOM:
        // Tools expect the name section last: the data section goes before it.
        if (new BinaryReader(body, 0, body.length, FAULTS).string() === 'name') addData();
        parts.push(raw);
        break;
      default:
        parts.push(raw);
    }
  }
  addData();
  return concatBytes(parts);
}

function encodeExports(exports: Export[]): Uint8Array {
  const text = new TextEncoder();
  return Uint8Array.from([
    ...encodeU32(exports.length),
    ...exports.flatMap(({ name, kind, index }) => {
      const bytes = text.encode(name);
      return [...encodeU32(bytes.length), ...bytes, kind, ...encodeU32(index)];
    }),
  ]);
}

function encodeMemories(memories: Memory[], snapshot: Snapshot): Uint8Array {
  return Uint8Array.from([
    ...encodeU32(memories.length),
    ...memories.flatMap(({ flags, max }, i) => [flags, ...encodeU32(snapshot.memories[i].pages), ...(max === undefined ? [] : encodeU32(max))]),
  ]);
}

function encodeGlobals(layout: ModuleLayout, snapshot: Snapshot): Uint8Array {
  const out: number[] = [...encodeU32(layout.globals.length)];
  layout.globals.forEach(({ valtype, mutable }, i) => {
    const value = snapshot.globals[i];
    out.push(valtype, mutable);
    if (valtype === I32) out.push(0x41, ...encodeSigned(value));
    else if (valtype === I64) out.push(0x42, ...encodeSigned(value));
    else {
      const bytes = new DataView(new ArrayBuffer(valtype === F32 ? 4 : 8));
      if (valtype === F32) bytes.setFloat32(0, Number(value), true);
      else bytes.setFloat64(0, Number(value), true);
      out.push(valtype === F32 ? 0x43 : 0x44, ...new Uint8Array(bytes.buffer));
    }
    out.push(0x0b);
  });
  return Uint8Array.from(out);
}

function encodeData(snapshot: Snapshot): Uint8Array {
  const parts: Uint8Array[] = [Uint8Array.from(encodeU32(snapshot.segments.length))];
  for (const { memory, offset, length } of snapshot.segments) {
    // An i32.const offset is signed: offsets past 2 GiB are written as negative numbers.
    const head = [...(memory === 0 ? [0] : [2, ...encodeU32(memory)]), 0x41, ...encodeSigned(offset | 0), 0x0b, ...encodeU32(length)];
    parts.push(Uint8Array.from(head), snapshot.memories[memory].bytes.subarray(offset, offset + length));
  }
  return concatBytes(parts);
}
