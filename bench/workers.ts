// Workers: what one more worker process buys, and what each costs in memory —
// the numbers docs/scaling.md sizes replicas and their limits from. Two rt
// processes serve the bundled examples side by side, one with 1 worker and one
// with 2, each started on an empty compile cache as a new pod is. Each round
// loads every (rt, call) pair in turn, in a different order each round
// (order.ts), with autocannon (which runs on the same cores: on a 2-core
// machine the second worker competes with the load generator). Memory: RSS
// and peak RSS of each primary and worker, from /proc, once ready and after
// the load (which ends with a few seconds on every other example service).

import { readFile, rm } from 'node:fs/promises';
import { examplesRepository } from '../test/support/fixtures.js';
import { tempDir, type RtProcess } from '../test/support/rt-process.js';
import { load, post, type LoadResult } from './load.js';
import { roundOrder } from './order.js';
import { Cleanup, spawnRt, startAll, stopChild } from './servers.js';
import { settings } from './settings.js';
import { printTable } from './table.js';
import { median, ratio } from './stats.js';

const CALLS = [
  { label: 'calculator.add (WAT)', path: 'example/calculator/invoke/add', body: '{"a":20,"b":22}', expect: '42' },
  { label: 'greeter.greet (componentize-js)', path: 'example/greeter/invoke/greet', body: '{"name":"World"}', expect: 'World' },
];

/** Loaded for a few seconds after the rounds, so that every service has run before memory is read. */
const OTHERS = [
  { path: 'example/mandelbrot/invoke/render', body: '{"width":160,"height":120,"iterations":50}' },
  { path: 'example/library/invoke/titles', body: '{}' },
];

const WORKER_COUNTS = [1, 2] as const;

/** RSS and peak RSS (VmHWM) of a process, MiB. */
async function rss(pid: number): Promise<string> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const mib = (field: string) => Math.round(Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)![1]) / 1024);
  return `${mib('VmRSS')} (${mib('VmHWM')})`;
}

async function memoryRow(rt: RtProcess): Promise<Record<string, string>> {
  return { primary: await rss(rt.child.pid!), workers: (await Promise.all(rt.workerPids().map(rss))).join(' / ') };
}

/** Starts rt on an empty compile cache: a first start transpiles every JavaScript example, ~10 s each. */
async function startCold(config: string, workers: number, cache: string): Promise<RtProcess> {
  const rt = await spawnRt({ configToml: config, workers, quiet: true, env: { RT_CACHE_DIR: cache } });
  try {
    await rt.ready(300_000);
  } catch (e) {
    await stopChild(rt.child);
    throw e;
  }
  return rt;
}

export async function workersScaling(): Promise<void> {
  const { seconds, rounds, warmupSeconds, connections } = settings;
  const cleanup = new Cleanup();
  try {
    const repo = await examplesRepository();
    const config = `repo_urls = ["file://${repo}"]\n[log]\nlevel = "warn"\n`;
    const caches = await Promise.all(WORKER_COUNTS.map(() => tempDir('rt-bench-cache-')));
    cleanup.add(() => Promise.all(caches.map((dir) => rm(dir, { recursive: true, force: true }))));
    process.stderr.write('workers: starting rt with 1 and 2 workers on empty compile caches (each transpiles the examples)\n');
    const started = performance.now();
    const servers = await startAll(cleanup, WORKER_COUNTS.map((workers, i) => startCold(config, workers, caches[i])));
    process.stderr.write(`workers: both ready after ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    const memory: Record<string, Record<string, string>> = {};
    for (const [i, workers] of WORKER_COUNTS.entries()) memory[`${workers} worker${workers > 1 ? 's' : ''}, ready`] = await memoryRow(servers[i]);
    const targets = WORKER_COUNTS.flatMap((workers, i) =>
      CALLS.map((c) => ({ key: `${workers}:${c.label}`, workers, call: c, url: `${servers[i].url}/api/services/${c.path}` })),
    );
    for (const t of targets) {
      const answer = await post(t.url, t.call.body);
      if (answer.status !== 200 || !answer.text.includes(t.call.expect)) throw new Error(`${t.key}: ${t.url} answered ${answer.status} ${answer.text}`);
    }
    if (warmupSeconds > 0) {
      process.stderr.write(`workers: warming up ${targets.length} targets, ${warmupSeconds} s each\n`);
      for (const t of targets) await load({ url: t.url, body: t.call.body, seconds: warmupSeconds, connections });
    }
    const results = new Map<string, LoadResult[]>(targets.map((t) => [t.key, []]));
    for (let round = 0; round < rounds; round++) {
      const order = roundOrder(targets, round);
      process.stderr.write(`workers: round ${round + 1}/${rounds}\n`);
      for (const t of order) results.get(t.key)!.push(await load({ url: t.url, body: t.call.body, seconds, connections }));
    }

    const reqPerSec = (key: string) => median(results.get(key)!.map((r) => r.reqPerSec));
    console.log(`\nworkers: req/s of one rt with 1 and with 2 workers, autocannon ${connections} connections, ${rounds} interleaved round(s) x ${seconds} s (medians)`);
    printTable(
      Object.fromEntries(
        targets.map((t) => {
          const runs = results.get(t.key)!;
          return [
            `${t.call.label}, ${t.workers} worker${t.workers > 1 ? 's' : ''}`,
            {
              'req/s': Math.round(reqPerSec(t.key)),
              'p50 ms': median(runs.map((r) => r.p50Ms)),
              'p99 ms': median(runs.map((r) => r.p99Ms)),
              'errors+non-2xx': runs.reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0),
              'req/s per round': runs.map((r) => Math.round(r.reqPerSec)).join(' / '),
            },
          ];
        }),
      ),
    );
    console.log('\n2 workers / 1 worker, req/s');
    printTable(Object.fromEntries(CALLS.map((c) => [c.label, { ratio: ratio(reqPerSec(`2:${c.label}`), reqPerSec(`1:${c.label}`)) }])));

    for (const server of servers) for (const o of OTHERS) await load({ url: `${server.url}/api/services/${o.path}`, body: o.body, seconds: Math.max(1, warmupSeconds), connections });
    for (const [i, workers] of WORKER_COUNTS.entries()) memory[`${workers} worker${workers > 1 ? 's' : ''}, after the load`] = await memoryRow(servers[i]);
    console.log('\nmemory: RSS (peak RSS) MiB per process, the compile cache empty at start');
    printTable(memory);
  } finally {
    await cleanup.run();
  }
}
