// A component's core modules as a worker compiles them: once per worker, with
// the memory cap written into them, then shared by the service's instances
// (a compiled WebAssembly.Module crosses threads without a copy).

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ComponentArtifact } from '../../service.js';
import { capMemories } from '../sandbox/memory-cap.js';

export type CompiledModules = [name: string, module: WebAssembly.Module][];

/**
 * Compiles the component's core modules, keyed by the names the glue asks
 * for: as transpiled (`plain`, for instance threads) or their
 * fuel-instrumented twins (`fuel`, for inline instances).
 */
export async function compileCoreModules(artifact: ComponentArtifact, memoryCapBytes: number, kind: 'plain' | 'fuel'): Promise<CompiledModules> {
  const dir = artifact.dir;
  const files = kind === 'fuel' ? artifact.fuelModules : artifact.coreModules;
  if (!files) throw new Error('the component has no fuel-instrumented modules');
  return Promise.all(
    artifact.coreModules.map(async (name, i) => {
      const bytes = capMemories(new Uint8Array(await readFile(join(dir, files[i]))), memoryCapBytes);
      return [name, await WebAssembly.compile(bytes)] as const;
    }),
  );
}
