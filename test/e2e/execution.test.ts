// End to end: the execution model (docs/api.md §5.1 "Deadlines"). Calls run
// inline on the worker's main thread until a call overruns the inline
// budget; then the service moves to instance threads and the call is made
// again there, with the time its request has left. Deadlines count from
// arrival, waiting calls are bounded per service, and a call made again never
// repeats an effect. One worker, so every call meets the same instances.

import { request } from 'node:http';
import { expect } from 'chai';
import { always, eventually } from '../support/eventually.js';
import { EFFECTFUL, examplesRepository, HOSTILE, repository, RUNAWAY, SLOW } from '../support/fixtures.js';
import { cpuSeconds } from '../support/processes.js';
import { call, invoke, RtProcess } from '../support/rt-process.js';

const TIMEOUT_S = 2;

describe('execution model (e2e)', function () {
  let rt: RtProcess;

  before(async function () {
    this.timeout(300_000);
    const examples = await examplesRepository();
    const repo = await repository({
      runaway: RUNAWAY,
      'crowded.wasm': RUNAWAY,
      'crowded.toml': { raw: 'service = "crowded"\n' },
      'bounded.wasm': RUNAWAY,
      'bounded.toml': { raw: 'service = "bounded"\npool_size = 2\nmax_queue = 2\n' },
      hostile: HOSTILE,
      effectful: EFFECTFUL,
      slow: SLOW,
    });
    rt = await RtProcess.start({
      workers: 1,
      configToml: `repo_urls = ["file://${examples}", "file://${repo}"]`,
      env: { RT__HTTP__REQUEST_TIMEOUT_SECONDS: String(TIMEOUT_S) },
    });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  const instances = async (address: string) => (await call(`${rt.url}/api/services/${address}`, { method: 'GET' })).body.instances as Record<string, unknown>;
  const placement = async (service: string) => (await instances(`acme/${service}`)).placement;

  it('runs a service without grants inline, and names where each runs in the listing', async () => {
    expect(await instances('example/calculator')).to.include({ placement: 'inline', live: 1 });
    expect(await placement('bounded')).to.equal('threads');
  });

  describe('a runaway call', () => {
    for (const [service, method] of [
      ['runaway', 'forever'],
      ['hostile', 'spin'],
    ] as const) {
      it(`${service}.${method}: the first is interrupted inline, made again on a thread and cut off at its deadline; so is a second`, async function () {
        this.timeout(30_000);
        expect(await placement(service)).to.equal('inline');
        for (const attempt of ['first', 'second']) {
          const started = performance.now();
          const res = await invoke(rt, `acme/${service}/invoke/${method}`, {});
          const elapsed = performance.now() - started;
          expect(res.status, `${attempt} runaway`).to.equal(504);
          expect(res.body).to.include({ error: 'call timed out', code: 'RT_ERR_CALL_TIMEOUT', service: `acme.${service}`, method });
          expect(elapsed, `${attempt} runaway`).to.be.within(TIMEOUT_S * 1000 - 50, TIMEOUT_S * 1000 + 1000);
          expect(await placement(service)).to.equal('threads');
        }
        expect(await rt.logged((l) => l.service === `acme.${service}` && l.msg === 'service moved to instance threads')).to.equal(true);
      });
    }
  });

  describe('compute-heavy calls', () => {
    it('move their service to threads once its inline calls take over 1 ms of CPU each, without a failed call', async () => {
      expect(await placement('slow')).to.equal('inline');
      for (let i = 0; i < 64 && (await placement('slow')) === 'inline'; i++) {
        const res = await invoke(rt, 'acme/slow/invoke/spin', { n: 5_000_000 });
        expect(res.body).to.deep.equal({ result: 5_000_000 });
      }
      expect(await placement('slow')).to.equal('threads');
      const moved = await rt.logged((l) => l.service === 'acme.slow' && l.msg === 'service moved to instance threads');
      expect(moved).to.equal(true);
      const line = rt.logLines().find((l) => l.service === 'acme.slow' && l.msg === 'service moved to instance threads')!;
      // Logged at warn, with its reason and the evidence (on a machine starved of CPU a call may run past the inline budget first).
      expect(line).to.include({ level: 40 });
      expect(line.reason).to.be.oneOf(['slow_calls', 'over_budget']);
      if (line.reason === 'slow_calls') expect(String(line.detail)).to.match(/ms of CPU each/);
    });
  });

  describe('deadlines from arrival', () => {
    it('answers every queued call by its deadline, and a fast method of the same service is not starved', async function () {
      this.timeout(30_000);
      const [worker] = rt.workerPids();
      const idle = await cpuSeconds(worker);
      const sent = performance.now();
      // 1 pool thread + 4 overflow threads run five of them; the rest wait, and their deadlines pass while they do.
      const loops = Array.from({ length: 20 }, () => invoke(rt, 'acme/crowded/invoke/forever', {}).then((res) => ({ res, at: performance.now() - sent })));
      // Crowded once they have kept the worker busy for a while (its CPU time
      // shows it; asking the worker would add to its load).
      await eventually(async () => (await cpuSeconds(worker)) - idle >= 0.5, { what: 'the calls to crowd the service', timeoutMs: 10_000 });
      const fastSent = performance.now();
      const fast = await invoke(rt, 'acme/crowded/invoke/count', {});
      const fastElapsed = performance.now() - fastSent;
      const answers = await Promise.all(loops);
      for (const { res, at } of answers) {
        expect(res.status).to.equal(504);
        expect(at).to.be.below(TIMEOUT_S * 1000 + 1000);
      }
      expect(fast.status).to.equal(200);
      expect(fastElapsed).to.be.below(TIMEOUT_S * 1000 + 1000);
    });
  });

  it('answers 408 without running a call whose body has not arrived by its deadline, cuts its connection then, and keeps the service inline', async function () {
    this.timeout(20_000);
    const body = JSON.stringify({ a: 1, b: 2 });
    const sent = performance.now();
    const answer = await new Promise<{ status: number; text: string; connection: string | undefined }>((resolve, reject) => {
      const req = request(`${rt.url}/api/services/example/calculator/invoke/add`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, text, connection: res.headers.connection }));
      });
      req.on('error', reject);
      // The rest of the body never comes.
      req.write(body.slice(0, 3));
    });
    expect(answer.status).to.equal(408);
    expect(answer.connection).to.equal('close');
    expect(performance.now() - sent).to.be.within(TIMEOUT_S * 1000 - 100, TIMEOUT_S * 1000 + 1500);
    expect(JSON.parse(answer.text)).to.include({ error: 'request timeout', code: 'RT_ERR_REQUEST_TIMEOUT', service: 'example.calculator', method: 'add' });
    expect(await instances('example/calculator')).to.include({ placement: 'inline' });
  });

  describe('the queue bound (sidecar max_queue)', () => {
    it('refuses calls beyond it at once with 503 and Retry-After; the rest answer by their deadline', async function () {
      this.timeout(30_000);
      const sent = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => invoke(rt, 'acme/bounded/invoke/forever', {}).then((res) => ({ res, at: performance.now() - sent }))),
      );
      const refused = answers.filter((a) => a.res.status === 503);
      const cut = answers.filter((a) => a.res.status === 504);
      // Two run on the pool's threads and two wait (max_queue = 2); waiting ones move to overflow
      // threads (at most 4) once the running ones are stuck; so at least four of twelve are refused.
      expect(refused.length + cut.length).to.equal(12);
      expect(refused.length).to.be.at.least(4);
      for (const { res, at } of refused) {
        expect(res.body).to.include({ error: 'service overloaded', code: 'RT_ERR_SERVICE_OVERLOADED', service: 'acme.bounded', method: 'forever' });
        expect(res.headers.get('retry-after')).to.equal('1');
        expect(at).to.be.below(1000);
      }
      for (const { at } of cut) expect(at).to.be.below(TIMEOUT_S * 1000 + 1000);
    });
  });

  describe('a call made again on a thread', () => {
    it('does not repeat its effect: the output of the interrupted attempt is dropped', async function () {
      this.timeout(60_000);
      expect(await placement('effectful')).to.equal('inline');
      const tag = `t${Date.now()}`;
      // Long enough to overrun the inline budget (20 ms), short enough for the timeout.
      const res = await invoke(rt, 'acme/effectful/invoke/work', { tag, spins: 1_000_000 });
      expect(res.status).to.equal(200);
      expect(await placement('effectful')).to.equal('threads');
      await rt.workerLogsFlushed(); // a second line, were there one, is in too
      expect(rt.logLines().filter((l) => l.msg === `effect ${tag}`)).to.have.length(1);
      expect(await rt.logged((l) => l.service === 'acme.effectful' && l.msg === 'service moved to instance threads' && l.reason === 'over_budget')).to.equal(true);
      // Counted, and shown for every worker (one here).
      expect((await instances('acme/effectful')).placements).to.deep.equal({ 1: 'threads' });
      const metrics = await call(`${rt.url}/api/metrics`, { method: 'GET' });
      expect(metrics.text).to.match(/^rt_placement_changes_total\{service="acme\.effectful",to="threads",reason="over_budget"\} 1$/m);
    });
  });
});

