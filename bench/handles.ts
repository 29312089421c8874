// Handles: what a call on a handle costs when the connection reached the
// worker that holds it (local), and when it reached the other worker, which
// forwards it over its peer socket (docs/api.md §5.1.2, lib/worker/http/peers.ts).
// One rt with 2 workers serves the tally example (WAT: the call itself costs
// next to nothing, so the difference is the forward). Connections are kept
// alive and sorted by the worker that accepted them (X-Rt-Worker): a handle
// lives in its service's home worker A, local on A's connections and
// forwarded on B's. Two
// loads, in interleaved rounds: one connection at a time (latency), and
// `CONCURRENT` connections at once (throughput); a plain JSON invoke of the
// calculator on the same connections is the reference. Then handle scopes
// (docs/api.md §5.1.2) at 1, 2 and 8 connections spread over both workers:
// every connection calling one handle of one scope, and each connection its
// own handle in a scope of its own (made on that connection), whose homes
// spread over the workers.

import { randomBytes } from 'node:crypto';
import type { Agent } from 'node:http';
import { examples } from '../examples/index.js';
import { repository } from '../test/support/fixtures.js';
import { closeConnections, connectionsByWorker, sendOn as send } from '../test/support/worker-connections.js';
import { roundOrder } from './order.js';
import { Cleanup, startRt, stopRt } from './servers.js';
import { settings } from './settings.js';
import { median, ratio } from './stats.js';
import { printTable } from './table.js';

const CONCURRENT = 8;
/** Connections of the scope variants. */
const SCOPE_CONNECTIONS = [1, 2, CONCURRENT];

interface Variant {
  label: string;
  agents: Agent[];
  /** The URL each connection calls (one per agent). */
  urls: string[];
  body: string;
}

/** Calls made on each handle's URL, to check against its tally at the end. */
const sent = new Map<string, number>();

/** Sends `requests` requests spread over the variant's connections, each connection one at a time; req/s and per-request ms. */
async function run(v: Variant, requests: number): Promise<{ reqPerSec: number; ms: number[] }> {
  const ms: number[] = [];
  const started = performance.now();
  let left = requests;
  await Promise.all(
    v.agents.map(async (agent, i) => {
      const url = v.urls[i];
      while (left-- > 0) {
        const t = performance.now();
        const answer = await send(agent, url, 'POST', v.body);
        ms.push(performance.now() - t);
        if (answer.status !== 200) throw new Error(`${v.label}: ${answer.status} ${answer.body}`);
        sent.set(url, (sent.get(url) ?? 0) + 1);
      }
    }),
  );
  return { reqPerSec: requests / ((performance.now() - started) / 1000), ms };
}

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];

