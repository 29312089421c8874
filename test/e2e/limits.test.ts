// End to end: big request bodies neither hold a worker's main thread nor take
// its memory. JSON bodies over 64 KiB are parsed and decoded
// on the instance thread that makes the call, and instance threads have a JS
// heap limit (runtime.max_thread_heap_mb). One worker, so the health probes
// and the calls share one event loop.

import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import { letTimePass } from '../support/eventually.js';
import { NESTED, repository } from '../support/fixtures.js';
import { call, RtProcess, type JsonResponse } from '../support/rt-process.js';
import { DROPS } from '../support/streaming-fixtures.js';

const MB = 1_000_000;

/** `{"x": [item, item, ...]}` of about `bytes` bytes, and how many items it holds. */
function body(item: string, bytes: number): { text: string; items: number } {
  const items = Math.floor((bytes - 8) / (item.length + 1));
  return { text: `{"x":[${new Array<string>(items).fill(item).join(',')}]}`, items };
}

function post(rt: RtProcess, path: string, text: string): Promise<JsonResponse> {
  return call(`${rt.url}/api/services/acme/${path}`, { body: text, contentType: 'application/json' });
}

/** Runs `work` while taking `sample()` every `everyMs`; its result, and the largest sample. */
async function largestDuring<T>(work: Promise<T>, sample: () => Promise<number>, everyMs: number): Promise<{ result: T; largest: number }> {
  let done = false;
  let largest = 0;
  const sampling = (async () => {
    while (!done) {
      largest = Math.max(largest, await sample());
      await letTimePass(everyMs, 'the pace of the samples');
    }
  })();
  try {
    await work;
  } finally {
    done = true;
    // The sample in flight counts too: a probe held up by a blocked worker ends after the work.
    await sampling;
  }
  return { result: await work, largest };
}

/** How long /api/health takes to answer, in ms. */
async function healthMs(rt: RtProcess): Promise<number> {
  const started = performance.now();
  await fetch(`${rt.url}/api/health`).then((r) => r.text());
  return performance.now() - started;
}

