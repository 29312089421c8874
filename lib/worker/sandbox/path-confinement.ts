// Where a guest's path may lead inside a granted directory (allowed_paths,
// docs/api.md §8): pure path logic, apart from the WASI descriptors that use
// it (preopens.ts). preview2-shim alone follows symlinks out of a preopen, so
// every path a guest hands over is checked here first.

import { lstatSync, realpathSync } from 'node:fs';
import { posix } from 'node:path';

/**
 * A guest path relative to a descriptor, as segments: no absolute paths, no
 * backslashes, and no `..` above the descriptor (as WASI asks: a descriptor
 * is a capability for what lies beneath it, never its parent). Undefined for
 * a path that would leave it.
 */
export function guestSegments(path: string): string[] | undefined {
  if (path.startsWith('/') || path.includes('\\')) return undefined;
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.pop() === undefined) return undefined;
    } else segments.push(segment);
  }
  return segments;
}

/**
 * Whether host path `path` stays inside `root` (symlinks resolved) once the
 * symlinks in it are followed (the last segment only when `followLast`). A
 * path that cannot be told, such as a dangling symlink (opening it with
 * create would follow it anywhere), does not.
 */
export function confined(root: string, path: string, followLast: boolean): boolean {
  const real = resolved(path, followLast);
  return real !== undefined && (real === root || real.startsWith(root.endsWith('/') ? root : `${root}/`));
}

/** Where `path` really is: the resolved existing part plus the rest, for a path not created yet. */
function resolved(path: string, followLast: boolean): string | undefined {
  const tail = followLast ? [] : [posix.basename(path)];
  let existing = followLast ? path : posix.dirname(path);
  const missing: string[] = [];
  for (;;) {
    try {
      return posix.join(realpathSync(existing), ...missing, ...tail);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || exists(existing) || existing === '/') return undefined;
      missing.unshift(posix.basename(existing));
      existing = posix.dirname(existing);
    }
  }
}

/** Whether anything, a dangling symlink included, is at `path`. */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