describe('placement across workers (e2e)', function () {
  let rt: RtProcess;

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({ effectful: EFFECTFUL });
    rt = await RtProcess.start({ workers: 2, configToml: `repo_urls = ["file://${repo}"]` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('each worker places a service on its own evidence, and the listing from either shows every worker', async function () {
    this.timeout(60_000);
    // Past the inline budget in whichever worker takes it.
    const res = await invoke(rt, 'acme/effectful/invoke/work', { tag: 'placement', spins: 1_000_000 });
    expect(res.status).to.equal(200);
    const movedIn = res.headers.get('x-rt-worker')!;
    const other = movedIn === '1' ? '2' : '1';
    const expected = { [movedIn]: 'threads', [other]: 'inline' };
    // Each worker hears of the other's move from the primary: a listing may precede it by a few milliseconds.
    const answeredBy = new Set<string>();
    const seen: unknown[] = [];
    await eventually(
      async () => {
        // A connection of its own each time: the workers share the port, and either may accept it.
        const listing = await call(`${rt.url}/api/services/acme/effectful`, { method: 'GET', headers: { connection: 'close' } });
        const worker = listing.headers.get('x-rt-worker')!;
        const instances = listing.body.instances as { placement: string; placements: Record<string, string> };
        always(() => expect(instances.placement, `worker ${worker}'s own placement`).to.equal(worker === movedIn ? 'threads' : 'inline'));
        seen.push({ worker, placements: instances.placements });
        if (JSON.stringify(instances.placements) === JSON.stringify(Object.fromEntries(Object.entries(expected).sort()))) answeredBy.add(worker);
        expect([...answeredBy].sort(), JSON.stringify(seen.slice(-4))).to.deep.equal(['1', '2']);
      },
      { what: 'both workers to list both placements', timeoutMs: 10_000, intervalMs: 0 },
    );
  });
});
