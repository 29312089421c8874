// Turns component bytes into what workers load: jco's transpiled glue (an ES
// module exporting `instantiate`), its core modules, and the component's
// interface as read by the runtime, plus a fuel-instrumented twin of each core
// module (fuel.ts) for running calls inline. Output is cached by the
// component's sha256 (transpile-cache.ts), so each component is transpiled and
// instrumented once per machine, not once per start.
//
// The interface is not cached: reading it takes well under a millisecond even
// for an 11 MB componentize-js component (measured: 0.03–0.5 ms), and read
// anew, a fix to the reader reaches components transpiled before it.

import { join } from 'node:path';
import { transpile } from '@bytecodealliance/jco';
import { firstLine } from '../first-line.js';
import { cacheDir } from '../paths.js';
import { sha256 } from '../sha256.js';
import type { ComponentArtifact } from '../service.js';
import { readComponentInterface } from '../wit/component-reader.js';
import type { ComponentInterface } from '../wit/types.js';
import { TranspileCache, type EntryMeta } from './transpile-cache.js';
import { instrumentFuelOffThread } from './fuel-thread.js';

/** The transpiler version is part of the cache key: glue from another jco is not interchangeable. */
export const JCO_VERSION = '1.12.0';
/**
 * How entries are laid out (every file's hash recorded, no interface; glue apart by its hash); a change makes new entries.
 * 6 rather than 5: entries of 5 may record a fuel refusal that came from the instrumentation thread ending as the work came (fuel-thread.ts), not from the module.
 */
const CACHE_LAYOUT = 6;

const ENTRY = 'component.js';

export interface TranspiledComponent {
  artifact: ComponentArtifact;
  interface: ComponentInterface;
}

/** What transpiling tells its caller about, for the log. */
export interface TranspileEvents {
  /** Real work starts: a first transpile can take seconds. */
  transpiling?(): void;
  /** The cache entry `entry` (a folder) is damaged and is being built anew. */
  rebuilding?(entry: string, problem: string): void;
}

/** The cache of this jco and layout. */
function cache(): TranspileCache {
  return new TranspileCache(join(cacheDir(), 'components', `jco-${JCO_VERSION}-${CACHE_LAYOUT}`));
}

/**
 * Transpiles `bytes` (or finds them transpiled). Throws a one-line Error for a file
 * that is not a valid component.
 */
export async function transpileComponent(bytes: Uint8Array, events: TranspileEvents = {}): Promise<TranspiledComponent> {
  // Read first: it turns "not a component" into a clear message instead of a transpiler stack trace.
  const iface = readComponentInterface(bytes);
  const hash = sha256(bytes);
  const entries = cache();
  const found = await entries.lookup(hash);
  if (found.kind === 'good') return transpiled(entries, hash, found.meta, iface);
  if (found.kind === 'damaged') {
    events.rebuilding?.(entries.entry(hash), found.problem);
    await entries.remove(hash);
  }

  events.transpiling?.();
  let output: { files: Record<string, Uint8Array>; imports: string[] };
  try {
    // No TypeScript declarations; core modules always as files, never inlined as base64.
    const options = { name: 'component', instantiation: 'async', typescript: false, base64Cutoff: 0 };
    output = await transpile(bytes, options as unknown as Parameters<typeof transpile>[1]);
  } catch (e) {
    throw new Error(`jco could not transpile the component: ${firstLine(e)}`, { cause: e });
  }
  const files = Object.entries(output.files).filter(([name]) => name !== ENTRY);
  const glue = await entries.writeGlue(output.files[ENTRY]);
  const cores = files.filter(([name]) => name.endsWith('.wasm'));
  const fuel = await instrumentAll(cores);
  if (fuel.ok) files.push(...fuel.files);
  const meta = await entries.write(hash, files, {
    glue,
    coreModules: cores.map(([name]) => name),
    fuelModules: fuel.ok ? fuel.files.map(([name]) => name) : null,
    ...(fuel.ok ? {} : { fuelRefusal: fuel.reason }),
    importSpecifiers: output.imports,
  });
  return transpiled(entries, hash, meta, iface);
}

function transpiled(entries: TranspileCache, hash: string, meta: EntryMeta, iface: ComponentInterface): TranspiledComponent {
  return {
    artifact: {
      hash,
      entry: entries.glue(meta),
      dir: entries.entry(hash),
      coreModules: meta.coreModules,
      fuelModules: meta.fuelModules,
      ...(meta.fuelRefusal ? { fuelRefusal: meta.fuelRefusal } : {}),
      importSpecifiers: meta.importSpecifiers,
    },
    interface: iface,
  };
}

/** Each core module's fuel-instrumented twin (`x.core.wasm` → `x.core.fuel.wasm`), or why one could not be made. */
async function instrumentAll(modules: [string, Uint8Array][]): Promise<{ ok: true; files: [string, Uint8Array][] } | { ok: false; reason: string }> {
  const files: [string, Uint8Array][] = [];
  for (const [name, bytes] of modules) {
    const outcome = await instrumentFuelOffThread(bytes);
    if (!outcome.ok) return { ok: false, reason: `${name}: ${outcome.reason}` };
    files.push([name.replace(/\.wasm$/, '.fuel.wasm'), outcome.bytes]);
  }
  return { ok: true, files };
}
