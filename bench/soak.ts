// The soak before measured rounds: every target under load for a while, so
// that the rounds measure servers in the state they reach under sustained
// load, not fresh ones (rt was seen to answer ~28k req/s for its first
// ~30 s of load and 17–23k after). Each slice's throughput is printed as it
// ends, so that drift during the soak shows.
//
// The targets take turns in slices (in a different order each turn,
// order.ts) rather than soaking one after another: taking turns, each target
// idles only while the others take their slice, as it does in the measured
// rounds that follow, whereas one after another the first target would idle
// for minutes right before the rounds, and whatever the load built up (or
// idling undoes) would differ between the first target and the last. Drift
// on the machine (other processes) also spreads over every target instead
// of landing on one.

import type { ChildProcess } from 'node:child_process';
import { load, type LoadResult } from './load.js';
import { roundOrder } from './order.js';
import { assertRunning } from './servers.js';
import { settings } from './settings.js';

export interface SoakTarget {
  key: string;
  url: string;
  method?: 'GET' | 'POST';
  body: string | Buffer;
  /** The process serving `url`: a slice that finds it gone ends the soak. */
  server: { child: ChildProcess; output?: string };
}

/** Each target's slices, in order. */
export type SoakResults = Map<string, LoadResult[]>;

/** Loads every target for `seconds` in turns of `settings.sliceSeconds`, writing one line per slice to stderr under `section`. */
export async function soak(section: string, targets: readonly SoakTarget[], seconds: number): Promise<SoakResults> {
  const { sliceSeconds, connections } = settings;
  const results: SoakResults = new Map(targets.map((t) => [t.key, []]));
  const slices = Math.ceil(seconds / sliceSeconds);
  if (slices === 0) return results;
  const width = Math.max(...targets.map((t) => t.key.length));
  process.stderr.write(`${section}: soak, ${seconds} s per target in ${sliceSeconds} s slices, the targets in turn\n`);
  for (let slice = 0; slice < slices; slice++) {
    const from = slice * sliceSeconds;
    const length = Math.min(sliceSeconds, seconds - from);
    const order = roundOrder(targets, slice);
    for (const t of order) {
      const r = await load({ url: t.url, method: t.method, body: t.body, seconds: length, connections });
      assertRunning(t.key, t.server);
      results.get(t.key)!.push(r);
      const failures = r.errors + r.timeouts + r.non2xx;
      process.stderr.write(
        `${section}: soak ${t.key.padEnd(width)}  ${String(from).padStart(3)}–${String(from + length).padEnd(3)} s  ` +
          `${String(Math.round(r.reqPerSec)).padStart(6)} req/s  p99 ${r.p99Ms} ms${failures ? `  ${failures} errors/timeouts/non-2xx` : ''}\n`,
      );
    }
  }
  return results;
}
