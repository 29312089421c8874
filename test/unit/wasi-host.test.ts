// The wasi:http handler host (lib/worker/wasi-host) with real components:
// handlers built by componentize-js in both styles (wasi:http/types and
// fetch-event), transpiled by jco with rt's options, instantiated on a
// worker_threads thread with the host's imports; the main thread feeds request
// bodies and takes responses through the host's channel, as rt's worker will.

import { transpileBytes } from '@bytecodealliance/jco-transpile';
import { expect } from 'chai';
import { buildComponent } from '../../examples/builder.js';
import { TRANSPILE_OPTIONS } from '../../lib/primary/compile-job.js';
import { CABI_REP, REP_RANGE } from '../../lib/worker/wasi-host/core/host-objects.js';
import { Fields } from '../../lib/worker/wasi-host/core/fields.js';
import { BufferedBody, type FieldEntry } from '../../lib/worker/wasi-host/index.js';
import { Pollable, poll } from '../../lib/worker/wasi-host/p2/poll.js';
import { InputStream } from '../../lib/worker/wasi-host/p2/streams.js';
import { HandlerThread } from '../support/handler-host.js';
import { FETCH_HANDLER, TYPES_HANDLER } from '../support/http-handler-fixtures.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

describe('wasi-host: the wasi:http handler host', function () {
  describe('pieces without a component', () => {
    it('traps a poll over pollables none of which can ever become ready, instead of hanging', () => {
      expect(() => poll([new Pollable({ ready: () => false })])).to.throw(/can ever become ready/);
    });

    it('returns a pollable that becomes ready while poll asks it, instead of trapping (CI saw the trap)', () => {
      // Like the future of an outgoing response: each question takes in what
      // the main thread sent, and the answer arrives after the first question.
      let asked = 0;
      const state = (): 'waiting' | 'done' => (++asked > 1 ? 'done' : 'waiting');
      const future = new Pollable({ ready: () => state() === 'done', pending: () => state() === 'waiting' });
      expect([...poll([future])]).to.deep.equal([0]);
    });

    it('sleeps in poll until the earliest timer', () => {
      const start = process.hrtime.bigint();
      const late = new Pollable({ ready: () => false, deadline: start + 10_000_000_000n });
      const soon = new Pollable({ ready: () => process.hrtime.bigint() >= start + 20_000_000n, deadline: start + 20_000_000n });
      expect([...poll([late, soon])]).to.deep.equal([1]);
      expect(Number(process.hrtime.bigint() - start) / 1e6).to.be.within(19, 1000);
    });

    it('validates fields as wasi:http says, and makes attached ones immutable', () => {
      const err = (f: () => unknown): unknown => {
        try {
          f();
        } catch (e) {
          return (e as { payload?: unknown }).payload;
        }
        return 'no error';
      };
      expect(err(() => Fields.fromList([['bad name', enc.encode('v')]]))).to.deep.equal({ tag: 'invalid-syntax' });
      expect(err(() => Fields.fromList([['x-a', enc.encode('a\nb')]]))).to.deep.equal({ tag: 'invalid-syntax' });
      expect(err(() => Fields.fromList([['Transfer-Encoding', enc.encode('chunked')]]))).to.deep.equal({ tag: 'forbidden' });
      const fields = Fields.fromList([['X-A', enc.encode('1')]]);
      fields.append('x-a', enc.encode('2'));
      expect(fields.get('x-A').map((v) => dec.decode(v))).to.deep.equal(['1', '2']);
      fields.freeze();
      expect(err(() => fields.set('x-b', [enc.encode('3')]))).to.deep.equal({ tag: 'immutable' });
      expect(err(() => fields.clone().delete('x-a'))).to.equal('no error');
    });

    it('reads a buffered body, then answers closed', () => {
      const stream = new InputStream(new BufferedBody(enc.encode('hello')));
      expect(dec.decode(stream.blockingRead(3n))).to.equal('hel');
      expect(dec.decode(stream.read(10n))).to.equal('lo');
      expect(() => stream.read(1n)).to.throw().with.property('payload').that.deep.equals({ tag: 'closed' });
    });
  });

  it('relies on the glue of the current jco-transpile as it is: host objects keep their rep under Symbol.for("cabiRep"), below its handle flag', async function () {
    this.timeout(180_000);
    const { files } = await transpileBytes(await buildComponent(TYPES_HANDLER), { ...TRANSPILE_OPTIONS });
    const glue = new TextDecoder().decode(files['component.js']);
    const symbol = /const (\w+) = Symbol\.for\('cabiRep'\);/.exec(glue)?.[1];
    expect(symbol, 'the glue names the rep symbol as rt does').to.be.a('string');
    expect(CABI_REP).to.equal(Symbol.for('cabiRep'));
    // A host object handed to the guest is tabled under its own rep, or else the glue's counter.
    expect(glue).to.match(new RegExp(`const rep = \\w+\\[${symbol}\\] \\|\\| \\+\\+captureCnt\\d+;`));
    const flag = /const T_FLAG = 1 << (\d+);/.exec(glue)?.[1];
    expect(REP_RANGE.last).to.be.below(2 ** Number(flag));
  });

  describe('a wasi:http/types handler (componentize-js) on an instance thread', function () {
    this.timeout(180_000);
    let thread: HandlerThread;
    before(async () => {
      thread = await new HandlerThread().start(await buildComponent(TYPES_HANDLER));
    });
    after(async () => thread?.stop());

    it('GET with a query string and headers reaches the guest (echoed)', async () => {
      const r = await thread.handle({ method: 'GET', pathWithQuery: '/echo?a=1&b=two', headers: [['x-q', enc.encode('qv')], ['accept', enc.encode('*/*')]] });
      expect(r.handled.threw).to.equal(undefined);
      expect(r.head?.status).to.equal(200);
      expect(JSON.parse(r.body)).to.deep.equal({ method: 'GET', path: '/echo?a=1&b=two', scheme: 'HTTP', authority: 'localhost:8080', headers: [['x-q', 'qv'], ['accept', '*/*']] });
      expect(r.finished).to.equal('no trailers');
      expect(r.handled.outcome).to.deep.equal({ kind: 'responded', status: 200, complete: true, bodyBytes: r.body.length });
    });

    it('other methods, and a method outside the standard ones', async () => {
      for (const method of ['PUT', 'DELETE', 'PURGE']) {
        const r = await thread.handle({ method, pathWithQuery: '/echo' });
        expect((JSON.parse(r.body) as { method: string }).method).to.equal(method);
      }
    });

    it('a POST body fed in pieces with delays is read whole, trailers included', async () => {
      const r = await thread.handle({ method: 'POST', pathWithQuery: '/body' }, { pieces: [[30, 'hel'], [30, 'lo '], [30, 'world']], trailers: [['x-sum', enc.encode('7')]] });
      expect(r.body).to.equal('got 11 bytes: hello world');
      expect(dec.decode(Buffer.from(r.head!.headers.find(([k]) => k === 'x-trailers')![1]))).to.equal('x-sum=7');
    });

    it('a streamed response arrives in chunks before handle returns', async () => {
      const r = await thread.handle({ pathWithQuery: '/stream' });
      expect(r.chunks.map((c) => c.text)).to.deep.equal(['part1;', 'part2;', 'part3;']);
      // 30 ms sleeps in the guest between parts: the first part was here well before the last was written.
      expect(r.chunks[0].at).to.be.below(r.handled.returnedAt - 40);
    });

    it('a timer in the guest fires', async () => {
      const r = await thread.handle({ pathWithQuery: '/timer' });
      expect(Number(/slept (\d+) ms/.exec(r.body)?.[1])).to.be.within(50, 2000);
    });

    it('a handler that sets no response is detected', async () => {
      const r = await thread.handle({ pathWithQuery: '/none' });
      expect(r.handled.outcome).to.deep.equal({ kind: 'no-response' });
      expect(r.head).to.equal(undefined);
    });

    it('an invalid header or status from the guest is reported as malformed, not thrown into it', async () => {
      const badLength = await thread.handle({ pathWithQuery: '/bad-length' });
      expect(badLength.malformed).to.match(/content-length/);
      expect(badLength.handled.outcome).to.deep.include({ kind: 'malformed' });
      const badStatus = await thread.handle({ pathWithQuery: '/bad-status' });
      expect(badStatus.malformed).to.match(/status 103/);
      expect(badStatus.handled.threw).to.equal(undefined);
    });

    it('trailers end the response body', async () => {
      const r = await thread.handle({ pathWithQuery: '/trailers' });
      expect(r.body).to.equal('with trailers');
      expect((r.finished as FieldEntry[]).map(([k, v]) => [k, dec.decode(v)])).to.deep.equal([['x-checksum', '42']]);
    });

    it('backpressure: the guest writes no more than the credit granted', async () => {
      // A 16 KiB window, each chunk's credit given back 5 ms after it arrived: a slow reader.
      const r = await thread.handle({ pathWithQuery: '/big?300000' }, { window: 16 * 1024, grantAfterMs: 5 });
      expect(r.body.length).to.equal(300_000);
      expect(r.body).to.match(/^x+$/);
      expect(r.maxOutstanding).to.be.at.most(16 * 1024);
      expect(r.chunks.length).to.be.at.least(300_000 / (16 * 1024));
      expect(r.handled.outcome).to.deep.equal({ kind: 'responded', status: 200, complete: true, bodyBytes: 300_000 });
    });
  });

  describe('a fetch-event handler (componentize-js) on an instance thread, one instance per request', function () {
    this.timeout(180_000);
    let thread: HandlerThread;
    before(async () => {
      thread = await new HandlerThread().start(await buildComponent(FETCH_HANDLER));
    });
    after(async () => thread?.stop());

    it('reads a POST body that arrives in pieces, waits on a timer, answers with its status and headers', async () => {
      const r = await thread.handle({ method: 'POST', pathWithQuery: '/echo?x=1', headers: [['x-q', enc.encode('qv')]] }, { pieces: [[40, 'he'], [40, 'llo']] });
      expect(r.handled.threw).to.equal(undefined);
      expect(r.head?.status).to.equal(201);
      expect(r.head?.headers.map(([k, v]) => [k, dec.decode(v)])).to.deep.include(['x-a', '1']);
      expect(r.body).to.equal('echo:POST http://localhost:8080/echo?x=1 qv hello');
    });

    it('answers again on a fresh instance (a StarlingMonkey instance takes one request)', async () => {
      const r = await thread.handle({ pathWithQuery: '/echo' });
      expect(r.head?.status).to.equal(201);
    });

    it('streams a ReadableStream response in chunks before handle returns', async () => {
      const r = await thread.handle({ pathWithQuery: '/stream' });
      expect(r.body).to.equal('chunk1;chunk2;chunk3;');
      expect(r.chunks.length).to.be.at.least(2);
      expect(r.chunks[0].at).to.be.below(r.handled.returnedAt - 40);
    });

    it('a throwing handler traps before any response (componentize-js 0.23; 0.18.5’s engine answered 500 itself), which rt answers as a trap', async () => {
      const r = await thread.handle({ pathWithQuery: '/throw' });
      expect(r.head).to.equal(undefined);
      expect(r.handled.outcome).to.deep.equal({ kind: 'no-response' });
      expect(r.handled.threw).to.match(/unreachable/);
    });
  });
});
