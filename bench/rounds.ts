// Interleaved rounds of load over a section's targets, and the table of what
// they came to: each target's median req/s, latencies, failures and the
// req/s of each round (so that drift between rounds shows).

import { load, type LoadOptions, type LoadResult } from './load.js';
import { roundOrder } from './order.js';
import { settings } from './settings.js';
import { median } from './stats.js';
import { printTable } from './table.js';

export interface RoundTarget {
  key: string;
  url: string;
  method?: LoadOptions['method'];
  body: LoadOptions['body'];
}

/** Each target's results, by key: settings.rounds rounds of settings.seconds, the targets in another order each round. */
export type RoundResults = Map<string, LoadResult[]>;

export async function loadRounds(section: string, targets: readonly RoundTarget[]): Promise<RoundResults> {
  const results: RoundResults = new Map(targets.map((t) => [t.key, []]));
  for (let round = 0; round < settings.rounds; round++) {
    process.stderr.write(`${section}: round ${round + 1}/${settings.rounds}\n`);
    for (const t of roundOrder(targets, round)) results.get(t.key)!.push(await load({ url: t.url, method: t.method, body: t.body, seconds: settings.seconds, connections: settings.connections }));
  }
  return results;
}

/** The median req/s of `key`'s rounds. */
export function reqPerSec(results: RoundResults, key: string): number {
  return median(results.get(key)!.map((r) => r.reqPerSec));
}

/** One row per target: median req/s, p50 and p99, failures (errors, timeouts, non-2xx), and each round's req/s. */
export function printRounds(targets: readonly RoundTarget[], results: RoundResults): void {
  printTable(
    Object.fromEntries(
      targets.map((t) => {
        const runs = results.get(t.key)!;
        const failures = runs.reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0);
        return [t.key, { 'req/s': Math.round(reqPerSec(results, t.key)), 'p50 ms': median(runs.map((r) => r.p50Ms)), 'p99 ms': median(runs.map((r) => r.p99Ms)), failures, 'req/s per round': runs.map((r) => Math.round(r.reqPerSec)).join(' / ') }];
      }),
    ),
  );
}
