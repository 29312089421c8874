// A compiled component inside a worker: the imported glue module and its
// compiled core modules. Compiled once per worker; instantiated as often as
// instances are needed (each instantiation is independent).

import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ComponentArtifact } from '../service.js';
import type { ImportedItem } from '../wit/types.js';
import { hostImports, type ImportObject } from './host.js';

/** What jco's instantiate resolves to: exported functions and interface objects, keyed by JS name. */
export type ComponentExports = Record<string, unknown>;

type Instantiate = (getCoreModule: (name: string) => WebAssembly.Module, imports: ImportObject) => Promise<ComponentExports>;

export class LoadedComponent {
  private constructor(
    readonly hash: string,
    private readonly instantiateGlue: Instantiate,
    private readonly modules: Map<string, WebAssembly.Module>,
    private readonly imports: ImportObject,
  ) {}

  static async load(artifact: ComponentArtifact, imports: ImportedItem[]): Promise<LoadedComponent> {
    const glue = (await import(pathToFileURL(artifact.entry).href)) as { instantiate?: Instantiate };
    if (typeof glue.instantiate !== 'function') throw new Error(`${artifact.entry} does not export instantiate()`);
    const dir = dirname(artifact.entry);
    const modules = new Map(
      await Promise.all(
        artifact.coreModules.map(async (name) => [name, await WebAssembly.compile(await readFile(join(dir, name)))] as const),
      ),
    );
    return new LoadedComponent(artifact.hash, glue.instantiate, modules, hostImports(artifact.importSpecifiers, imports));
  }

  instantiate(): Promise<ComponentExports> {
    return this.instantiateGlue((name) => {
      const module = this.modules.get(name);
      if (!module) throw new Error(`the glue asked for an unknown core module ${name}`);
      return module;
    }, this.imports);
  }
}
