// End to end: streaming methods (docs/api.md §5.1.1) through the real CLI, with
// a componentize-js component whose resources count their `next` calls
// (`stats`), and a WAT one whose destructor counts drops (componentize-js
// 0.18 gives exported resources no destructor). One worker and pool_size 1,
// so a counter meets the instance that served the stream, once the stream
// has let go of it.

import { expect } from 'chai';
import { WINDOW_BYTES } from '../../lib/worker/http/credited-writes.js';
import { eventually, letTimePass } from '../support/eventually.js';
import { repository } from '../support/fixtures.js';
import { call, invoke, RtProcess } from '../support/rt-process.js';
import { ndjson, openStream, sseEvents, type StreamedAnswer } from '../support/stream-client.js';
import { DROPS, STREAMS } from '../support/streaming-fixtures.js';
import { queuedBytes } from '../support/tcp-queues.js';

const REQUEST_TIMEOUT_S = 2;
const STREAM_TIMEOUT_S = 5;
const SSE = { accept: 'text/event-stream' };

describe('streaming methods (e2e)', function () {
  this.timeout(60_000);
  let rt: RtProcess;
  const url = (service: string, method: string) => `${rt.url}/api/services/acme/${service}/invoke/${method}`;
  const stream = (method: string, args: unknown, headers: Record<string, string> = {}, service = 'streams') => openStream(url(service, method), args, headers);
  const stats = async (service = 'streams') => (await invoke(rt, `acme/${service}/invoke/stats`)).body.result as { nexts: number; dropped: number };
  const reset = (service = 'streams') => invoke(rt, `acme/${service}/invoke/reset`);
  const dropped = async () => (await invoke(rt, 'acme/drops/invoke/dropped')).body.result as number;
  const live = async () => (await invoke(rt, 'acme/drops/invoke/live')).body.result as number;
  const metric = async (name: string, labels: string) => {
    const text = (await call(`${rt.url}/api/metrics`, { method: 'GET' })).text;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({
      streams: STREAMS,
      drops: DROPS,
      'held.wasm': STREAMS,
      'held.toml': { raw: 'service = "held"\n' },
      'pooled.wasm': STREAMS,
      'pooled.toml': { raw: 'service = "pooled"\npool_size = 2\n' },
      'typed.wasm': STREAMS,
      'typed.toml': { raw: 'service = "typed"\n[media_types]\nbytes = "video/mp2t"\n' },
    });
    rt = await RtProcess.start({
      workers: 1,
      configToml: `repo_urls = ["file://${repo}"]`,
      env: { RT__HTTP__REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_S), RT__HTTP__STREAM_TIMEOUT_SECONDS: String(STREAM_TIMEOUT_S) },
    });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  beforeEach(async () => {
    await reset();
  });

  describe('answers', () => {
    it('sends the headers at once and each item as it comes: the first arrives long before the last is made', async () => {
      const answer = await stream('count', { n: 5, 'delay-ms': 300 });
      expect(answer.status).to.equal(200);
      expect(answer.res.headers).to.include({ 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache', 'transfer-encoding': 'chunked' });
      expect(answer.headersAt, 'headers before the first item is made').to.be.below(250);
      const { complete, at } = await answer.ended;
      expect(complete).to.equal(true);
      expect(ndjson(answer.text())).to.deep.equal([0, 1, 2, 3, 4].map((seq) => ({ seq, text: `item ${seq}` })));
      // Five items 300 ms apart: the first is out ~1.2 s before the last is made.
      expect(at).to.be.at.least(1400);
      expect(answer.pieces[0].at, 'first item').to.be.below(at - 900);
      expect(answer.pieces.length, 'items went out one by one').to.be.at.least(5);
    });

    it('writes strings as UTF-8 text and list<u8> items as raw bytes, in the media type the sidecar declares', async () => {
      const words = await stream('words', { n: 3 });
      await words.ended;
      expect(words.res.headers['content-type']).to.equal('text/plain; charset=utf-8');
      // The component's text, never run as rt's origin (docs/api.md §5.6).
      expect(words.res.headers).to.include({ 'content-security-policy': 'sandbox allow-scripts allow-forms allow-popups allow-downloads', 'x-content-type-options': 'nosniff' });
      expect(words.text()).to.equal('word 0\nword 1\nword 2\n');

      const total = 1_000_000;
      for (const [service, type] of [
        ['streams', 'application/octet-stream'],
        ['typed', 'video/mp2t'],
      ] as const) {
        const bytes = await stream('bytes', { total, chunk: 16_384 }, {}, service);
        expect((await bytes.ended).complete).to.equal(true);
        expect(bytes.res.headers['content-type']).to.equal(type);
        const body = bytes.body();
        expect(body.length).to.equal(total);
        expect(body.every((b, i) => b === i % 251), 'the pattern, byte for byte').to.equal(true);
      }
    });

    it('sends Server-Sent Events to a client that accepts them', async () => {
      const answer = await stream('count', { n: 3, 'delay-ms': 0 }, SSE);
      expect((await answer.ended).complete).to.equal(true);
      expect(answer.res.headers['content-type']).to.equal('text/event-stream');
      expect(answer.text()).to.equal([0, 1, 2].map((seq) => `data: {"seq":${seq},"text":"item ${seq}"}\n\n`).join(''));
      const words = await stream('words', { n: 2 }, SSE);
      await words.ended;
      expect(sseEvents(words.text())).to.deep.equal([
        { event: 'message', data: 'word 0\n' },
        { event: 'message', data: 'word 1\n' },
      ]);
    });

    it('answers a stream that cannot start like any call: bad arguments 400, unknown method 404', async () => {
      const bad = await invoke(rt, 'acme/streams/invoke/count', { n: -1, 'delay-ms': 0 });
      expect(bad.status).to.equal(400);
      expect(bad.body.details).to.match(/^n: expected u32/);
      expect((await invoke(rt, 'acme/streams/invoke/nope', {})).status).to.equal(404);
    });
  });

  describe('a client that goes away', () => {
    it('ends the stream: next is called no more', async () => {
      const answer = await stream('count', { n: 1000, 'delay-ms': 20 });
      await eventually(() => answer.pieces.length >= 3, { what: 'three items', timeoutMs: 10_000, intervalMs: 10 });
      answer.close();
      // The instance is free again only once the stream let go of it: stats would wait for 20 s otherwise.
      const after = await stats();
      expect(after.nexts).to.be.within(3, 6);
      await letTimePass(300, 'a next made after the drop (one every 20 ms) would have shown in the count');
      expect((await stats()).nexts, 'no next after the drop').to.equal(after.nexts);
      expect(await rt.logged((l) => l.msg === 'request' && (l.stream as { outcome?: string } | undefined)?.outcome === 'client closed')).to.equal(true);
    });

    it('drops the resource: its destructor runs', async () => {
      const before = await dropped();
      const answer = await stream('start', { n: 1000, 'delay-ms': 20 }, {}, 'drops');
      await eventually(() => answer.pieces.length >= 2, { what: 'two items', timeoutMs: 10_000, intervalMs: 10 });
      answer.close();
      expect(await dropped()).to.equal(before + 1);
      expect(await live()).to.equal(0);
    });

    it('keeps a slow reader\'s stream within a bounded window: the worker does not buffer what the reader has not taken', async function () {
      const [worker] = rt.workerPids();
      // Its instance warmed by a stream read whole first: what grows then is what the stream holds.
      expect((await (await stream('bytes', { total: 16 * 1024 * 1024, chunk: 65_536 })).ended).complete).to.equal(true);
      const before = (await RtProcess.status(worker)).rssMiB;
      const nextsBefore = (await stats()).nexts;
      const bytesLabels = 'service="acme.streams",method="bytes"';
      const deliveredBefore = (await metric('rt_stream_bytes_total', bytesLabels)) ?? 0;
      // 512 MiB offered in 64 KiB items; the reader takes nothing for 3 s or more.
      const answer = await openStream(url('streams', 'bytes'), { total: 512 * 1024 * 1024, chunk: 65_536 }, {}, { paused: true });
      let peak = 0;
      let queued = -1;
      // 3 s at least, until the kernel's socket queues stand still: a closed TCP window reopens by a few KiB now and
      // then, letting rt make a little more, which the count of next calls below must not meet half-way.
      for (let i = 0; i < 30; i++) {
        await letTimePass(200, 'the reader takes nothing for 3 s, its worker sampled every 200 ms');
        peak = Math.max(peak, (await RtProcess.status(worker)).rssMiB);
        const now = await queuedBytes(rt.port);
        if (i >= 14 && now === queued) break;
        queued = now;
      }
      const client = answer.res.readableLength + (answer.res.socket?.readableLength ?? 0);
      // What the ring handed to the socket's writer, read while the stream stands still: all the thread published.
      const delivered = ((await metric('rt_stream_bytes_total', bytesLabels)) ?? 0) - deliveredBefore;
      answer.close();
      const nexts = (await stats()).nexts - nextsBefore;
      const made = nexts * 65_536;
      const held = delivered - queued - client;
      const mib = (n: number) => (n / 1_048_576).toFixed(1);
      console.log(
        `      worker RSS +${peak - before} MiB; ${mib(delivered)} MiB delivered to the socket's writer: ${mib(queued)} MiB in the kernel's socket queues, ` +
          `${client} bytes in the client, ${held} bytes held in rt's ring; ${nexts} next calls made ${mib(made)} MiB by the hang-up`,
      );
      // The kernel's socket queues autotune to MiBs (tcp_rmem, tcp_wmem). rt holds its window (the ring): measured
      // 0.4-0.99 MiB of a 1 MiB window.
      expect(held, 'bytes in rt that neither the kernel nor the client holds').to.be.at.most(WINDOW_BYTES);
      // Beyond what was delivered: the item partly in the ring, and what was made between the last look and the
      // hang-up. At the hang-up the kernel took what had waited in the socket (~1 MiB, in 1 run of 4), and the thread
      // refilled the ring before rt heard of it; it calls `next` no more once it has (the ring closes).
      expect(made - delivered, 'bytes made beyond what reached the socket').to.be.at.most(WINDOW_BYTES + 2 * 65_536);
      // The guest's own heap may keep every chunk it made (componentize-js's does until its GC: 6.4 MiB for 106 next
      // calls, read from the worker's smaps), and the threads' heaps move by some MiB: measured +6 to +26 MiB. rt's own
      // part is bounded at 20 MiB in streaming-chunks.test.ts, with a guest that allocates nothing. Here: 40 MiB, or
      // what the guest made and 20 more where the kernel's queues let it make more than 20.
      expect(peak - before, `worker RSS grew from ${before} to ${peak} MiB`).to.be.at.most(Math.max(40, Math.ceil(made / 1_048_576) + 20));
    });
  });

  describe('failures', () => {
    const truncatedAfter = async (answer: StreamedAnswer) => {
      const { complete } = await answer.ended;
      expect(complete, 'the body ends without its final chunk').to.equal(false);
      return answer.text();
    };

    it('an err from next cuts the body short after the items before it, and is logged', async () => {
      const text = await truncatedAfter(await stream('fail-after', { n: 2 }));
      expect(ndjson(text)).to.have.length(2);
      expect(await rt.logged((l) => l.msg === 'stream failed after its headers were sent' && l.details === 'failed after 2')).to.equal(true);
      const sse = await truncatedAfter(await stream('fail-after', { n: 2 }, SSE));
      const events = sseEvents(sse);
      expect(events.map((e) => e.event)).to.deep.equal(['message', 'message', 'error']);
      expect(events[2].data).to.include({ error: 'method returned an error', code: 'RT_ERR_METHOD_RETURNED_ERROR', details: 'failed after 2', service: 'acme.streams', method: 'fail-after' });
    });

    it('a trap in next cuts the body short; the next call gets a fresh instance', async () => {
      const events = sseEvents(await truncatedAfter(await stream('trap-after', { n: 1 }, SSE)));
      expect(events.map((e) => e.event)).to.deep.equal(['message', 'error']);
      expect(events[1].data).to.include({ error: 'component trapped', code: 'RT_ERR_COMPONENT_TRAPPED' });
      expect((await stats()).nexts, 'a fresh instance counts from 0').to.equal(0);
      const again = await stream('words', { n: 2 });
      expect((await again.ended).complete).to.equal(true);
      expect(again.text(), 'the whole body, not only its final chunk').to.equal('word 0\nword 1\n');
    });

    it('a next that runs past http.request_timeout_seconds is cut off; the service serves on', async () => {
      const answer = await stream('spin-after', { n: 2 }, SSE);
      const { at } = await answer.ended;
      const events = sseEvents(await truncatedAfter(answer));
      expect(events.map((e) => e.event)).to.deep.equal(['message', 'message', 'error']);
      expect(events[2].data).to.include({ error: 'call timed out', code: 'RT_ERR_CALL_TIMEOUT' });
      expect(at).to.be.within(REQUEST_TIMEOUT_S * 1000 - 100, REQUEST_TIMEOUT_S * 1000 + 2000);
      const again = await stream('words', { n: 1 });
      expect((await again.ended).complete).to.equal(true);
      expect(again.text()).to.equal('word 0\n');
    });

    it('a stream that lasts past http.stream_timeout_seconds is ended, its resource dropped', async function () {
      this.timeout(20_000);
      const before = await dropped();
      const answer = await stream('start', { n: 1000, 'delay-ms': 50 }, SSE, 'drops');
      const { at } = await answer.ended;
      const events = sseEvents(await truncatedAfter(answer));
      expect(events.at(-1)).to.deep.include({ event: 'error' });
      expect(events.at(-1)!.data).to.include({ error: 'stream timed out', code: 'RT_ERR_STREAM_TIMEOUT' });
      expect(events.length).to.be.within(40, 110);
      expect(at).to.be.within(STREAM_TIMEOUT_S * 1000 - 100, STREAM_TIMEOUT_S * 1000 + 1500);
      expect(await dropped()).to.equal(before + 1);
    });
  });

  describe('the service around a stream', () => {
    it('serves other calls meanwhile, from another instance of its pool', async () => {
      const answer = await stream('count', { n: 10, 'delay-ms': 100 }, {}, 'pooled');
      const started = performance.now();
      expect((await invoke(rt, 'acme/pooled/invoke/stats')).status).to.equal(200);
      expect(performance.now() - started).to.be.below(500);
      expect((await answer.ended).complete).to.equal(true);
      expect(ndjson(answer.text())).to.have.length(10);
    });

    it('counts streams in the metrics: open now, ended by outcome, items and bytes', async () => {
      const labels = 'service="acme.streams",method="words"';
      const completed = (await metric('rt_streams_total', `${labels},outcome="completed"`)) ?? 0;
      const items = (await metric('rt_stream_items_total', labels)) ?? 0;
      const open = await stream('count', { n: 10, 'delay-ms': 100 });
      expect(await metric('rt_streams_open', 'service="acme.streams",method="count"')).to.equal(1);
      await open.ended;
      const words = await stream('words', { n: 4 });
      await words.ended;
      expect(await metric('rt_streams_total', `${labels},outcome="completed"`)).to.equal(completed + 1);
      expect(await metric('rt_stream_items_total', labels)).to.equal(items + 4);
      expect(await metric('rt_stream_bytes_total', labels)).to.be.at.least(4 * 'word 0\n'.length);
      expect(await metric('rt_streams_open', 'service="acme.streams",method="count"')).to.equal(0);
    });

    it('quiesce waits for a running stream to end; a restart lets it finish on its old instance', async function () {
      this.timeout(30_000);
      const running = await stream('count', { n: 8, 'delay-ms': 100 }, {}, 'held');
      const restart = await call(`${rt.url}/api/services/acme/held/restart`);
      expect(restart.status).to.equal(200);
      expect((await running.ended).complete).to.equal(true);
      expect(ndjson(running.text())).to.have.length(8);

      const second = await stream('count', { n: 8, 'delay-ms': 100 }, {}, 'held');
      const quiesce = await call(`${rt.url}/api/services/acme/held/quiesce`, { method: 'PUT' });
      expect(quiesce.status).to.equal(200);
      expect(second.pieces.length, 'every item was out before quiesce answered').to.be.at.least(8);
      expect((await second.ended).complete).to.equal(true);
      expect(ndjson(second.text())).to.have.length(8);
      expect((await invoke(rt, 'acme/held/invoke/words', { n: 1 })).status).to.equal(503);
    });
  });

  describe('introspection', () => {
    it('marks streaming methods with their media types and item schema, in the listing, describe and OpenAPI', async () => {
      const described = (await call(`${rt.url}/api/services/acme/streams`, { method: 'GET' })).body.methods as Record<string, unknown>[];
      const count = described.find((m) => m.name === 'count')!;
      expect(count).to.include({ streaming: true, invocable: true });
      expect(count.media_types).to.deep.equal(['application/x-ndjson', 'text/event-stream']);
      expect(count.item_schema).to.have.property('type', 'object');
      expect(count).to.have.property('error_schema');
      expect(described.find((m) => m.name === 'words')).to.deep.include({ media_types: ['text/plain; charset=utf-8', 'text/event-stream'] });
      expect(described.find((m) => m.name === 'stats')).to.not.have.property('streaming');

      const listing = (await call(`${rt.url}/api/services`, { method: 'GET' })).body.services as { service: string; methods: Record<string, unknown>[] }[];
      const typed = listing.find((s) => s.service === 'typed')!.methods.find((m) => m.name === 'bytes');
      expect(typed).to.deep.include({ streaming: true, media_types: ['video/mp2t', 'text/event-stream'] });

      const openapi = (await call(`${rt.url}/api/openapi.json`, { method: 'GET' })).body as { paths: Record<string, { post: { responses: Record<string, { content: Record<string, unknown> }> } }> };
      const ok = openapi.paths['/api/services/acme/streams/invoke/count'].post.responses['200'];
      expect(Object.keys(ok.content)).to.deep.equal(['application/x-ndjson', 'text/event-stream']);
    });
  });
});