export async function handles(): Promise<void> {
  const cleanup = new Cleanup();
  try {
    const tally = examples.find((e) => e.name === 'tally')!;
    const calculator = examples.find((e) => e.name === 'calculator')!;
    const repo = await repository({ tally: await tally.source(), calculator: await calculator.source() });
    const rt = await startRt({ configToml: `repo_urls = ["file://${repo}"]\n[log]\nlevel = "warn"\n`, workers: 2, quiet: true });
    cleanup.add(() => stopRt(rt));
    const byWorker = await connectionsByWorker(rt.url, CONCURRENT);
    const services = `${rt.url}/api/services/example`;
    const made = await send(byWorker.values().next().value![0], `${services}/tally/resources/tally`, 'POST', '{"start":0}');
    if (made.status !== 201) throw new Error(`handles: the tally was not made: ${made.status} ${made.body}`);
    const handle = (JSON.parse(made.body) as { handle: string }).handle;
    // It lives in the service's home worker (lib/worker/execution/handle-homes.ts), a; b forwards to it.
    const a = handle.split('.')[0];
    const b = [...byWorker.keys()].find((w) => w !== a)!;
    const markUrl = (id: string) => `${services}/tally/handles/${id}/invoke/mark`;
    const mark = { body: '{"n":1}' };
    const add = { url: `${services}/calculator/invoke/add`, body: '{"a":20,"b":22}' };
    const on = (agents: Agent[], url: string) => ({ agents, urls: agents.map(() => url) });
    const variants = (n: number): Variant[] => [
      { label: `mark, local (${n} conn.)`, ...on(byWorker.get(a)!.slice(0, n), markUrl(handle)), ...mark },
      { label: `mark, forwarded (${n} conn.)`, ...on(byWorker.get(b)!.slice(0, n), markUrl(handle)), ...mark },
      { label: `calculator.add, no handle (${n} conn.)`, ...on(byWorker.get(b)!.slice(0, n), add.url), body: add.body },
    ];
    // Connections of both workers in turn, and on each a tally of a scope of its own, made on it.
    const spread = Array.from({ length: CONCURRENT }, (_, i) => byWorker.get(i % 2 ? b : a)![i >> 1]);
    const ownScope: string[] = [];
    for (const agent of spread) {
      const own = await send(agent, `${services}/tally/resources/tally`, 'POST', '{"start":0}', { 'rt-handle-scope': randomBytes(16).toString('hex') });
      if (own.status !== 201) throw new Error(`handles: a scope's tally was not made: ${own.status} ${own.body}`);
      ownScope.push(markUrl((JSON.parse(own.body) as { handle: string }).handle));
    }
    const scopes = (n: number): Variant[] => [
      { label: `one scope (${n} conn.)`, ...on(spread.slice(0, n), markUrl(handle)), ...mark },
      { label: `a scope per connection (${n} conn.)`, agents: spread.slice(0, n), urls: ownScope.slice(0, n), ...mark },
    ];
    const targets = [...variants(1), ...variants(CONCURRENT), ...SCOPE_CONNECTIONS.flatMap(scopes)];
    const requests = (v: Variant) => (v.agents.length === 1 ? 2_000 : 8_000);
    for (const t of targets) await run(t, requests(t) / 4); // warm-up, not counted
    const results = new Map<string, { reqPerSec: number; ms: number[] }[]>(targets.map((t) => [t.label, []]));
    const rounds = settings.streamRounds;
    for (let round = 0; round < rounds; round++) {
      process.stderr.write(`handles: round ${round + 1}/${rounds}\n`);
      for (const t of roundOrder(targets, round)) results.get(t.label)!.push(await run(t, requests(t)));
    }
    for (const [url, calls] of sent) {
      if (url === add.url) continue;
      const check = await send(byWorker.get(b)![0], url.replace(/mark$/, 'count'), 'POST', '{}');
      if ((JSON.parse(check.body) as { result: number }).result !== calls) throw new Error(`handles: a tally counts ${check.body}, expected ${calls}: calls were lost`);
    }

    console.log(`\nhandles: a call on a handle, local vs forwarded to the worker that holds it (2 workers, keep-alive, ${rounds} interleaved rounds, medians)`);
    const reqPerSec = (label: string) => median(results.get(label)!.map((r) => r.reqPerSec));
    printTable(
      Object.fromEntries(
        targets.map((t) => {
          const runs = results.get(t.label)!;
          return [
            t.label,
            {
              'req/s': Math.round(reqPerSec(t.label)),
              'p50 ms': median(runs.map((r) => quantile(r.ms, 0.5))).toFixed(3),
              'p99 ms': median(runs.map((r) => quantile(r.ms, 0.99))).toFixed(3),
              'req/s per round': runs.map((r) => Math.round(r.reqPerSec)).join(' / '),
            },
          ];
        }),
      ),
    );
    console.log('\nforwarded / local, req/s');
    printTable(Object.fromEntries([1, CONCURRENT].map((n) => [`${n} conn.`, { ratio: ratio(reqPerSec(`mark, forwarded (${n} conn.)`), reqPerSec(`mark, local (${n} conn.)`)) }])));
    console.log('\nhandle scopes, connections spread over both workers: req/s, and a scope per connection / one scope');
    printTable(
      Object.fromEntries(
        SCOPE_CONNECTIONS.map((n) => [
          `${n} conn.`,
          { 'one scope': Math.round(reqPerSec(`one scope (${n} conn.)`)), 'a scope per connection': Math.round(reqPerSec(`a scope per connection (${n} conn.)`)), ratio: ratio(reqPerSec(`a scope per connection (${n} conn.)`), reqPerSec(`one scope (${n} conn.)`)) },
        ]),
      ),
    );
    closeConnections(byWorker);
  } finally {
    await cleanup.run();
  }
}
