// Mocha root hooks (.mocharc.json requires this file, before any test file
// is loaded). The run works in a directory of its own (run-dir.ts): TMPDIR
// and HOME, with the XDG directories, point into it, for this process and the
// rt processes it starts; component builds go to the shared test cache. After
// the last test the run must have left nothing behind: no rt still running,
// nothing in its TMPDIR or HOME (a test removes what it makes there itself;
// directories from tempDir() go with the run). The check fails the run,
// naming what it found.

import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { removeRunDir, runDir, TEST_CACHE_DIR } from './run-dir.js';
import { RtProcess } from './rt-process.js';

/** Past this size the shared test cache is emptied at the start of a run (entries of older sources and tools pile up). */
const TEST_CACHE_MAX_BYTES = 2 * 1024 ** 3;

const tmp = join(runDir(), 'tmp');
const home = join(runDir(), 'home');
mkdirSync(tmp);
mkdirSync(home);
Object.assign(process.env, {
  TMPDIR: tmp,
  HOME: home,
  XDG_CACHE_HOME: join(home, '.cache'),
  XDG_CONFIG_HOME: join(home, '.config'),
  XDG_DATA_HOME: join(home, '.local', 'share'),
  XDG_STATE_HOME: join(home, '.local', 'state'),
  // Builds in this process (fixtures, unit tests); isolatedEnv gives rt processes the same.
  RT_CACHE_DIR: TEST_CACHE_DIR,
});
boundTestCache();

export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    const problems: string[] = [];
    for (const rt of [...RtProcess.running]) {
      problems.push(`rt (pid ${rt.child.pid}, in ${rt.cwd}) still running: a test did not stop it`);
      rt.child.kill('SIGKILL');
      await rt.exited;
    }
    for (const [name, dir] of [['TMPDIR', tmp], ['HOME', home]] as const) {
      const left = readdirSync(dir);
      if (left.length > 0) problems.push(`left in the run's ${name} (${dir}): ${left.slice(0, 20).join(', ')}${left.length > 20 ? ', ...' : ''}`);
    }
    removeRunDir();
    if (problems.length > 0) throw new Error(`the test run left things behind:\n  - ${problems.join('\n  - ')}`);
  },
};

/** Empties the shared test cache when it has grown past TEST_CACHE_MAX_BYTES (the run then builds what it needs again). */
function boundTestCache(): void {
  let bytes = 0;
  try {
    for (const entry of readdirSync(TEST_CACHE_DIR, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) bytes += statSync(join(entry.parentPath, entry.name)).size;
    }
  } catch {
    return; // no cache yet, or it changed under us: another run is at work on it
  }
  if (bytes <= TEST_CACHE_MAX_BYTES) return;
  process.stderr.write(`emptying the test cache ${TEST_CACHE_DIR}: ${Math.round(bytes / 1024 ** 2)} MB\n`);
  // Renamed first: a concurrent run sees the whole cache or none of it.
  const doomed = `${TEST_CACHE_DIR}.old-${process.pid}`;
  renameSync(TEST_CACHE_DIR, doomed);
  rmSync(doomed, { recursive: true, force: true });
}
