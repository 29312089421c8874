// Fills the shared test cache (run-dir.ts) before the tests need it: every
// bundled example and every component source test/support exports, built
// and compiled for rt (transpiled and fuel-instrumented) while the next
// builds, as `npm start` builds the examples. Left to the tests, each is built and compiled when a test first
// needs it, one after another: on a clean clone that was ~100 s of the 2-core
// machine's run. What is cached already costs a hash. A build or a compile
// that fails is left to the tests that use the component, which say why.
// `npm test` runs this first (package.json).

import { buildComponent, type ComponentSource } from '../../examples/builder.js';
import { ComponentizeProcess } from '../../examples/componentize-process.js';
import { BUILD_LANES, examples } from '../../examples/index.js';
import { transpileComponent } from '../../lib/primary/transpiler.js';
import { TEST_CACHE_DIR } from './run-dir.js';

/** The component sources test/support exports, by name. */
async function fixtureSources(): Promise<[string, ComponentSource][]> {
  const modules = await Promise.all(['./fixtures.js', './resource-fixtures.js', './streaming-fixtures.js', './http-handler-fixtures.js', './type-fixtures.js'].map((m) => import(m) as Promise<Record<string, unknown>>));
  return modules.flatMap((exports) => Object.entries(exports).filter((entry): entry is [string, ComponentSource] => isSource(entry[1])));
}

function isSource(value: unknown): value is ComponentSource {
  if (typeof value !== 'object' || value === null || !('kind' in value)) return false;
  return value.kind === 'component-wat' || ('world' in value && (value.kind === 'wat' || value.kind === 'js' || value.kind === 'c'));
}

async function main(): Promise<void> {
  // The cache the tests use (hooks.ts), for builds and rt's compiles alike.
  process.env.RT_CACHE_DIR = TEST_CACHE_DIR;
  const started = Date.now();
  const sources: [string, ComponentSource][] = [...(await Promise.all(examples.map(async (e) => [e.name, await e.source()] as [string, ComponentSource]))), ...(await fixtureSources())];
  const compiles: Promise<void>[] = [];
  let work = 0;
  const lane = async () => {
    const builder = new ComponentizeProcess();
    try {
      for (let next = sources.shift(); next; next = sources.shift()) {
        const [name, source] = next;
        const bytes = await buildComponent(source, () => work++, name, builder).catch(() => undefined);
        // Compiled while the next one builds: rt's compiler threads (compiler-threads.ts) take one core each.
        if (bytes) compiles.push(transpileComponent(bytes, { transpiling: () => work++ }).then(() => {}, () => {}));
      }
    } finally {
      builder.close();
    }
  };
  await Promise.all(Array.from({ length: BUILD_LANES }, lane));
  await Promise.all(compiles);
  process.stderr.write(`test cache ${TEST_CACHE_DIR}: ${work === 0 ? 'warm' : `filled in ${((Date.now() - started) / 1000).toFixed(0)} s`}\n`);
}

await main();