describe('limits: big request bodies (e2e)', function () {
  this.timeout(300_000);
  let rt: RtProcess;
  let repo: string;

  before(async function () {
    repo = await repository({
      nested: NESTED,
      'pooled.wasm': NESTED,
      'pooled.toml': { raw: 'service = "pooled"\npool_size = 2\n' },
      drops: DROPS,
    });
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]`, env: { RT__LOG__REQUESTS: 'false' } });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
    for (const dir of [rt?.cwd, repo]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the worker answers its health check at once while big nested bodies are decoded', async () => {
    // The reporter's shape: a 3.5 MB body held the main thread for 2.6 s (3.1 s here; two 6.9 MB bodies 5.4 s).
    const { text, items } = body('[1]', 6.9 * MB);
    const calls = Promise.all([post(rt, 'nested/invoke/lists', text), post(rt, 'nested/invoke/lists', text)]);
    const { result, largest } = await largestDuring(calls, () => healthMs(rt), 20);
    for (const res of result) expect(res.body, res.text.slice(0, 300)).to.deep.equal({ result: items });
    expect(largest, 'slowest /api/health answer (ms)').to.be.below(1_000);
    // It ran inline until then: the body was decoded on an instance thread instead.
    const moved = await rt.logged((l) => l.service === 'acme.nested' && l.msg === 'service moved to instance threads' && l.reason === 'large_body' && /JSON body of \d+ bytes/.test(String(l.detail)));
    expect(moved, 'the move is logged with its reason').to.equal(true);
  });

  it('concurrent big bodies leave the worker within a bounded memory', async () => {
    // The reporter's load: 4 concurrent 6.9 MB bodies took a worker from 1.8 GB to 5.1 GB (4.5 GB here, and 3 of them timed out).
    const { text, items } = body('[[1]]', 6.9 * MB);
    const [pid] = rt.workerPids();
    const calls = Promise.all(Array.from({ length: 4 }, () => post(rt, 'pooled/invoke/lists3', text)));
    const { result, largest } = await largestDuring(calls, async () => (await RtProcess.status(pid)).rssMiB, 25);
    for (const res of result) expect(res.body, res.text.slice(0, 300)).to.deep.equal({ result: items });
    expect(largest, 'largest worker RSS (MiB)').to.be.below(3_000);
  });

  it('a large body that is not JSON, or does not fit the signature, answers 400 naming why', async () => {
    const { text } = body('[1]', 200_000);
    const broken = await post(rt, 'pooled/invoke/lists', text.slice(0, -2));
    expect(broken.status).to.equal(400);
    expect(broken.body).to.include({ error: 'invalid JSON', code: 'RT_ERR_INVALID_JSON', service: 'acme.pooled', method: 'lists' });
    const wrong = await post(rt, 'pooled/invoke/lists', text.replace(/\[1\]\]\}$/, '[-1]]}'));
    expect(wrong.status).to.equal(400);
    expect(wrong.body).to.include({ error: 'invalid arguments', code: 'RT_ERR_INVALID_ARGUMENTS', service: 'acme.pooled', method: 'lists' });
    expect(wrong.body.details).to.match(/^x\[\d{5}\]\[0\]: expected u32 \(0\.\.4294967295\), got -1$/);
    expect((await post(rt, 'pooled/invoke/ok', '')).body).to.deep.equal({ result: 1 });
  });

  it('a streaming method takes a large body too', async () => {
    // Valid JSON padded with whitespace past 64 KiB: decoded on the thread that opens the stream.
    const res = await fetch(`${rt.url}/api/services/acme/drops/invoke/start`, {
      method: 'POST',
      body: `{"n": 3, ${' '.repeat(100_000)}"delay-ms": 0}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal('0\n1\n2\n');
  });
});

describe('limits: the JS heap of instance threads (e2e)', function () {
  this.timeout(300_000);
  let rt: RtProcess;

  let repo: string;

  before(async function () {
    repo = await repository({ 'pooled.wasm': NESTED, 'pooled.toml': { raw: 'service = "pooled"\npool_size = 2\n' } });
    rt = await RtProcess.start({
      workers: 1,
      configToml: `repo_urls = ["file://${repo}"]`,
      env: { RT__LOG__REQUESTS: 'false', RT__RUNTIME__MAX_THREAD_HEAP_MB: '64' },
    });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
    for (const dir of [rt?.cwd, repo]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a thread past its heap limit answers its call 500, and the service keeps serving the others', async () => {
    const { text } = body('[1]', 3.5 * MB);
    const big = post(rt, 'pooled/invoke/lists', text);
    // Calls made meanwhile are all answered.
    const small: Promise<JsonResponse>[] = [];
    for (let i = 0; i < 20; i++) {
      small.push(post(rt, 'pooled/invoke/ok', ''));
      await letTimePass(25, 'the small calls are spread over the big one');
    }
    const lost = await big;
    expect(lost.status, lost.text.slice(0, 300)).to.equal(500);
    expect(lost.body).to.include({ error: 'instance lost', code: 'RT_ERR_INSTANCE_LOST', service: 'acme.pooled', method: 'lists' });
    expect(lost.body.details).to.equal('the instance was lost: its thread reached its JS heap limit (runtime.max_thread_heap_mb: 64 MiB) during this call');
    for (const res of await Promise.all(small)) expect(res.body).to.deep.equal({ result: 1 });
    // A fresh thread took the lost one's place.
    expect((await post(rt, 'pooled/invoke/ok', '')).body).to.deep.equal({ result: 1 });
    const listing = (await call(`${rt.url}/api/services/acme/pooled`, { method: 'GET' })).body as { instances: { live: number } };
    expect(listing.instances.live).to.equal(2);
  });
});
