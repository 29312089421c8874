// A test-only way to call a component through the glue jco generates for it,
// the same glue the runtime uses: transpile (async instantiation), load the ES
// module from a temporary folder, compile its core modules, instantiate.
// WASI imports, should the component have any, are served by preview2-shim.

import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { transpileBytes as transpile } from '@bytecodealliance/jco-transpile';
import { TRANSPILE_OPTIONS } from '../../lib/primary/compile-job.js';

/** What jco's `instantiate` resolves to: exported functions and interface objects, keyed by their JS names. */
export type JcoExports = Record<string, unknown>;

type Instantiate = (getCoreModule: (name: string) => WebAssembly.Module, imports: Record<string, unknown>) => Promise<JcoExports>;

export interface JcoComponent {
  /** The specifiers the component imports, as jco lists them. */
  imports: string[];
  /** A fresh instance. */
  instantiate(): Promise<JcoExports>;
}

/** Transpiled glue and core modules, as jco's `transpile` gives them. */
export interface Transpiled {
  files: Record<string, Uint8Array>;
  imports: string[];
}

/** `rewrite` is applied to the glue module's text before it is loaded (rt's treatment of it: lib/primary/glue-rewrite.ts). */
export async function loadWithJco(bytes: Uint8Array, name = 'component', rewrite: (glue: string) => string = (glue) => glue): Promise<JcoComponent> {
  const transpiled = await transpile(bytes, { ...TRANSPILE_OPTIONS, name });
  return loadTranspiled(transpiled, await wasiImports(transpiled.imports), name, rewrite);
}

/** A component from `transpiled` (by any jco), its imports served by `importObject`, its glue's text passed through `rewrite`. */
export async function loadTranspiled({ files, imports }: Transpiled, importObject: object, name = 'component', rewrite: (glue: string) => string = (glue) => glue): Promise<JcoComponent> {
  const compiled = new Map<string, WebAssembly.Module>();
  for (const [file, content] of Object.entries(files)) {
    if (/\.core\d*\.wasm$/.test(file)) compiled.set(file, await WebAssembly.compile(content as Uint8Array<ArrayBuffer>));
  }
  // Once imported, the glue lives in memory and its folder can go.
  const dir = await mkdtemp(join(tmpdir(), 'rt-jco-'));
  let glue: { instantiate: Instantiate };
  try {
    // The glue is ESM with a .js suffix: Node needs to be told.
    await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
    for (const [file, content] of Object.entries(files)) {
      if (!file.endsWith('.js')) continue;
      const path = join(dir, file);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, file === `${name}.js` ? rewrite(new TextDecoder().decode(content)) : content);
    }
    glue = (await import(pathToFileURL(join(dir, `${name}.js`)).href)) as { instantiate: Instantiate };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return {
    imports,
    instantiate: () =>
      glue.instantiate((file) => {
        const module = compiled.get(file);
        if (!module) throw new Error(`the glue asked for a core module that transpile did not produce: ${file}`);
        return module;
      }, importObject as Record<string, unknown>),
  };
}

/** `wasi:cli/terminal-input@0.2.3` → preview2-shim's `cli.terminalInput`. */
async function wasiImports(specifiers: string[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const wasi = specifiers.filter((s) => s.startsWith('wasi:'));
  if (wasi.length === 0) return out;
  const shim = (await import('@bytecodealliance/preview2-shim')) as unknown as Record<string, Record<string, unknown>>;
  for (const specifier of wasi) {
    const m = /^wasi:([^/]+)\/([^@]+)/.exec(specifier);
    const iface = m ? shim[m[1]]?.[m[2].replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] : undefined;
    if (iface === undefined) throw new Error(`preview2-shim has nothing for ${specifier}`);
    out[specifier] = iface;
  }
  return out;
}
