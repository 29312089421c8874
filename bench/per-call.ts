// Per call, in process: a wasm export called directly, through jco's glue,
// and through rt's invoke path (JSON decode, call, JSON encode).
//
// Moved as is from bench/run.ts: it drives internal worker classes
// (HostedService) whose API changes with the worker, so it is kept apart to be
// fixed on its own.

import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { buildComponent } from '../examples/builder.js';
import type { WatSource } from '../examples/builder.js';
import { transpileComponent } from '../lib/primary/transpiler.js';
import { serviceAddress, serviceExports } from '../lib/primary/addressing.js';
import { DEFAULT_INSTANCES } from '../lib/service.js';
import { hostImports } from '../lib/worker/sandbox/wasi-imports.js';
import { HostedService } from '../lib/worker/execution/hosted-service.js';
import { examples } from '../examples/index.js';

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

export async function perCall(): Promise<void> {
  const source = (await examples.find((e) => e.name === 'calculator')!.source()) as WatSource;
  const core = await WebAssembly.instantiate(new Uint8Array(await parse(source.wat)));
  const direct = core.instance.exports['example:calculator/ops@1.0.0#add'] as (a: number, b: number) => number;

  const bytes = await buildComponent(source);
  const { artifact, interface: iface } = await transpileComponent(bytes);
  const { instantiate } = (await import(pathToFileURL(artifact.entry).href)) as {
    instantiate: (get: (name: string) => WebAssembly.Module, imports: object) => Promise<Record<string, { add: (a: number, b: number) => number }>>;
  };
  const module = await WebAssembly.compile(new Uint8Array(await parse(source.wat)));
  const glue = (await instantiate(() => module, hostImports(artifact.importSpecifiers, iface.imports)))['example:calculator/ops@1.0.0'].add;

  const service = await HostedService.start(
    {
      id: serviceAddress(iface, 'calculator').id,
      source: 'bench',
      repository: 'bench',
      artifact,
      interface: iface,
      ...(({ methods, resources }) => ({ methods, resources }))(serviceExports(iface)),
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
      http: null,
    },
    { timeoutMs: 30_000, memoryCapBytes: 256 * 1_048_576, threadHeapMb: 512, log: pino({ level: 'silent' }) },
  );
  const add = service.method('add')!;
  const body = Buffer.from(JSON.stringify({ a: 20, b: 22 }));
  // The HTTP path awaits invoke(): measured one at a time (latency) and 50 in flight (what a loaded worker sees).
  const invokeNs = async (inFlight: number): Promise<number> => {
    let best = Infinity;
    for (let round = 0; round < 5; round++) {
      const calls = 20_000;
      let next = 0;
      const started = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next++ < calls) await service.invoke({ method: add, input: { kind: 'json', bytes: body }, deadline: Infinity, answer: 'json' });
        }),
      );
      best = Math.min(best, Number(process.hrtime.bigint() - started) / calls);
    }
    return best;
  };
  const sequentialNs = await invokeNs(1);
  const concurrentNs = await invokeNs(CONNECTIONS);
  await service.drain();

  const directNs = nsPerCall(() => direct(20, 22));
  const glueNs = nsPerCall(() => glue(20, 22));
  console.log('\nper call, example:calculator add(s32, s32) -> s32 (best of 5)');
  console.table({
    'core export, direct': { ns: directNs.toFixed(1) },
    'jco 1.12 glue': { ns: glueNs.toFixed(1), 'vs direct': `+${(glueNs - directNs).toFixed(1)} ns` },
    'rt invoke, one at a time (decode, inline call, encode)': { ns: sequentialNs.toFixed(1), 'vs direct': `+${(sequentialNs - directNs).toFixed(1)} ns` },
    [`rt invoke, ${CONNECTIONS} in flight (per call)`]: { ns: concurrentNs.toFixed(1), 'vs direct': `+${(concurrentNs - directNs).toFixed(1)} ns` },
  });
}
