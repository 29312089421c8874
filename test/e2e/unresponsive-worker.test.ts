// End to end: the primary never waits forever on a worker (docs/api.md §1). A worker that stops answering (SIGSTOP here) is killed and
// replaced once its heartbeats stop, a control operation waiting on it goes
// on without it, and its replacement comes up in the state the operation left.

import { request } from 'node:http';
import { expect } from 'chai';
import { always, eventually, StopWaiting } from '../support/eventually.js';
import { repository, SLOW } from '../support/fixtures.js';
import { RtProcess } from '../support/rt-process.js';

const TIMEOUT_S = 2;
/** Shorter than the default 5 s, so the test waits less; worker-faults.test.ts keeps the default. */
const HEARTBEAT_TIMEOUT_S = 2;

/** One request on a connection of its own: a pooled connection may belong to the stopped worker. */
function fresh(rt: RtProcess, method: string, path: string, body?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${rt.url}${path}`, { method, agent: false, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('a worker that does not answer (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;

  after(async () => {
    await rt?.stop();
  });

  it('is replaced rather than waited on: a quiesce answers once its heartbeats are missed, and the replacement comes up quiesced', async () => {
    const repo = await repository({ slow: SLOW });
    rt = await RtProcess.start({
      configToml: `repo_urls = ["file://${repo}"]`,
      env: { RT__HTTP__REQUEST_TIMEOUT_SECONDS: String(TIMEOUT_S), RT__RUNTIME__HEARTBEAT_TIMEOUT_SECONDS: String(HEARTBEAT_TIMEOUT_S) },
    });
    await rt.ready();
    const [stopped] = rt.workerPids();
    process.kill(stopped, 'SIGSTOP');
    let elapsed: number;
    try {
      const started = performance.now();
      const res = await fresh(rt, 'PUT', '/api/services/acme/slow/quiesce');
      elapsed = performance.now() - started;
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'quiesced', service: 'acme.slow' });
    } finally {
      try {
        process.kill(stopped, 'SIGCONT');
      } catch {
        // already gone: killed by the primary
      }
    }
    // Not the quiesce's own bound (it has none): the stopped worker's heartbeats, missing for runtime.heartbeat_timeout_seconds.
    expect(elapsed).to.be.within(HEARTBEAT_TIMEOUT_S * 1000 - 500, HEARTBEAT_TIMEOUT_S * 1000 + 5_000);
    expect(await rt.logged((l) => typeof l.msg === 'string' && l.msg.includes('sent no heartbeat') && l.msg.includes('replacing it'))).to.equal(true);

    await eventually(() => expect(rt.workerPids()).to.have.length(2).and.not.include(stopped), { what: 'the stopped worker to be replaced', timeoutMs: 30_000, intervalMs: 200 });
    // Once the replacement has loaded (until then it answers "not ready"),
    // every worker refuses calls to the quiesced service.
    let inARow = 0;
    await eventually(
      async () => {
        const res = await fresh(rt, 'POST', '/api/services/acme/slow/invoke/spin', '{"n": 1}').catch((e: unknown) => {
          throw new StopWaiting(e);
        });
        always(() => expect(res.status).to.equal(503));
        if (res.body.error === 'service quiesced') inARow++;
        else if (res.body.error === 'not ready') inARow = 0;
        else always(() => expect.fail(`unexpected answer ${JSON.stringify(res.body)}`));
        return inARow === 12;
      },
      { what: '12 refusals in a row for the quiesced service', timeoutMs: 30_000, intervalMs: 0 },
    );
  });
});
