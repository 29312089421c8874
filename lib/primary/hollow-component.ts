// Transpiling a component without its core modules' code. jco 1.12's
// transpile spends ~5 s of an 11 MB componentize-js component's ~13 s compile
// (measured on this project's 2-core machines) translating its core module,
// although the glue it writes depends only on the module's imports, exports
// and types, and the core module files it writes are the component's
// embedded modules byte for byte. So the compiler transpiles a hollow twin of
// the component, each top-level core module's function bodies replaced by
// `unreachable` and its data segments dropped (0.3-0.6 s for the same
// component), then puts the real modules in place of the hollow ones in jco's
// output. Each hollow module carries a custom section naming the module it
// stands for, so a module jco did not write verbatim is noticed, and the
// caller then transpiles the component itself. The glue is byte-identical
// either way for every bundled example and test fixture
// (test/unit/hollow-component.test.ts) but those that use the component
// model's async ABI (WASI 0.3): there jco looks at the code to tell which
// callbacks may suspend on an import (a hollow one never does, and its glue
// then traps when one does), so the compiler transpiles those whole.

import { BinaryReader, PREAMBLE, concatBytes, encodeSection, encodeU32, sections, type BinaryFaults } from '../wit/binary-reader.js';

/** A component with its top-level core modules hollowed out, and the modules themselves in order. */
export interface HollowComponent {
  bytes: Uint8Array;
  modules: Uint8Array[];
}

const CUSTOM = 0;
const CORE_MODULE = 1;
const CODE = 10;
const DATA = 11;
const DATA_COUNT = 12;
/** The custom section a hollow module carries: the index of the module it stands for. */
const MARK = 'rt:hollow-of';
/** A function body of no locals that traps: `unreachable end`, after its size. */
const TRAPPING_BODY = [3, 0, 0x00, 0x0b];

class Malformed extends Error {}
const FAULTS: BinaryFaults = {
  truncated: (offset) => new Malformed(`truncated at ${offset}`),
  malformed: (offset, what) => new Malformed(`${what} at ${offset}`),
};

/** The hollow twin of `component`, or undefined when its bytes do not parse as sections (jco reports that). */
export function hollow(component: Uint8Array): HollowComponent | undefined {
  const modules: Uint8Array[] = [];
  try {
    const parts = mapSections(component, (id, body) => {
      if (id !== CORE_MODULE) return undefined;
      modules.push(body);
      return hollowModule(body, modules.length - 1);
    });
    return { bytes: concatBytes(parts), modules };
  } catch (e) {
    if (e instanceof Malformed) return undefined;
    throw e;
  }
}

/**
 * jco's output for the hollow twin with the real core modules in place of
 * the hollow ones; undefined when a core module file is not one of the hollow
 * modules as written.
 */
export function refill(files: Record<string, Uint8Array>, hollowed: HollowComponent): Record<string, Uint8Array> | undefined {
  const out: Record<string, Uint8Array> = {};
  for (const [name, bytes] of Object.entries(files)) {
    if (!name.endsWith('.wasm')) {
      out[name] = bytes;
      continue;
    }
    const index = markOf(bytes);
    const module = index === undefined ? undefined : hollowed.modules[index];
    if (!module) return undefined;
    out[name] = module;
  }
  return out;
}

function hollowModule(module: Uint8Array, index: number): Uint8Array[] {
  const parts = mapSections(module, (id, body) => {
    if (id === DATA || id === DATA_COUNT) return [];
    if (id !== CODE) return undefined;
    const count = new BinaryReader(body, 0, body.length, FAULTS).u32();
    const bodies = new Uint8Array(count * TRAPPING_BODY.length);
    for (let i = 0; i < count; i++) bodies.set(TRAPPING_BODY, i * TRAPPING_BODY.length);
    return [Uint8Array.from(encodeU32(count)), bodies];
  });
  const name = new TextEncoder().encode(MARK);
  parts.push(...encodeSection(CUSTOM, [Uint8Array.from(encodeU32(name.length)), name, Uint8Array.from(encodeU32(index))]));
  return parts;
}

/** The index a hollow module's mark names, or undefined for a module without one. */
function markOf(module: Uint8Array): number | undefined {
  let index: number | undefined;
  try {
    mapSections(module, (id, body) => {
      if (id !== CUSTOM) return undefined;
      const r = new BinaryReader(body, 0, body.length, FAULTS);
      if (r.string() === MARK) index = r.u32();
      return undefined;
    });
  } catch (e) {
    if (e instanceof Malformed) return undefined;
    throw e;
  }
  return index;
}

/**
 * The sections of a module or component (after its preamble), each kept as
 * it is when `replace` answers undefined, else replaced by the body parts it
 * answers (no section at all for none).
 */
function mapSections(binary: Uint8Array, replace: (id: number, body: Uint8Array) => Uint8Array[] | undefined): Uint8Array[] {
  const parts: Uint8Array[] = [binary.subarray(0, PREAMBLE)];
  for (const { id, body, raw } of sections(binary, FAULTS)) {
    const replaced = replace(id, body);
    if (replaced === undefined) parts.push(raw);
    else if (replaced.length > 0) parts.push(...encodeSection(id, replaced));
  }
  return parts;
}
