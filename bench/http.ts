// Over HTTP: rt next to its reference points, all running at once, first
// soaked (soak.ts), then measured in interleaved rounds so that drift on the
// machine (other processes, thermal limits) spreads over every target
// instead of landing on one.
//
// Targets: a lean Koa route, the body read by hand (koa-lean-baseline.ts),
// which the ratios and targets are set against; Koa with koa-body, the
// design card's stack (koa-baseline.ts); raw node:http (raw-baseline.ts); rt
// invoking the WAT calculator's add with log.level "warn" and with "info"
// (one line per request); and the componentize-js greeter on a "warn" rt of
// its own, so that its load (and its instance threads) stays out of the add
// rows.

import type { ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { examplesRepository } from '../test/support/fixtures.js';
import { load, post, type LoadResult } from './load.js';
import { roundOrder } from './order.js';
import { compactPlacement, placementMoves, samplePlacement } from './placement.js';
import { assertRunning, Cleanup, startAll, startBaseline, startRt } from './servers.js';
import { settings } from './settings.js';
import { soak } from './soak.js';
import { printTable } from './table.js';
import { fixed, kilo, median, passMiss, ratio, spread, sum } from './stats.js';

interface Target {
  key: 'lean' | 'koa' | 'raw' | 'rtWarn' | 'rtInfo' | 'greeter';
  label: string;
  url: string;
  body: string;
  /** Text the answer must contain (checked once before loading). */
  expect: string;
  rt: boolean;
  server: { child: ChildProcess; output?: string };
}

const ADD_BODY = '{"a":20,"b":22}';

const failures = (runs: readonly LoadResult[]) => sum(runs.map((r) => r.errors + r.timeouts + r.non2xx));

export async function overHttp(): Promise<void> {
  const { seconds, rounds, soakSeconds, sliceSeconds, connections, workers } = settings;
  const cleanup = new Cleanup();
  try {
    const repo = await examplesRepository();
    const rtConfig = (level: string) => `repo_urls = ["file://${repo}"]\n[log]\nlevel = "${level}"\n`;
    const [lean, koa, raw, rtWarn, rtInfo, rtGreeter] = await startAll(cleanup, [
      startBaseline('koa-lean-baseline.js', workers),
      startBaseline('koa-baseline.js', workers),
      startBaseline('raw-baseline.js', workers),
      startRt({ configToml: rtConfig('warn'), workers, quiet: true }),
      startRt({ configToml: rtConfig('info'), workers, quiet: true }),
      startRt({ configToml: rtConfig('warn'), workers, quiet: true }),
    ] as const);
    const invoke = (base: string, path: string) => `${base}/api/services/${path}`;
    const targets: Target[] = [
      { key: 'lean', label: 'lean Koa route, body read by hand (JSON add)', url: `${lean.url}/add`, body: ADD_BODY, expect: '42', rt: false, server: lean },
      { key: 'koa', label: 'Koa + koa-body, design card stack (JSON add)', url: `${koa.url}/add`, body: ADD_BODY, expect: '42', rt: false, server: koa },
      { key: 'raw', label: 'raw node:http (JSON add)', url: `${raw.url}/add`, body: ADD_BODY, expect: '42', rt: false, server: raw },
      { key: 'rtWarn', label: 'rt calculator.add, log warn', url: invoke(rtWarn.url, 'example/calculator/invoke/add'), body: ADD_BODY, expect: '42', rt: true, server: rtWarn },
      { key: 'rtInfo', label: 'rt calculator.add, log info', url: invoke(rtInfo.url, 'example/calculator/invoke/add'), body: ADD_BODY, expect: '42', rt: true, server: rtInfo },
      { key: 'greeter', label: 'rt greeter.greet (componentize-js), log warn', url: invoke(rtGreeter.url, 'example/greeter/invoke/greet'), body: '{"name":"World"}', expect: 'World', rt: true, server: rtGreeter },
    ];

    for (const t of targets) {
      const answer = await post(t.url, t.body);
      if (answer.status !== 200 || !answer.text.includes(t.expect)) throw new Error(`${t.label}: ${t.url} answered ${answer.status} ${answer.text}`);
    }
    const soaked = await soak('http', targets, soakSeconds);

    const results = new Map<Target['key'], LoadResult[]>(targets.map((t) => [t.key, []]));
    for (let round = 0; round < rounds; round++) {
      // A different order each round (order.ts): no target always runs first, or always right after the same one.
      const order = roundOrder(targets, round);
      process.stderr.write(`http: round ${round + 1}/${rounds}: ${order.map((t) => t.key).join(' → ')}\n`);
      for (const t of order) {
        results.get(t.key)!.push(await load({ url: t.url, body: t.body, seconds, connections }));
        assertRunning(t.key, t.server);
      }
    }

    // A service moved to instance threads pays a thread hop on every call: say where the rows' calls ran.
    const placements = [
      ['rt(warn) calculator', await samplePlacement(`${rtWarn.url}/api/services/example/calculator`, workers)],
      ['rt(info) calculator', await samplePlacement(`${rtInfo.url}/api/services/example/calculator`, workers)],
      ['greeter', await samplePlacement(`${rtGreeter.url}/api/services/example/greeter`, workers)],
    ] as const;
    // Why a service moved, if it did (a move is logged too, but the servers' output is not kept).
    const moves = [
      ['rt(warn)', await placementMoves(rtWarn.url)],
      ['rt(info)', await placementMoves(rtInfo.url)],
      ['greeter rt', await placementMoves(rtGreeter.url)],
    ] as const;

    if (soakSeconds > 0) {
      console.log(`\nsoak before the rounds: req/s per ${sliceSeconds} s slice, ${soakSeconds} s per target, the targets in turn (not counted)`);
      printTable(
        Object.fromEntries(
          targets.map((t) => {
            const slices = soaked.get(t.key)!;
            return [
              t.label,
              {
                'req/s per slice': slices.map((r) => kilo(r.reqPerSec)).join(' '),
                'last/first': ratio(slices.at(-1)!.reqPerSec, slices[0].reqPerSec),
                'errors+non-2xx': failures(slices),
              },
            ];
          }),
        ),
      );
    } else {
      console.log('\nno soak (BENCH_SOAK_SECONDS=0): the rounds measure fresh servers');
    }

    const stats = (key: Target['key']) => {
      const runs = results.get(key)!;
      return {
        reqPerSec: median(runs.map((r) => r.reqPerSec)),
        p50: median(runs.map((r) => r.p50Ms)),
        p99: median(runs.map((r) => r.p99Ms)),
        non2xx: sum(runs.map((r) => r.non2xx)),
        errors: sum(runs.map((r) => r.errors)),
        timeouts: sum(runs.map((r) => r.timeouts)),
        spread: spread(runs.map((r) => r.reqPerSec)),
        perRound: runs.map((r) => Math.round(r.reqPerSec)).join(' / '),
      };
    };
    const s = Object.fromEntries(targets.map((t) => [t.key, stats(t.key)])) as Record<Target['key'], ReturnType<typeof stats>>;

    console.log(
      `\nover HTTP: ${workers} workers per server, autocannon ${connections} connections, ${rounds} interleaved round(s) x ${seconds} s per target after the soak ` +
        `(medians across rounds; non-2xx/errors/timeouts summed; max/min: fastest over slowest round)`,
    );
    printTable(
      Object.fromEntries(
        targets.map((t) => [
          t.label,
          {
            'req/s': Math.round(s[t.key].reqPerSec),
            'p50 ms': s[t.key].p50,
            'p99 ms': s[t.key].p99,
            'non-2xx': s[t.key].non2xx,
            errors: s[t.key].errors,
            timeouts: s[t.key].timeouts,
            'vs lean Koa': `${fixed((s[t.key].reqPerSec / s.lean.reqPerSec) * 100, 1)} %`,
            'max/min': s[t.key].spread,
            'req/s per round': s[t.key].perRound,
          },
        ]),
      ),
    );
    console.log(`  load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(`  placement after the rounds, by worker (the service listing): ${placements.map(([name, p]) => `${name} ${compactPlacement(p)}`).join('; ')}`);
    console.log(`  moves during the run (rt_placement_changes_total): ${moves.map(([name, m]) => `${name}: ${m}`).join('; ')}`);

    console.log('\nratios');
    printTable({
      'rt(warn) / lean Koa, req/s': { ratio: ratio(s.rtWarn.reqPerSec, s.lean.reqPerSec) },
      'rt(info) / lean Koa, req/s': { ratio: ratio(s.rtInfo.reqPerSec, s.lean.reqPerSec) },
      'rt(warn) / lean Koa, p99 latency': { ratio: ratio(s.rtWarn.p99, s.lean.p99) },
      'greeter / lean Koa, req/s': { ratio: ratio(s.greeter.reqPerSec, s.lean.reqPerSec) },
      'rt(warn) / Koa + koa-body, req/s': { ratio: ratio(s.rtWarn.reqPerSec, s.koa.reqPerSec) },
      'rt(warn) / raw node:http, req/s': { ratio: ratio(s.rtWarn.reqPerSec, s.raw.reqPerSec) },
      'lean Koa / Koa + koa-body, req/s': { ratio: ratio(s.lean.reqPerSec, s.koa.reqPerSec) },
    });

    // Errors count from the soak on as well: an error there is no less an error.
    const rtFailures = sum(targets.filter((t) => t.rt).map((t) => failures(results.get(t.key)!) + failures(soaked.get(t.key)!)));
    const atLeast = (key: Target['key'], factor: number) => ({
      measured: `${ratio(s[key].reqPerSec, s.lean.reqPerSec)} x`,
      result: passMiss(s[key].reqPerSec >= factor * s.lean.reqPerSec),
    });
    console.log('\ntargets (against the lean Koa route, after the soak)');
    printTable({
      'rt(warn) req/s >= 1.0 x lean Koa': atLeast('rtWarn', 1.0),
      'rt(info) req/s >= 0.9 x lean Koa': atLeast('rtInfo', 0.9),
      'rt(warn) p99 <= 1.2 x lean Koa p99': { measured: `${ratio(s.rtWarn.p99, s.lean.p99)} x`, result: passMiss(s.rtWarn.p99 <= 1.2 * s.lean.p99) },
      'greeter req/s >= 0.8 x lean Koa': atLeast('greeter', 0.8),
      'rt: 0 errors, timeouts, non-2xx (every rt row, soak included)': { measured: String(rtFailures), result: passMiss(rtFailures === 0) },
    });
  } finally {
    await cleanup.run();
  }
}
