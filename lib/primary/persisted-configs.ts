// Configurations given in restart bodies, kept in the data directory so they
// apply again after the host restarts (docs/api.md §5.2), until a restart
// without a body goes back to the repository's file. A configuration often
// holds secrets: the files are rt's user's alone (0600, in a 0700 directory).

import { chmod, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { serviceName, type ServiceConfig, type ServiceId } from '../service.js';
import { check, misfitLine, record, string, type Static } from '../shape.js';
import { PRIVATE, PRIVATE_DIR, writeAtomically } from '../write-atomically.js';
import { serviceConfig } from './service-config.js';

/** A kept restart body: its content type and its bytes in base64. */
const STORED = record({ content_type: string(), data: string({ empty: true }) }, 'a kept configuration', ['content_type', 'data']);

export class PersistedConfigs {
  constructor(readonly dir: string) {}

  #file(id: ServiceId): string {
    // Address parts are letters, digits and dashes: safe as a file name.
    return join(this.dir, `${serviceName(id)}.json`);
  }

  /** The stored configuration of `id`, or null. One that can no longer be read is reported through `onError` and ignored. */
  async load(id: ServiceId, onError: (message: string) => void): Promise<ServiceConfig | null> {
    let read: unknown;
    try {
      read = JSON.parse(await readFile(this.#file(id), 'utf8'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') onError(`cannot read ${this.#file(id)}: ${(e as Error).message}`);
      return null;
    }
    const checked = check(STORED, read, 'data');
    if (!checked.ok) {
      onError(`${this.#file(id)}: ${misfitLine(checked, { whole: 'the file' })}`);
      return null;
    }
    const stored = checked.value;
    try {
      return serviceConfig(new Uint8Array(Buffer.from(stored.data, 'base64')), stored.content_type, 'restart body');
    } catch (e) {
      onError(`${this.#file(id)}: ${(e as Error).message}`);
      return null;
    }
  }

  async save(id: ServiceId, config: ServiceConfig): Promise<void> {
    const stored: Static<typeof STORED> = { content_type: config.contentType, data: Buffer.from(config.bytes).toString('base64') };
    // A crash mid-write leaves the previous file whole.
    await writeAtomically(this.#file(id), JSON.stringify(stored), PRIVATE);
  }

  /** Makes the files an older rt kept readable by others its user's alone; how many it changed. */
  async tighten(): Promise<number> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    if (names.length === 0) return 0;
    await chmod(this.dir, PRIVATE_DIR);
    await Promise.all(names.map((name) => chmod(join(this.dir, name), PRIVATE)));
    return names.length;
  }

  async remove(id: ServiceId): Promise<void> {
    try {
      await rm(this.#file(id), { force: true });
    } catch (e) {
      // A directory that cannot exist holds nothing to forget.
      if ((e as NodeJS.ErrnoException).code !== 'ENOTDIR') throw e;
    }
  }
}
