// Component repositories for end-to-end tests, built from real sources.

import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildComponent, type ComponentSource } from '../../lib/build/components.js';
import { buildExamples } from '../../examples/index.js';
import { tempDir } from './rt-process.js';

/** A component that imports an interface no host provides, and traps on demand. */
export const FAULTY: ComponentSource = {
  kind: 'wat',
  world: 'faulty',
  wit: `package acme:faulty@1.0.0;
interface host { log: func(code: u32); }
interface api {
  call-host: func();
  boom: func();
  ok: func() -> u32;
  noop: func();
}
world faulty { import host; export api; }`,
  wat: `(module
  (import "acme:faulty/host@1.0.0" "log" (func $log (param i32)))
  (func (export "acme:faulty/api@1.0.0#call-host") (call $log (i32.const 1)))
  (func (export "acme:faulty/api@1.0.0#boom") unreachable)
  (func (export "acme:faulty/api@1.0.0#ok") (result i32) (i32.const 7))
  (func (export "acme:faulty/api@1.0.0#noop"))
  (memory (export "memory") 1))`,
};

export type RepoEntry = ComponentSource | { raw: string | Uint8Array };

/** A directory holding each entry as `<name>.wasm` (or raw files, for broken ones). */
export async function repository(entries: Record<string, RepoEntry>): Promise<string> {
  const dir = await tempDir('rt-repo-');
  for (const [name, entry] of Object.entries(entries)) {
    const path = join(dir, name.includes('.') ? name : `${name}.wasm`);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, 'raw' in entry ? entry.raw : await buildComponent(entry));
  }
  return dir;
}

let examplesDir: Promise<string> | undefined;

/** The bundled examples, built once per test run (cached across runs by content hash). */
export function examplesRepository(): Promise<string> {
  examplesDir ??= (async () => {
    const dir = await tempDir('rt-examples-');
    await buildExamples(dir, (m) => process.stderr.write(`      ${m}\n`));
    return dir;
  })();
  return examplesDir;
}

/** Copies `file` into `dir` under `name`. */
export async function place(file: string, dir: string, name: string): Promise<void> {
  await copyFile(file, join(dir, name));
}
