// End to end: faults around the worker processes.
// A worker that is alive and draining is never killed for being slow; one
// that stops (SIGSTOP) is found by its missing heartbeats without any control
// call; and a primary that dies leaves its workers to finish what they run.

import { request } from 'node:http';
import { expect } from 'chai';
import { repository, RUNAWAY, SLOW } from '../support/fixtures.js';
import { eventually } from '../support/eventually.js';
import { cpuSeconds, isRunning } from '../support/processes.js';
import { RtProcess } from '../support/rt-process.js';
import { closeConnections, connectionsByWorker, sendOn } from '../support/worker-connections.js';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** One request on a connection of its own; a connection that breaks resolves with status 0 and the error. */
function fresh(rt: RtProcess, method: string, path: string, body?: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(`${rt.url}${path}`, { method, agent: false, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('error', (e) => resolve({ status: 0, body: { error: e.message } }));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', (e) => resolve({ status: 0, body: { error: e.message } }));
    req.end(body);
  });
}

const killedLine = (l: Record<string, unknown>) => typeof l.msg === 'string' && /replacing it|worker died/.test(l.msg);

describe('worker faults (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess | undefined;

  afterEach(async () => {
    await rt?.stop();
    rt = undefined;
  });

  it('a quiesce waits for calls queued behind long ones to end at their deadlines: no worker is killed, nothing else fails', async () => {
    const repo = await repository({ runaway: RUNAWAY, slow: SLOW });
    // One instance per worker: twenty calls that never end queue on each.
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, workers: 2, env: { RT__HTTP__REQUEST_TIMEOUT_SECONDS: '2' } });
    await rt.ready();
    const workers = rt.workerPids();
    // Twenty on each worker's own connections: forty fresh connections at once can all land on one worker.
    const byWorker = await connectionsByWorker(rt.url, 20);
    const calls = [...byWorker.values()].flat().map((agent) =>
      sendOn(agent, `${rt!.url}/api/services/acme/runaway/invoke/forever`, 'POST').then(
        (a): Answer => ({ status: a.status, body: JSON.parse(a.body) as Record<string, unknown> }),
        (e: unknown): Answer => ({ status: 0, body: { error: String(e) } }),
      ),
    );
    // An unrelated service under steady load while the other one drains.
    let loading = true;
    const unrelated: Answer[] = [];
    const load = (async () => {
      while (loading) unrelated.push(await fresh(rt, 'POST', '/api/services/acme/slow/invoke/spin', '{"n": 1000}'));
    })();
    // Under way once each worker runs a call that never ends (its first, cut
    // short inline, moves the service to its thread, where the others queue)
    // and the load is being answered.
    const movedIn = () => new Set(rt!.logLines().filter((l) => l.service === 'acme.runaway' && l.msg === 'service moved to instance threads').map((l) => l.worker));
    await eventually(() => movedIn().size === 2 && unrelated.length > 0, { what: 'both workers to run a call that never ends, and the load to be answered', timeoutMs: 20_000 });
    const quiesce = await fresh(rt, 'PUT', '/api/services/acme/runaway/quiesce');
    loading = false;
    await load;
    expect(quiesce).to.deep.equal({ status: 200, body: { status: 'quiesced', service: 'acme.runaway' } });
    const answers = await Promise.all(calls);
    closeConnections(byWorker);
    // A call in before the quiesce ends at its deadline (504); one that arrived
    // after it (a loaded machine is slow to send forty) is refused (503). Nothing else.
    const drained = answers.filter((a) => a.status === 504).length;
    expect(answers.filter((a) => a.status !== 504 && !(a.status === 503 && a.body.error === 'service quiesced'))).to.deep.equal([]);
    expect(drained).to.be.at.least(2);
    expect(unrelated.length).to.be.greaterThan(10);
    expect(unrelated.filter((a) => a.status !== 200)).to.deep.equal([]);
    expect(rt.workerPids()).to.deep.equal(workers);
    expect(rt.logLines().some(killedLine)).to.equal(false);
  });

  it('a stopped worker is found by its missing heartbeats and replaced, with no control call to notice it', async () => {
    const repo = await repository({ slow: SLOW });
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, workers: 2 });
    await rt.ready();
    const [stopped, other] = rt.workerPids();
    const stoppedAt = performance.now();
    process.kill(stopped, 'SIGSTOP');
    try {
      expect(await rt.logged((l) => typeof l.msg === 'string' && l.msg.includes('sent no heartbeat'), 20_000)).to.equal(true);
    } finally {
      try {
        process.kill(stopped, 'SIGCONT');
      } catch {
        // already gone
      }
    }
    // runtime.heartbeat_timeout_seconds (default 5 s), checked every 0.5 s.
    expect(performance.now() - stoppedAt).to.be.within(4_500, 12_000);
    await eventually(() => expect(rt!.workerPids()).to.have.length(2).and.include(other).and.not.include(stopped), { what: 'the stopped worker to be replaced', timeoutMs: 30_000, intervalMs: 100 });
  });

  it('a primary that dies lets its workers finish the calls in flight, then they exit', async () => {
    const repo = await repository({ slow: SLOW });
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, workers: 1 });
    await rt.ready();
    const [worker] = rt.workerPids();
    // A call of about 2.5 s on this machine: spin counts up to n (a u32).
    let n = 10_000_000;
    for (;;) {
      const started = performance.now();
      expect((await fresh(rt, 'POST', '/api/services/acme/slow/invoke/spin', JSON.stringify({ n }))).status).to.equal(200);
      const ms = performance.now() - started;
      if (ms >= 400 || n === 0xffff_ffff) {
        n = Math.min(0xffff_ffff, Math.round((n * 2_500) / ms));
        break;
      }
      n = Math.min(0xffff_ffff, n * 4);
    }
    const idle = await cpuSeconds(worker);
    const started = performance.now();
    const call = fresh(rt, 'POST', '/api/services/acme/slow/invoke/spin', JSON.stringify({ n }));
    // Into the call (about 2.5 s): it is running on the worker when the primary
    // goes. Its spinning is the worker's CPU time: a quarter of a second of it.
    await eventually(async () => (await cpuSeconds(worker)) - idle >= 0.25, { what: 'the call to be running on the worker', timeoutMs: 10_000 });
    process.kill(rt.child.pid!, 'SIGKILL');
    try {
      expect(await call).to.deep.equal({ status: 200, body: { result: n } });
      expect(performance.now() - started).to.be.greaterThan(1_000);
      // Then it goes on its own, without a primary to tell it to.
      await eventually(() => expect(isRunning(worker)).to.equal(false), { what: 'the worker to exit', timeoutMs: 20_000, intervalMs: 100 });
    } finally {
      if (isRunning(worker)) process.kill(worker, 'SIGKILL');
    }
  });
});
