// Traces' cost (docs/api.md §7): one rt with traces off and one exporting
// every request's spans (a server span and a call span, always sampled) over
// OTLP/HTTP protobuf to a sink that keeps up, one worker each at log level
// warn, serving the WAT `add` (the cheapest call there is: what tracing adds
// shows most) and the componentize-js greeter. A soak, then interleaved
// rounds; medians and the median of the rounds' ratios. What traces cost when off is the
// `versions` section's to measure (this build against the one before them).
//
// One worker, because with two the kernel's split of a round's 50 new
// connections between the workers' accepts decided the figure, not the
// traces: in one 5 s slice of the greeter one worker used 5.07 s of CPU and
// the other 0.04 s, and a server's rate halved for as long as its connections
// lasted (docs/performance.md, "Traces").

import { examplesRepository } from '../test/support/fixtures.js';
import { loadRounds } from './rounds.js';
import { Cleanup, startAll, startBaseline, startRt } from './servers.js';
import { settings } from './settings.js';
import { soak } from './soak.js';
import { fixed, median, sum } from './stats.js';
import { printTable } from './table.js';

const CALLS = [
  { call: 'add', path: 'example/calculator/invoke/add', body: '{"a":20,"b":22}' },
  { call: 'greet', path: 'example/greeter/invoke/greet', body: '{"name":"World"}' },
] as const;

export async function traces(): Promise<void> {
  const { seconds, rounds, soakSeconds, connections } = settings;
  const cleanup = new Cleanup();
  try {
    const repo = await examplesRepository();
    const configToml = `repo_urls = ["file://${repo}"]\n[log]\nlevel = "warn"\n[console]\nenabled = false\n`;
    const [sink] = await startAll(cleanup, [startBaseline('otlp-sink.js', 1)] as const);
    const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'always_on' };
    const [off, on] = await startAll(cleanup, [startRt({ configToml, workers: 1, quiet: true }), startRt({ configToml, workers: 1, quiet: true, env: tracing })] as const);
    const servers = [
      { traces: 'off', server: off },
      { traces: 'on', server: on },
    ];
    const targets = CALLS.flatMap((c) => servers.map((s) => ({ key: `${c.call} traces ${s.traces}`, server: s.server, url: `${s.server.url}/api/services/${c.path}`, body: c.body })));
    console.log(`\n## traces: rt (1 worker) with traces off vs on (OTLP/HTTP protobuf to a sink on loopback; ${soakSeconds} s soak, ${rounds} rounds x ${seconds} s, ${connections} connections)`);
    await soak('traces', targets, soakSeconds);
    const runs = await loadRounds('traces', targets);
    const rps = (key: string) => runs.get(key)!.map((r) => r.reqPerSec);
    const rows: Record<string, Record<string, string | number>> = {};
    for (const { call } of CALLS) {
      const [offRps, onRps] = [rps(`${call} traces off`), rps(`${call} traces on`)];
      rows[call] = {
        'off req/s': Math.round(median(offRps)),
        'on req/s': Math.round(median(onRps)),
        'on / off': fixed(median(onRps) / median(offRps)),
        'median of round ratios': fixed(median(onRps.map((r, i) => r / offRps[i]))),
        'errors, timeouts, non-2xx': sum([...runs.get(`${call} traces off`)!, ...runs.get(`${call} traces on`)!].map((r) => r.errors + r.timeouts + r.non2xx)),
      };
    }
    printTable(rows);
    const metrics = (await (await fetch(`${on.url}/api/metrics`)).text()).split('\n');
    const spans = (fate: string) => metrics.find((l) => l.startsWith(`rt_trace_spans_total{fate="${fate}"} `))?.split(' ')[1] ?? '0';
    console.log(`Spans exported / dropped / failed: ${spans('exported')} / ${spans('dropped')} / ${spans('failed')}`);
    console.log('Target: on / off >= 0.8.');
  } finally {
    await cleanup.run();
  }
}
