// Turns component bytes into what workers load: jco's transpiled glue (an ES
// module exporting `instantiate`), its core modules, and the component's
// interface as read by the runtime, plus a fuel-instrumented twin of each core
// module (fuel.ts) for running calls inline. Output is cached by the
// component's sha256, so each component is transpiled and instrumented once
// per machine, not once per start.

import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { transpile } from '@bytecodealliance/jco';
import { firstLine } from '../first-line.js';
import { cacheDir } from '../paths.js';
import { writeAtomically } from '../write-atomically.js';
import { instrumentFuelOffThread } from './fuel-thread.js';
import type { ComponentArtifact } from '../service.js';
import { readComponentInterface } from '../wit/component-reader.js';
import type { ComponentInterface } from '../wit/types.js';

/** The transpiler version is part of the cache key: glue from another jco is not interchangeable. */
export const JCO_VERSION = '1.12.0';
/**
 * How entries are laid out (4: fuel-instrumented modules, counters inlined, beside the core modules; glue apart by its hash); a change makes new entries.
 * 5: the same, made again: entries of 4 may record a fuel refusal that came from the instrumentation thread ending as the work came (fuel-thread.ts), not from the module.
 */
const CACHE_LAYOUT = 5;

const ENTRY = 'component.js';
/**
 * Glue modules live apart, by the sha256 of their text: a worker imports each
 * glue once and keeps it for its life (ES modules are never unloaded), and new
 * versions of a component whose interface did not change have the same glue,
 * so reloading them imports nothing new.
 */
const GLUE_DIR = 'glue';

export interface CompiledComponent {
  artifact: ComponentArtifact;
  interface: ComponentInterface;
}

interface CachedMeta {
  /** The glue's file name in GLUE_DIR. */
  glue: string;
  coreModules: string[];
  fuelModules: string[] | null;
  fuelRefusal?: string;
  importSpecifiers: string[];
  interface: ComponentInterface;
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Compiles `bytes` (or finds them compiled). Throws a one-line Error for a file
 * that is not a valid component. `onTranspile` is told when real work starts,
 * so long first transpiles show progress.
 */
export async function compileComponent(bytes: Uint8Array, onTranspile?: () => void): Promise<CompiledComponent> {
  const hash = sha256(bytes);
  const root = join(cacheDir(), 'components', `jco-${JCO_VERSION}-${CACHE_LAYOUT}`);
  const dir = join(root, hash);
  const meta = await readCachedMeta(dir);
  if (meta) return compiled(hash, root, dir, meta);

  // Reading the interface first turns "not a component" into a clear message
  // instead of a transpiler stack trace.
  const iface = readComponentInterface(bytes);
  onTranspile?.();
  let output: { files: Record<string, Uint8Array>; imports: string[] };
  try {
    // No TypeScript declarations; core modules always as files, never inlined as base64.
    const options = { name: 'component', instantiation: 'async', typescript: false, base64Cutoff: 0 };
    output = await transpile(bytes, options as unknown as Parameters<typeof transpile>[1]);
  } catch (e) {
    throw new Error(`jco could not transpile the component: ${firstLine(e)}`);
  }
  const files = Object.entries(output.files).filter(([name]) => name !== ENTRY);
  const glue = await writeGlue(join(root, GLUE_DIR), output.files[ENTRY]!);
  const cores = files.filter(([name]) => name.endsWith('.wasm'));
  const fuel = await instrumentAll(cores);
  const fresh: CachedMeta = {
    glue,
    coreModules: cores.map(([name]) => name),
    fuelModules: fuel.ok ? fuel.files.map(([name]) => name) : null,
    ...(fuel.ok ? {} : { fuelRefusal: fuel.reason }),
    importSpecifiers: output.imports,
    interface: iface,
  };
  if (fuel.ok) files.push(...fuel.files);
  await writeCache(dir, files, fresh);
  return compiled(hash, root, dir, fresh);
}

function compiled(hash: string, root: string, dir: string, meta: CachedMeta): CompiledComponent {
  return {
    artifact: {
      hash,
      entry: join(root, GLUE_DIR, meta.glue),
      dir,
      coreModules: meta.coreModules,
      fuelModules: meta.fuelModules,
      ...(meta.fuelRefusal ? { fuelRefusal: meta.fuelRefusal } : {}),
      importSpecifiers: meta.importSpecifiers,
    },
    interface: meta.interface,
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

/** Writes the glue as `<sha256>.js` into `dir` and returns that name. */
async function writeGlue(dir: string, text: Uint8Array): Promise<string> {
  const name = `${sha256(text)}.js`;
  // The glue is an ES module with a .js suffix.
  await writeAtomically(join(dir, 'package.json'), '{"type":"module"}\n');
  await writeAtomically(join(dir, name), text);
  return name;
}

async function readCachedMeta(dir: string): Promise<CachedMeta | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as CachedMeta;
  } catch {
    return undefined;
  }
}

/** Writes into a temporary directory and renames it into place, so a half-written cache entry is never seen. */
async function writeCache(dir: string, files: [string, Uint8Array][], meta: CachedMeta): Promise<void> {
  const tmp = `${dir}.${process.pid}.${Date.now()}.tmp`;
  await mkdir(tmp, { recursive: true });
  for (const [name, data] of files) {
    const target = join(tmp, name);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, data);
  }
  await writeFile(join(tmp, 'meta.json'), JSON.stringify(meta));
  try {
    await rename(tmp, dir);
  } catch {
    // Another process compiled the same component meanwhile; theirs is as good.
    await rm(tmp, { recursive: true, force: true });
  }
}
