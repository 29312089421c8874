// Links through the real CLI (docs/api.md §5.9, sidecar `[imports]`): a
// service calls an interface another service in the same worker exports,
// values passed between the two instances; the target's err case is the
// caller's, its trap fails the caller's call and both serve on; a reload of
// the target is what the next call sees; a link that cannot hold is a load
// error naming both sides, and the rest serve. With JSPI: async functions
// across links, and streams and futures passed both ways (P3_FLOW forwards
// what it is given to the targets and hands back what they answer), a
// stream dropped or failed on one side ending it on the other.

import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildComponent } from '../../examples/builder.js';
import { repository } from '../support/fixtures.js';
import { call, duplexExchange, openDuplex, RtProcess } from '../support/rt-process.js';
import { asyncBodies, asyncCalls, asyncStreams, P3_DOZER, P3_NAP_SERVER } from '../support/async-components.js';
import { calc, FLOW_BYTES, FLOW_FUTURES, FLOW_SOURCE, FRONT, P3_FLOW } from '../support/link-components.js';
import { eventually } from '../support/eventually.js';
import { randomBytes } from 'node:crypto';
import { request, type IncomingMessage } from 'node:http';
import { hasJspi } from '../../lib/platform.js';

describe('links (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;
  let repo: string;
  const invoke = (service: string, method: string, args: unknown) => call(`${rt.url}/api/services/acme/${service}/invoke/${method}`, { body: JSON.stringify(args), contentType: 'application/json' });

  before(async function () {
    this.timeout(600_000);
    repo = await repository({
      calc: calc(),
      'calc.toml': { raw: 'domain = "acme"\nservice = "calc"\n' },
      front: FRONT,
      'front.toml': { raw: 'domain = "acme"\nservice = "front"\n[imports]\n"acme:calc/math" = "acme/calc"\n' },
      // Each link below cannot hold: these fail to load, naming both sides.
      'lost.wasm': FRONT,
      'lost.toml': { raw: 'domain = "acme"\nservice = "lost"\n[imports]\n"acme:calc/math" = "acme/nowhere"\n' },
      'astray.wasm': FRONT,
      'astray.toml': { raw: 'domain = "acme"\nservice = "astray"\n[imports]\n"acme:calc/math" = "acme/front"\n' },
    });
    rt = await RtProcess.start({ workers: 2, configToml: `repo_urls = ["file://${repo}"]\n[http]\nrequest_timeout_seconds = 5\n` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('calls the linked service: numbers, strings and a result pass both ways, in every worker', async () => {
    for (let i = 0; i < 4; i++) {
      const sum = await invoke('front', 'sum-twice', { a: 2, b: 3 });
      expect([sum.status, sum.body], sum.text).to.deep.equal([200, { result: 10 }]);
      const relayed = await invoke('front', 'relay', { text: 'héllo' });
      expect(relayed.body).to.deep.equal({ result: 'got:héllo' });
      expect((await invoke('front', 'divide', { a: 7, b: 2 })).body).to.deep.equal({ result: 3 });
    }
    const { body } = await call(`${rt.url}/api/services/acme/front`, { method: 'GET' });
    expect(body).to.deep.include({ links: { 'acme:calc/math@1.0.0': 'acme/calc' }, unsatisfied_imports: [] });
  });

  it("answers the target's err case as the caller's, and a trap in the target as the caller's failure; both serve on", async () => {
    const refused = await invoke('front', 'divide', { a: 1, b: 0 });
    expect(refused.status).to.equal(500);
    expect(refused.body).to.include({ code: 'RT_ERR_METHOD_RETURNED_ERROR', service: 'acme.front' });
    expect(refused.body.value).to.equal('division by zero');
    const trapped = await invoke('front', 'boom', {});
    expect(trapped.status).to.equal(500);
    expect(trapped.body).to.include({ code: 'RT_ERR_COMPONENT_TRAPPED', service: 'acme.front' });
    expect(trapped.body.details).to.match(/acme:calc\/math@1\.0\.0#crash across the link to acme\/calc failed: it trapped/);
    expect((await invoke('front', 'sum-twice', { a: 1, b: 1 })).body).to.deep.equal({ result: 4 });
    expect((await invoke('calc', 'add', { a: 1, b: 1 })).body).to.deep.equal({ result: 2 });
  });

  it('fails a link to a service that is not served, or that does not export the interface, at load: the listing names both sides', async () => {
    const { body } = await call(`${rt.url}/api/services`, { method: 'GET' });
    const failed: Record<string, string> = Object.fromEntries((body.failed as { source: string; error: string }[]).map((f) => [f.source.split('/').pop(), f.error]));
    expect(failed['lost.wasm']).to.equal('acme.lost imports acme:calc/math@1.0.0 from acme/nowhere ([imports]): no service acme/nowhere is served (no component has that address, or it failed to load)');
    expect(failed['astray.wasm']).to.equal(`acme.astray imports acme:calc/math@1.0.0 from acme/front ([imports]): acme/front (${join(repo, 'front.wasm')}) does not export acme:calc/math@1.0.0`);
    expect((body.services as { service: string }[]).map((s) => s.service).sort()).to.deep.equal(['calc', 'front']);
  });

  it('sees a reload of the target in the next call across the link', async () => {
    await writeFile(join(repo, 'calc.wasm'), await buildComponent(calc(1000)));
    const reloaded = await call(`${rt.url}/api/reload`);
    expect(reloaded.status, reloaded.text).to.equal(200);
    expect(reloaded.body).to.deep.include({ updated: ['acme.calc'] });
    // add(add(2, 3) = 1005, 1005) = 3010, in whichever worker answers.
    for (let i = 0; i < 4; i++) expect((await invoke('front', 'sum-twice', { a: 2, b: 3 })).body).to.deep.equal({ result: 3010 });
  });
});

// WASI 0.3 components need JSPI (Node 24, 26): on 22 they do not load (platform.test.ts).
if (hasJspi) describe('async links (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;

  before(async function () {
    this.timeout(600_000);
    const repo = await repository({
      naps: P3_NAP_SERVER,
      'naps.toml': { raw: 'domain = "acme"\nservice = "naps"\nmax_concurrency = 64\n' },
      dozer: P3_DOZER,
      'dozer.toml': { raw: 'domain = "acme"\nservice = "dozer"\nmax_concurrency = 64\n[imports]\n"acme:rest/nap" = "acme/naps"\n' },
      // One instance of the bytes service: a call it kept after its caller left would hold up every later one.
      'bytes.wasm': { raw: await asyncBodies(FLOW_BYTES) },
      'bytes.toml': { raw: 'domain = "acme"\nservice = "bytes"\nmax_instances = 1\n' },
      'futures.wasm': { raw: await asyncCalls(FLOW_FUTURES) },
      'futures.toml': { raw: 'domain = "acme"\nservice = "futures"\n' },
      // One instance too: its `drops` counts the writes that found their reader gone.
      'source.wasm': { raw: await asyncStreams(FLOW_SOURCE) },
      'source.toml': { raw: 'domain = "acme"\nservice = "source"\nmax_instances = 1\n' },
      flow: P3_FLOW,
      'flow.toml': { raw: 'domain = "acme"\nservice = "flow"\n[imports]\n"acme:flow/bytes" = "acme/bytes"\n"acme:flow/futures" = "acme/futures"\n"acme:flow/source" = "acme/source"\n' },
    });
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n[http]\nrequest_timeout_seconds = 5\n` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('awaits an async function across a link: 20 calls that wait 300 ms each, side by side, each in one instance', async () => {
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(`${rt.url}/api/services/acme/dozer/invoke/doze`, { body: JSON.stringify({ ns: 300_000_000 }), contentType: 'application/json' })));
    const took = performance.now() - started;
    for (const a of answers) {
      expect(a.status, a.text).to.equal(200);
      // What the target measured, passed back through the caller.
      expect(a.body.result).to.be.at.least(300_000_000);
    }
    // One after another they would take 6 s.
    expect(took).to.be.below(2_500);
    const { body } = await call(`${rt.url}/api/services`, { method: 'GET' });
    const live = Object.fromEntries((body.services as { service: string; instances: { live: number } }[]).map((s) => [s.service, s.instances.live]));
    expect(live.naps, 'one instance served them').to.equal(1);
    expect(live.dozer, 'one instance served them').to.equal(1);
  });

  const url = (service: string, method: string, query = '') => `${rt.url}/api/services/acme/${service}/invoke/${method}${query}`;

  it('passes streams across a link both ways: bytes in and out (4 MiB, upper-cased by the target), bytes in for a number, NDJSON items in and out', async () => {
    const text = randomBytes(3 * 2 ** 20).toString('base64').slice(0, 4 * 2 ** 20);
    const upper = await fetch(url('flow', 'upper'), { method: 'POST', body: text, headers: { 'content-type': 'application/octet-stream' } });
    expect(upper.status).to.equal(200);
    expect(upper.headers.get('content-type')).to.equal('application/octet-stream');
    const back = await upper.text();
    expect(back.length).to.equal(text.length);
    expect(back === text.toUpperCase(), 'every byte, upper-cased').to.equal(true);
    const body = Buffer.from(text);
    const linked = await call(url('flow', 'digest', '?seed=7'), { body, contentType: 'application/octet-stream' });
    const direct = await call(url('bytes', 'digest', '?seed=7'), { body, contentType: 'application/octet-stream' });
    expect([linked.status, linked.body], linked.text).to.deep.equal([200, direct.body]);
    const sums = await call(url('flow', 'running'), { body: Array.from({ length: 10_000 }, (_, i) => `${i + 1}\n`).join(''), contentType: 'application/x-ndjson' });
    const lines = sums.text.trim().split('\n');
    expect(lines.length).to.equal(10_000);
    expect(lines[2]).to.equal('6');
    expect(lines.at(-1)).to.equal(String(50_005_000));
  });

  it('answers across a link while the body is still arriving (full duplex through both services)', async () => {
    const { text } = await duplexExchange(url('flow', 'upper'), 'application/octet-stream', ['hello, ', 'HELLO, '], 'wörld!', 'the first piece back through the link, before the body has ended');
    expect(text).to.equal('HELLO, WöRLD!');
  });

  it('passes futures across a link both ways: a future the target returns, and one the caller gives', async () => {
    expect((await call(url('flow', 'promised'), { body: '{}', contentType: 'application/json' })).body).to.deep.equal({ result: 7 });
    expect((await call(url('flow', 'wait'), { body: '{"v": 41}', contentType: 'application/json' })).body).to.deep.equal({ result: 42 });
  });

  it("drops a stream on both sides when the caller's client leaves mid-stream: the target, one instance, serves the next calls", async () => {
    for (let i = 0; i < 3; i++) {
      const { req, res } = await openDuplex(url('flow', 'upper'), 'application/octet-stream', 'going, ');
      let got = '';
      res.on('data', (d: Buffer) => (got += d.toString()));
      await eventually(() => expect(got).to.equal('GOING, '), { what: 'the first piece back', timeoutMs: 5_000, intervalMs: 10 });
      req.destroy();
      res.destroy();
    }
    // The caller's streams hold their client's share of the caller's threads until rt has seen them end, a moment after the client
    // left (fair-shares.ts: 503 meanwhile); a stream never ended would hold it for good.
    const upper = (text: string) => call(url('flow', 'upper'), { body: text, contentType: 'application/octet-stream' });
    await eventually(async () => (await upper('probe')).status !== 503, { what: "the client's share of the caller's threads given back", timeoutMs: 5_000, intervalMs: 50 });
    // A call the target still held would keep its one instance: these would wait out the 5 s timeout.
    for (let i = 0; i < 3; i++) {
      const again = await upper(`again ${i}`);
      expect([again.status, again.text]).to.deep.equal([200, `AGAIN ${i}`]);
    }
    const { body } = await call(`${rt.url}/api/services/acme/flow`, { method: 'GET' });
    expect(body.links).to.deep.equal({ [FLOW_BYTES]: 'acme/bytes', [FLOW_FUTURES]: 'acme/futures', [FLOW_SOURCE]: 'acme/source' });
  });

  it("drops a stream the target returned when the caller's client stops reading it: the target's next write finds its reader gone", async () => {
    const drops = async () => (await call(url('source', 'drops'), { body: '{}', contentType: 'application/json' })).body.result as number;
    const before = await drops();
    const res = await new Promise<IncomingMessage>((resolve, reject) => request(url('flow', 'bytes'), { method: 'POST', headers: { 'content-type': 'application/json' } }, resolve).on('error', reject).end('{"count": 1000000000}'));
    expect(res.statusCode).to.equal(200);
    let got = 0;
    res.on('data', (d: Buffer) => (got += d.length));
    await eventually(() => expect(got).to.be.above(0), { what: 'the first bytes through the link', timeoutMs: 5_000, intervalMs: 10 });
    res.destroy();
    await eventually(async () => expect(await drops()).to.be.above(before), { what: "the target's write finding the stream dropped", timeoutMs: 5_000, intervalMs: 50 });
    const whole = await call(url('flow', 'bytes'), { body: '{"count": 100000}', contentType: 'application/json' });
    expect([whole.status, whole.text.length]).to.deep.equal([200, 100_000]);
  });

  it('cuts the caller\'s streamed answer short when the target traps mid-stream; both serve on', async () => {
    const res = await new Promise<IncomingMessage>((resolve, reject) => request(url('flow', 'broken'), { method: 'POST', headers: { 'content-type': 'application/json' } }, resolve).on('error', reject).end('{"count": 1000}'));
    let text = '';
    res.on('data', (d: Buffer) => (text += d.toString()));
    const ending = await new Promise<string>((resolve) => {
      res.on('end', () => resolve('ended whole'));
      res.on('error', () => resolve('cut'));
      res.on('aborted', () => resolve('cut'));
    });
    expect(ending, text.slice(-100)).to.equal('cut');
    const numbers = await call(url('flow', 'bytes'), { body: '{"count": 10}', contentType: 'application/json' });
    expect([numbers.status, [...Buffer.from(numbers.text)]]).to.deep.equal([200, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]);
  });
});
