// End to end: what rt does with the Node.js it runs on (lib/platform.ts). A
// WASI 0.3 component needs JSPI: on a Node without it (22) it is listed as
// failed with the Node line it needs, and the start-up log says once what is
// unavailable; on a Node with it (24, 26) neither happens, and its async
// functions are served as methods (docs/api.md §5.9). Every other component
// loads either way. CI runs this file on Node 26 and on Node 22.

import { expect } from 'chai';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { hasJspi } from '../../lib/platform.js';
import { buildComponent } from '../../examples/builder.js';
import { examples } from '../../examples/index.js';
import { asyncBodies, P3_HOST, P3_PRODUCER, P3_SLEEPER, P3_SPEAKER, asyncCalls, asyncStreams } from '../support/async-components.js';
import { eventually, letTimePass } from '../support/eventually.js';
import { FAULTY, repository } from '../support/fixtures.js';
import { call, duplexExchange, invoke, openDuplex, RtProcess } from '../support/rt-process.js';
import { ndjson, openStream, sseEvents } from '../support/stream-client.js';

/** http.max_body_bytes here: a stream<u8> parameter's body is held to it as any body. */
const MAX_BODY_BYTES = 8 * 2 ** 20;

/** 32-bit FNV-1a of `bytes`, from `seed`: what p3-body's digest answers. */
function fnv1a(bytes: Uint8Array, seed: number): number {
  let h = seed >>> 0;
  for (const byte of bytes) h = Math.imul(h ^ byte, 16777619) >>> 0;
  return h;
}

/** POSTs `pieces` to `url` as a chunked body, `pauseMs` apart; the answer's status and JSON body. */
function postPieces(url: string, pieces: Uint8Array[], options: { pauseMs?: number; headers?: Record<string, string>; agent?: Agent } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...options.headers }, ...(options.agent ? { agent: options.agent } : {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    void (async () => {
      for (const piece of pieces) {
        req.write(piece);
        if (options.pauseMs) await letTimePass(options.pauseMs, 'the body arrives in pieces, as from a slow client');
      }
      req.end();
    })();
  });
}

interface Listing {
  services: { domain: string; service: string }[];
  failed: { source: string; error: string }[];
}

