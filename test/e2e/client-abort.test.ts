// End to end: clients that hang up (docs/api.md §5.5). A client that leaves
// while its call runs is logged 499, not with what the call came to; a call
// still waiting for an instance when its client leaves is never run, and a
// call sent after it does not wait behind it (once, such calls were logged
// 200 seconds later, and ran, holding up the calls behind them). Which calls
// ran shows in the log: EFFECTFUL prints `effect <tag>` (logged as its call ends).

import { request } from 'node:http';
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { EFFECTFUL, repository } from '../support/fixtures.js';
import { call, invoke, RtProcess } from '../support/rt-process.js';

/** Two pool threads and at most four overflow threads (instance-pool.ts): six calls hold every thread a service may have. */
const THREADS = 6;
/** How long each holding call runs alone (six at once on two cores take about three times as long): longer than making the overflow threads takes. */
const WORK_MS = 3_000;

describe('clients that hang up (e2e)', function () {
  this.timeout(180_000);
  let rt: RtProcess;

  before(async function () {
    this.timeout(300_000);
    // pool_size 2: on instance threads from the start, where calls wait in the pool's queue.
    const repo = await repository({ effectful: EFFECTFUL, 'effectful.toml': { raw: 'pool_size = 2\n' } });
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, workers: 1, env: { RT__HTTP__REQUEST_TIMEOUT_SECONDS: '60' } });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  /** Calls `work` with request id `tag`; `leave` hangs up (the promise then resolves with status 0). */
  function work(tag: string, spins: number): { answered: Promise<{ status: number; at: number }>; leave: () => void } {
    const body = JSON.stringify({ tag, spins });
    const req = request(`${rt.url}/api/services/acme/effectful/invoke/work`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': tag } });
    const answered = new Promise<{ status: number; at: number }>((resolve) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, at: performance.now() }));
      });
      req.on('error', () => resolve({ status: 0, at: performance.now() }));
    });
    req.end(body);
    return { answered, leave: () => req.destroy() };
  }

  const effects = (prefix: string) => rt.logLines().filter((l) => typeof l.msg === 'string' && l.msg.startsWith(`effect ${prefix}`)).length;
  const requestLine = (tag: string) => rt.logLines().find((l) => l.msg === 'request' && l.reqId === tag);

  it('logs 499 for a client that left while its call ran, never runs the calls whose clients left while they waited, and serves the next one in their place', async () => {
    // Spins for about WORK_MS, from a call's rate (the second: a thread's first call is slower).
    let spins = 0;
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      expect((await invoke(rt, 'acme/effectful/invoke/work', { tag: 'calibrate', spins: 4_000_000 })).status).to.equal(200);
      spins = Math.round((4_000_000 * WORK_MS) / Math.max(1, performance.now() - started));
    }

    // Every thread busy: an overflow thread is made whenever all the others run a call, and takes the next call waiting.
    const holders = Array.from({ length: THREADS }, (_, i) => work(`hold-${i}`, spins));
    await eventually(async () => (await liveInstances()) >= THREADS, { what: `${THREADS} threads, each running a holding call`, timeoutMs: 30_000 });
    // Left while running: it runs on, and is logged 499.
    holders[0].leave();
    // Left while waiting: never run.
    const waiting = Array.from({ length: THREADS }, (_, i) => work(`gone-${i}`, spins));
    await eventually(async () => (await waitingCalls()) >= THREADS, { what: `${THREADS} calls waiting behind the holding ones`, timeoutMs: 30_000 });
    // The same queue, as a scrape sees it (a holding call may still wait for the last overflow thread to start).
    const metrics = await fetch(`${rt.url}/api/metrics`).then((r) => r.text());
    const waitingLine = /^rt_calls_waiting\{service="acme\.effectful"\} (\d+)$/m.exec(metrics);
    expect(Number(waitingLine?.[1]), 'rt_calls_waiting of acme.effectful').to.be.at.least(THREADS);
    for (const w of waiting) w.leave();
    const fast = work('fast', 1_000);

    const held = await Promise.all(holders.map((h) => h.answered));
    const { status, at } = await fast.answered;
    expect(status).to.equal(200);
    // Served when the first thread came free (not after the calls that left ran).
    expect(at - Math.max(...held.map((h) => h.at)), 'ms the fast call was answered after the holding calls').to.be.below(WORK_MS / 2);

    for (const tag of ['hold-0', ...waiting.map((_, i) => `gone-${i}`)]) {
      expect(await rt.logged(() => requestLine(tag) !== undefined, 10_000), `the request line of ${tag}`).to.equal(true);
      expect(requestLine(tag), tag).to.include({ status: 499 });
    }
    expect(requestLine('hold-1')).to.include({ status: 200 });
    expect(effects('hold-0'), 'the call whose client left while it ran').to.equal(1);
    await rt.workerLogsFlushed();
    expect(effects('gone-'), 'calls whose clients left while they waited that ran').to.equal(0);
  });

  async function liveInstances(): Promise<number> {
    return (await instances()).live;
  }

  async function waitingCalls(): Promise<number> {
    return (await instances()).waiting;
  }

  async function instances(): Promise<{ live: number; waiting: number }> {
    const described = await call(`${rt.url}/api/services/acme/effectful`, { method: 'GET' });
    return described.body.instances as { live: number; waiting: number };
  }
});
