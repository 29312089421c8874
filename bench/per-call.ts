// Per call, in process: what sits between a call and the wasm export, side by
// side in one run, for the WAT `add` and the componentize-js greeter's `greet`:
// - jco 1.12's glue (what rt ran until it moved to jco-transpile 0.15;
//   a development dependency kept for this comparison),
// - jco-transpile's glue as it writes it,
// - the same glue as rt caches it (lib/primary/glue-rewrite.ts: the debug
//   switch read once at load, not from process.env on every call),
// - for `greet`, rt's own host, which rt runs the greeter on (it imports
//   nothing: worker/execution/instance-spec.ts ownHosting),
// and, for `add`, the core export called directly and rt's invoke path (JSON
// decode, call, JSON encode). Rounds interleave the variants; each figure is
// the median of its rounds' ns per call.
//
// It drives internal worker classes (HostedService, ComponentInstance) whose API changes with
// the worker, so it is kept apart from the HTTP benchmarks.

import { transpileBytes } from '@bytecodealliance/jco-transpile';
import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import pino from 'pino';
import { buildComponent } from '../examples/builder.js';
import type { WatSource } from '../examples/builder.js';
import { examples } from '../examples/index.js';
import { packageVersion } from '../lib/package-version.js';
import { serviceAddress, serviceExports } from '../lib/primary/addressing.js';
import { TRANSPILE_OPTIONS } from '../lib/primary/compile-job.js';
import { rewriteGlue } from '../lib/primary/glue-rewrite.js';
import { transpileComponent } from '../lib/primary/transpiler.js';
import { DEFAULT_INSTANCES, type ServiceDescriptor } from '../lib/service.js';
import { HostedService } from '../lib/worker/execution/hosted-service.js';
import { compileCoreModules } from '../lib/worker/execution/compile-core-modules.js';
import { ComponentInstance } from '../lib/worker/execution/component-instance.js';
import { instanceSpec } from '../lib/worker/execution/instance-spec.js';
import { hostImports } from '../lib/worker/sandbox/wasi-imports.js';
import { readComponentInterface } from '../lib/wit/component-reader.js';
import { loadTranspiled, type Transpiled } from '../test/support/jco-instance.js';
import { median } from './stats.js';

const CONNECTIONS = 50;
const ROUNDS = 7;
const CAP = 256 * 1_048_576;

type Transpile = (bytes: Uint8Array) => Promise<Transpiled>;
type Exports = Record<string, Record<string, (...args: unknown[]) => unknown>>;

const newJco: Transpile = (bytes) => transpileBytes(bytes, { ...TRANSPILE_OPTIONS });
const oldJco: Transpile = async (bytes) => {
  const { transpile } = (await import('@bytecodealliance/jco-1.12')) as unknown as { transpile: (bytes: Uint8Array, options: object) => Promise<Transpiled> };
  return transpile(bytes, { name: 'component', instantiation: 'async', typescript: false, base64Cutoff: 0 });
};

/** An instance of `bytes` through the glue `transpile` makes (its text passed through `rewrite`), with rt's sandboxed imports. */
async function instanceThrough(bytes: Uint8Array, transpile: Transpile, rewrite?: (glue: string) => string): Promise<Exports> {
  const transpiled = await transpile(bytes);
  const component = await loadTranspiled(transpiled, hostImports(transpiled.imports, readComponentInterface(bytes).imports), 'component', rewrite);
  return (await component.instantiate()) as Exports;
}

function nsPerCall(fn: () => unknown, calls: number): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) fn();
  return Number(process.hrtime.bigint() - started) / calls;
}

/** Median ns per call of each variant over ROUNDS rounds, the variants interleaved in every round (after one unmeasured round). */
function compare(variants: Record<string, () => unknown>, calls: number): Record<string, number> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [name, fn] of Object.entries(variants)) {
      const ns = nsPerCall(fn, calls);
      if (round > 0) samples[name].push(ns);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
}

/** `bytes` as the catalog describes a component (no sidecar, no configuration), `init` apart from the methods. */
async function descriptor(bytes: Uint8Array, stem: string): Promise<ServiceDescriptor> {
  const { artifact, interface: iface } = await transpileComponent(bytes);
  const { methods, resources, hook } = serviceExports(iface, (fn) => fn.name === 'init');
  return {
    id: serviceAddress(iface, stem).id,
    source: 'bench',
    repository: 'bench',
    artifact,
    interface: iface,
    methods,
    resources,
    unsatisfiedImports: [],
    instances: DEFAULT_INSTANCES,
    env: {},
    init: hook ? { exportKey: hook.exportKey, jsName: hook.jsName } : null,
    config: null,
    configFile: null,
    quiesced: false,
    revision: 'bench',
    paths: [],
    outboundHosts: [],
    http: null,
    links: [],
  };
}

