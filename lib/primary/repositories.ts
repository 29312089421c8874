// Finds component files in repositories (contract §4). A repository URL names
// a directory scanned recursively for *.wasm, or a single .wasm file.

import { readdir, stat } from 'node:fs/promises';
import { basename, isAbsolute, join, resolve } from 'node:path';

export interface FoundComponent {
  /** Absolute path of the .wasm file. */
  path: string;
  /** File name without `.wasm`: the fallback service name and the sidecar's stem. */
  stem: string;
  /** The repository URL it was found through. */
  repository: string;
}

export class RepositoryError extends Error {
  constructor(readonly repository: string, message: string) {
    super(`${repository}: ${message}`);
  }
}

/** `file:///abs`, `file://./rel`, `file:rel` → an absolute path (relative ones against `cwd`). */
export function fileUrlPath(url: string, cwd: string): string {
  const rest = url.replace(/^file:(\/\/)?/, '');
  const decoded = decodeURIComponent(rest);
  return isAbsolute(decoded) ? decoded : resolve(cwd, decoded);
}

export async function scanRepository(url: string, cwd: string): Promise<FoundComponent[]> {
  if (!url.startsWith('file:')) throw new RepositoryError(url, 'only file:// repositories are supported so far');
  const root = fileUrlPath(url, cwd);
  let info;
  try {
    info = await stat(root);
  } catch {
    throw new RepositoryError(url, `${root} does not exist`);
  }
  if (info.isFile()) {
    if (!root.endsWith('.wasm')) throw new RepositoryError(url, `${root} is not a .wasm file`);
    return [found(root, url)];
  }
  const files = await wasmFiles(root);
  return files.sort().map((path) => found(path, url));
}

function found(path: string, repository: string): FoundComponent {
  return { path, stem: basename(path, '.wasm'), repository };
}

async function wasmFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return wasmFiles(path);
      return e.isFile() && e.name.endsWith('.wasm') ? [path] : [];
    }),
  );
  return nested.flat();
}
