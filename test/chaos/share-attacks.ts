// The attacks fair shares answer (docs/api.md §5.10), for `npm run chaos`:
// one client address replays each (slow bodies to an HTTP handler, long
// streams, thousands of slow connections), honouring Retry-After and
// re-sending forever, while a well-behaved client at another address
// (127.0.0.2: any 127.x.y.z reaches the loopback listener) makes one request
// at a time to the same service. Its latency is measured first alone, then
// under the attack once it has taken hold (SETTLE_MS), on fresh connections
// (so accepting one is measured too);
// the promise is a p99 under attack within 2 × the one alone, and no failed
// request.

import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { letTimePass } from '../support/eventually.js';
import { repository, type RepoEntry } from '../support/fixtures.js';
import { TYPES_HANDLER } from '../support/http-handler-fixtures.js';
import { Raw } from '../support/raw-connection.js';
import { RtProcess } from '../support/rt-process.js';
import { openStream } from '../support/stream-client.js';
import { STREAMS } from '../support/streaming-fixtures.js';

const NEIGHBOUR = '127.0.0.2';
/** The neighbour's requests measured, alone and under attack. */
const SAMPLES = 300;
/**
 * How long the attack runs before the neighbour is measured: its connections
 * are open, its first refusals in. The neighbour asks all along (it is
 * there before and during the attack): the threads that start for it while
 * the attack takes hold (a pool's overflow, ~150 ms each) are paid then.
 */
const SETTLE_MS = 3_000;
/** How long an attacker waits after a refusal, as its Retry-After says. */
const RETRY_MS = 1_000;

export interface ShareOutcome {
  fault: string;
  /** The neighbour's requests, and how many failed (or 1 more when its p99 broke the promise). */
  sent: number;
  failed: number;
  killed: number;
  note: string;
}

/** Logged once per worker that dies, whatever killed it. */
export const killedLine = (l: Record<string, unknown>) => typeof l.msg === 'string' && l.msg.startsWith('worker died');

/** The rt an attack is aimed at. */
interface Target {
  port: number;
  url: string;
}

/** An attack under way: `stop` ends it and says what it met. */
interface Attack {
  stop(): Promise<string>;
}

interface ShareScenario {
  fault: string;
  repo: Record<string, RepoEntry>;
  /** The neighbour's request: method, path, and a JSON body when it has one. */
  neighbour: { method: string; path: string; json?: unknown };
  /** Runs in a thread of its own (attackApart): the neighbour's timings never wait on the attacker's event loop. */
  attack(target: Target): Attack;
}

const HANDLER = { hello: TYPES_HANDLER, 'hello.toml': { raw: 'service = "hello"\n' } } satisfies Record<string, RepoEntry>;
const HANDLER_PATH = '/api/services/default/hello/http';

