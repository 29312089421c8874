// Benchmark settings, from the environment, and the header printed before the sections.

import { cpus, loadavg, totalmem } from 'node:os';

const num = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, not ${JSON.stringify(raw)}`);
  return n;
};

export const SECTIONS = ['calls', 'http', 'compute', 'streams', 'startup', 'reload', 'workers', 'handles', 'http-handlers', 'https-client', 'waiting', 'p3-handlers', 'traces', 'drift', 'versions'] as const;
export type Section = (typeof SECTIONS)[number];

/** What runs when BENCH_ONLY is unset: drift is ten minutes of one load on its own, versions needs another checkout; they run only when named. */
const DEFAULT_SECTIONS: readonly Section[] = SECTIONS.filter((s) => s !== 'drift' && s !== 'versions');

export const settings = {
  /** Seconds per autocannon run. */
  seconds: num('BENCH_SECONDS', 10),
  /** Interleaved rounds over all HTTP targets. */
  rounds: Math.max(1, Math.round(num('BENCH_ROUNDS', 3))),
  /**
   * Seconds of load on every HTTP target before its measured rounds (not
   * counted). rt has been seen to slow down after ~30 s of load, so a few
   * seconds of warm-up measure a server that is not yet in its steady state.
   */
  soakSeconds: num('BENCH_SOAK_SECONDS', 60),
  /** Length of one slice of the soak and of the drift run: one throughput line each. */
  sliceSeconds: 10,
  /** Seconds of the one warm-up run per target of the workers section (not counted). */
  warmupSeconds: num('BENCH_WARMUP_SECONDS', 3),
  /** Seconds of continuous load on one rt in the drift section. */
  driftSeconds: num('BENCH_DRIFT_SECONDS', 600),
  connections: 50,
  /** Workers of every HTTP server (Koa, raw node:http, rt). */
  workers: 2,
  /** Loop count of the compute call. */
  computeN: Math.round(num('BENCH_COMPUTE_N', 1_000_000)),
  computeCalls: Math.max(1, Math.round(num('BENCH_COMPUTE_CALLS', 50))),
  computeWarmup: Math.round(num('BENCH_COMPUTE_WARMUP', 10)),
  /** Rounds of the streams section (every variant once a pass, a round's passes spread over the run: bench/streams.ts). */
  streamRounds: Math.max(1, Math.round(num('BENCH_STREAM_ROUNDS', 5))),
  /**
   * Passes over every variant in one round of the streams section, one in
   * each sweep over the rounds: a round's figure is what its passes moved over
   * the time they took, so it samples the machine at as many moments, spread
   * over the run (its CPUs run 1.7-2.6x faster in some spells, which one
   * short stream, or one stretch of the run, catches or not). 16 passes of
   * 32 MiB streams, not 8 of 64 MiB: the same time, twice the moments. With 8,
   * the componentize-js rows and the bare baseline still spread up to 1.6x
   * between rounds; with 16, every variant stayed within 1.44 (docs/performance-log.md,
   * "Twice the moments a round samples").
   */
  streamPasses: Math.max(1, Math.round(num('BENCH_STREAM_PASSES', 16))),
  /** MiB of each raw-bytes stream (streams), and of the streamed response (http-handlers). */
  streamMiB: Math.max(1, Math.round(num('BENCH_STREAM_MIB', 32))),
  /** Items of each small-item stream (words, count, ticks). */
  streamItems: Math.max(1, Math.round(num('BENCH_STREAM_ITEMS', 100_000))),
  /** Streams started at once in the concurrent variants of the streams section (rt and baseline with 2 workers). */
  streamConcurrent: Math.max(1, Math.round(num('BENCH_STREAM_CONCURRENT', 8))),
  /** A file to write every measured pass of the streams section to, as JSON (each variant's samples by round, the CPU probe's readings): unset, none. */
  streamSamplesFile: process.env.BENCH_STREAM_SAMPLES || undefined,
  /** Requests per variant for time to first byte, spread over the rounds. */
  streamTtfbRequests: Math.max(1, Math.round(num('BENCH_STREAM_TTFB', 200))),
  /** Components in the large start-up case. */
  startupComponents: Math.max(1, Math.round(num('BENCH_STARTUP_COMPONENTS', 100))),
  startupRuns: Math.max(1, Math.round(num('BENCH_STARTUP_RUNS', 3))),
  reloads: Math.round(num('BENCH_RELOADS', 200)),
  /** Calls held waiting at once in the waiting section, and how long each waits. */
  waitingCalls: Math.round(num('BENCH_WAITING', 1000)),
  waitMs: Math.round(num('BENCH_WAIT_MS', 3000)),
  /** Interleaved rounds of the https-client section (every client on every workload once a round). */
  httpsRounds: Math.max(1, Math.round(num('BENCH_HTTPS_ROUNDS', 5))),
  /** Small (2 KiB) and big (4 MiB) files the https-client section downloads. */
  httpsSmall: Math.max(1, Math.round(num('BENCH_HTTPS_SMALL', 200))),
  httpsBig: Math.max(1, Math.round(num('BENCH_HTTPS_BIG', 20))),
};

/** The sections BENCH_ONLY selects (comma-separated), all of them when it is unset. */
export function selectedSections(): Section[] {
  const only = process.env.BENCH_ONLY?.trim();
  if (!only) return [...DEFAULT_SECTIONS];
  const chosen = only.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = chosen.filter((s) => !(SECTIONS as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown section(s) ${unknown.join(', ')}; expected ${SECTIONS.join('|')} (comma-separated)`);
  return SECTIONS.filter((s) => chosen.includes(s));
}

