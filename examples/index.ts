// The bundled examples: their sources, and building them into a directory
// that a `file://` repository can point at.

import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transpileComponent } from '../lib/primary/transpiler.js';
import { buildComponent, type ComponentSource, type Progress } from './builder.js';
import { ComponentizeProcess } from './componentize-process.js';

// dist/examples/index.js → the repository's examples/ folder.
export const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));

const source = (file: string) => readFile(join(EXAMPLES_DIR, file), 'utf8');

/**
 * Files served beside the components, as [source, place in the build]: the
 * greeter's configuration, the renderer's and the digits' sidecars (their
 * media types), the library's sidecar and the directory it grants, the HTTP
 * handlers' sidecars (their addresses, the hello-http mount).
 */
const COMPANIONS: [string, string][] = [
  ['greeter/greeter.config.json', 'greeter.config.json'],
  ['mandelbrot/mandelbrot.toml', 'mandelbrot.toml'],
  ['digits/digits.toml', 'digits.toml'],
  ['library/library.toml', 'library.toml'],
  ['library/books/raven.txt', 'library-books/raven.txt'],
  ['library/books/sonnet-18.txt', 'library-books/sonnet-18.txt'],
  ['hello-http/hello-http.toml', 'hello-http.toml'],
  ['fetch-handler/fetch-handler.toml', 'fetch-handler.toml'],
  ['hello-p3/hello-p3.toml', 'hello-p3.toml'],
];

/**
 * The WASI WIT the HTTP handler examples build with (their worlds name
 * wasi:http and wasi:clocks packages; componentize.ts puts this folder beside
 * them as `deps/`). Inside examples/, so the image's build stage has it.
 */
export const WASI_WIT = join(EXAMPLES_DIR, 'wit', 'wasi-0.2.10');

/**
 * WIT source declaring `world` with the WASI 0.3.0 packages it may use
 * nested after it (jco ships their WIT), for a core module's component
 * built by wit-component (builder.ts's `wat` kind), which takes only what
 * the module imports.
 */
export function withWasi03(world: string): string {
  const builtin = new URL('../lib/wit/builtin/0.3.0/', import.meta.resolve('@bytecodealliance/jco'));
  const nested = ['cli', 'clocks', 'filesystem', 'http', 'random', 'sockets'].map((name) => {
    const text = readFileSync(new URL(`wasi-${name}/package.wit`, builtin), 'utf8');
    return `${text.replace(/^package ([^;]+);/m, 'package $1 {')}\n}\n`;
  });
  return `${world}\n${nested.join('')}`;
}

export const examples: { name: string; source: () => Promise<ComponentSource> }[] = [
  {
    name: 'calculator',
    source: async () => ({ kind: 'wat', wit: await source('calculator/calculator.wit'), wat: await source('calculator/calculator.wat'), world: 'calculator' }),
  },
  {
    name: 'greeter',
    source: async () => ({ kind: 'js', wit: await source('greeter/greeter.wit'), js: await source('greeter/greeter.js'), world: 'greeter-world' }),
  },
  {
    name: 'mandelbrot',
    source: async () => ({ kind: 'js', wit: await source('mandelbrot/mandelbrot.wit'), js: await source('mandelbrot/mandelbrot.js'), world: 'mandelbrot' }),
  },
  {
    name: 'library',
    source: async () => ({
      kind: 'js',
      wit: `${await source('library/library.wit')}\n${await source('library/wasi.wit')}`,
      js: await source('library/library.js'),
      world: 'library',
    }),
  },
  {
    name: 'ticker',
    source: async () => ({
      kind: 'js',
      wit: `${await source('ticker/ticker.wit')}\n${await source('ticker/wasi.wit')}`,
      js: await source('ticker/ticker.js'),
      world: 'ticker',
      // Its sleeps need the monotonic clock: without the feature componentize-js puts a trapping stub in its place.
      disableFeatures: ['stdio', 'random', 'http', 'fetch-event'],
    }),
  },
  {
    name: 'digits',
    source: async () => ({ kind: 'wat', wit: await source('digits/digits.wit'), wat: await source('digits/digits.wat'), world: 'digits' }),
  },
  {
    // WASI 0.3: served on Node lines with JSPI (24, 26); on 22 it is listed as failed, naming why.
    name: 'primes',
    source: async () => ({ kind: 'component-wat', wat: await source('primes/primes.wat') }),
  },
  {
    // WASI 0.3 too: a wasi:http/handler@0.3.0 in WAT.
    name: 'hello-p3',
    source: async () => ({ kind: 'wat', wit: withWasi03(await source('hello-p3/hello-p3.wit')), wat: await source('hello-p3/hello-p3.wat'), world: 'hello-p3' }),
  },
  {
    name: 'cart',
    source: async () => ({ kind: 'js', wit: await source('cart/cart.wit'), js: await source('cart/cart.js'), world: 'cart-world' }),
  },
  {
    name: 'tally',
    source: async () => ({ kind: 'wat', wit: await source('tally/tally.wit'), wat: await source('tally/tally.wat'), world: 'tally-world' }),
  },
  {
    name: 'hello-http',
    source: async () => ({
      kind: 'js',
      wit: await source('hello-http/hello-http.wit'),
      js: await source('hello-http/hello-http.js'),
      world: 'hello-http',
      witDeps: WASI_WIT,
      // `http` for wasi:http/types (without it componentize-js puts trapping stubs in its place; it brings
      // wasi:http/outgoing-handler along, which rt refuses for any host no sidecar grants), `clocks` for the
      // sleeps; not the fetch event: it exports incomingHandler itself.
      disableFeatures: ['stdio', 'random', 'fetch-event'],
    }),
  },
  {
    name: 'fetch-handler',
    source: async () => ({
      kind: 'js',
      wit: await source('fetch-handler/fetch-handler.wit'),
      js: await source('fetch-handler/fetch-handler.js'),
      world: 'fetch-handler',
      witDeps: WASI_WIT,
      // The fetch event (`fetch-event`, with `http`) and Date (`clocks`).
      disableFeatures: ['stdio', 'random'],
    }),
  },
];

