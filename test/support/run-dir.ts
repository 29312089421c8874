// Where a test run keeps its files: one directory of its own,
// `<temp dir>/rt-test-run-<pid>-XXXXXX`, removed when the run ends (or by the
// next run, should this one be killed first). The one thing runs keep is
// TEST_CACHE_DIR: component builds and rt's transpile cache, shared by all
// runs because a componentize-js build or a jco transpile takes seconds.
// Both are keyed by content hash; hooks.ts bounds the cache's size.

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRunning } from './processes.js';

/** The temp dir the run was started with (hooks.ts points TMPDIR into the run's own directory). */
export const SYSTEM_TMPDIR = tmpdir();

/** Component builds (`build/`) and rt's caches (`components/`, `repositories/`), shared by all test runs. */
export const TEST_CACHE_DIR = join(SYSTEM_TMPDIR, 'rt-test-cache');

const RUN_PREFIX = 'rt-test-run-';

let current: string | undefined;

/** This run's directory, made on first use. */
export function runDir(): string {
  if (current === undefined) {
    removeAbandonedRuns();
    current = mkdtempSync(join(SYSTEM_TMPDIR, `${RUN_PREFIX}${process.pid}-`));
    process.once('exit', removeRunDir);
  }
  return current;
}

/** Removes this run's directory and everything in it. */
export function removeRunDir(): void {
  if (current === undefined) return;
  rmSync(current, { recursive: true, force: true, maxRetries: 3 });
  current = undefined;
}

/** Directories of runs whose process is gone (killed before it could clean up). */
function removeAbandonedRuns(): void {
  for (const name of readdirSync(SYSTEM_TMPDIR)) {
    const pid = new RegExp(`^${RUN_PREFIX}(\\d+)-`).exec(name)?.[1];
    if (pid !== undefined && !isRunning(Number(pid))) rmSync(join(SYSTEM_TMPDIR, name), { recursive: true, force: true });
  }
}
