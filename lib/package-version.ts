// The installed version of a package, read from its package.json. Caches of
// tool output (transpiled glue, built components) are keyed by it: output of
// one release is not interchangeable with another's, and a version written in
// rt's code would go stale at the next `npm update`.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The version in the package.json of `name` as this module resolves it. A
 * package's `exports` may hide its package.json, so the folder is found from
 * its entry point upwards.
 */
export function packageVersion(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.resolve(name)));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === name && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // no package.json here: look further up
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json found for ${name}`);
    dir = parent;
  }
}
