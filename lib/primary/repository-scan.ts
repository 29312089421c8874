// What scanning a repository yields (docs/api.md §4), whatever its scheme:
// shared by the file: scanner (repositories.ts) and the https: mirror
// (https-repository.ts).

import { basename } from 'node:path';

export interface FoundComponent {
  /** Absolute path of the .wasm file. */
  path: string;
  /** File name without `.wasm`: the fallback service name and the sidecar's stem. */
  stem: string;
  /** The repository URL it was found through. */
  repository: string;
  /**
   * The folder holding the repository's files (the scanned directory; for a
   * `file:` URL naming one .wasm, its folder; for `https:`, the mirror of what
   * the repository served): the files a component's sidecar names must resolve
   * inside it (docs/api.md §8).
   */
  root: string;
}

/**
 * `errors` (one line each, `<url>: <what went wrong>`) may be non-empty while
 * `components` is not: an `https:` repository that fails keeps serving the
 * cached components of its last good scan.
 */
export interface RepositoryScan {
  components: FoundComponent[];
  errors: string[];
  /**
   * The repository could not be read at all (a `file:` root that is missing
   * or unreadable, an `https:` index that cannot be fetched): what it served
   * before keeps serving, as opposed to a repository that lists nothing.
   */
  unreadable?: true;
}

export class RepositoryError extends Error {
  constructor(
    readonly repository: string,
    message: string,
  ) {
    super(`${repository}: ${message}`);
  }
}

export function foundComponent(path: string, repository: string, root: string): FoundComponent {
  return { path, stem: basename(path, '.wasm'), repository, root };
}

/** One line for a scan's `errors`, starting with the URL. */
export function scanError(url: string, e: unknown): string {
  if (e instanceof RepositoryError) return e.message;
  return `${url}: ${e instanceof Error ? e.message : String(e)}`;
}
