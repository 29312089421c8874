// The bundled examples: their sources, and building them into a directory
// that a `file://` repository can point at.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildComponent, type ComponentSource, type Progress } from '../lib/build/components.js';

// dist/examples/index.js → the repository's examples/ folder.
export const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));

const source = (file: string) => readFile(join(EXAMPLES_DIR, file), 'utf8');

/** Files served beside the components: the greeter's configuration, the renderer's sidecar (its media type). */
const COMPANIONS = ['greeter/greeter.config.json', 'mandelbrot/mandelbrot.toml'];

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
];

/** Builds every example into `outDir/<name>.wasm`, reporting progress as `[i/n] ...`. */
export async function buildExamples(outDir: string, report: Progress = () => {}): Promise<void> {
  await mkdir(outDir, { recursive: true });
  for (const [i, example] of examples.entries()) {
    const bytes = await buildComponent(await example.source(), (m) => report(`[${i + 1}/${examples.length}] ${m}`), example.name);
    await writeFile(join(outDir, `${example.name}.wasm`), bytes);
  }
  for (const file of COMPANIONS) await writeFile(join(outDir, file.split('/').pop()!), await source(file));
}
