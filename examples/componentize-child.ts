// A componentize-js build in a process of its own (builder.ts forks this
// module for each JavaScript component). componentize-js 0.18.5 holds its
// process's event loop for nearly all of a build: the splice (~4 s) and the
// wasi stubbing (~1 s) are synchronous wasm calls, and wizer (~6 s) runs
// through spawnSync. Two builds in one process therefore take as long as
// one after the other (measured: both finished after 63 s, one alone 17 s),
// and the caller's own event loop stops for the whole build. In processes of
// their own, builds run side by side, and each build's ~1.2 GB goes when its
// process ends.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ComponentizeFeature, JsSource } from './builder.js';

/** What the child answers: the component, or the build's error message (componentize-js's can be several lines, all of use). */
export type ComponentizeAnswer = { ok: true; component: Uint8Array } | { ok: false; error: string };

const ALL_FEATURES: ComponentizeFeature[] = ['stdio', 'random', 'clocks', 'http', 'fetch-event'];

async function componentizeSource(source: JsSource): Promise<Uint8Array> {
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

// Forked by builder.ts: one source in, one answer out, then the process ends.
if (process.send) {
  const send = process.send.bind(process);
  process.once('message', (source: JsSource) => {
    void componentizeSource(source)
      .then(
        (component): ComponentizeAnswer => ({ ok: true, component }),
        (e: unknown): ComponentizeAnswer => ({ ok: false, error: e instanceof Error ? e.message : String(e) }),
      )
      .then((answer) => send(answer, () => process.disconnect()));
  });
}
