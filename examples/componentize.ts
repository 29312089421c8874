// A componentize-js build, in the process that asks for it (builder.ts) or
// in one of its own (componentize-process.ts).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ComponentizeFeature, JsSource } from './builder.js';

const ALL_FEATURES: ComponentizeFeature[] = ['stdio', 'random', 'clocks', 'http', 'fetch-event'];

export async function componentizeSource(source: JsSource): Promise<Uint8Array> {
  let componentize: typeof import('@bytecodealliance/componentize-js').componentize;
  try {
    ({ componentize } = await import('@bytecodealliance/componentize-js'));
  } catch {
    throw new Error('building JavaScript components needs @bytecodealliance/componentize-js (a development dependency): run `npm ci`');
  }
  // Wizer, which componentize-js runs with an environment of only what it is
  // given, compiles the engine through wasmtime's cache: by default
  // ~/.cache/wasmtime of the account (found through the password database,
  // whatever HOME says), 18 MB more for every world built. That cache never
  // pays off here (a build is cached by its inputs, builder.ts), so it goes
  // in a directory of the build's own, removed after it.
  const wasmtimeCache = await mkdtemp(join(tmpdir(), 'rt-componentize-'));
  try {
    // The inline-WIT form: componentize-js cannot read a `witPath` (its splicer's
    // WASI filesystem does not see it).
    type Options = NonNullable<Parameters<typeof componentize>[2]>;
    const options: Omit<Options, 'sourcePath'> = { worldName: source.world, disableFeatures: source.disableFeatures ?? ALL_FEATURES, env: { XDG_CACHE_HOME: wasmtimeCache } };
    // Its typings demand `sourcePath`, which only matters for relative imports.
    const { component } = await componentize(source.js, source.wit, options as Options);
    return component;
  } finally {
    await rm(wasmtimeCache, { recursive: true, force: true });
  }
}