export function printHeader(sections: readonly Section[]): void {
  const cpu = cpus();
  console.log('rt benchmark');
  console.log(`  machine: ${cpu.length} CPUs, ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`  node ${process.version} on ${process.platform}/${process.arch}`);
  console.log(`  sections: ${sections.join(', ')} (BENCH_ONLY=${SECTIONS.join('|')}, comma-separated; unset: all but drift and versions)`);
  console.log(
    `  http: ${settings.soakSeconds} s soak per target first (BENCH_SOAK_SECONDS, interleaved ${settings.sliceSeconds} s slices), ` +
      `then ${settings.rounds} round(s) (BENCH_ROUNDS) x ${settings.seconds} s (BENCH_SECONDS) per target, ${settings.connections} connections, ${settings.workers} workers per server`,
  );
  console.log(
    `  compute: spin(${settings.computeN}) (BENCH_COMPUTE_N), ${settings.computeCalls} calls (BENCH_COMPUTE_CALLS) after ${settings.computeWarmup} warm-up calls (BENCH_COMPUTE_WARMUP)`,
  );
  console.log(
    `  streams: ${settings.streamRounds} round(s) (BENCH_STREAM_ROUNDS) of ${settings.streamPasses} pass(es) (BENCH_STREAM_PASSES), ${settings.streamMiB} MiB per byte stream (BENCH_STREAM_MIB), ` +
      `${settings.streamItems} items per item stream (BENCH_STREAM_ITEMS), ${settings.streamTtfbRequests} requests per first-byte variant (BENCH_STREAM_TTFB), 1 worker; ` +
      `${settings.streamConcurrent} streams at once (BENCH_STREAM_CONCURRENT) on 2 workers`,
  );
  console.log(`  startup: 1 and ${settings.startupComponents} components (BENCH_STARTUP_COMPONENTS), median of ${settings.startupRuns} starts (BENCH_STARTUP_RUNS)`);
  console.log(`  reload: ${settings.reloads} reloads (BENCH_RELOADS)`);
  console.log(`  waiting: ${settings.waitingCalls} calls (BENCH_WAITING) waiting ${settings.waitMs} ms (BENCH_WAIT_MS) at once in one rt worker and one Koa worker, 3 interleaved rounds`);
  console.log(
    `  workers: rt with 1 and 2 workers started on empty compile caches, the http rounds and durations, ${settings.warmupSeconds} s warm-up per target (BENCH_WARMUP_SECONDS), RSS per process`,
  );
  console.log(
    `  http-handlers: the http rounds and connections after min(BENCH_SOAK_SECONDS, 20) s of soak, rt with 1 worker; ` +
      `a ${settings.streamMiB} MiB response (BENCH_STREAM_MIB), ${settings.streamRounds} run(s) (BENCH_STREAM_ROUNDS)`,
  );
  console.log(
    `  https-client: ${settings.httpsSmall} files of 2 KiB (BENCH_HTTPS_SMALL), ${settings.httpsBig} of 4 MiB (BENCH_HTTPS_BIG), then all of them revalidated; ` +
      `${settings.httpsRounds} round(s) (BENCH_HTTPS_ROUNDS) of rt's client, the same on a keep-alive Agent, and undici`,
  );
  console.log(
    `  drift: ${settings.driftSeconds} s (BENCH_DRIFT_SECONDS) of continuous load on one rt (${settings.workers} workers, warn) in ${settings.sliceSeconds} s slices, ` +
      `${settings.connections} connections${sections.includes('drift') ? '' : '; runs only when BENCH_ONLY names it'}`,
  );
}
