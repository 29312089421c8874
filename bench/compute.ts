// A call that does real work: spin(n) from a WAT component, its core export
// called directly in this process vs the same through rt over HTTP (one
// connection, one call at a time). rt may move a service this heavy from the
// worker's main thread to an instance thread after its first calls, hence the
// warm-up calls before measuring.

import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { repository } from '../test/support/fixtures.js';
import { COMPUTE, COMPUTE_EXPORT } from './components.js';
import { OneConnection } from './load.js';
import { Cleanup, startAll, startRt } from './servers.js';
import { settings } from './settings.js';
import { printTable } from './table.js';
import { fixed, median, min, passMiss, ratio } from './stats.js';

/** Milliseconds of each of `count` calls of `call`. */
async function timeCalls(count: number, call: () => unknown): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  return times;
}

export async function compute(): Promise<void> {
  const { computeN: n, computeCalls: calls, computeWarmup: warmup } = settings;
  const cleanup = new Cleanup();
  try {
    // (a) the core module, instantiated here: what the export costs with nothing around it.
    const core = await WebAssembly.instantiate(new Uint8Array(await parse(COMPUTE.wat)));
    const spin = core.instance.exports[COMPUTE_EXPORT] as (n: number) => number;
    const expected = spin(n) >>> 0;
    await timeCalls(warmup, () => spin(n));
    const direct = await timeCalls(calls, () => spin(n));

    // (b) rt over HTTP, one connection, one call at a time.
    const repo = await repository({ compute: COMPUTE });
    const [rt] = await startAll(cleanup, [startRt({ configToml: `repo_urls = ["file://${repo}"]\n[log]\nlevel = "warn"\n`, workers: settings.workers, quiet: true })] as const);
    const client = new OneConnection();
    cleanup.add(async () => client.close());
    const url = `${rt.url}/api/services/bench/compute/invoke/spin`;
    const call = async (arg: number, check?: number) => {
      const res = await client.post(url, JSON.stringify({ n: arg }));
      if (res.status !== 200) throw new Error(`spin(${arg}): ${res.status} ${res.text}`);
      if (check !== undefined && (JSON.parse(res.text) as { result: number }).result !== check) throw new Error(`spin(${arg}): rt answered ${res.text}, the core export ${check}`);
    };
    const warm = await timeCalls(warmup, () => call(n, expected));
    const viaRt = await timeCalls(calls, () => call(n, expected));
    // What the HTTP round trip and the invoke path cost with no work in the call.
    await timeCalls(10, () => call(0));
    const floor = await timeCalls(calls, () => call(0));

    const row = (times: number[]) => ({ 'median ms': fixed(median(times), 3), 'best ms': fixed(min(times), 3), calls: times.length });
    console.log(`\ncompute: spin(${n}) in a WAT component, one call at a time (rt: ${settings.workers} workers, 1 keep-alive connection, log warn)`);
    printTable({
      'core export, direct (this process)': row(direct),
      'rt invoke over HTTP': row(viaRt),
      [`rt warm-up calls (not counted; first ${fixed(warm[0] ?? NaN, 3)} ms)`]: row(warm),
      'rt invoke spin(0): HTTP + invoke, no work': row(floor),
    });
    const speed = median(direct) / median(viaRt);
    console.log(`\nratio and target (rt's time includes an HTTP round trip: spin(0) takes ${fixed(median(floor), 3)} ms; the last row leaves it out)`);
    printTable({
      'direct / rt, median (speed of rt relative to direct)': { ratio: ratio(median(direct), median(viaRt)), target: '>= 0.95', result: passMiss(speed >= 0.95) },
      'direct / rt, best': { ratio: ratio(min(direct), min(viaRt)), target: '', result: '' },
      'direct / (rt - spin(0) floor), median': { ratio: ratio(median(direct), median(viaRt) - median(floor)), target: '(the call alone)', result: '' },
    });
  } finally {
    await cleanup.run();
  }
}
