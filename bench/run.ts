// `npm run bench`: measures rt side by side with its reference points in one
// run and prints ratios. Not part of `npm test`: numbers depend on the machine.
//
// 1. Per call, in process: a wasm export called directly, through jco's glue,
//    and through rt's invoke path (JSON decode, call, JSON encode).
// 2. Over HTTP, 2 cluster workers each, autocannon with 50 connections:
//    a bare Koa route vs rt invoking a WAT and a componentize-js component.
// 3. Memory over many reloads of a changed component (BENCH_RELOADS, default
//    200): RSS of the primary and the workers, which must level off.

import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { parse } from '@bytecodealliance/jco';
import { buildComponent } from '../lib/build/components.js';
import { compileComponent } from '../lib/primary/compiler.js';
import { serviceAddress, serviceMethods } from '../lib/primary/addressing.js';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { DEFAULT_INSTANCES } from '../lib/service.js';
import { hostImports } from '../lib/worker/host.js';
import { HostedService } from '../lib/worker/hosted-service.js';
import { examples } from '../examples/index.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { examplesRepository, repository, versioned } from '../test/support/fixtures.js';
import { freePort, RtProcess } from '../test/support/rt-process.js';
import type { WatSource } from '../lib/build/components.js';

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 50;

function nsPerCall(fn: () => unknown, calls = 1_000_000): number {
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) fn();
    best = Math.min(best, Number(process.hrtime.bigint() - started) / calls);
  }
  return best;
}

async function perCall(): Promise<void> {
  const source = (await examples.find((e) => e.name === 'calculator')!.source()) as WatSource;
  const core = await WebAssembly.instantiate(await parse(source.wat));
  const direct = core.instance.exports['example:calculator/ops@1.0.0#add'] as (a: number, b: number) => number;

  const bytes = await buildComponent(source);
  const { artifact, interface: iface } = await compileComponent(bytes);
  const { instantiate } = (await import(pathToFileURL(artifact.entry).href)) as {
    instantiate: (get: (name: string) => WebAssembly.Module, imports: object) => Promise<Record<string, { add: (a: number, b: number) => number }>>;
  };
  const module = await WebAssembly.compile(await parse(source.wat));
  const glue = (await instantiate(() => module, hostImports(artifact.importSpecifiers, iface.imports)))['example:calculator/ops@1.0.0']!.add;

  const service = await HostedService.start(
    {
      id: serviceAddress(iface, 'calculator').id,
      source: 'bench',
      artifact,
      interface: iface,
      methods: serviceMethods(iface),
      unsatisfiedImports: [],
      instances: DEFAULT_INSTANCES,
      env: {},
      init: null,
      config: null,
      configFile: null,
      quiesced: false,
      revision: 'bench',
      paths: [],
      outboundHosts: [],
    },
    { timeoutMs: 30_000, memoryCapBytes: 256 * 1_048_576, log: pino({ level: 'silent' }) },
  );
  const add = service.method('add')!;
  const body = { a: 20, b: 22 };
  // The HTTP path awaits invoke(): measured one at a time (latency) and 50 in flight (what a loaded worker sees).
  const invokeNs = async (inFlight: number): Promise<number> => {
    let best = Infinity;
    for (let round = 0; round < 5; round++) {
      const calls = 20_000;
      let next = 0;
      const started = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next++ < calls) await service.invoke(add, body);
        }),
      );
      best = Math.min(best, Number(process.hrtime.bigint() - started) / calls);
    }
    return best;
  };
  const sequentialNs = await invokeNs(1);
  const concurrentNs = await invokeNs(CONNECTIONS);
  await service.stop();

  const directNs = nsPerCall(() => direct(20, 22));
  const glueNs = nsPerCall(() => glue(20, 22));
  console.log('\nper call, example:calculator add(s32, s32) -> s32 (best of 5)');
  console.table({
    'core export, direct': { ns: directNs.toFixed(1) },
    'jco 1.12 glue': { ns: glueNs.toFixed(1), 'vs direct': `+${(glueNs - directNs).toFixed(1)} ns` },
    'rt invoke, one at a time (decode, thread hop, call, encode)': { ns: sequentialNs.toFixed(1), 'vs direct': `+${(sequentialNs - directNs).toFixed(1)} ns` },
    [`rt invoke, ${CONNECTIONS} in flight (per call)`]: { ns: concurrentNs.toFixed(1), 'vs direct': `+${(concurrentNs - directNs).toFixed(1)} ns` },
  });
}

function load(url: string, body: string, duration = DURATION_S) {
  return autocannon({ url, method: 'POST', connections: CONNECTIONS, duration, headers: { 'content-type': 'application/json' }, body });
}

async function startBaseline(port: number) {
  const child = fork(fileURLToPath(new URL('./koa-baseline.js', import.meta.url)), [], { env: { ...process.env, PORT: String(port), WORKERS: '2' } });
  await new Promise<void>((resolve) => child.once('message', () => resolve()));
  return child;
}

async function overHttp(): Promise<void> {
  const repo = await examplesRepository();
  const basePort = await freePort();
  const baseline = await startBaseline(basePort);
  const rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, workers: 2, quiet: true });
  await rt.ready();
  try {
    const runs: [string, string, string][] = [
      ['bare Koa route (JSON add)', `http://127.0.0.1:${basePort}/add`, '{"a":20,"b":22}'],
      ['rt invoke calculator.add (WAT)', `${rt.url}/api/services/example/calculator/invoke/add`, '{"a":20,"b":22}'],
      ['rt invoke greeter.greet (componentize-js)', `${rt.url}/api/services/example/greeter/invoke/greet`, '{"name":"World"}'],
    ];
    const results: Record<string, Record<string, string | number>> = {};
    let reference = 0;
    for (const [name, url, body] of runs) {
      await load(url, body, 3); // warm-up pass, not counted (JIT, connection set-up)
      const r = await load(url, body);
      reference ||= r.requests.average;
      results[name] = {
        'req/s': Math.round(r.requests.average),
        'p50 ms': r.latency.p50,
        'p99 ms': r.latency.p99,
        'non-2xx': r.non2xx,
        errors: r.errors,
        'vs Koa': `${((r.requests.average / reference) * 100).toFixed(1)} %`,
      };
    }
    console.log(`\nover HTTP: 2 workers, autocannon ${CONNECTIONS} connections, ${DURATION_S} s each, same machine`);
    console.table(results);
  } finally {
    baseline.kill('SIGTERM');
    await rt.stop();
  }
}

async function reloadMemory(): Promise<void> {
  const reloads = Number(process.env.BENCH_RELOADS ?? 200);
  const repo = await repository({ versioned: versioned(0) });
  const rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, workers: 2, quiet: true });
  await rt.ready();
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
  try {
    await sample('start');
    const started = performance.now();
    for (let n = 1; n <= reloads; n++) {
      await writeFile(join(repo, 'versioned.wasm'), await buildComponent(versioned(n)));
      const res = await fetch(`${rt.url}/api/reload`, { method: 'POST' });
      if (res.status !== 200) throw new Error(`reload ${n}: ${res.status} ${await res.text()}`);
      if (n % Math.max(1, Math.floor(reloads / 8)) === 0 || n === reloads) await sample(`after ${n} reloads`);
    }
    console.log(`\nmemory over ${reloads} reloads of a changed component (2 workers; ${((performance.now() - started) / reloads).toFixed(0)} ms per reload, build included)`);
    console.table(rows);
  } finally {
    await rt.stop();
  }
}

if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'calls') await perCall();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'http') await overHttp();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'reload') await reloadMemory();
