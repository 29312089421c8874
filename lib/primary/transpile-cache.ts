// The transpile cache (transpiler.ts): one entry per component, by its sha256,
// holding its core modules and their fuel-instrumented twins; the glue
// modules apart, by the sha256 of their text. An entry is written aside and
// renamed into place, and checked against the hashes it was written with
// before every use: a damaged one (a truncated core module, a cut glue file)
// would otherwise fail its component on every reload and restart, with an
// error that does not point at the cache.

import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { sha256 } from '../sha256.js';
import { sha256InSlices } from './sha256-in-slices.js';
import { check, list, misfitLine, nullable, record, string, table, type Static } from '../shape.js';
import { writeAtomically } from '../write-atomically.js';

/**
 * Glue modules live apart, by the sha256 of their text: a worker imports each
 * glue once and keeps it for its life (ES modules are never unloaded), and new
 * versions of a component whose interface did not change have the same glue,
 * so reloading them imports nothing new.
 */
const GLUE_DIR = 'glue';
/** The glue is an ES module with a .js suffix. */
const GLUE_PACKAGE = '{"type":"module"}\n';

const names = list(string(), 'file names');

/**
 * An entry's meta.json: `glue`, its glue's file name in the glue folder
 * (`<sha256 of its text>.js`); its core modules and their fuel-instrumented
 * twins (null when instrumentation was refused, and why); the specifiers the
 * glue imports; `files`, the sha256 of every file in the entry as written.
 */
const ENTRY_META = record(
  {
    glue: string(),
    coreModules: names,
    fuelModules: nullable(names),
    fuelRefusal: string(),
    importSpecifiers: list(string(), 'import specifiers'),
    files: table(string(), 'sha256 by file name'),
  },
  'an entry description',
  ['glue', 'coreModules', 'fuelModules', 'importSpecifiers', 'files'],
);

export type EntryMeta = Static<typeof ENTRY_META>;

/** What the cache holds for a component: a good entry, none, or one that is damaged (and why). */
export type Lookup = { kind: 'good'; meta: EntryMeta } | { kind: 'missing' } | { kind: 'damaged'; problem: string };

/**
 * Files this process has verified, by path: their size, mtime and inode then.
 * A file that still has them is not read again (hashing an 11 MB component's
 * entry on every reload costs ~40 ms); a file changed since has other ones.
 */
const verified = new Map<string, string>();

export class TranspileCache {
  constructor(readonly root: string) {}

  /** The entry's folder. */
  entry(hash: string): string {
    return join(this.root, hash);
  }

  /** The glue module's path. */
  glue(meta: EntryMeta): string {
    return join(this.root, GLUE_DIR, meta.glue);
  }

  /** The entry for `hash`, verified file by file against the hashes it was written with. */
  async lookup(hash: string): Promise<Lookup> {
    const dir = this.entry(hash);
    let read: unknown;
    try {
      read = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8'));
    } catch (e) {
      const exists = await stat(dir).then(
        () => true,
        () => false,
      );
      return exists ? { kind: 'damaged', problem: `meta.json: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}` } : { kind: 'missing' };
    }
    const checked = check(ENTRY_META, read, 'data');
    if (!checked.ok) return { kind: 'damaged', problem: `meta.json: ${misfitLine(checked, { whole: 'the file' })}` };
    const meta = checked.value;
    const problem = await this.#verify(dir, meta);
    return problem === undefined ? { kind: 'good', meta } : { kind: 'damaged', problem };
  }

  /** The first file that is missing or differs from what was written, or undefined when none does. */
  async #verify(dir: string, meta: EntryMeta): Promise<string | undefined> {
    const modules = [...meta.coreModules, ...(meta.fuelModules ?? [])];
    const expected: { path: string; name: string; hash: string | undefined }[] = [
      ...modules.map((name) => ({ path: join(dir, name), name, hash: meta.files[name] })),
      { path: this.glue(meta), name: `${GLUE_DIR}/${meta.glue}`, hash: meta.glue.replace(/\.js$/, '') },
      { path: join(this.root, GLUE_DIR, 'package.json'), name: `${GLUE_DIR}/package.json`, hash: sha256(GLUE_PACKAGE) },
    ];
    for (const { path, name, hash } of expected) {
      try {
        const before = await stat(path);
        const stamp = `${before.size}:${before.mtimeMs}:${before.ino}`;
        if (verified.get(path) === stamp) continue;
        if ((await sha256InSlices(await readFile(path))) !== hash) return `${name}: its content is not what was written`;
        verified.set(path, stamp);
      } catch (e) {
        return `${name}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`;
      }
    }
    return undefined;
  }

  /** Drops a damaged entry, so that a new one can take its place. */
  async remove(hash: string): Promise<void> {
    await rm(this.entry(hash), { recursive: true, force: true });
  }

  /** Writes the glue as `<sha256>.js` and returns that name. */
  async writeGlue(text: Uint8Array): Promise<string> {
    const dir = join(this.root, GLUE_DIR);
    const name = `${sha256(text)}.js`;
    await writeAtomically(join(dir, 'package.json'), GLUE_PACKAGE);
    await writeAtomically(join(dir, name), text);
    return name;
  }

  /**
   * Writes into a temporary directory and renames it into place, so a
   * half-written entry is never seen. Each file comes with its sha256 (its
   * compiler thread hashed it: megabytes the primary does not hash again).
   */
  async write(hash: string, files: { name: string; bytes: Uint8Array; sha256: string }[], meta: Omit<EntryMeta, 'files'>): Promise<EntryMeta> {
    const dir = this.entry(hash);
    const tmp = `${dir}.${randomUUID()}.tmp`;
    const written: EntryMeta = { ...meta, files: Object.fromEntries(files.map((f) => [f.name, f.sha256])) };
    await mkdir(tmp, { recursive: true });
    for (const { name, bytes } of files) {
      const target = join(tmp, name);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, bytes);
    }
    await writeFile(join(tmp, 'meta.json'), JSON.stringify(written));
    try {
      await rename(tmp, dir);
    } catch {
      // Another process compiled the same component meanwhile; theirs is as good.
      await rm(tmp, { recursive: true, force: true });
    }
    return written;
  }
}