/** How often each status was seen, as `3×503, 2×408`. */
class Tally {
  readonly #seen = new Map<string, number>();
  add(status: string): void {
    this.#seen.set(status, (this.#seen.get(status) ?? 0) + 1);
  }
  toString(): string {
    return [...this.#seen].map(([status, n]) => `${n}×${status}`).join(', ') || 'no answers';
  }
}

/** `count` loops of `once` until stopped, each waiting RETRY_MS after every attempt that ended. */
function forever(count: number, once: (stopped: () => boolean) => Promise<void>): { stop(): Promise<void> } {
  let stopped = false;
  const loops = Array.from({ length: count }, async () => {
    while (!stopped) {
      await once(() => stopped);
      if (!stopped) await letTimePass(RETRY_MS, 'the attacker honours Retry-After');
    }
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** Until `socket` closes or `stopped()`; closes it when stopped. */
async function heldUntilClosed(socket: Socket, stopped: () => boolean, tick: () => void): Promise<void> {
  while (!socket.destroyed && !stopped()) {
    tick();
    await letTimePass(1_000, 'a slow client sends its next byte');
  }
  socket.destroy();
}

/**
 * `count` connections from the attacker, each sending `head`, then `drip`
 * every second until rt ends it (or the attack stops), and opened again
 * after Retry-After: what rt answered them, tallied.
 */
function slowConnections(target: Target, count: number, head: string, drip: string): Attack {
  const seen = new Tally();
  const loops = forever(count, async (stopped) => {
    const raw = await Raw.open(target.port).catch(() => undefined);
    if (!raw) return seen.add('not connected');
    raw.send(head);
    await heldUntilClosed(raw.socket, stopped, () => raw.send(drip));
    seen.add(raw.data.match(/^HTTP\/1\.1 (\d+)/)?.[1] ?? (stopped() ? 'held to the end' : 'closed unanswered'));
  });
  return { stop: async () => (await loops.stop(), `attacker's connections: ${seen.toString()}`) };
}

const scenarios: ShareScenario[] = [
  {
    fault: 'share: 12 bodies at 1 byte/s to one handler, re-sent forever',
    repo: HANDLER,
    neighbour: { method: 'GET', path: `${HANDLER_PATH}/echo` },
    attack: (target) => slowConnections(target, 12, `POST ${HANDLER_PATH}/body HTTP/1.1\r\nHost: rt\r\nContent-Length: 1000000\r\n\r\n`, 'x'),
  },
  {
    fault: 'share: 10 long streams from one address, reopened forever',
    repo: { streams: STREAMS },
    neighbour: { method: 'POST', path: '/api/services/acme/streams/invoke/count', json: { n: 3, 'delay-ms': 0 } },
    attack(target) {
      const seen = new Tally();
      const loops = forever(10, async (stopped) => {
        const stream = await openStream(`${target.url}/api/services/acme/streams/invoke/count`, { n: 1_000_000, 'delay-ms': 100 }).catch(() => undefined);
        seen.add(stream ? String(stream.status) : 'failed');
        if (!stream) return;
        while (stream.status === 200 && !stopped() && !stream.res.complete && !stream.res.destroyed) await letTimePass(200, 'the stream goes on');
        stream.close();
      });
      return { stop: async () => (await loops.stop(), `attacker's streams: ${seen.toString()}`) };
    },
  },
  {
    fault: 'share: 2,100 slow connections from one address, reopened forever',
    repo: HANDLER,
    neighbour: { method: 'GET', path: `${HANDLER_PATH}/echo` },
    // A head that never ends.
    attack: (target) => slowConnections(target, 2_100, 'GET /api/health HTTP/1.1\r\nHost: rt\r\n', 'X-Slow: 1\r\n'),
  },
];

/** The neighbour's request on a fresh connection from NEIGHBOUR: its time in ms, or undefined when it failed (not 200, or no answer). */
function timed(rt: RtProcess, neighbour: ShareScenario['neighbour']): Promise<number | undefined> {
  const started = performance.now();
  const body = neighbour.json === undefined ? undefined : JSON.stringify(neighbour.json);
  return new Promise((resolve) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json' };
    const req = request({ host: '127.0.0.1', port: rt.port, path: neighbour.path, method: neighbour.method, localAddress: NEIGHBOUR, agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - started : undefined));
      res.on('error', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined));
    req.end(body);
  });
}

/** SAMPLES of the neighbour's requests, one after another. */
async function measure(rt: RtProcess, neighbour: ShareScenario['neighbour']): Promise<{ times: number[]; failed: number }> {
  const times: number[] = [];
  let failed = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const ms = await timed(rt, neighbour);
    if (ms === undefined) failed++;
    else times.push(ms);
  }
  return { times, failed };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const ms = (n: number) => `${n.toFixed(1)} ms`;

async function run(s: ShareScenario): Promise<ShareOutcome> {
  const repo = await repository(s.repo);
  const rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, workers: 2, env: { RT__LOG__LEVEL: 'warn' } });
  try {
    await rt.ready();
    // Every worker's instances started, and the neighbour's path warm.
    for (let i = 0; i < 20; i++) await timed(rt, s.neighbour);
    const alone = await measure(rt, s.neighbour);
    const attack = attackApart(scenarios.indexOf(s), { port: rt.port, url: rt.url });
    const settled = performance.now() + SETTLE_MS;
    while (performance.now() < settled) await timed(rt, s.neighbour);
    const attacked = await measure(rt, s.neighbour);
    const met = await attack.stop();
    const [p50, p99] = [percentile(alone.times, 50), percentile(alone.times, 99)];
    const [q50, q99] = [percentile(attacked.times, 50), percentile(attacked.times, 99)];
    const kept = q99 <= 2 * p99;
    const note = `neighbour p50/p99 alone ${ms(p50)}/${ms(p99)}, under attack ${ms(q50)}/${ms(q99)} (${kept ? 'within' : 'NOT within'} 2×); ${met}`;
    return { fault: s.fault, sent: 2 * SAMPLES, failed: alone.failed + attacked.failed + (kept ? 0 : 1), killed: rt.logLines().filter(killedLine).length, note };
  } finally {
    await rt.stop();
    for (const dir of [repo, rt.cwd]) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Scenario `index`'s attack on `target`, in a thread of its own: thousands
 * of attacking sockets on the measuring thread's event loop would delay the
 * neighbour's own timings (measured: its p99 1.6–1.9 × alone, all of it the
 * client's) where the claim is about rt.
 */
function attackApart(index: number, target: Target): Attack {
  const thread = new Worker(new URL(import.meta.url), { workerData: { shareAttack: index, target } });
  return {
    async stop() {
      thread.postMessage('stop');
      const [met] = (await once(thread, 'message')) as [string];
      await thread.terminate();
      return met;
    },
  };
}

if (!isMainThread && (workerData as { shareAttack?: number } | null)?.shareAttack !== undefined) {
  const { shareAttack, target } = workerData as { shareAttack: number; target: Target };
  const attack = scenarios[shareAttack].attack(target);
  parentPort!.once('message', () => void attack.stop().then((met) => parentPort!.postMessage(met)));
}

/** Runs the share attacks whose name contains `only` (all without it). */
export async function shareAttacks(only: string | undefined): Promise<ShareOutcome[]> {
  const outcomes: ShareOutcome[] = [];
  for (const s of scenarios) {
    if (only && !s.fault.includes(only)) continue;
    process.stderr.write(`  ${s.fault} …\n`);
    outcomes.push(await run(s));
  }
  return outcomes;
}
