// Many calls waiting at once in one instance (docs/api.md §5.9): BENCH_WAITING
// (default 1,000) calls of a WASI 0.3 async function that sleeps BENCH_WAIT_MS
// (default 3,000) through wasi:clocks' wait-for, held together by one rt
// worker (one instance: max_concurrency as high); as many requests to a WASI
// 0.3 handler that sleeps 3 s (P3_HANDLER's HEAD, whatever BENCH_WAIT_MS),
// in an rt of its own; against a Koa route that waits on a timer. The worker's RSS once warmed up and idle, then per round,
// interleaved: what its RSS grew by over the idle one while they wait (each
// round's: V8 and the allocator keep some of what a round took, so later
// rounds show what the process has kept too; the first is the cost of the
// calls themselves, also per call), how long until all have answered, and any
// answer not 200. Needs JSPI (Node 24 or later).

import { spawnSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { hasJspi } from '../lib/platform.js';
import { P3_HANDLER, P3_SLEEPER } from '../test/support/async-components.js';
import { repository } from '../test/support/fixtures.js';
import { RtProcess } from '../test/support/rt-process.js';
import { Cleanup, startAll, startBaseline, startRt } from './servers.js';
import { letTimePass } from '../test/support/eventually.js';
import { median } from './stats.js';
import { settings } from './settings.js';
import { printTable } from './table.js';

interface Target {
  name: string;
  url: string;
  /** A handler's request (HEAD, no body) rather than a call (POST of its arguments). */
  handler?: boolean;
  /** The one worker process that holds the calls. */
  pid: number;
}

interface Held {
  rssDuring: number;
  answeredMs: number;
  failed: number;
}

/** The children of `pid` (a cluster primary's workers). */
function childPids(pid: number): number[] {
  const ps = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  return ps.stdout.split('\n').map((l) => Number(l.trim())).filter((n) => n > 0);
}

/** `count` calls at once, each asking to wait `waitMs`; the worker's RSS halfway through. */
async function hold(target: Target, count: number, waitMs: number): Promise<Held> {
  const agent = new Agent({ keepAlive: true, maxSockets: count });
  try {
    const one = () =>
      new Promise<number>((resolve) => {
        const req = request(target.url, { method: target.handler ? 'HEAD' : 'POST', agent, headers: target.handler ? {} : { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', () => resolve(0));
        req.end(target.handler ? undefined : JSON.stringify({ ns: waitMs * 1_000_000 }));
      });
    const began = performance.now();
    const all = Promise.all(Array.from({ length: count }, one));
    await letTimePass(waitMs / 2, 'halfway through the wait, every call is in');
    const rssDuring = (await RtProcess.status(target.pid)).rssMiB;
    const statuses = await all;
    return { rssDuring, answeredMs: performance.now() - began, failed: statuses.filter((s) => s !== 200).length };
  } finally {
    agent.destroy();
  }
}

export async function waiting(): Promise<void> {
  if (!hasJspi) {
    console.log(`\nwaiting: skipped, Node.js ${process.versions.node} has no JSPI (WASI 0.3 needs Node 24 or later)`);
    return;
  }
  const { waitingCalls: count, waitMs } = settings;
  const rounds = 3;
  const cleanup = new Cleanup();
  try {
    const sidecar = { raw: `max_concurrency = ${count}\nmax_queue = ${count}\n` };
    const [calls, handlers] = await Promise.all([repository({ sleeper: P3_SLEEPER, 'sleeper.toml': sidecar }), repository({ naps: P3_HANDLER, 'naps.toml': sidecar })]);
    const config = (repo: string) => `repo_urls = ["file://${repo}"]\n[http]\nrequest_timeout_seconds = ${Math.ceil(waitMs / 1000) + 30}\nmax_connections = ${count + 100}\nclient_share_percent = 100\n`;
    const [rt, rtHandler, koa] = await startAll(cleanup, [startRt({ configToml: config(calls), workers: 1, quiet: true }), startRt({ configToml: config(handlers), workers: 1, quiet: true }), startBaseline('waiting-baseline.js', 1)] as const);
    const targets: Target[] = [
      { name: `rt, an async function in one instance (max_concurrency ${count})`, url: `${rt.url}/api/services/default/sleeper/invoke/nap`, pid: rt.workerPids()[0] },
      { name: `rt, a 0.3 handler's naps of 3 s in one instance (max_concurrency ${count})`, url: `${rtHandler.url}/api/services/default/naps/http/`, pid: rtHandler.workerPids()[0], handler: true },
      { name: 'Koa route awaiting a timer', url: `${koa.url}/`, pid: childPids(koa.child.pid!)[0] },
    ];
    // A first hold opens sockets and warms both up; not counted. Then each worker's idle RSS.
    for (const target of targets) await hold(target, Math.min(count, 100), 100);
    const idle = new Map<Target, number>();
    for (const target of targets) idle.set(target, (await RtProcess.status(target.pid)).rssMiB);
    const results = new Map<Target, Held[]>(targets.map((t) => [t, []]));
    for (let round = 0; round < rounds; round++) {
      for (const target of round % 2 === 0 ? targets : [...targets].reverse()) results.get(target)!.push(await hold(target, count, waitMs));
    }
    const rows: Record<string, Record<string, string | number>> = {};
    const grown = (target: Target) => results.get(target)!.map((h) => h.rssDuring - idle.get(target)!);
    for (const target of targets) {
      const held = results.get(target)!;
      rows[target.name] = {
        'RSS idle MiB': idle.get(target)!,
        'grown MiB, by round': grown(target).join(' / '),
        'KiB per call (round 1)': Math.round((grown(target)[0] * 1024) / count),
        'all answered ms': Math.round(median(held.map((h) => h.answeredMs))),
        'not 200': held.reduce((n, h) => n + h.failed, 0),
      };
    }
    const [rtHeld, handlerHeld, koaHeld] = targets.map((t) => grown(t)[0]);
    console.log(`\n${count} calls waiting ${waitMs} ms at once, one worker each; ${rounds} interleaved rounds, times their medians (round 1: rt grows ${rtHeld} MiB for the async function, ${handlerHeld} MiB for the handler (target ≤ 50, sockets included), the Koa route ${koaHeld} MiB)`);
    printTable(rows);
  } finally {
    await cleanup.run();
  }
}
