// Drift: does rt hold its throughput and memory under continuous load? One rt
// (log.level "warn", the http section's workers) serves the WAT calculator's
// add to autocannon in back-to-back slices for BENCH_DRIFT_SECONDS (10 min by
// default). rt was seen to answer ~28k req/s for its first ~30 s of load and
// 17–23k after, with no log line to say why; the http section's rounds are
// too short to show that, this section is long enough to show what follows.
//
// After each slice it reads, from outside: each worker's CPU time (CPU per
// request tells rt getting slower from the machine getting busier), its RSS
// (/proc), and the add service's placement as the listing shows it (moving
// to instance threads puts a postMessage round trip on every call).
//
// The first and last windows are a minute each, or half the run when it is
// shorter than two minutes, so that they never overlap.

import { examplesRepository } from '../test/support/fixtures.js';
import type { RtProcess } from '../test/support/rt-process.js';
import { load, post, type LoadResult } from './load.js';
import { compactPlacement, describePlacement, placementState, samplePlacement, type PlacementSample } from './placement.js';
import { cpuSeconds, rssMiB } from './proc.js';
import { assertRunning, Cleanup, startAll, startRt } from './servers.js';
import { settings } from './settings.js';
import { printTable } from './table.js';
import { fixed, kilo, max, passMiss, ratio, sum } from './stats.js';

const SERVICE = 'example/calculator';
const BODY = '{"a":20,"b":22}';

interface Slice {
  /** Seconds into the run at which it started, and its length. */
  from: number;
  seconds: number;
  load: LoadResult;
  /** Worker CPU time per answered request, µs (NaN when a worker was replaced during the slice). */
  cpuUsPerRequest: number;
  /** Worker pids and their RSS (MiB) after the slice. */
  pids: number[];
  rss: number[];
  placement: PlacementSample;
}

/** The worker pids in a stable order (by pid), so that RSS columns line up from slice to slice. */
function workerPids(rt: RtProcess): number[] {
  return rt.workerPids().sort((a, b) => a - b);
}

async function workerCpu(pids: readonly number[]): Promise<number> {
  return sum(await Promise.all(pids.map(cpuSeconds)));
}

/** Runs one slice of load and reads the workers and the placement after it. */
async function runSlice(rt: RtProcess, url: string, from: number, seconds: number): Promise<Slice> {
  const before = workerPids(rt);
  const cpuBefore = await workerCpu(before);
  const result = await load({ url, body: BODY, seconds, connections: settings.connections });
  const pids = workerPids(rt);
  const same = pids.length === before.length && pids.every((p) => before.includes(p));
  const cpuUsPerRequest = same && result.total > 0 ? (((await workerCpu(pids)) - cpuBefore) / result.total) * 1e6 : NaN;
  const rss = await Promise.all(pids.map(rssMiB));
  const placement = await samplePlacement(`${rt.url}/api/services/${SERVICE}`, pids.length);
  return { from, seconds, load: result, cpuUsPerRequest, pids, rss, placement };
}

/** Request-weighted throughput of consecutive slices: all they answered over all their seconds. */
function throughput(slices: readonly Slice[]): number {
  return sum(slices.map((s) => s.load.reqPerSec * s.seconds)) / sum(slices.map((s) => s.seconds));
}

const mib = (values: readonly number[]) => values.map((v) => Math.round(v)).join(' / ');

