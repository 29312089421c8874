// Two builds of rt side by side: this checkout's and another's
// (BENCH_OTHER: the directory of a checkout with `npm ci && npm run build`
// done), each with 2 workers at log level warn, serving the WAT `add` and
// the componentize-js greeter. A soak of every target, then interleaved
// rounds; medians, and the median of the rounds' ratios (each round
// measures the two builds minutes apart at most, so a spell in which the
// machine runs faster or slower moves both). For a change's before and
// after: check out the commit before it beside this one, build it there, and
//   BENCH_ONLY=versions BENCH_OTHER=../rt-before npm run bench

import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { examplesRepository } from '../test/support/fixtures.js';
import { loadRounds } from './rounds.js';
import { Cleanup, startAll, startRt } from './servers.js';
import { settings } from './settings.js';
import { soak } from './soak.js';
import { fixed, median, sum } from './stats.js';
import { printTable } from './table.js';

const CALLS = [
  { call: 'add', path: 'example/calculator/invoke/add', body: '{"a":20,"b":22}', expect: '42' },
  { call: 'greet', path: 'example/greeter/invoke/greet', body: '{"name":"World"}', expect: 'World' },
] as const;

export async function versions(): Promise<void> {
  const other = process.env.BENCH_OTHER;
  const otherBin = other === undefined ? undefined : join(resolve(other), 'bin', 'rt.js');
  if (!otherBin || !existsSync(otherBin)) throw new Error('BENCH_OTHER must name another checkout of rt, built (npm ci && npm run build), to run beside this one');
  const { seconds, rounds, soakSeconds, connections } = settings;
  const cleanup = new Cleanup();
  try {
    const repo = await examplesRepository();
    const configToml = `repo_urls = ["file://${repo}"]\n[log]\nlevel = "warn"\n[console]\nenabled = false\n`;
    const [here, there] = await startAll(cleanup, [startRt({ configToml, workers: 2, quiet: true }), startRt({ configToml, workers: 2, quiet: true, bin: otherBin })] as const);
    const builds = [
      { build: 'this', server: here },
      { build: 'other', server: there },
    ];
    const targets = builds.flatMap(({ build, server }) => CALLS.map((c) => ({ key: `${build} ${c.call}`, build, call: c.call, url: `${server.url}/api/services/${c.path}`, body: c.body, expect: c.expect, server })));
    for (const t of targets) {
      const answer = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: t.body }).then((r) => r.text());
      if (!answer.includes(t.expect)) throw new Error(`${t.key}: unexpected answer ${answer}`);
    }
    console.log(`\n## versions: this checkout vs ${resolve(other!)} (${soakSeconds} s soak, ${rounds} rounds x ${seconds} s, ${connections} connections)`);
    await soak('versions', targets, soakSeconds);
    const runs = await loadRounds('versions', targets);
    const rps = (key: string) => runs.get(key)!.map((r) => r.reqPerSec);
    const rows: Record<string, Record<string, string | number>> = {};
    for (const { call } of CALLS) {
      const [mine, theirs] = [rps(`this ${call}`), rps(`other ${call}`)];
      rows[call] = {
        'this req/s': Math.round(median(mine)),
        'other req/s': Math.round(median(theirs)),
        'this / other': fixed(median(mine) / median(theirs)),
        'median of round ratios': fixed(median(mine.map((m, i) => m / theirs[i]))),
        'errors, timeouts, non-2xx': sum([...runs.get(`this ${call}`)!, ...runs.get(`other ${call}`)!].map((r) => r.errors + r.timeouts + r.non2xx)),
      };
    }
    printTable(rows);
    // A service that moved to instance threads in one build's workers and not the other's is a different comparison.
    for (const { build, server } of builds) {
      const moves = (await (await fetch(`${server.url}/api/metrics`)).text()).split('\n').filter((l) => l.startsWith('rt_placement_changes_total{'));
      console.log(`${build}: placement changes ${moves.length === 0 ? 'none' : moves.join(', ')}`);
    }
  } finally {
    await cleanup.run();
  }
}
