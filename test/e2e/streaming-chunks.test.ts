// End to end: the WAT raw-bytes stream (CHUNKS, test/support/streaming-fixtures.ts)
// through the real CLI. Its `next` hands rt a slice of a pattern kept in
// linear memory; bench/streams.ts measures rt's stream path with it, so these
// check that what it streams is the same bytes as STREAMS's `bytes`: byte i
// is i % 251, in items of `chunk` bytes, the last one shorter.

import { expect } from 'chai';
import { repository } from '../support/fixtures.js';
import { letTimePass } from '../support/eventually.js';
import { RtProcess } from '../support/rt-process.js';
import { openStream } from '../support/stream-client.js';
import { CHUNKS } from '../support/streaming-fixtures.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/** The first index where `body` leaves the pattern, or -1. */
function offPattern(body: Buffer): number {
  for (let i = 0; i < body.length; i++) if (body[i] !== i % 251) return i;
  return -1;
}

describe('streaming raw bytes from WAT (e2e)', function () {
  this.timeout(30_000);
  let rt: RtProcess;

  before(async function () {
    this.timeout(120_000);
    const repo = await repository({ chunks: CHUNKS });
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  /** Streams bytes(total, chunk) and checks the answer: 200, octet-stream, the final chunk, exactly the pattern. */
  async function expectPattern(total: number, chunk: number): Promise<void> {
    const answer = await openStream(`${rt.url}/api/services/acme/chunks/invoke/bytes`, { total, chunk });
    expect(answer.status).to.equal(200);
    expect(answer.res.headers).to.include({ 'content-type': 'application/octet-stream', 'cache-control': 'no-cache', 'transfer-encoding': 'chunked' });
    expect((await answer.ended).complete, 'the body ends with its final chunk').to.equal(true);
    const body = answer.body();
    expect(body.length, `bytes of bytes(${total}, ${chunk})`).to.equal(total);
    expect(offPattern(body), `first byte off the pattern in bytes(${total}, ${chunk})`).to.equal(-1);
  }

  for (const chunk of [1 * KiB, 64 * KiB, 1 * MiB]) {
    it(`streams 3 MiB in ${chunk / KiB} KiB items, byte for byte the pattern`, async () => {
      await expectPattern(3 * MiB, chunk);
    });
  }

  it('streams a total that is not a multiple of the chunk (the last item shorter), and all in one item for chunk 0', async () => {
    await expectPattern(1_000_003, 65_536);
    await expectPattern(1_000_003, 0);
  });

  it('streams nothing, ended properly, for total 0', async () => {
    await expectPattern(0, 1024);
    await expectPattern(0, 0);
  });

  // Issue 25's bound on what a slow reader costs, with a guest that allocates nothing per item: what grows is rt's
  // (the ring; its items are read in place, no copy each). A componentize-js guest adds its own heap's growth for the
  // chunks it made (streaming.test.ts).
  it('costs the worker at most 20 MiB of RSS for a reader that takes nothing of a 512 MiB stream', async () => {
    const [worker] = rt.workerPids();
    await expectPattern(16 * MiB, 64 * KiB);
    const before = (await RtProcess.status(worker)).rssMiB;
    const answer = await openStream(`${rt.url}/api/services/acme/chunks/invoke/bytes`, { total: 512 * MiB, chunk: 64 * KiB }, {}, { paused: true });
    let peak = 0;
    for (let i = 0; i < 15; i++) {
      await letTimePass(200, 'the reader takes nothing for 3 s, its worker sampled every 200 ms');
      peak = Math.max(peak, (await RtProcess.status(worker)).rssMiB);
    }
    answer.close();
    console.log(`      worker RSS +${peak - before} MiB for a reader that took nothing of 512 MiB`);
    expect(peak - before, `worker RSS grew from ${before} to ${peak} MiB`).to.be.at.most(20);
  });
});
