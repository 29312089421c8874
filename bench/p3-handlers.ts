// WASI 0.3 HTTP handlers (docs/api.md §5.9), against the targets:
// requests per second of a hello-world `wasi:http/handler@0.3.0` (rt's own,
// P3_HANDLER: GET writes "Hello, world!\n" after `handle` returned) served by
// rt, beside the lean Koa route every HTTP section is measured against; and
// 1 MiB bodies echoed (the same handler's POST hands the request body back as
// the response's) against bare node:http piping the request into the
// response. Both servers with the same workers, interleaved rounds after a
// soak, medians. Needs JSPI (Node 24 or later).

import { hasJspi } from '../lib/platform.js';
import { P3_HANDLER } from '../test/support/async-components.js';
import { repository } from '../test/support/fixtures.js';
import { loadRounds, printRounds, reqPerSec } from './rounds.js';
import { Cleanup, startAll, startBaseline, startRt } from './servers.js';
import { settings } from './settings.js';
import { soak } from './soak.js';
import { ratio } from './stats.js';
import { printTable } from './table.js';

const ECHOED = Buffer.alloc(1_048_576, 7);

export async function p3Handlers(): Promise<void> {
  if (!hasJspi) {
    console.log('\np3-handlers: skipped, WASI 0.3 components need JSPI (Node 24 or later)');
    return;
  }
  const cleanup = new Cleanup();
  try {
    const workers = settings.workers;
    // One instance per worker takes every connection's request at once.
    const repo = await repository({ web: P3_HANDLER, 'web.toml': { raw: `service = "web"\nmax_concurrency = ${Math.max(16, settings.connections)}\n` } });
    const [rt, koa, floor] = await startAll(cleanup, [
      startRt({ configToml: `repo_urls = ["file://${repo}"]\n[log]\nlevel = "warn"\n[http]\nmax_body_bytes = 4194304\n`, workers, quiet: true }),
      startBaseline('koa-lean-baseline.js', workers),
      startBaseline('stream-baseline.js', workers),
    ] as const);
    const targets = [
      { key: `rt 0.3 hello (${workers} workers)`, url: `${rt.url}/api/services/default/web/http/hello`, method: 'GET' as const, body: '', server: rt },
      { key: 'Koa route (lean)', url: `${koa.url}/add`, method: 'POST' as const, body: '{"a":20,"b":22}', server: koa },
      { key: 'rt 0.3 echo, 1 MiB', url: `${rt.url}/api/services/default/web/http/echo`, method: 'POST' as const, body: ECHOED, server: rt },
      { key: 'node:http echo, 1 MiB', url: `${floor.url}/echo`, method: 'POST' as const, body: ECHOED, server: floor },
    ];
    await soak('p3-handlers', targets, Math.min(settings.soakSeconds, 20));
    const results = await loadRounds('p3-handlers', targets);
    const rate = (key: string) => reqPerSec(results, key);
    console.log(`\np3-handlers: a WASI 0.3 handler of rt's own (WAT), ${workers} workers each, ${settings.connections} connections, ${settings.rounds} interleaved rounds of ${settings.seconds} s, medians`);
    printRounds(targets, results);
    printTable({
      'rt 0.3 hello / Koa route (target ≥ 0.5)': { ratio: ratio(rate(targets[0].key), rate(targets[1].key)) },
      'rt 0.3 echo / node:http echo (target ≥ 0.5)': { ratio: ratio(rate(targets[2].key), rate(targets[3].key)) },
    });
  } finally {
    await cleanup.run();
  }
}
