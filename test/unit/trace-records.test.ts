// rt's own span records (lib/tracing/): W3C trace context in and out, the
// sampler's decisions, the batch processor's bounds and fates, and the spans
// a traced request makes, parent to child.

import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import { RecordedTraces } from '../../lib/tracing/recorded-traces.js';
import { sampled } from '../../lib/tracing/sampler.js';
import type { SamplerSetting } from '../../lib/tracing/settings.js';
import { SpanBatcher, type SendBatch } from '../../lib/tracing/span-batcher.js';
import { newSpanId, newTraceId, SpanKind, SpanRecord } from '../../lib/tracing/span-record.js';
import { remoteParent, traceparentOf } from '../../lib/tracing/trace-context.js';
import type { SpanFate } from '../../lib/tracing/traces.js';
import { eventually, letTimePass } from '../support/eventually.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('W3C trace context (lib/tracing/trace-context.ts)', () => {
  it('reads a traceparent, its sampled flag and tracestate', () => {
    expect(remoteParent(`00-${TRACE}-${PARENT}-01`, 'rojo=00f067aa0ba902b7')).to.deep.equal({ traceId: TRACE, spanId: PARENT, sampled: true, traceState: 'rojo=00f067aa0ba902b7' });
    expect(remoteParent(`00-${TRACE}-${PARENT}-00`, undefined)).to.deep.include({ sampled: false, traceState: undefined });
    expect(remoteParent(`00-${TRACE}-${PARENT}-01`, ['a=1', 'b=2'])?.traceState, 'several headers are one list').to.equal('a=1,b=2');
    expect(remoteParent(`01-${TRACE}-${PARENT}-03-future`, undefined), 'a later version may carry more').to.deep.include({ traceId: TRACE, sampled: true });
  });

  it('ignores a malformed or invalid one (the request starts a trace) and a tracestate it would not pass on', () => {
    for (const header of [undefined, '', 'garbage', `00-${TRACE}-${PARENT}-01-extra`, `ff-${TRACE}-${PARENT}-01`, `00-${'0'.repeat(32)}-${PARENT}-01`, `00-${TRACE}-${'0'.repeat(16)}-01`, `00-${TRACE.toUpperCase()}-${PARENT}-01`, [`00-${TRACE}-${PARENT}-01`, `00-${TRACE}-${PARENT}-01`]]) {
      expect(remoteParent(header, undefined), String(header)).to.equal(undefined);
    }
    expect(remoteParent(`00-${TRACE}-${PARENT}-01`, 'a=1\r\nx: y')?.traceState, 'not printable ASCII').to.equal(undefined);
    expect(remoteParent(`00-${TRACE}-${PARENT}-01`, `a=${'x'.repeat(600)}`)?.traceState, 'longer than 512').to.equal(undefined);
  });

  it('writes the traceparent of a span', () => {
    expect(traceparentOf(TRACE, PARENT, true)).to.equal(`00-${TRACE}-${PARENT}-01`);
    expect(traceparentOf(TRACE, PARENT, false)).to.equal(`00-${TRACE}-${PARENT}-00`);
  });

  it('makes ids of 16 and 8 random bytes in hex, never the same twice in 10,000', () => {
    const ids = new Set(Array.from({ length: 10_000 }, newTraceId));
    expect(ids.size).to.equal(10_000);
    for (const id of [...ids].slice(0, 100)) expect(id).to.match(/^[0-9a-f]{32}$/);
    expect(newSpanId()).to.match(/^[0-9a-f]{16}$/);
  });
});