/**
 * Builds at once: one per two cores. A componentize-js build keeps a core
 * busy (its steps are synchronous), and on 2 cores what `npm start` waits for
 * is the compiles for rt beside the builds (`compile` below), not the builds:
 * measured on this project's 2-core machines, the ten examples built in 13.0 s
 * one at a time and in 9.5-10.3 s two at a time, but built and compiled in
 * 27.6 s one at a time and in 28.7 s two at a time.
 */
export const BUILD_LANES = Math.max(1, Math.floor(availableParallelism() / 2));

export interface BuildOptions {
  /** Builds at once (BUILD_LANES). */
  lanes?: number;
  /**
   * Compile each example for rt as soon as it is built (transpile and
   * instrument, into rt's cache: lib/primary/transpiler.ts), while the next
   * builds. On 2 cores a build leaves ~0.4 of a core idle, most of it while
   * its single-threaded steps run, which the compiler threads take:
   * `rt start` then finds the examples compiled instead of compiling them
   * after the last build. A compile that fails is reported, and rt reports
   * it again when it loads the example.
   */
  compile?: boolean;
}

/**
 * Builds every example into `outDir/<name>.wasm`, reporting progress as
 * `[i/n] ...` (i: the example's place in the list, whatever order the builds
 * finish in). With more than one lane, each lane builds its JavaScript
 * examples in a process of its own (componentize-process.ts); with one, in
 * this process. A failed build stops none of the others; the first failure
 * is thrown once all have ended.
 */
export async function buildExamples(outDir: string, report: Progress = () => {}, { lanes = BUILD_LANES, compile = false }: BuildOptions = {}): Promise<void> {
  await mkdir(outDir, { recursive: true });
  const queue = [...examples.entries()];
  const failures: Error[] = [];
  const compiles: Promise<void>[] = [];
  const lane = async () => {
    const builder = lanes > 1 ? new ComponentizeProcess() : undefined;
    try {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [i, example] = next;
        try {
          let built = false;
          // buildComponent reports real builds only. One found in its cache was compiled when it was built, or rt start compiles it: checking costs a warm start ~0.3 s of hashing.
          const progress = (m: string) => {
            built = true;
            report(`[${i + 1}/${examples.length}] ${m}`);
          };
          const bytes = await buildComponent(await example.source(), progress, example.name, builder);
          await writeFile(join(outDir, `${example.name}.wasm`), bytes);
          if (compile && built) compiles.push(compileForRt(bytes, example.name, progress));
        } catch (e) {
          failures.push(new Error(`${example.name}: ${e instanceof Error ? e.message : String(e)}`, { cause: e }));
        }
      }
    } finally {
      builder?.close();
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  await Promise.all(compiles);
  if (failures.length > 0) throw failures[0];
  for (const [from, to] of COMPANIONS) {
    await mkdir(dirname(join(outDir, to)), { recursive: true });
    await writeFile(join(outDir, to), await source(from));
  }
}

/** Transpiles and instruments `bytes` into rt's cache, reporting only real work. */
async function compileForRt(bytes: Uint8Array, name: string, progress: Progress): Promise<void> {
  // From now, not from when a thread starts on it: while this process builds, its event loop hears of that late.
  const started = Date.now();
  let compiled = false;
  try {
    await transpileComponent(bytes, {
      transpiling: () => {
        compiled = true;
        progress(`compiling ${name} for rt beside the builds...`);
      },
    });
    if (compiled) progress(`compiled ${name} for rt, ${((Date.now() - started) / 1000).toFixed(1)} s after its build`);
  } catch (e) {
    progress(`could not compile ${name} for rt (rt start will say why): ${e instanceof Error ? e.message : String(e)}`);
  }
}
