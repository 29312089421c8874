// Builds components from source, for the bundled examples and the test suite:
// hand-written WAT (core modules with a WIT world, or whole components, through
// jco's embedded wasm-tools), JavaScript (through
// componentize-js, a development dependency) and C (clang for wasm32-wasi with
// wasi-libc, adapted to WASI 0.2 with jco's preview1 reactor adapter, the way
// Rust, C and Go toolchains build components). Builds are cached by the hash
// of everything that goes into them, since a componentize-js build takes ~2 s
// (componentize.ts; several at once: componentize-process.ts).

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { componentEmbed, componentNew, parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { packageVersion } from '../lib/package-version.js';
import { PREINITIALIZE_VERSION } from './preinitialize.js';
import { cacheDir } from '../lib/paths.js';
import { writeAtomically } from '../lib/write-atomically.js';
import { componentizeSource } from './componentize.js';
import type { ComponentizeProcess } from './componentize-process.js';

export interface WatSource {
  kind: 'wat';
  /** WIT package source declaring `world`. */
  wit: string;
  world: string;
  /** A core module in WAT whose exports follow the canonical ABI names for `world`. */
  wat: string;
}

/**
 * A whole component in the component model's text format, as jco's `parse`
 * takes it: for what no bindings generator writes yet from a world, such as
 * a WASI 0.3 component's async ABI written by hand.
 */
export interface ComponentWatSource {
  kind: 'component-wat';
  wat: string;
}

export type ComponentizeFeature = 'stdio' | 'random' | 'clocks' | 'http' | 'fetch-event';

export interface JsSource {
  kind: 'js';
  wit: string;
  world: string;
  /** An ES module implementing `world`'s exports. */
  js: string;
  /** WASI features to leave out. Default: all of them, so the component imports nothing it does not use. */
  disableFeatures?: ComponentizeFeature[];
  /**
   * A folder of WIT packages (one folder each) that `wit` uses, e.g.
   * examples/wit/wasi-0.2.10 for a world exporting wasi:http/incoming-handler.
   * componentize-js then reads the world from a folder with these as `deps/`.
   */
  witDeps?: string;
}

export interface CSource {
  kind: 'c';
  wit: string;
  world: string;
  /** A C file exporting the canonical ABI names for `world` (and `cabi_realloc`), built as a WASI reactor. */
  c: string;
}

export type ComponentSource = WatSource | ComponentWatSource | JsSource | CSource;

export type Progress = (message: string) => void;

/** The cache key: the source, the WIT it depends on and the tool versions that turn it into bytes. */
async function sourceHash(source: ComponentSource): Promise<string> {
  const h = createHash('sha256');
  // A deps folder counts by its contents (below), not by where this checkout keeps it.
  h.update(JSON.stringify({ ...source, ...(source.kind === 'js' && source.witDeps ? { witDeps: 'contents' } : {}), tools: toolVersions(source.kind) }));
  if (source.kind === 'js' && source.witDeps) {
    // The folder's contents, not just its path: a refreshed copy builds anew.
    for (const file of (await readdir(source.witDeps, { recursive: true })).filter((f) => f.endsWith('.wit')).sort()) {
      h.update(file);
      h.update(await readFile(join(source.witDeps, file)));
    }
  }
  return h.digest('hex');
}

/**
 * The versions of the tools a source of `kind` is built with: builds are not
 * reused across them. Read when a source is built, not when this module
 * loads: componentize-js is a development dependency, and without it a
 * JavaScript build fails with componentize.ts's message, not here.
 */
function toolVersions(kind: ComponentSource['kind']): Record<string, string> {
  const jco = packageVersion('@bytecodealliance/jco-transpile');
  if (kind === 'c') return { jco, clang: '14' };
  if (kind === 'wat' || kind === 'component-wat') return { jco };
  try {
    return { jco, componentizeJs: packageVersion('@bytecodealliance/componentize-js'), preinitialize: PREINITIALIZE_VERSION };
  } catch {
    return { jco, componentizeJs: 'not installed' };
  }
}

/** Debian's C toolchain for wasm32-wasi. */
const CLANG = 'clang-14';
const C_TOOLCHAIN_PACKAGES = 'clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32';

/**
 * Builds `source` into component bytes, reusing a cached build when the
 * inputs are unchanged. A JavaScript source is built in this process, or in
 * `builder`, a process of its own (componentize-process.ts).
 */
export async function buildComponent(source: ComponentSource, progress?: Progress, label = 'component', builder?: ComponentizeProcess): Promise<Uint8Array> {
  const hash = await sourceHash(source);
  const dir = join(cacheDir(), 'build');
  const cached = join(dir, `${hash}.wasm`);
  try {
    return new Uint8Array(await readFile(cached));
  } catch {
    // not cached yet
  }
  const started = Date.now();
  if (source.kind === 'js') progress?.(`building ${label} with componentize-js (about 10 s)...`);
  const bytes = await build(source, builder);
  progress?.(`built ${label} (${formatSize(bytes.length)}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // Concurrent builders (parallel test runs) never see half a file.
  await writeAtomically(cached, bytes);
  return bytes;
}

function build(source: ComponentSource, builder: ComponentizeProcess | undefined): Promise<Uint8Array> {
  switch (source.kind) {
    case 'wat':
      return buildWat(source);
    case 'component-wat':
      return parse(source.wat);
    case 'js':
      return builder ? builder.build(source) : componentizeSource(source);
    case 'c':
      return buildC(source);
  }
}

async function buildWat(source: WatSource): Promise<Uint8Array> {
  const core: Uint8Array = await parse(source.wat);
  const embedded: Uint8Array = await componentEmbed({ binary: core, witSource: source.wit, world: source.world });
  return componentNew(embedded, []);
}

async function buildC(source: CSource): Promise<Uint8Array> {
  const dir = await mkdtemp(join(tmpdir(), 'rt-c-build-'));
  try {
    await writeFile(join(dir, 'component.c'), source.c);
    const core = join(dir, 'component.core.wasm');
    try {
      // wasi-libc's Debian package installs under /usr (lib/wasm32-wasi, include/wasm32-wasi).
      await promisify(execFile)(CLANG, ['--target=wasm32-wasi', '--sysroot=/usr', '-mexec-model=reactor', '-O2', '-Wall', '-Werror', '-o', core, join(dir, 'component.c')]);
    } catch (e) {
      const error = e as NodeJS.ErrnoException & { stderr?: string };
      if (error.code === 'ENOENT') throw new Error(`building C components needs ${CLANG} (Debian: apt-get install ${C_TOOLCHAIN_PACKAGES})`, { cause: e });
      throw new Error(`${CLANG} failed: ${error.stderr ?? error.message}`, { cause: e });
    }
    const embedded: Uint8Array = await componentEmbed({ binary: new Uint8Array(await readFile(core)), witSource: source.wit, world: source.world });
    // jco ships the adapter beside its sources (its package exports do not name it).
    const adapter = new Uint8Array(await readFile(new URL('../lib/wasi_snapshot_preview1.reactor.wasm', import.meta.resolve('@bytecodealliance/jco'))));
    return componentNew(embedded, [['wasi_snapshot_preview1', adapter]]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** componentize-js in a child process (componentize-child.ts): builds run side by side there, and none holds up this process. */
function formatSize(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} KB`;
}
