// Over HTTP: rt next to its reference points, all running at once, measured
// in interleaved rounds so that drift on the machine (other processes,
// thermal limits) spreads over every target instead of landing on one.
//
// Targets: a bare Koa route (koa-baseline.ts), raw node:http (raw-baseline.ts),
// rt invoking the WAT calculator's add with log.level "warn" and with "info"
// (one line per request), and, for information, the componentize-js greeter.

import { examplesRepository } from '../test/support/fixtures.js';
import { load, post, type LoadResult } from './load.js';
import { Cleanup, startAll, startBaseline, startRt } from './servers.js';
import { settings } from './settings.js';
import { printTable } from './table.js';
import { fixed, median, passMiss, ratio, sum } from './stats.js';

interface Target {
  key: 'koa' | 'raw' | 'rtWarn' | 'rtInfo' | 'greeter';
  label: string;
  url: string;
  body: string;
  /** Text the answer must contain (checked once before loading). */
  expect: string;
  rt: boolean;
}

const ADD_BODY = '{"a":20,"b":22}';

export async function overHttp(): Promise<void> {
  const { seconds, rounds, warmupSeconds, connections, workers } = settings;
  const cleanup = new Cleanup();
  try {
    const repo = await examplesRepository();
    const rtConfig = (level: string) => `repo_urls = ["file://${repo}"]\n[log]\nlevel = "${level}"\n`;
    const [koa, raw, rtWarn, rtInfo] = await startAll(cleanup, [
      startBaseline('koa-baseline.js', workers),
      startBaseline('raw-baseline.js', workers),
      startRt({ configToml: rtConfig('warn'), workers, quiet: true }),
      startRt({ configToml: rtConfig('info'), workers, quiet: true }),
    ] as const);
    const invoke = (base: string, path: string) => `${base}/api/services/${path}`;
    const targets: Target[] = [
      { key: 'koa', label: 'Koa route (JSON add)', url: `${koa.url}/add`, body: ADD_BODY, expect: '42', rt: false },
      { key: 'raw', label: 'raw node:http (JSON add)', url: `${raw.url}/add`, body: ADD_BODY, expect: '42', rt: false },
      { key: 'rtWarn', label: 'rt calculator.add, log warn', url: invoke(rtWarn.url, 'example/calculator/invoke/add'), body: ADD_BODY, expect: '42', rt: true },
      { key: 'rtInfo', label: 'rt calculator.add, log info', url: invoke(rtInfo.url, 'example/calculator/invoke/add'), body: ADD_BODY, expect: '42', rt: true },
      { key: 'greeter', label: 'rt greeter.greet (componentize-js), log warn', url: invoke(rtWarn.url, 'example/greeter/invoke/greet'), body: '{"name":"World"}', expect: 'World', rt: true },
    ];

    for (const t of targets) {
      const answer = await post(t.url, t.body);
      if (answer.status !== 200 || !answer.text.includes(t.expect)) throw new Error(`${t.label}: ${t.url} answered ${answer.status} ${answer.text}`);
    }
    if (warmupSeconds > 0) {
      process.stderr.write(`http: warming up ${targets.length} targets, ${warmupSeconds} s each\n`);
      for (const t of targets) await load({ url: t.url, body: t.body, seconds: warmupSeconds, connections });
    }

    const results = new Map<Target['key'], LoadResult[]>(targets.map((t) => [t.key, []]));
    for (let round = 0; round < rounds; round++) {
      // Rotate the order each round: no target always runs first (or right after the heaviest one).
      const order = targets.map((_, i) => targets[(i + round) % targets.length]);
      process.stderr.write(`http: round ${round + 1}/${rounds}: ${order.map((t) => t.key).join(' → ')}\n`);
      for (const t of order) results.get(t.key)!.push(await load({ url: t.url, body: t.body, seconds, connections }));
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
        perRound: runs.map((r) => Math.round(r.reqPerSec)).join(' / '),
      };
    };
    const s = Object.fromEntries(targets.map((t) => [t.key, stats(t.key)])) as Record<Target['key'], ReturnType<typeof stats>>;

    console.log(
      `\nover HTTP: ${workers} workers per server, autocannon ${connections} connections, ${rounds} interleaved round(s) x ${seconds} s per target ` +
        `(medians across rounds; non-2xx/errors/timeouts summed)`,
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
            'vs Koa': `${fixed((s[t.key].reqPerSec / s.koa.reqPerSec) * 100, 1)} %`,
            'req/s per round': s[t.key].perRound,
          },
        ]),
      ),
    );

    console.log('\nratios');
    printTable({
      'rt(warn) / Koa, req/s': { ratio: ratio(s.rtWarn.reqPerSec, s.koa.reqPerSec) },
      'rt(warn) / raw node:http, req/s': { ratio: ratio(s.rtWarn.reqPerSec, s.raw.reqPerSec) },
      'rt(info) / Koa, req/s': { ratio: ratio(s.rtInfo.reqPerSec, s.koa.reqPerSec) },
      'rt(warn) / Koa, p99 latency': { ratio: ratio(s.rtWarn.p99, s.koa.p99) },
    });

    const rtRows = targets.filter((t) => t.rt);
    const failures = sum(rtRows.map((t) => s[t.key].errors + s[t.key].timeouts + s[t.key].non2xx));
    console.log('\ntargets');
    printTable({
      'rt(warn) req/s >= 0.95 x Koa': { measured: `${ratio(s.rtWarn.reqPerSec, s.koa.reqPerSec)} x`, result: passMiss(s.rtWarn.reqPerSec >= 0.95 * s.koa.reqPerSec) },
      'rt(warn) p99 <= 1.2 x Koa p99': { measured: `${ratio(s.rtWarn.p99, s.koa.p99)} x`, result: passMiss(s.rtWarn.p99 <= 1.2 * s.koa.p99) },
      'rt(info) req/s >= 0.80 x Koa': { measured: `${ratio(s.rtInfo.reqPerSec, s.koa.reqPerSec)} x`, result: passMiss(s.rtInfo.reqPerSec >= 0.8 * s.koa.reqPerSec) },
      'rt: 0 errors, timeouts, non-2xx (every rt row)': { measured: String(failures), result: passMiss(failures === 0) },
    });
  } finally {
    await cleanup.run();
  }
}
