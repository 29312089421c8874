// A component's core modules as a worker compiles them: once per worker, with
// the memory cap written into them, then shared by every instance thread of
// the service (a compiled WebAssembly.Module crosses threads without a copy).

import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ComponentArtifact } from '../service.js';
import { capMemories } from './memory-cap.js';

export type CompiledModules = [name: string, module: WebAssembly.Module][];

export async function compileCoreModules(artifact: ComponentArtifact, memoryCapBytes: number): Promise<CompiledModules> {
  const dir = dirname(artifact.entry);
  return Promise.all(
    artifact.coreModules.map(async (name) => {
      const bytes = capMemories(new Uint8Array(await readFile(join(dir, name))), memoryCapBytes);
      return [name, await WebAssembly.compile(bytes)] as const;
    }),
  ) as Promise<CompiledModules>;
}
