// Memory over many reloads of a changed component (BENCH_RELOADS, default
// 200): RSS of the primary and the workers, which must level off.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildComponent } from '../examples/builder.js';
import { repository, versioned } from '../test/support/fixtures.js';
import { RtProcess } from '../test/support/rt-process.js';
import { Cleanup, startAll, startRt } from './servers.js';
import { settings } from './settings.js';
import { printTable } from './table.js';

export async function reloadMemory(): Promise<void> {
  const reloads = settings.reloads;
  const cleanup = new Cleanup();
  try {
    const repo = await repository({ versioned: versioned(0) });
    const [rt] = await startAll(cleanup, [startRt({ configToml: `repo_urls = ["file://${repo}"]`, workers: settings.workers, quiet: true })] as const);
    const rows: Record<string, Record<string, string | number>> = {};
    const sample = async (label: string) => {
      const primary = await RtProcess.status(rt.child.pid!);
      const workers = await Promise.all(rt.workerPids().map((pid) => RtProcess.status(pid)));
      rows[label] = {
        'primary RSS MiB': primary.rssMiB,
        'worker RSS MiB': workers.map((w) => w.rssMiB).join(' / '),
        'worker threads': workers.map((w) => w.threads).join(' / '),
      };
    };
    await sample('start');
    const started = performance.now();
    for (let n = 1; n <= reloads; n++) {
      await writeFile(join(repo, 'versioned.wasm'), await buildComponent(versioned(n)));
      const res = await fetch(`${rt.url}/api/reload`, { method: 'POST' });
      if (res.status !== 200) throw new Error(`reload ${n}: ${res.status} ${await res.text()}`);
      if (n % Math.max(1, Math.floor(reloads / 8)) === 0 || n === reloads) await sample(`after ${n} reloads`);
    }
    const perReload = reloads > 0 ? `; ${((performance.now() - started) / reloads).toFixed(0)} ms per reload, build included` : '';
    console.log(`\nmemory over ${reloads} reloads of a changed component (${settings.workers} workers${perReload})`);
    printTable(rows);
  } finally {
    await cleanup.run();
  }
}
