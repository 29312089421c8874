// A componentize-js build, in the process that asks for it (builder.ts) or
// in one of its own (componentize-process.ts).

import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as preview2 from '@bytecodealliance/preview2-shim';
import type { ComponentizeFeature, JsSource } from './builder.js';

const shimFilesystem = (preview2 as unknown as { filesystem: { _addPreopen(guest: string, host: string): void } }).filesystem;
const preopened = new Set<string>();

/**
 * componentize-js's splicer reads `witPath` through preview2-shim's
 * filesystem, which preopens nothing by default (0.26), and it reads its
 * preopens once, at its first file access (wasi-libc): so the folder every
 * build's WIT lives under, the temporary directory, is preopened as itself
 * before the first build. rt's instances never see these preopens (their
 * filesystem is only what a sidecar grants, lib/worker/sandbox/preopens.ts).
 */
function preopenForSplicer(dir: string): void {
  if (preopened.has(dir)) return;
  shimFilesystem._addPreopen(dir, dir);
  preopened.add(dir);
}

const ALL_FEATURES: ComponentizeFeature[] = ['stdio', 'random', 'clocks', 'http', 'fetch-event'];

export async function componentizeSource(source: JsSource): Promise<Uint8Array> {
  let componentize: typeof import('@bytecodealliance/componentize-js').componentize;
  try {
    ({ componentize } = await import('@bytecodealliance/componentize-js'));
  } catch {
    throw new Error('building JavaScript components needs @bytecodealliance/componentize-js (a development dependency): run `npm ci`');
  }
  const work = await mkdtemp(join(tmpdir(), 'rt-componentize-'));
  try {
    type Options = NonNullable<Parameters<typeof componentize>[2]>;
    const options: Omit<Options, 'sourcePath'> = {
      worldName: source.world,
      disableFeatures: source.disableFeatures ?? ALL_FEATURES,
      wizerBin: await preinitializer(work),
      // Wizer, when preinitialize-cli.ts hands a module to it (componentize-js
      // runs it with an environment of only what it is given), compiles it
      // through wasmtime's cache: by default ~/.cache/wasmtime of the account
      // (found through the password database, whatever HOME says), 18 MB more
      // for every world built. That cache never pays off here (a build is
      // cached by its inputs, builder.ts), so it goes in the build's own
      // directory, removed after it.
      env: { XDG_CACHE_HOME: work },
    };
    preopenForSplicer(tmpdir());
    if (source.witDeps) {
      // A world that uses other packages (WASI's) needs them beside it: a
      // `witPath` folder with the world and `deps/`. (An inline world cannot
      // name packages, having nowhere to resolve them from.)
      const witDir = join(work, 'wit');
      await mkdir(witDir);
      await writeFile(join(witDir, 'world.wit'), source.wit);
      await cp(source.witDeps, join(witDir, 'deps'), { recursive: true, filter: (from) => !/\.(md|txt)$|LICENSE$/.test(from) });
      const { component } = await componentize(source.js, { ...options, witPath: witDir } as Options);
      return component;
    }
    // Its typings demand `sourcePath`, which only matters for relative imports.
    const { component } = await componentize(source.js, source.wit, options as Options);
    return component;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The `wizerBin` componentize-js runs: a script in `dir` that runs
 * preinitialize-cli.ts on this Node, which pre-initializes on V8 in ~1 s what
 * wizer takes ~6 s to (preinitialize.ts says why).
 */
async function preinitializer(dir: string): Promise<string> {
  const script = join(dir, 'wizer');
  const cli = fileURLToPath(new URL('./preinitialize-cli.js', import.meta.url));
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  await writeFile(script, `#!/bin/sh\nexec ${quote(process.execPath)} --disable-warning=ExperimentalWarning ${quote(cli)} "$@"\n`, { mode: 0o755 });
  return script;
}