describe('the sampler (lib/tracing/sampler.ts)', () => {
  const parent = (isSampled: boolean) => ({ traceId: TRACE, spanId: PARENT, sampled: isSampled, traceState: undefined });

  it('records all or nothing, or follows a parent that has a decision', () => {
    expect(sampled({ kind: 'always_on' }, TRACE, parent(false))).to.equal(true);
    expect(sampled({ kind: 'always_off' }, TRACE, parent(true))).to.equal(false);
    const parentBased: SamplerSetting = { kind: 'parentbased', root: { kind: 'always_off' } };
    expect(sampled(parentBased, TRACE, parent(true))).to.equal(true);
    expect(sampled(parentBased, TRACE, undefined)).to.equal(false);
  });

  it('records about `ratio` of traces, the same decision for the same trace id', () => {
    const ids = Array.from({ length: 20_000 }, newTraceId);
    const quarter: SamplerSetting = { kind: 'traceidratio', ratio: 0.25 };
    const share = ids.filter((id) => sampled(quarter, id, undefined)).length / ids.length;
    expect(share).to.be.within(0.22, 0.28);
    expect(ids.slice(0, 200).map((id) => sampled(quarter, id, undefined))).to.deep.equal(ids.slice(0, 200).map((id) => sampled(quarter, id, undefined)));
    expect(ids.every((id) => sampled({ kind: 'traceidratio', ratio: 1 }, id, undefined))).to.equal(true);
    expect(ids.some((id) => sampled({ kind: 'traceidratio', ratio: 0 }, id, undefined))).to.equal(false);
  });
});

/** A batcher whose sends the test answers by hand; fates tallied. */
function batcherWith(bounds: Partial<ConstructorParameters<typeof SpanBatcher>[0]>) {
  const sent: { spans: SpanRecord[]; answer: (ok: boolean) => void }[] = [];
  const fates: Record<SpanFate, number> = { exported: 0, dropped: 0, failed: 0 };
  const send: SendBatch = (spans) => new Promise((resolve) => sent.push({ spans, answer: resolve }));
  const batcher = new SpanBatcher({ scheduledDelayMillis: 60_000, exportTimeoutMillis: 60_000, maxQueueSize: 4, maxExportBatchSize: 2, ...bounds }, send, (fate, n) => (fates[fate] += n));
  return { batcher, sent, fates };
}
const span = () => new SpanRecord(newTraceId(), newSpanId(), undefined, false, undefined, 'GET', SpanKind.server, true);

describe('the span batcher (lib/tracing/span-batcher.ts)', () => {
  it('sends a full batch at once and one at a time, drops what finds the queue full, and counts every fate', async () => {
    const { batcher, sent, fates } = batcherWith({});
    for (let i = 0; i < 2; i++) batcher.add(span());
    expect(sent.map((s) => s.spans.length)).to.deep.equal([2]);
    // The first batch is out; four more fill the queue, the next two are dropped.
    for (let i = 0; i < 6; i++) batcher.add(span());
    expect(sent.length, 'one export at a time').to.equal(1);
    expect(fates.dropped).to.equal(2);
    sent[0].answer(true);
    await eventually(() => sent.length === 2, { what: 'the next full batch sent when the first is done' });
    expect(fates.exported).to.equal(2);
    sent[1].answer(false);
    await eventually(() => sent.length === 3, { what: 'the third batch' });
    expect(fates.failed).to.equal(2);
    sent[2].answer(true);
    await eventually(() => fates.exported === 4, { what: 'the third batch counted' });
    expect(sent.length, 'nothing left to send').to.equal(3);
  });

  it('sends what waits after the schedule’s delay, and everything at a flush', async () => {
    const { batcher, sent, fates } = batcherWith({ scheduledDelayMillis: 50, maxQueueSize: 100, maxExportBatchSize: 10 });
    batcher.add(span());
    expect(sent.length).to.equal(0);
    await eventually(() => sent.length === 1, { what: 'a lone span sent after the delay' });
    sent[0].answer(true);
    const held = batcherWith({ maxQueueSize: 100, maxExportBatchSize: 10 });
    for (let i = 0; i < 25; i++) held.batcher.add(span());
    expect(held.sent.length).to.equal(1);
    const flushed = held.batcher.flush();
    for (let i = 0; i < 3; i++) {
      await eventually(() => held.sent.length === i + 1, { what: `batch ${i + 1} of the flush` });
      held.sent[i].answer(true);
    }
    await flushed;
    expect(held.sent.map((s) => s.spans.length)).to.deep.equal([10, 10, 5]);
    expect(held.fates.exported).to.equal(25);
    await eventually(() => fates.exported === 1, { what: 'the lone span counted' });
  });

  it('counts an export that outlasts its timeout as failed, and goes on with the next', async () => {
    const { batcher, sent, fates } = batcherWith({ exportTimeoutMillis: 50 });
    for (let i = 0; i < 4; i++) batcher.add(span());
    await eventually(() => sent.length === 2, { what: 'the second batch sent once the first timed out' });
    expect(fates.failed).to.equal(2);
    sent[0].answer(true);
    await letTimePass(20, 'an answer after the timeout changes nothing');
    expect(fates.exported).to.equal(0);
  });
});