export async function drift(): Promise<void> {
  const { driftSeconds, sliceSeconds, connections, workers } = settings;
  if (driftSeconds < 2 * sliceSeconds) throw new Error(`BENCH_DRIFT_SECONDS must be at least ${2 * sliceSeconds} (two slices), not ${driftSeconds}`);
  const cleanup = new Cleanup();
  try {
    const repo = await examplesRepository();
    const [rt] = await startAll(cleanup, [startRt({ configToml: `repo_urls = ["file://${repo}"]\n[log]\nlevel = "warn"\n`, workers, quiet: true })] as const);
    const url = `${rt.url}/api/services/${SERVICE}/invoke/add`;
    const answer = await post(url, BODY);
    if (answer.status !== 200 || !answer.text.includes('42')) throw new Error(`${url} answered ${answer.status} ${answer.text}`);
    const atStart = await samplePlacement(`${rt.url}/api/services/${SERVICE}`, workers);
    process.stderr.write(
      `drift: ${driftSeconds} s of load on ${SERVICE}.add in ${sliceSeconds} s slices; worker pids ${workerPids(rt).join(', ')} (RSS in this order); ` +
        `placement before the load: ${describePlacement(atStart)}\n`,
    );

    const slices: Slice[] = [];
    for (let from = 0; from < driftSeconds; from += sliceSeconds) {
      const slice = await runSlice(rt, url, from, Math.min(sliceSeconds, driftSeconds - from));
      assertRunning('rt', rt);
      slices.push(slice);
      const r = slice.load;
      const failures = r.errors + r.timeouts + r.non2xx;
      process.stderr.write(
        `drift: ${String(from).padStart(4)}–${String(from + slice.seconds).padEnd(4)} s  ${String(Math.round(r.reqPerSec)).padStart(6)} req/s  p99 ${r.p99Ms} ms  ` +
          `worker CPU ${fixed(slice.cpuUsPerRequest, 0)} µs/req  RSS ${mib(slice.rss)} MiB  placement ${compactPlacement(slice.placement)}` +
          `${failures ? `  ${failures} errors/timeouts/non-2xx` : ''}\n`,
      );
    }

    const window = Math.min(60, driftSeconds / 2);
    const first = slices.filter((s) => s.from + s.seconds <= window);
    const last = slices.filter((s) => s.from >= driftSeconds - window);
    const firstRate = throughput(first);
    const lastRate = throughput(last);
    const startSlice = first.at(-1)!;
    const endSlice = slices.at(-1)!;
    const replaced = endSlice.pids.length !== startSlice.pids.length || endSlice.pids.some((p, i) => p !== startSlice.pids[i]);
    const growth = replaced ? NaN : max(endSlice.rss.map((end, i) => end / startSlice.rss[i]));
    const states = slices.map((s) => placementState(s.placement));
    const movedAt = slices.find((s) => placementState(s.placement) === 'threads');
    const failures = sum(slices.map((s) => s.load.errors + s.load.timeouts + s.load.non2xx));

    // One row per minute: the slices' throughput compactly, what the workers used, and where add ran at the minute's end.
    const perRow = Math.max(1, Math.round(60 / sliceSeconds));
    const rows: Record<string, Record<string, string>> = {};
    for (let i = 0; i < slices.length; i += perRow) {
      const group = slices.slice(i, i + perRow);
      const end = group.at(-1)!;
      rows[`${group[0].from}–${end.from + end.seconds} s`] = {
        'req/s per slice': group.map((s) => kilo(s.load.reqPerSec)).join(' '),
        'req/s': kilo(throughput(group)),
        'worker CPU µs/req': fixed(sum(group.map((s) => s.cpuUsPerRequest * s.load.total)) / sum(group.map((s) => s.load.total)), 1),
        'worker RSS MiB by pid': mib(end.rss),
        'placement by worker': compactPlacement(end.placement),
      };
    }
    console.log(
      `\ndrift: one rt (${workers} workers, log warn) under continuous load, ${SERVICE}.add, autocannon ${connections} connections, ` +
        `${driftSeconds} s in ${sliceSeconds} s slices (a row per minute; RSS and placement at the row's end, per worker)`,
    );
    printTable(rows);
    console.log(`\n  placement at the end, as GET /api/services/${SERVICE} shows it: ${describePlacement(endSlice.placement)}`);

    const span = (seconds: number) => (seconds === 60 ? 'minute' : `${fixed(seconds, 0)} s`);
    console.log('\ntargets');
    printTable({
      [`req/s, last ${span(window)} >= 0.9 x first ${span(window)}`]: {
        measured: `${ratio(lastRate, firstRate)} x (${kilo(lastRate)} vs ${kilo(firstRate)})`,
        result: passMiss(lastRate >= 0.9 * firstRate),
      },
      [`worker RSS at the end <= 1.1 x after the first ${span(window)}`]: {
        measured: replaced ? `a worker was replaced (pids ${startSlice.pids.join(', ')} → ${endSlice.pids.join(', ')})` : `${fixed(growth)} x (${mib(startSlice.rss)} → ${mib(endSlice.rss)} MiB)`,
        result: passMiss(!replaced && growth <= 1.1),
      },
      'add never leaves inline': {
        measured: movedAt
          ? `after the slice ending at ${movedAt.from + movedAt.seconds} s: ${describePlacement(movedAt.placement)}`
          : states.every((s) => s === 'inline')
            ? `inline after each of ${slices.length} slices`
            : `the listing showed no placement after ${states.filter((st) => st === 'unknown').length} of ${slices.length} slices`,
        result: states.every((s) => s === 'inline') ? 'PASS' : movedAt ? 'MISS' : 'n/a',
      },
      'rt: 0 errors, timeouts, non-2xx': { measured: String(failures), result: passMiss(failures === 0) },
    });
  } finally {
    await cleanup.run();
  }
}
