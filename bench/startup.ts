// Start-up and memory: rt with one WAT component and with many (100 by
// default) distinct ones, 2 workers. Start-up is the wall time from spawning
// the CLI until GET /api/ready answers 200, with rt's compile cache warm (one
// unmeasured start first). Memory is each process's RSS with the large rt up
// and idle.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildComponent } from '../examples/builder.js';
import { RtProcess, tempDir } from '../test/support/rt-process.js';
import { numbered } from './components.js';
import { post } from './load.js';
import { Cleanup, pollUntilOk, spawnRt, stopChild } from './servers.js';
import { settings } from './settings.js';
import { printTable } from './table.js';
import { fixed, median, passMiss, sleep, since } from './stats.js';

/** A repository directory holding `count` distinct services, svc0.wasm ... */
async function manyServices(count: number): Promise<string> {
  const dir = await tempDir('rt-bench-repo-');
  const started = performance.now();
  for (let i = 0; i < count; i++) await writeFile(join(dir, `svc${i}.wasm`), await buildComponent(numbered(i)));
  process.stderr.write(`startup: ${count} component(s) built or taken from the build cache in ${(since(started) / 1000).toFixed(1)} s\n`);
  return dir;
}

const config = (repo: string) => `repo_urls = ["file://${repo}"]\n[log]\nlevel = "warn"\n`;

/** Spawns rt (stopped by `cleanup` at the latest) and measures until /api/ready answers 200, polled every 20 ms. */
async function timedStart(repo: string, cleanup: Cleanup): Promise<{ rt: RtProcess; ms: number }> {
  const started = performance.now();
  const rt = await spawnRt({ configToml: config(repo), workers: settings.workers, quiet: true });
  cleanup.add(() => stopChild(rt.child));
  await pollUntilOk(`${rt.url}/api/ready`, rt.child, 20);
  return { rt, ms: since(started) };
}

/** Calls `id()` of service `i` and checks that it answers i. */
async function callId(rt: RtProcess, i: number): Promise<void> {
  const res = await post(`${rt.url}/api/services/bench/svc${i}/invoke/id`, '{}');
  if (res.status !== 200 || (JSON.parse(res.text) as { result: number }).result !== i) throw new Error(`svc${i}.id(): ${res.status} ${res.text}`);
}

async function memoryRow(rt: RtProcess) {
  const primary = await RtProcess.status(rt.child.pid!);
  const workers = await Promise.all(rt.workerPids().map((pid) => RtProcess.status(pid)));
  return {
    row: {
      'primary RSS MiB': primary.rssMiB,
      'worker RSS MiB': workers.map((w) => w.rssMiB).join(' / '),
      'worker threads': workers.map((w) => w.threads).join(' / '),
    },
    maxWorkerMiB: Math.max(...workers.map((w) => w.rssMiB)),
    workers: workers.length,
  };
}

export async function startupAndMemory(): Promise<void> {
  const many = settings.startupComponents;
  const runs = settings.startupRuns;
  const cleanup = new Cleanup();
  try {
    const cases = [
      { label: '1 component', count: 1, repo: await manyServices(1) },
      { label: `${many} components`, count: many, repo: await manyServices(many) },
    ];
    const startup: Record<string, Record<string, string | number>> = {};
    const memory: Record<string, Record<string, string | number>> = {};
    let manyIdleMax = NaN;
    let manyWorkers = 0;
    for (const c of cases) {
      // Warms rt's compile cache: every later start finds the components compiled.
      const warm = await timedStart(c.repo, cleanup);
      await stopChild(warm.rt.child);
      process.stderr.write(`startup: ${c.label}: cache-warming start took ${fixed(warm.ms / 1000, 2)} s (not counted)\n`);

      const times: number[] = [];
      let last: RtProcess | undefined;
      for (let run = 0; run < runs; run++) {
        const { rt, ms } = await timedStart(c.repo, cleanup);
        times.push(ms);
        // The first and the last service answer (not timed).
        await callId(rt, 0);
        await callId(rt, c.count - 1);
        if (run < runs - 1) await stopChild(rt.child);
        else last = rt;
      }
      startup[c.label] = { 'median s': fixed(median(times) / 1000, 3), 'each s': times.map((t) => fixed(t / 1000, 3)).join(' / ') };

      // Memory of the last start, idle, then after calls to every service on fresh connections (round-robin over the workers).
      await sleep(2_000);
      const idle = await memoryRow(last!);
      memory[`${c.label}, idle`] = idle.row;
      if (c.count === many) {
        manyIdleMax = idle.maxWorkerMiB;
        manyWorkers = idle.workers;
        for (let i = 0; i < c.count; i++) for (let k = 0; k < settings.workers; k++) await callId(last!, i);
        await sleep(1_000);
        memory[`${c.label}, after ${settings.workers} calls to each service`] = (await memoryRow(last!)).row;
      }
      await stopChild(last!.child);
    }

    console.log(`\nstart-up: spawn until GET /api/ready answers 200 (polled every 20 ms), ${settings.workers} workers, compile cache warm, ${runs} start(s) each`);
    printTable(startup);
    console.log(`\nmemory (RSS per process; ${settings.workers} workers)`);
    printTable(memory);
    const manyMedianS = Number(startup[`${many} components`]['median s']);
    const limitMiB = 200 / 1.048576;
    console.log('\ntargets');
    printTable({
      [`${many} components start < 3 s`]: { measured: `${fixed(manyMedianS, 3)} s`, result: passMiss(manyMedianS < 3) },
      [`${many} components, idle: every worker < 200 MB (${fixed(limitMiB, 1)} MiB)`]: {
        measured: `${manyIdleMax} MiB (largest of ${manyWorkers})`,
        result: passMiss(manyWorkers === settings.workers && manyIdleMax < limitMiB),
      },
    });
  } finally {
    await cleanup.run();
  }
}