describe('recorded traces (lib/tracing/recorded-traces.ts)', () => {
  const request = (headers: Record<string, string>) => ({ method: 'POST', url: '/api/services/acme/calc/invoke/add?x=1', headers, socket: { localPort: 8080 } }) as unknown as IncomingMessage;
  const traced = (sampler: SamplerSetting) => {
    const ended: SpanRecord[] = [];
    const batcher = { add: (s: SpanRecord) => ended.push(s) } as unknown as SpanBatcher;
    return { traces: new RecordedTraces(sampler, batcher, async () => {}), ended };
  };
  const attributes = (s: SpanRecord) => Object.fromEntries(Array.from({ length: s.attributes.length / 2 }, (_, i) => [s.attributes[2 * i], s.attributes[2 * i + 1]]));

  it('makes a server span continuing the request’s parent, a call span under it, a client span under the call', () => {
    const { traces, ended } = traced({ kind: 'parentbased', root: { kind: 'always_on' } });
    const req = traces.request(request({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'k=v' }), 'req-1', '127.0.0.1');
    expect(req.traceId).to.equal(TRACE);
    req.route('/api/services/{domain}/{service}/invoke/{method}');
    const call = req.call('acme.calc', 'add');
    const out = call.outgoing('GET', 'http://example.test:81/path?q=1');
    out.answered(503);
    out.end();
    out.end();
    call.end('trap', 'inline');
    call.end('ok', 'inline');
    req.end(500);
    expect(ended.map((s) => s.kind)).to.deep.equal([SpanKind.client, SpanKind.internal, SpanKind.server]);
    const [client, inner, server] = ended;
    expect(server).to.deep.include({ traceId: TRACE, parentSpanId: PARENT, remoteParent: true, traceState: 'k=v', name: 'POST /api/services/{domain}/{service}/invoke/{method}', error: '' });
    expect(attributes(server)).to.deep.include({ 'url.path': '/api/services/acme/calc/invoke/add', 'rt.request_id': 'req-1', 'http.response.status_code': 500, 'server.port': 8080 });
    expect(inner).to.deep.include({ traceId: TRACE, parentSpanId: server.spanId, remoteParent: false, name: 'call acme.calc add', error: 'trap' });
    expect(attributes(inner)).to.deep.equal({ 'rt.service': 'acme.calc', 'rt.method': 'add', 'rt.outcome': 'trap', 'rt.placement': 'inline' });
    expect(client).to.deep.include({ traceId: TRACE, parentSpanId: inner.spanId, name: 'GET' });
    expect(attributes(client)).to.deep.include({ 'url.full': 'http://example.test:81/path', 'server.port': 81, 'http.response.status_code': 503 });
    expect(out.traceparent).to.equal(`00-${TRACE}-${client.spanId}-01`);
    expect(out.tracestate).to.equal('k=v');
    for (const s of ended) expect(s.endedAt).to.be.at.least(s.startedAt);
  });

  it('records nothing of a trace the sampler leaves out, and says so in the traceparent it passes on', () => {
    const { traces, ended } = traced({ kind: 'parentbased', root: { kind: 'always_on' } });
    const req = traces.request(request({ traceparent: `00-${TRACE}-${PARENT}-00` }), 'req-2', '127.0.0.1');
    const call = req.call('acme.calc', 'add');
    const out = call.outgoing('GET', 'http://example.test/');
    expect(out.traceparent).to.match(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
    out.end();
    call.end('ok', 'inline');
    req.end(200);
    expect(ended).to.deep.equal([]);
    const root = traced({ kind: 'always_on' });
    const lone = root.traces.outgoing('PUT', 'http://example.test/x');
    lone.end('HTTP-request-denied');
    expect(root.ended[0]).to.deep.include({ parentSpanId: undefined, name: 'PUT', error: 'HTTP-request-denied' });
    expect(lone.traceparent).to.match(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });
});
