// Files written so that a reader, a concurrent writer or a crash never sees
// half of one: written aside under a unique name, then renamed into place.
// Not write-file-atomic: what it adds is an fsync per file (against power
// loss), chown and a signal-exit dependency, for what is ten lines here; the
// caches and kept configurations written here are checked when read back,
// and rebuilt or ignored when damaged.

import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** What only rt's user may read: a private key, a configuration (which often holds secrets). */
export const PRIVATE = 0o600;
/** The directory of such files: its owner's alone. */
export const PRIVATE_DIR = 0o700;

/**
 * `mode`: the file's permissions (a private key's 0o600), set from its
 * creation on; a directory made for a PRIVATE file is PRIVATE_DIR.
 */
export async function writeAtomically(path: string, data: string | Uint8Array, mode?: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true, ...(mode === PRIVATE ? { mode: PRIVATE_DIR } : {}) });
  const temp = `${path}.${randomUUID()}.part`;
  try {
    await writeFile(temp, data, mode === undefined ? {} : { mode });
    await rename(temp, path);
  } finally {
    await rm(temp, { force: true });
  }
}
