// What a compiler thread (compiler-threads.ts) does with one component: jco
// transpiles it into its glue and core modules, then binaryen writes a
// fuel-instrumented twin of each core module (fuel-instrumentation.ts). Both are synchronous
// for seconds on an 11 MB componentize-js component, which is why this module
// is only ever loaded on such a thread, never by the primary itself. Every
// file comes back with its sha256, so that caching it does not hash megabytes
// on the primary's event loop either.

import { transpileBytes as transpile } from '@bytecodealliance/jco-transpile';
import { firstLine } from '../first-line.js';
import { rewriteGlue } from './glue-rewrite.js';
import { sha256 } from '../sha256.js';
import { hollow, refill } from './hollow-component.js';
import { instrumentFuel } from './fuel-instrumentation.js';

/** The glue module's name in jco's output. */
const ENTRY = 'component.js';

export interface CompiledFile {
  name: string;
  bytes: Uint8Array;
  sha256: string;
}

export interface Compiled {
  /** jco's glue (as glue-rewrite.ts leaves it): an ES module exporting `instantiate`. */
  glue: Uint8Array;
  /** Everything else jco wrote (the core modules), and the fuel-instrumented twins. */
  files: CompiledFile[];
  coreModules: string[];
  /** The twins' names (`x.core.wasm` → `x.core.fuel.wasm`), or why they could not be made. */
  fuel: { ok: true; modules: string[] } | { ok: false; reason: string };
  importSpecifiers: string[];
}

/** Where the work is, for the log: transpiling takes ~0.5 s (~5 s before hollow-component.ts), instrumenting ~6.5 s, on an 11 MB componentize-js component. */
export type CompileStage = 'transpiling' | 'instrumenting';

export interface CompileOptions {
  /** Why not to make the fuel-instrumented twins, for a component that never runs inline (an HTTP handler, async functions). */
  uninstrumented?: string;
  /** For a component that uses the async ABI (transpiled through JSPI): the async functions it exports, as jco names them (`f`, `ns:pkg/iface@1.0.0#f`). */
  asyncExports?: string[];
}

/** Transpiles and instruments `bytes`. Throws a one-line Error when jco cannot transpile them. */
export async function compile(bytes: Uint8Array, stage: (stage: CompileStage) => void, options: CompileOptions = {}): Promise<Compiled> {
  stage('transpiling');
  const { asyncExports } = options;
  const transpileOptions: TranspileOptions = asyncExports ? { ...TRANSPILE_OPTIONS, asyncMode: 'jspi', asyncExports } : TRANSPILE_OPTIONS;
  let output: Transpiled;
  try {
    // jco's glue for the async ABI depends on the code too (which callbacks may suspend on an import): such a component is transpiled whole.
    output = (asyncExports ? undefined : await transpileHollow(bytes, transpileOptions)) ?? (await transpile(bytes, { ...transpileOptions }));
  } catch (e) {
    throw new Error(`jco could not transpile the component: ${firstLine(e)}`, { cause: e });
  }
  const files = Object.entries(output.files)
    .filter(([name]) => name !== ENTRY)
    .map(([name, data]) => file(name, data));
  const cores = files.filter(({ name }) => name.endsWith('.wasm'));
  if (options.uninstrumented === undefined) stage('instrumenting');
  const fuel = options.uninstrumented === undefined ? instrumentAll(cores) : ({ ok: false, reason: options.uninstrumented } as const);
  if (fuel.ok) files.push(...fuel.files);
  return {
    glue: new TextEncoder().encode(rewriteGlue(new TextDecoder().decode(output.files[ENTRY])).text),
    files,
    coreModules: cores.map(({ name }) => name),
    fuel: fuel.ok ? { ok: true, modules: fuel.files.map(({ name }) => name) } : fuel,
    importSpecifiers: output.imports,
  };
}

type Transpiled = { files: Record<string, Uint8Array>; imports: string[] };
type TranspileOptions = NonNullable<Parameters<typeof transpile>[1]>;

/**
 * How rt transpiles (tests that call the glue directly use the same): no
 * TypeScript declarations; core modules always as files, never inlined as
 * base64; the err case of a top-level result thrown as a ComponentError
 * carrying it (jco-transpile throws the bare payload unless told, and a bare
 * payload cannot be told from a trap). Passed as a copy: jco-transpile writes
 * into the options it is given.
 */
export const TRANSPILE_OPTIONS = {
  name: 'component',
  instantiation: 'async',
  emitTypescriptDeclarations: false,
  base64Cutoff: 0,
  noComponentErrorWrapping: false,
} as const satisfies TranspileOptions;

/** jco's output made from the component's hollow twin (hollow-component.ts), or undefined where that does not serve: the component itself is transpiled then, and reports what is wrong with it. */
async function transpileHollow(bytes: Uint8Array, options: TranspileOptions): Promise<Transpiled | undefined> {
  const hollowed = hollow(bytes);
  if (!hollowed) return undefined;
  try {
    const output = await transpile(hollowed.bytes, { ...options });
    const files = refill(output.files, hollowed);
    return files && { files, imports: output.imports };
  } catch {
    return undefined;
  }
}

function file(name: string, bytes: Uint8Array): CompiledFile {
  return { name, bytes, sha256: sha256(bytes) };
}

/** Each core module's fuel-instrumented twin, or why one could not be made (then none is used). */
function instrumentAll(cores: CompiledFile[]): { ok: true; files: CompiledFile[] } | { ok: false; reason: string } {
  const twins: CompiledFile[] = [];
  for (const { name, bytes } of cores) {
    const outcome = instrumentFuel(bytes);
    if (!outcome.ok) return { ok: false, reason: `${name}: ${outcome.reason}` };
    twins.push(file(name.replace(/\.wasm$/, '.fuel.wasm'), outcome.bytes));
  }
  return { ok: true, files: twins };
}
