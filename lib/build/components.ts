// Builds components from source, for the bundled examples and the test suite:
// hand-written WAT (through jco's embedded wasm-tools) and JavaScript (through
// componentize-js, a development dependency). Builds are cached by the hash of
// everything that goes into them, since a componentize-js build takes ~15 s.

import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { componentEmbed, componentNew, parse } from '@bytecodealliance/jco';
import { cacheDir } from '../paths.js';

export interface WatSource {
  kind: 'wat';
  /** WIT package source declaring `world`. */
  wit: string;
  world: string;
  /** A core module in WAT whose exports follow the canonical ABI names for `world`. */
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
}

export type ComponentSource = WatSource | JsSource;

export type Progress = (message: string) => void;

const ALL_FEATURES: ComponentizeFeature[] = ['stdio', 'random', 'clocks', 'http', 'fetch-event'];

/** The cache key: the source and the tool versions that turn it into bytes. */
function sourceHash(source: ComponentSource): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ ...source, tools: TOOL_VERSIONS }));
  return h.digest('hex');
}

// Bump when a tool is upgraded so cached builds are not reused across versions.
const TOOL_VERSIONS = { jco: '1.12.0', componentizeJs: '0.18.5' };

/** Builds `source` into component bytes, reusing a cached build when the inputs are unchanged. */
export async function buildComponent(source: ComponentSource, progress?: Progress, label = 'component'): Promise<Uint8Array> {
  const hash = sourceHash(source);
  const dir = join(cacheDir(), 'build');
  const cached = join(dir, `${hash}.wasm`);
  try {
    return new Uint8Array(await readFile(cached));
  } catch {
    // not cached yet
  }
  const started = Date.now();
  if (source.kind === 'js') progress?.(`building ${label} with componentize-js (about 15 s)...`);
  const bytes = source.kind === 'wat' ? await buildWat(source) : await buildJs(source);
  progress?.(`built ${label} (${formatSize(bytes.length)}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await mkdir(dir, { recursive: true });
  // Write then rename: concurrent builders (parallel test runs) never see half a file.
  const tmp = `${cached}.${process.pid}.tmp`;
  await writeFile(tmp, bytes);
  await rename(tmp, cached);
  return bytes;
}

async function buildWat(source: WatSource): Promise<Uint8Array> {
  const core: Uint8Array = await parse(source.wat);
  const embedded: Uint8Array = await componentEmbed({ binary: core, witSource: source.wit, world: source.world });
  return componentNew(embedded, []);
}

async function buildJs(source: JsSource): Promise<Uint8Array> {
  let componentize: typeof import('@bytecodealliance/componentize-js').componentize;
  try {
    ({ componentize } = await import('@bytecodealliance/componentize-js'));
  } catch {
    throw new Error('building JavaScript components needs @bytecodealliance/componentize-js (a development dependency): run `npm ci`');
  }
  // The inline-WIT form: componentize-js cannot read a `witPath` (its splicer's
  // WASI filesystem does not see it).
  const options = { worldName: source.world, disableFeatures: source.disableFeatures ?? ALL_FEATURES };
  // Its typings demand `sourcePath`, which only matters for relative imports.
  const { component } = await componentize(source.js, source.wit, options as NonNullable<Parameters<typeof componentize>[2]>);
  return component;
}

function formatSize(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} KB`;
}
