// Finds component files in repositories (docs/api.md §4). A `file:` URL names a
// directory scanned recursively for *.wasm, or a single .wasm file; an `https:`
// URL is mirrored into the cache first (https-repository.ts), so callers always
// get local paths. A scan returns the components to serve and the errors to
// report; both can be non-empty at once: an `https:` repository that fails
// keeps serving its last good components. A repository that cannot be read
// at all says so (`unreadable`), for the control plane to keep what it served.

import { readdir, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Config } from '../config/index.js';
import { cacheDir } from '../paths.js';
import { fetchHttpsRepository, type HttpsOptions } from './https-repository.js';
import { foundComponent, RepositoryError, scanError, type FoundComponent, type RepositoryScan } from './repository-scan.js';

/** `file:///abs`, `file://./rel`, `file:rel` → an absolute path (relative ones against `cwd`). */
export function fileUrlPath(url: string, cwd: string): string {
  const rest = url.replace(/^file:(\/\/)?/, '');
  const decoded = decodeURIComponent(rest);
  return isAbsolute(decoded) ? decoded : resolve(cwd, decoded);
}

/** How repositories are read: their downloads, which may grant (docs/api.md §8), and the largest component read. */
export interface RepositoryReading {
  download: HttpsOptions;
  /** `repositories.trusted`. */
  trusted: readonly string[];
  /** `repositories.max_component_mib`, in bytes. */
  maxComponentBytes: number;
}

/** The `repositories.*` settings as how repositories are read. */
export function repositoryReading(settings: Config['repositories']): RepositoryReading {
  const download: HttpsOptions = {
    timeoutMs: settings.download_timeout_seconds * 1000,
    maxBytes: settings.max_download_bytes,
    cacheRoot: join(cacheDir(), 'repositories'),
  };
  if (settings.ca_file !== undefined) download.caFile = settings.ca_file;
  return { download, trusted: settings.trusted, maxComponentBytes: settings.max_component_mib * 2 ** 20 };
}

/** Never throws: what cannot be scanned comes back in `errors`, one line each starting with the URL. */
export async function scanRepository(url: string, cwd: string, options: HttpsOptions): Promise<RepositoryScan> {
  if (url.startsWith('https:')) return fetchHttpsRepository(url, options);
  try {
    return { components: await scanFileRepository(url, cwd), errors: [] };
  } catch (e) {
    return { components: [], errors: [scanError(url, e)], unreadable: true };
  }
}

async function scanFileRepository(url: string, cwd: string): Promise<FoundComponent[]> {
  if (!url.startsWith('file:')) throw new RepositoryError(url, 'only file: and https: repositories are supported');
  const root = fileUrlPath(url, cwd);
  let info;
  try {
    info = await stat(root);
  } catch {
    throw new RepositoryError(url, `${root} does not exist`);
  }
  if (info.isFile()) {
    if (!root.endsWith('.wasm')) throw new RepositoryError(url, `${root} is not a .wasm file`);
    return [foundComponent(root, url, dirname(root))];
  }
  const files = await wasmFiles(root);
  return files.sort().map((path) => foundComponent(path, url, root));
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