describe(`rt on this Node.js (${process.versions.node}, JSPI ${hasJspi ? 'present' : 'absent'}) (e2e)`, function () {
  this.timeout(120_000);
  let rt: RtProcess | undefined;
  let repo: string;

  before(async () => {
    const primes = await buildComponent(await examples.find((e) => e.name === 'primes')!.source());
    repo = await repository({ faulty: FAULTY, 'p3.wasm': { raw: await asyncCalls() }, 'p3-streams.wasm': { raw: await asyncStreams() }, 'primes.wasm': { raw: primes }, 'p3-body.wasm': { raw: await asyncBodies() }, 'p3-host': P3_HOST, 'p3-host.toml': { raw: '[env]\nGREETING = "hello"\n' }, ...(hasJspi ? { 'p3-producer': P3_PRODUCER, 'p3-sleeper': P3_SLEEPER, 'p3-speaker': P3_SPEAKER, 'p3-pair': P3_SLEEPER, 'p3-pair.toml': { raw: 'max_concurrency = 2\nmax_instances = 2\n' }, 'p3-below': P3_SLEEPER, 'p3-below.toml': { raw: 'pool_size = 3\nmax_instances = 2\n' } } : {}) });
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n[http]\nrequest_timeout_seconds = 2\nmax_body_bytes = ${MAX_BODY_BYTES}\n` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('serves the components that need nothing the Node lacks', async () => {
    const res = await invoke(rt!, 'acme/faulty/invoke/ok');
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ result: 7 });
  });

  if (hasJspi) {
    it('calls async functions (WASI 0.3) as methods: each answer is what its task returned, a future result what the future resolves to, a future parameter written as its value', async () => {
      expect((await invoke(rt!, 'acme/p3/invoke/answer')).body).to.deep.equal({ result: 42 });
      const echoed = await invoke(rt!, 'acme/p3/invoke/echo', { s: 'héllo, wörld' });
      expect(echoed.status, echoed.text).to.equal(200);
      expect(echoed.body).to.deep.equal({ result: 'héllo, wörld' });
      expect((await invoke(rt!, 'acme/p3/invoke/plain')).body).to.deep.equal({ result: 2 });
      expect((await invoke(rt!, 'acme/p3/invoke/later')).body).to.deep.equal({ result: 42 });
      // A future<u32> result is answered as the u32 it resolves to; a future<u32> parameter is written as the u32 it gives.
      expect((await invoke(rt!, 'acme/p3/invoke/promised')).body).to.deep.equal({ result: 7 });
      expect((await invoke(rt!, 'acme/p3/invoke/wait', { v: 41 })).body).to.deep.equal({ result: 42 });
      expect((await invoke(rt!, 'acme/p3/invoke/wait', [1])).body).to.deep.equal({ result: 2 });
      const bad = await invoke(rt!, 'acme/p3/invoke/wait', { v: -1 });
      expect(bad.status, bad.text).to.equal(400);
      expect(bad.body).to.include({ code: 'RT_ERR_INVALID_ARGUMENTS' });
      // Two at once: one instance thread takes them one after another.
      const both = await Promise.all([invoke(rt!, 'acme/p3/invoke/echo', { s: 'a' }), invoke(rt!, 'acme/p3/invoke/echo', { s: 'b' })]);
      expect(both.map((r) => r.body)).to.deep.equal([{ result: 'a' }, { result: 'b' }]);
    });

    it('answers a task that can never go on with a trap, and serves the next call on a fresh instance', async () => {
      const stuck = await invoke(rt!, 'acme/p3/invoke/stuck');
      expect(stuck.status, stuck.text).to.equal(500);
      expect(stuck.body).to.include({ code: 'RT_ERR_COMPONENT_TRAPPED' });
      expect(String(stuck.body.details)).to.include('deadlock detected');
      expect((await invoke(rt!, 'acme/p3/invoke/answer')).body).to.deep.equal({ result: 42 });
    });

    it('cuts off a task that never returns at the request timeout (504), and serves the next call on a fresh thread', async () => {
      const started = Date.now();
      const spun = await invoke(rt!, 'acme/p3/invoke/spin');
      expect(spun.status, spun.text).to.equal(504);
      expect(spun.body).to.include({ code: 'RT_ERR_CALL_TIMEOUT' });
      expect(Date.now() - started).to.be.within(1_500, 10_000);
      expect((await invoke(rt!, 'acme/p3/invoke/answer')).body).to.deep.equal({ result: 42 });
    });

    it('lists async functions with their WIT signatures, invocable, and runs the service on instance threads', async () => {
      const described = (await call(`${rt!.url}/api/services/acme/p3`, { method: 'GET' })).body as unknown as { methods: { name: string; signature: string; invocable: boolean }[]; instances: { placement: string } };
      const signatures = Object.fromEntries(described.methods.map((m) => [m.name, [m.signature, m.invocable]]));
      expect(signatures).to.deep.equal({ answer: ['async func() -> u32', true], echo: ['async func(s: string) -> string', true], stuck: ['async func() -> u32', true], plain: ['func() -> u32', true], promised: ['async func() -> future<u32>', true], spin: ['async func() -> u32', true], wait: ['async func(v: future<u32>) -> u32', true], later: ['async func() -> u32', true] });
      expect(described.instances.placement).to.equal('threads');
      // The OpenAPI document answers a future<u32> result as a u32.
      const openapi = (await call(`${rt!.url}/api/openapi.json`, { method: 'GET' })).body as unknown as { paths: Record<string, { post: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }> };
      const promised = Object.entries(openapi.paths).find(([path]) => path.endsWith('/invoke/promised'))![1];
      expect(promised.post.responses['200'].content['application/json'].schema).to.deep.include({ properties: { result: { type: 'integer', minimum: 0, maximum: 4294967295 } } });
      // ... and a future<u32> parameter as a u32.
      const wait = Object.entries(openapi.paths).find(([path]) => path.endsWith('/invoke/wait'))![1] as unknown as { post: { requestBody: { content: Record<string, { schema: { oneOf: { properties?: unknown }[] } }> } } };
      expect(wait.post.requestBody.content['application/json'].schema.oneOf[0].properties).to.deep.equal({ v: { type: 'integer', minimum: 0, maximum: 4294967295 } });
    });
  }

  if (hasJspi) {
    describe('stream<T> results (WASI 0.3)', () => {
      const stream = (method: string, args: unknown, headers: Record<string, string> = {}) => openStream(`${rt!.url}/api/services/default/p3-streams/invoke/${method}`, args, headers);

      it('answers a stream<u32> as NDJSON, item by item as the guest writes them, whole', async () => {
        const answer = await stream('numbers', { count: 600 });
        expect(answer.status).to.equal(200);
        expect(answer.res.headers['content-type']).to.equal('application/x-ndjson');
        expect((await answer.ended).complete).to.equal(true);
        expect(ndjson(answer.text())).to.deep.equal(Array.from({ length: 600 }, (_, i) => i));
      });

      it('answers a stream<u8> as its raw bytes, every one in order', async () => {
        const size = 3 * 2 ** 20 + 7;
        const answer = await stream('bytes', { count: size });
        expect(answer.res.headers['content-type']).to.equal('application/octet-stream');
        expect((await answer.ended).complete).to.equal(true);
        const body = answer.body();
        expect(body.length).to.equal(size);
        const wrong = body.findIndex((byte, i) => byte !== (i & 255));
        expect(wrong, `byte ${wrong} is ${body[wrong]}`).to.equal(-1);
      });

      it('sends Server-Sent Events to a client that accepts them', async () => {
        const answer = await stream('numbers', { count: 3 }, { accept: 'text/event-stream' });
        expect((await answer.ended).complete).to.equal(true);
        expect(sseEvents(answer.text())).to.deep.equal([0, 1, 2].map((n) => ({ event: 'message', data: n })));
      });

      it('cuts the body short when the guest traps while it writes, with the trap as the last event; the next call gets a fresh instance', async () => {
        const answer = await stream('broken', { count: 300 }, { accept: 'text/event-stream' });
        const { complete } = await answer.ended;
        expect(complete, 'the body ends without its final chunk').to.equal(false);
        const events = sseEvents(answer.text());
        expect(events.at(-1)!.data).to.include({ error: 'component trapped', code: 'RT_ERR_COMPONENT_TRAPPED', service: 'default.p3-streams', method: 'broken' });
        expect(events.slice(0, -1).every((e) => e.event === 'message')).to.equal(true);
        const next = await stream('numbers', { count: 2 });
        expect((await next.ended).complete).to.equal(true);
        expect(ndjson(next.text())).to.deep.equal([0, 1]);
      });

      it('drops the stream when the client goes away: the guest finds its reader gone, and the service serves on', async () => {
        const before = (await invoke(rt!, 'default/p3-streams/invoke/drops')).body.result as number;
        const answer = await stream('bytes', { count: 4_000_000_000 });
        await eventually(() => answer.pieces.length >= 3, { what: 'three pieces of the stream', timeoutMs: 10_000, intervalMs: 10 });
        answer.close();
        // drops runs on the instance the stream held once it let go of it; the guest's next write then finds the stream dropped.
        await eventually(async () => expect((await invoke(rt!, 'default/p3-streams/invoke/drops')).body.result).to.equal(before + 1), { what: 'the guest to see its stream dropped', timeoutMs: 10_000, intervalMs: 50 });
        expect(await rt!.logged((l) => l.msg === 'request' && (l.stream as { outcome?: string } | undefined)?.outcome === 'client closed')).to.equal(true);
        const next = await stream('numbers', { count: 2 });
        expect(ndjson(next.text() || (await next.ended, next.text()))).to.deep.equal([0, 1]);
      });

      it('serves the primes example (component WAT by hand): is-prime awaited; the first 20,000 primes in order, each once, to a reader that takes them at once and to one that pauses', async () => {
        const answers = await Promise.all([4_294_967_291, 4_294_967_295, 1, 104_729].map((n) => invoke(rt!, 'example/primes/invoke/is-prime', { n })));
        expect(answers.map((a) => a.body.result)).to.deep.equal([true, false, false, true]);
        const sieve = new Uint8Array(230_000);
        const expected: number[] = [];
        for (let i = 2; expected.length < 20_000; i++) {
          if (sieve[i]) continue;
          expected.push(i);
          for (let j = i * i; j < sieve.length; j += i) sieve[j] = 1;
        }
        const url = `${rt!.url}/api/services/example/primes/invoke/primes`;
        const eager = await openStream(url, { count: 20_000 });
        const paused = await openStream(url, { count: 20_000 }, {}, { paused: true });
        // The paused reader takes nothing for a while: the guest's writes wait, then go on where they stopped.
        await letTimePass(300, 'the paused reader takes nothing for a while');
        paused.res.on('data', (bytes: Buffer) => paused.pieces.push({ at: 0, bytes }));
        for (const answer of [eager, paused]) {
          expect((await answer.ended).complete).to.equal(true);
          expect(ndjson(answer.text())).to.deep.equal(expected);
        }
      });

      it('lists a stream<T> method as streaming, with its WIT signature, media types and item schema', async () => {
        const described = (await call(`${rt!.url}/api/services/default/p3-streams`, { method: 'GET' })).body as unknown as { methods: Record<string, unknown>[] };
        const byName = new Map(described.methods.map((m) => [m.name, m]));
        expect(byName.get('numbers')).to.deep.include({ signature: 'async func(count: u32) -> stream<u32>', invocable: true, streaming: true, media_types: ['application/x-ndjson', 'text/event-stream'] });
        expect(byName.get('bytes')).to.deep.include({ signature: 'async func(count: u32) -> stream<u8>', streaming: true, media_types: ['application/octet-stream', 'text/event-stream'] });
        expect(byName.get('numbers')!.item_schema).to.deep.include({ type: 'integer', minimum: 0, maximum: 4294967295 });
      });
    });
  }

  if (hasJspi) {
    describe("a toolchain's async functions on rt's own host (WASI 0.3)", () => {
      const url = (method: string, query = '') => `${rt!.url}/api/services/default/p3-producer/invoke/${method}${query}`;

      it('answers a stream<u8> as its raw bytes and a stream<u32> as NDJSON, whole and in order', async () => {
        const size = 3 * 2 ** 20 + 7;
        const bytes = await openStream(url('bytes'), { count: size });
        expect(bytes.res.headers['content-type']).to.equal('application/octet-stream');
        expect((await bytes.ended).complete).to.equal(true);
        const body = bytes.body();
        expect(body.length).to.equal(size);
        const wrong = body.findIndex((byte, i) => byte !== (i & 255));
        expect(wrong, `byte ${wrong} is ${body[wrong]}`).to.equal(-1);
        const numbers = await openStream(url('numbers'), { count: 600 }, { accept: 'text/event-stream' });
        expect((await numbers.ended).complete).to.equal(true);
        expect(sseEvents(numbers.text()).map((e) => e.data)).to.deep.equal(Array.from({ length: 600 }, (_, i) => i));
      });

      it('cuts the body short when the guest traps while it writes, with the trap as the last event; the next call gets a fresh instance', async () => {
        const answer = await openStream(url('broken'), { count: 300 }, { accept: 'text/event-stream' });
        expect((await answer.ended).complete, 'the body ends without its final chunk').to.equal(false);
        const events = sseEvents(answer.text());
        expect(events.at(-1)!.data).to.include({ error: 'component trapped', code: 'RT_ERR_COMPONENT_TRAPPED', service: 'default.p3-producer', method: 'broken' });
        expect(events.slice(0, -1).map((e) => e.data)).to.deep.equal(Array.from({ length: 300 }, (_, i) => i));
        const next = await openStream(url('numbers'), { count: 2 });
        expect((await next.ended).complete).to.equal(true);
        expect(ndjson(next.text())).to.deep.equal([0, 1]);
      });

      it('drops the stream when the client goes away, and serves on', async () => {
        const answer = await openStream(url('bytes'), { count: 4_000_000_000 });
        await eventually(() => answer.pieces.length >= 3, { what: 'three pieces of the stream', timeoutMs: 10_000, intervalMs: 10 });
        answer.close();
        const closed = (l: Record<string, unknown>) => l.msg === 'request' && String((l.req as { url?: unknown } | undefined)?.url).endsWith('/p3-producer/invoke/bytes') && (l.stream as { outcome?: string } | undefined)?.outcome === 'client closed';
        expect(await rt!.logged(closed, 10_000), 'the stream logged as closed by its client').to.equal(true);
        const next = await openStream(url('numbers'), { count: 2 });
        expect((await next.ended).complete).to.equal(true);
        expect(ndjson(next.text())).to.deep.equal([0, 1]);
      });

      it('gives the guest the request body as its stream<u8> as it arrives, and NDJSON lines as its stream<u32>', async () => {
        const body = randomBytes(2 ** 20 + 5);
        const pieces = Array.from({ length: 17 }, (_, i) => body.subarray(i * 65536, (i + 1) * 65536));
        expect(await postPieces(url('length'), pieces)).to.deep.equal({ status: 200, body: { result: 2 ** 20 + 5 } });
        const lines = Array.from({ length: 2_000 }, (_, i) => `${i}\n`).join('');
        const total = await call(url('total'), { body: Buffer.from(lines), contentType: 'application/x-ndjson' });
        expect(total.body).to.deep.equal({ result: (1_999 * 2_000) / 2 });
      });

      it('passes records, lists, options and variants both ways, answers err as the method’s error, and awaits a future', async () => {
        const shape = { name: 'ünïcode', sizes: [1, 2, 4_000_000_000], tag: { some: 7 }, weight: { tag: 'heavy', val: -5 } };
        expect((await invoke(rt!, 'default/p3-producer/invoke/mirror', { s: shape })).body).to.deep.equal({ result: shape });
        const refused = await invoke(rt!, 'default/p3-producer/invoke/refuse', { reason: 'not today' });
        expect(refused.body).to.include({ code: 'RT_ERR_METHOD_RETURNED_ERROR', details: 'not today', value: 'not today' });
        expect((await invoke(rt!, 'default/p3-producer/invoke/later', { n: 41 })).body).to.deep.equal({ result: 42 });
        const dropped = await invoke(rt!, 'default/p3-producer/invoke/later', { n: 0 });
        expect(dropped.status).to.equal(500);
        expect(dropped.body).to.include({ code: 'RT_ERR_COMPONENT_TRAPPED', details: 'the guest dropped a future it had not written' });
        expect((await invoke(rt!, 'default/p3-producer/invoke/greet', { name: 'grüß dich' })).body).to.deep.equal({ result: 'grüß dich' });
      });
    });

    describe('stream<T> parameters (WASI 0.3)', () => {
      const url = (method: string, query = '') => `${rt!.url}/api/services/default/p3-body/invoke/${method}${query}`;

      it('gives the guest the request body as its stream, read as it arrives, and the other parameters from the query string', async () => {
        // 1 MiB: jco's glue lowers the bytes one by one (~25 MiB/s measured), and the call's deadline here is 2 s.
        const body = randomBytes(2 ** 20 + 5);
        const pieces = Array.from({ length: 17 }, (_, i) => body.subarray(i * 65536, (i + 1) * 65536));
        const answer = await postPieces(url('digest', '?seed=2166136261'), pieces);
        expect(answer).to.deep.equal({ status: 200, body: { result: fnv1a(body, 2166136261) } });
        // A slow client: the guest waits for each piece, and nothing of it is lost.
        const slow = await postPieces(url('digest', '?seed=7'), [body.subarray(0, 1000), body.subarray(1000, 1001), body.subarray(1001, 70_000)], { pauseMs: 150 });
        expect(slow).to.deep.equal({ status: 200, body: { result: fnv1a(body.subarray(0, 70_000), 7) } });
      });

      it('reads a string parameter as its text, and gives an empty stream for a request without a body', async () => {
        const labelled = await call(url('echo-label', `?label=${encodeURIComponent('héllo, "wörld"')}`), { body: Buffer.from('abc'), contentType: 'application/octet-stream' });
        expect(labelled.body).to.deep.equal({ result: 'héllo, "wörld"' });
        // A `?` in a query value needs no escape.
        expect((await call(url('echo-label', '?label=why?not'))).body).to.deep.equal({ result: 'why?not' });
        const empty = await call(url('echo-label', '?label=x'));
        expect(empty.body).to.deep.equal({ result: 'x' });
        expect((await call(url('digest', '?seed=5'))).body).to.deep.equal({ result: 5 });
      });

      it('answers a guest that returns before it has read the whole body, and reads the next request on the same connection', async () => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          const first = await postPieces(url('first-bytes'), [randomBytes(2 ** 20)], { agent });
          expect(first.status).to.equal(200);
          expect(first.body.result).to.be.within(1, 16_384);
          const bytes = randomBytes(1000);
          expect(await postPieces(url('digest', '?seed=1'), [bytes], { agent })).to.deep.equal({ status: 200, body: { result: fnv1a(bytes, 1) } });
        } finally {
          agent.destroy();
        }
      });

      it('answers while the body is still arriving (full duplex): what the guest wrote back comes before the rest of the body is sent', async () => {
        const { res, text } = await duplexExchange(url('upper'), 'application/octet-stream', ['hello, ', 'HELLO, '], 'wörld!', 'the first piece back, before the body has ended');
        expect(res.headers['content-type']).to.equal('application/octet-stream');
        expect(text).to.equal('HELLO, WöRLD!');
      });

      it('refuses what it cannot read: 415 for a body of another type or encoded, 400 naming a query value that is not JSON, a parameter it does not take or one missing; 413 past http.max_body_bytes', async () => {
        const json = await call(url('digest', '?seed=1'), { body: '[1]', contentType: 'application/json' });
        expect(json.status).to.equal(415);
        expect(json.body).to.include({ code: 'RT_ERR_UNSUPPORTED_CONTENT_TYPE', service: 'default.p3-body', method: 'digest' });
        expect(json.body.details).to.include('the body is the stream<u8> parameter "data": send application/octet-stream');
        const encoded = await call(url('digest', '?seed=1'), { body: Buffer.from('abc'), contentType: 'application/octet-stream', headers: { 'content-encoding': 'gzip' } });
        expect(encoded.status).to.equal(415);
        expect(encoded.body).to.include({ code: 'RT_ERR_UNSUPPORTED_CONTENT_ENCODING' });
        const notJson = await call(url('digest', '?seed=abc'), { body: Buffer.from('abc'), contentType: 'application/octet-stream' });
        expect(notJson.status).to.equal(400);
        expect(notJson.body).to.include({ code: 'RT_ERR_INVALID_ARGUMENTS' });
        expect(notJson.body.details).to.match(/^query parameter "seed" is not a JSON value/);
        for (const query of ['?seed=1&extra=2', '', '?seed=-1']) {
          const wrong = await call(url('digest', query), { body: Buffer.from('abc'), contentType: 'application/octet-stream' });
          expect(wrong.status, `${query}: ${wrong.text}`).to.equal(400);
        }
        const large = await postPieces(url('digest', '?seed=1'), Array.from({ length: 9 }, () => randomBytes(2 ** 20)));
        expect(large.status).to.equal(413);
        expect(large.body).to.include({ code: 'RT_ERR_BODY_TOO_LARGE' });
        // The service serves on.
        expect((await call(url('digest', '?seed=3'))).body).to.deep.equal({ result: 3 });
      });

      it('lists such a method with its query schema and its body (NDJSON with its item schema), and a function of two streams as not invocable; the OpenAPI document says the same, and validates', async () => {
        const described = (await call(`${rt!.url}/api/services/default/p3-body`, { method: 'GET' })).body as unknown as { methods: Record<string, unknown>[] };
        const byName = new Map(described.methods.map((m) => [m.name, m]));
        expect(byName.get('digest')).to.deep.include({
          signature: 'async func(data: stream<u8>, seed: u32) -> u32',
          invocable: true,
          request_body: { parameter: 'data', media_type: 'application/octet-stream' },
        });
        expect(byName.get('digest')!.query_schema).to.deep.include({ required: ['seed'], additionalProperties: false });
        expect(byName.get('pair')).to.deep.include({ invocable: false, reason: 'it takes 2 stream parameters ("a", "b"): rt reads one, from the request body' });
        expect(byName.get('numbers')).to.deep.include({
          signature: 'async func(n: stream<u32>) -> u32',
          invocable: true,
          request_body: { parameter: 'n', media_type: 'application/x-ndjson', item_schema: { type: 'integer', minimum: 0, maximum: 4294967295 } },
        });
        const openapi = (await call(`${rt!.url}/api/openapi.json`, { method: 'GET' })).body;
        const validated = await new Validator().validate(openapi);
        expect(validated.valid, JSON.stringify(validated.errors)).to.equal(true);
        const operation = (openapi.paths as Record<string, { post: Record<string, unknown> }>)['/api/services/default/p3-body/invoke/digest'].post;
        expect(operation.parameters).to.deep.equal([{ name: 'seed', in: 'query', required: true, content: { 'application/json': { schema: { type: 'integer', minimum: 0, maximum: 4294967295 } } } }]);
        expect(operation.requestBody).to.have.nested.property('content.application/octet-stream');
        const ndjson = (openapi.paths as Record<string, { post: { requestBody: { content: Record<string, unknown> } } }>)['/api/services/default/p3-body/invoke/products'].post;
        expect(ndjson.requestBody.content['application/x-ndjson']).to.have.nested.property('schema.type', 'array');
      });

      it('reads a stream<T> of other items as NDJSON, a line per item as the lines arrive, whatever the pieces they come in', async () => {
        const ndjson = { 'content-type': 'application/x-ndjson' };
        // Lines split across pieces, a CRLF, a blank line, and a last line without its newline.
        const split = await postPieces(url('numbers'), ['1\n2', '\r\n\n 3', '0\n', '4'].map((p) => Buffer.from(p)), { headers: ndjson, pauseMs: 50 });
        expect(split).to.deep.equal({ status: 200, body: { result: 1 + 2 + 30 + 4 } });
        const many = Array.from({ length: 50_000 }, (_, i) => i * 7919);
        const text = Buffer.from(many.map((n) => `${n}\n`).join(''));
        const pieces = Array.from({ length: Math.ceil(text.length / 65536) }, (_, i) => text.subarray(i * 65536, (i + 1) * 65536));
        const sum = many.reduce((a, n) => (a + n) % 2 ** 32, 0);
        expect(await postPieces(url('numbers'), pieces, { headers: ndjson })).to.deep.equal({ status: 200, body: { result: sum } });
        // Items that are not numbers go to the guest one at a time.
        const pairs = await call(url('products'), { body: '[2, 3]\n[4, 5]\n[1000, 1000]\n', contentType: 'application/x-ndjson' });
        expect(pairs.body).to.deep.equal({ result: 6 + 20 + 1_000_000 });
        expect((await call(url('numbers'))).body, 'no body: an empty stream').to.deep.equal({ result: 0 });
      });

      it('answers while the NDJSON is still arriving (full duplex), and cuts the answer short at a line that does not fit', async () => {
        const { req, res } = await openDuplex(url('running'), 'application/x-ndjson', '1\n2\n');
        expect(res.headers['content-type']).to.equal('application/x-ndjson');
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        await eventually(() => expect(text).to.equal('1\n3\n'), { what: 'the running sums of the first lines, before the body has ended', timeoutMs: 5_000, intervalMs: 10 });
        const cut = new Promise<string>((resolve) => {
          res.on('end', () => resolve('ended whole'));
          res.on('error', () => resolve('cut short'));
          res.on('aborted', () => resolve('cut short'));
        });
        req.end('3\nfour\n5\n');
        expect(await cut).to.equal('cut short');
        expect(text).to.equal('1\n3\n6\n');
        const logged = (l: Record<string, unknown>) => l.msg === 'stream failed after its headers were sent' && l.method === 'running' && String(l.details).startsWith('n[3] is not JSON');
        await eventually(() => expect(rt!.logLines().filter(logged)).to.have.length(1), { what: 'the cut logged, naming the line', timeoutMs: 5_000 });
        // A body that fits streams whole.
        const whole = await call(url('running'), { body: '1\n2\n3\n', contentType: 'application/x-ndjson' });
        expect(whole.text).to.equal('1\n3\n6\n');
      });

      it('answers 400 naming the first line that is not JSON or not an item, and 415 for a body that is not NDJSON; the service serves on', async () => {
        const notJson = await call(url('numbers'), { body: '1\n2\nthree\n4\n', contentType: 'application/x-ndjson' });
        expect(notJson.status).to.equal(400);
        expect(notJson.body).to.include({ code: 'RT_ERR_INVALID_JSON', service: 'default.p3-body', method: 'numbers' });
        expect(notJson.body.details).to.match(/^n\[2\] is not JSON \(.+\): "three"$/);
        const negative = await call(url('numbers'), { body: '1\n-1\n', contentType: 'application/x-ndjson' });
        expect(negative.status).to.equal(400);
        expect(negative.body).to.include({ code: 'RT_ERR_INVALID_ARGUMENTS' });
        expect(negative.body.details).to.match(/^n\[1\]: expected u32/);
        const pair = await call(url('products'), { body: '[1, 2]\n[1, "x"]\n', contentType: 'application/x-ndjson' });
        expect(pair.status).to.equal(400);
        expect(pair.body.details).to.match(/^pairs\[1\]\[1\]: expected u32/);
        const bytes = await call(url('numbers'), { body: Buffer.from('1\n'), contentType: 'application/octet-stream' });
        expect(bytes.status).to.equal(415);
        expect(bytes.body.details).to.include('the body is the stream<u32> parameter "n": send application/x-ndjson, one JSON value per line (got application/octet-stream)');
        expect((await call(url('numbers'), { body: '5\n6\n', contentType: 'application/x-ndjson' })).body).to.deep.equal({ result: 11 });
      });
    });
  }

  it("serves the host's WASI 0.3 interfaces a guest calls like any function, on every Node line: random, the clocks, the granted environment, exit", async () => {
    const url = (method: string) => `${rt!.url}/api/services/default/p3-host/invoke/${method}`;
    const entropy = await call(url('entropy'), { body: '{"n": 32}', contentType: 'application/json', headers: { accept: 'application/json' } });
    expect(entropy.status, entropy.text).to.equal(200);
    const first = Buffer.from(entropy.body.result as string, 'base64');
    expect(first).to.have.length(32);
    const again = Buffer.from((await call(url('entropy'), { body: '{"n": 32}', contentType: 'application/json', headers: { accept: 'application/json' } })).body.result as string, 'base64');
    expect(again.equals(first), 'two draws of 256 bits').to.equal(false);
    // A guest's u64 asks for more than any worker should allocate: it gets the host's most.
    const capped = await call(url('entropy'), { body: '{"n": "18446744073709551615"}', contentType: 'application/json' });
    expect(capped.status).to.equal(200);
    expect(Buffer.from(await (await fetch(url('entropy'), { method: 'POST', body: '{"n": "18446744073709551615"}', headers: { 'content-type': 'application/json' } })).arrayBuffer())).to.have.length(65_536);
    const numbers = await Promise.all([call(url('number')), call(url('number')), call(url('seed'))]);
    expect(numbers[0].body.result).to.not.deep.equal(numbers[1].body.result);
    expect(numbers[2].body.result).to.be.an('array').with.length(2);
    const before = BigInt((await call(url('monotonic'))).body.result as string | number);
    const after = BigInt((await call(url('monotonic'))).body.result as string | number);
    expect(after > before, 'the monotonic clock goes forward').to.equal(true);
    const [seconds, nanoseconds] = (await call(url('wall'))).body.result as [number, number];
    expect(Math.abs(seconds - Date.now() / 1000)).to.be.below(5);
    expect(nanoseconds).to.be.within(0, 999_999_999);
    // Only what the sidecar grants.
    expect((await call(url('environment'))).body).to.deep.equal({ result: [['GREETING', 'hello']] });
    const exit = await call(url('leave'), { body: '{"code": 3}', contentType: 'application/json' });
    expect(exit.status).to.equal(500);
    expect(exit.body.details).to.include('wasi:cli/exit');
    expect((await call(url('environment'))).body, 'the service serves on').to.deep.equal({ result: [['GREETING', 'hello']] });
    const listing = (await call(`${rt!.url}/api/services/default/p3-host`, { method: 'GET' })).body;
    expect(listing.unsatisfied_imports ?? [], 'every import it has is served').to.deep.equal([]);
  });

  if (hasJspi) {
    it('beyond max_concurrency calls, starts another instance at once, up to max_instances; then calls wait their turn; a max_instances below pool_size is a load error', async () => {
      const url = `${rt!.url}/api/services/default/p3-pair/invoke/nap`;
      const nap = () => call(url, { body: JSON.stringify({ ns: 600_000_000 }), contentType: 'application/json' });
      const live = async () => ((await call(`${rt!.url}/api/services/default/p3-pair`, { method: 'GET' })).body.instances as { live: number }).live;
      // 2 per instance, 2 instances: 4 naps side by side, then 2 more after them.
      const began = performance.now();
      const four = await Promise.all(Array.from({ length: 4 }, nap));
      const fourTook = performance.now() - began;
      for (const answer of four) expect(answer.status, answer.text).to.equal(200);
      expect(fourTook, 'four at once on two instances').to.be.below(1_150);
      expect(await live()).to.equal(2);
      const again = performance.now();
      const six = await Promise.all(Array.from({ length: 6 }, nap));
      for (const answer of six) expect(answer.status, answer.text).to.equal(200);
      expect(performance.now() - again, 'the fifth and sixth waited for room').to.be.at.least(1_150);
      expect(await live(), 'never more than max_instances').to.equal(2);
      const described = (await call(`${rt!.url}/api/services/default/p3-pair`, { method: 'GET' })).body.instances;
      expect(described).to.include({ pool_size: 1, max_instances: 2, max_concurrency: 2 });
      const failed = (await call(`${rt!.url}/api/services`, { method: 'GET' })).body.failed as { source: string; error: string }[];
      expect(failed.find((f) => f.source === join(repo, 'p3-below.wasm'))?.error).to.equal(
        `${join(repo, 'p3-below.toml')}: max_instances (2) is below pool_size (3): it bounds the instances a worker keeps and starts, pool_size's among them`,
      );
    });

    it("logs what a guest writes to the host's wasi:cli stdout and stderr streams (write-via-stream), under its service", async () => {
      const url = `${rt!.url}/api/services/default/p3-speaker/invoke/say`;
      const said = await Promise.all([
        call(url, { body: JSON.stringify({ text: 'hello from a stream\n', err: false }), contentType: 'application/json' }),
        call(url, { body: JSON.stringify({ text: `${'x'.repeat(100_000)}!\n`, err: false }), contentType: 'application/json' }),
        call(url, { body: JSON.stringify({ text: 'a complaint\n', err: true }), contentType: 'application/json' }),
      ]);
      for (const answer of said) expect(answer.status, answer.text).to.equal(200);
      const logged = (stream: string, text: string) => rt!.logLines().some((l) => l.stream === stream && l.service === 'default.p3-speaker' && String(l.msg).startsWith(text));
      await eventually(() => expect(logged('stdout', 'hello from a stream') && logged('stderr', 'a complaint') && logged('stdout', 'xxxxxxxxxx')).to.equal(true), { what: 'the lines in the log', timeoutMs: 5_000 });
    });

    it("sleeps through the host's async wasi:clocks wait-for: the guest's task waits, and a nap past the request timeout is cut off (504)", async () => {
      const url = `${rt!.url}/api/services/default/p3-sleeper/invoke/nap`;
      const began = performance.now();
      const nap = await call(url, { body: '{"ns": 150000000}', contentType: 'application/json' });
      expect(nap.status, nap.text).to.equal(200);
      expect(Number(nap.body.result)).to.be.within(150_000_000, 1_500_000_000);
      expect(performance.now() - began).to.be.at.least(150);
      expect((await call(url, { body: '{"ns": 0}', contentType: 'application/json' })).body.result).to.be.below(150_000_000);
      const long = await call(url, { body: '{"ns": 60000000000}', contentType: 'application/json' });
      expect(long.status).to.equal(504);
      expect((await call(url, { body: '{"ns": 1000000}', contentType: 'application/json' })).status, 'served on').to.equal(200);
    });

    it('cancels the task of an async call whose client leaves, and of one past its deadline (504): the guest acknowledges, and its instance serves on', async () => {
      const url = (method: string) => `${rt!.url}/api/services/default/p3-sleeper/invoke/${method}`;
      const cancelled = async () => Number((await call(url('cancelled'))).body.result);
      const leftNap = (l: Record<string, unknown>) => l.msg === 'request' && l.status === 499 && String((l.req as { url?: unknown } | undefined)?.url).endsWith('/p3-sleeper/invoke/nap');
      const before = await cancelled();
      const leaving = new AbortController();
      const left = fetch(url('nap'), { method: 'POST', body: '{"ns": 60000000000}', headers: { 'content-type': 'application/json' }, signal: leaving.signal }).catch(() => 'left');
      await letTimePass(200, 'the nap is waiting in its task');
      const leftBefore = rt!.logLines().filter(leftNap).length;
      leaving.abort();
      expect(await left).to.equal('left');
      // Until rt has seen the client leave, the nap holds the instance, and a call of another method beside it would
      // (rightly) start a second instance after a moment, one whose count is not this one's.
      await eventually(() => rt!.logLines().filter(leftNap).length > leftBefore, { what: 'the nap logged 499', timeoutMs: 5_000 });
      await eventually(async () => (await cancelled()) === before + 1, { what: 'the guest to hear TASK_CANCELLED and acknowledge', timeoutMs: 5_000, intervalMs: 50 });
      const late = await call(url('nap'), { body: '{"ns": 60000000000}', contentType: 'application/json' });
      expect(late.status).to.equal(504);
      await eventually(async () => (await cancelled()) === before + 2, { what: 'the late task cancelled', timeoutMs: 5_000, intervalMs: 50 });
      // A task that ignored the request would retire its instance after a second: this one's count goes on.
      await letTimePass(1_500, 'past the grace a task that ignores cancellation gets');
      expect(await cancelled(), 'the same instance').to.equal(before + 2);
      const { body } = await call(`${rt!.url}/api/services/default/p3-sleeper`, { method: 'GET' });
      expect((body.instances as { live: number }).live).to.equal(1);
    });

    it('serves calls of an async function side by side in one instance while they wait (max_concurrency), and one that runs past its deadline retires its instance only once the others have answered', async () => {
      const url = `${rt!.url}/api/services/default/p3-sleeper/invoke/nap`;
      const nap = (ms: number) => call(url, { body: JSON.stringify({ ns: ms * 1_000_000 }), contentType: 'application/json' });
      const live = async () => ((await call(`${rt!.url}/api/services/default/p3-sleeper`, { method: 'GET' })).body.instances as { live: number }).live;
      // pool_size 1, max_concurrency 16 (the default): 16 naps of 400 ms take about 400 ms, not 6.4 s, on the one thread.
      const began = performance.now();
      const naps = await Promise.all(Array.from({ length: 16 }, () => nap(400)));
      const took = performance.now() - began;
      for (const answer of naps) {
        expect(answer.status, answer.text).to.equal(200);
        expect(Number(answer.body.result)).to.be.within(400_000_000, 1_900_000_000);
      }
      expect(took, 'side by side').to.be.below(1_900);
      expect(await live()).to.equal(1);
      // One nap past the deadline (2 s here) beside others: it is answered 504 at its deadline; one that began later
      // and ends after that deadline is answered whole, not cut off with the task jco cannot cancel.
      const long = nap(30_000);
      const early = nap(100);
      await letTimePass(1_000, 'the long nap is half way to its deadline');
      const later = nap(1_500);
      expect((await long).status).to.equal(504);
      expect((await early).status).to.equal(200);
      const answered = await later;
      expect(answered.status, answered.text).to.equal(200);
      expect(Number(answered.body.result)).to.be.at.least(1_500_000_000);
      expect((await nap(10)).status, 'served on by a fresh instance').to.equal(200);
      expect(await live()).to.equal(1);
      // A call that traps beside waiting ones: it is a 500; each of the others is answered (whole, or with the trap:
      // its instance has trapped) at once, none waits for its deadline; then a fresh instance serves.
      const waiting = [nap(300), nap(300)];
      await letTimePass(50, 'the naps are waiting in the instance');
      const boom = await call(`${rt!.url}/api/services/default/p3-sleeper/invoke/boom`);
      expect(boom.status).to.equal(500);
      expect(boom.body).to.include({ code: 'RT_ERR_COMPONENT_TRAPPED' });
      const beganWaiting = performance.now();
      for (const answer of await Promise.all(waiting)) expect([200, 500], answer.text).to.include(answer.status);
      expect(performance.now() - beganWaiting).to.be.below(1_500);
      expect((await nap(10)).status, 'served on after the trap').to.equal(200);
      // A guest that starts waits without bound (each a task and a timer of the glue's, ~6 KiB of the thread's heap
      // apiece, measured): its deadline ends it (504) with its thread, or the thread's heap limit does (500) if first;
      // the worker serves on.
      const flood = await call(`${rt!.url}/api/services/default/p3-sleeper/invoke/flood`, { body: '{"n": 1000000000}', contentType: 'application/json' });
      expect([504, 500], flood.text).to.include(flood.status);
      expect((await nap(10)).status, 'served on after the flood').to.equal(200);
      expect(await live()).to.equal(1);
      // A call that has its instance to itself does not wait for the naps that hold the only thread: an overflow thread takes it.
      const holding = [nap(1_500), nap(1_500)];
      await letTimePass(100, 'the naps hold the thread');
      const asked = performance.now();
      const plain = await call(`${rt!.url}/api/services/default/p3-sleeper/invoke/plain`);
      expect(plain.body).to.deep.equal({ result: 7 });
      expect(performance.now() - asked, 'well before the naps end').to.be.below(1_200);
      for (const answer of await Promise.all(holding)) expect(answer.status).to.equal(200);
    });
  }

  it(hasJspi ? 'loads a WASI 0.3 component, and says nothing of JSPI at start-up' : 'lists a WASI 0.3 component as failed, naming the Node line it needs, and says once at start-up what is unavailable', async () => {
    const listing = (await call(`${rt!.url}/api/services`, { method: 'GET' })).body as unknown as Listing;
    const failure = listing.failed.find((f) => f.source === join(repo, 'p3.wasm'));
    const notes = rt!.logLines().filter((l) => String(l.msg).includes('has no JSPI'));
    if (hasJspi) {
      expect(failure).to.equal(undefined);
      expect(notes).to.deep.equal([]);
    } else {
      expect(failure).to.deep.equal({
        source: join(repo, 'p3.wasm'),
        error: `the component uses WASI 0.3 (component-model async: its export \`answer\` is an async function), which needs JSPI (WebAssembly.Suspending): Node.js 24 or later; this is Node.js ${process.versions.node}`,
      });
      expect(notes.map((l) => l.msg)).to.deep.equal([
        `Node.js ${process.versions.node} has no JSPI (WebAssembly.Suspending): WASI 0.3 components (async functions, streams, futures) will not load; Node.js 24 or later runs them`,
      ]);
    }
  });
});