async function invokePath(source: WatSource): Promise<{ sequential: number; concurrent: number }> {
  const service = await HostedService.start(await descriptor(await buildComponent(source), 'calculator'), { timeoutMs: 30_000, memoryCapBytes: CAP, threadHeapMb: 512, log: pino({ level: 'silent' }) });
  const add = service.method('add')!;
  const body = Buffer.from(JSON.stringify({ a: 20, b: 22 }));
  // The HTTP path awaits invoke(): measured one at a time (latency) and 50 in flight (what a loaded worker sees).
  const invokeNs = async (inFlight: number): Promise<number> => {
    const rounds: number[] = [];
    for (let round = 0; round <= ROUNDS; round++) {
      const calls = 20_000;
      let next = 0;
      const started = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next++ < calls) await service.invoke({ method: add, input: { kind: 'json', bytes: body }, deadline: Infinity, answer: 'json' });
        }),
      );
      if (round > 0) rounds.push(Number(process.hrtime.bigint() - started) / calls);
    }
    return median(rounds);
  };
  try {
    return { sequential: await invokeNs(1), concurrent: await invokeNs(CONNECTIONS) };
  } finally {
    await service.drain();
  }
}

function row(ns: number, base: number | undefined) {
  return { 'ns per call': ns.toFixed(1), ...(base === undefined ? {} : { 'vs first row': `+${(ns - base).toFixed(1)} ns` }) };
}

export async function perCall(): Promise<void> {
  const newVersion = packageVersion('@bytecodealliance/jco-transpile');
  const OLD = 'jco 1.12.0 glue';
  const NEW = `jco-transpile ${newVersion} glue, as written`;
  const RT = `jco-transpile ${newVersion} glue, as rt caches it`;

  const calculator = (await examples.find((e) => e.name === 'calculator')!.source()) as WatSource;
  const addBytes = await buildComponent(calculator);
  const core = await WebAssembly.instantiate(new Uint8Array(await parse(calculator.wat)));
  const direct = core.instance.exports['example:calculator/ops@1.0.0#add'] as (a: number, b: number) => number;
  const adds = {
    [OLD]: (await instanceThrough(addBytes, oldJco))['example:calculator/ops@1.0.0'].add,
    [NEW]: (await instanceThrough(addBytes, newJco))['example:calculator/ops@1.0.0'].add,
    [RT]: (await instanceThrough(addBytes, newJco, (glue) => rewriteGlue(glue).text))['example:calculator/ops@1.0.0'].add,
  };
  const addNs = compare({ 'core export, direct': () => direct(20, 22), ...Object.fromEntries(Object.entries(adds).map(([k, f]) => [k, () => f(20, 22)])) }, 200_000);
  const invoke = await invokePath(calculator);
  console.log('\nper call, example:calculator add(s32, s32) -> s32 (median of rounds)');
  console.table({
    ...Object.fromEntries(Object.entries(addNs).map(([k, ns]) => [k, row(ns, addNs['core export, direct'])])),
    'rt invoke, one at a time (decode, inline call, encode)': row(invoke.sequential, addNs['core export, direct']),
    [`rt invoke, ${CONNECTIONS} in flight (per call)`]: row(invoke.concurrent, addNs['core export, direct']),
  });

  const greeterBytes = await buildComponent(await examples.find((e) => e.name === "greeter")!.source());
  const greeter = await descriptor(greeterBytes, 'greeter');
  const onOwnHost = await ComponentInstance.create(instanceSpec(greeter, await compileCoreModules(greeter.artifact, CAP, 'plain'), CAP));
  if (onOwnHost.host !== 'rt') throw new Error('the greeter is not on rt’s own host (instance-spec.ts ownHosting)');
  const greetIndex = greeter.methods.findIndex((m) => m.name === 'greet');
  const greets = {
    [OLD]: (await instanceThrough(greeterBytes, oldJco))['example:greeter/greeter@1.0.0'].greet,
    [NEW]: (await instanceThrough(greeterBytes, newJco))['example:greeter/greeter@1.0.0'].greet,
    [RT]: (await instanceThrough(greeterBytes, newJco, (glue) => rewriteGlue(glue).text))['example:greeter/greeter@1.0.0'].greet,
    "rt's own host (what rt runs it on: no imports)": (name: unknown) => onOwnHost.call(greetIndex, [name]),
  };
  const greetNs = compare(Object.fromEntries(Object.entries(greets).map(([k, f]) => [k, () => f('World')])), 20_000);
  console.log('\nper call, example:greeter greet(string) -> string, componentize-js (median of rounds)');
  console.table(Object.fromEntries(Object.entries(greetNs).map(([k, ns]) => [k, row(ns, greetNs[OLD])])));
}
