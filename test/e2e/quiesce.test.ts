// End to end: a quiesce that waits for a stream to drain holds nothing else
// (docs/api.md §5.3): a restart and a reload of other services answer as if no
// quiesce were in progress, while the quiesce itself answers once the stream
// has ended (once, they waited for it, up to http.stream_timeout_seconds).

import { expect } from 'chai';
import { SLOW, repository } from '../support/fixtures.js';
import { call, invoke, RtProcess } from '../support/rt-process.js';
import { openStream } from '../support/stream-client.js';
import { DROPS } from '../support/streaming-fixtures.js';

/** Long enough that an operation held by the drain is plainly held; the stream is ended by its client before. */
const STREAM_TIMEOUT_SECONDS = 40;
/** What a restart or a reload may take while a quiesce drains: a second, or twice what it took with none, on a busy machine. */
const bound = (alone: number) => Math.max(1_000, 2 * alone);

describe('quiesce while a stream drains (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({ drops: DROPS, slow: SLOW });
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, workers: 2, env: { RT__HTTP__STREAM_TIMEOUT_SECONDS: String(STREAM_TIMEOUT_SECONDS) } });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  /** Sends a control request; its status and how long it took (ms). */
  async function timed(method: string, path: string): Promise<{ status: number; ms: number }> {
    const started = performance.now();
    const res = await call(`${rt.url}/api${path}`, { method });
    return { status: res.status, ms: performance.now() - started };
  }

  it('answers a restart and a reload of other services at once, and the quiesce once the stream has ended', async () => {
    const alone = { restart: await timed('POST', '/services/acme/slow/restart'), reload: await timed('POST', '/reload') };
    expect([alone.restart.status, alone.reload.status]).to.deep.equal([200, 200]);

    // A client that never reads: the stream holds its instance until the client leaves (or its deadline).
    const stream = await openStream(`${rt.url}/api/services/acme/drops/invoke/start`, { n: 1_000_000_000, 'delay-ms': 0 }, {}, { paused: true });
    expect(stream.status).to.equal(200);
    let quiesced: number | undefined;
    const quiesce = timed('PUT', '/services/acme/drops/quiesce').then((answer) => ((quiesced = performance.now()), answer));
    // Quiescing now: new calls to the service are refused.
    for (let refused = false; !refused; ) refused = (await invoke(rt, 'acme/drops/invoke/live')).status === 503;

    const restart = await timed('POST', '/services/acme/slow/restart');
    const reload = await timed('POST', '/reload');
    expect(restart.status).to.equal(200);
    expect(reload.status).to.equal(200);
    expect(restart.ms, `restart (${Math.round(alone.restart.ms)} ms with no quiesce)`).to.be.below(bound(alone.restart.ms));
    expect(reload.ms, `reload (${Math.round(alone.reload.ms)} ms with no quiesce)`).to.be.below(bound(alone.reload.ms));
    expect((await invoke(rt, 'acme/slow/invoke/spin', { n: 10 })).body).to.deep.equal({ result: 10 });
    expect(quiesced, 'the quiesce answered before its stream ended').to.equal(undefined);

    const closed = performance.now();
    stream.close();
    const answer = await quiesce;
    expect(answer.status).to.equal(200);
    expect(quiesced! - closed, 'the quiesce answered once the stream ended').to.be.below(10_000);
  });
});
