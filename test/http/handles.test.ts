// Resources through handles (docs/api.md §5.1.2), over HTTP to rt in process
// (test/support/in-process.ts: one worker, the primary's control plane).
// COUNTERS (test/support/resource-fixtures.ts, WAT with a destructor that
// counts drops) under several sidecars, one service per behaviour whose
// instances a test ends (a trap, quiesce, restart, reload), and the cart
// example (componentize-js). One worker: a handle lives in the worker that
// made it, and forwarding between workers is tested end to end. One rt for
// the whole file.

import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildComponent, type WatSource } from '../../examples/builder.js';
import { examples } from '../../examples/index.js';
import { eventually, letTimePass } from '../support/eventually.js';
import { repository } from '../support/fixtures.js';
import { BRITTLE, COUNTERS } from '../support/resource-fixtures.js';
import { InProcessRt } from '../support/in-process.js';
import { call, type JsonResponse } from '../support/rt-process.js';
import { redactHandleId as shortened } from '../../lib/worker/execution/handle-ids.js';

/** COUNTERS under another address (its sidecar's `service`) and sidecar keys. */
const counters = (service: string, keys = '') => ({
  [`${service}.wasm`]: COUNTERS,
  [`${service}.toml`]: { raw: `service = "${service}"\n${keys}` },
});

/** COUNTERS with other bytes (a global nothing reads): a changed component for a reload. */
const COUNTERS_CHANGED: WatSource = { ...(COUNTERS as WatSource), wat: (COUNTERS as WatSource).wat.replace('(memory (export "memory") 1)', '(memory (export "memory") 1)\n  (global i32 (i32.const 7))') };

describe('resources through handles (in process)', function () {
  this.timeout(60_000);
  let rt: InProcessRt;
  let repo: string;

  const url = (path: string) => `${rt.url}/api/services/${path}`;
  const json = (body: unknown) => (body === undefined ? {} : { body: JSON.stringify(body), contentType: 'application/json' });
  /** POST .../resources/{resource}: the answer. */
  const construct = (service: string, resource: string, args: unknown) => call(url(`${service}/resources/${resource}`), json(args));
  /** A new handle (201 asserted). */
  const create = async (service: string, args: unknown, resource = 'counter') => {
    const res = await construct(service, resource, args);
    expect(res.status, res.text).to.equal(201);
    return (res.body as { handle: string }).handle;
  };
  /** POST .../handles/{id}/invoke/{method}. */
  const method = (service: string, id: string, name: string, args?: unknown) => call(url(`${service}/handles/${id}/invoke/${name}`), json(args));
  /** POST .../invoke/{name}. */
  const invoke = (service: string, name: string, args?: unknown) => call(url(`${service}/invoke/${name}`), json(args));
  const drop = (service: string, id: string) => call(url(`${service}/handles/${id}`), { method: 'DELETE' });
  const result = async (res: Promise<JsonResponse>) => {
    const answer = await res;
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.result;
  };
  const value = (service: string, id: string) => result(method(service, id, 'value'));
  const dropped = (service: string) => result(invoke(service, 'dropped')) as Promise<number>;
  const live = (service: string) => result(invoke(service, 'live')) as Promise<number>;
  const listed = async (service: string) => {
    const res = await call(url(`${service}/handles`), { method: 'GET' });
    expect(res.status, res.text).to.equal(200);
    return (res.body as { handles: Record<string, unknown>[] }).handles;
  };
  /** Asserts an error answer: status, code, and what its details say. */
  const failed = (res: JsonResponse, status: number, code: string, details: RegExp) => {
    expect(res.status, res.text).to.equal(status);
    expect(res.body.code, res.text).to.equal(code);
    expect(res.body.details, res.text).to.match(details);
  };
  const gone = async (res: Promise<JsonResponse>, why: RegExp) => failed(await res, 410, 'RT_ERR_HANDLE_GONE', why);

  /** A request on a connection of its own (no agent: `Connection: close`, which the answer must echo). */
  const fresh = (path: string, body: unknown) =>
    new Promise<JsonResponse>((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = request(url(path), { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          resolve({ status: res.statusCode!, headers, text, body: JSON.parse(text) as Record<string, unknown> });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });

  before(async function () {
    this.timeout(600_000);
    const cart = examples.find((e) => e.name === 'cart')!;
    repo = await repository({
      counters: COUNTERS,
      cart: await cart.source(),
      ...counters('idle', 'handle_idle_seconds = 1\n'),
      ...counters('bounded', 'max_handles = 2\n'),
      ...counters('per-call', 'instance_per_call = true\n'),
      ...counters('pooled', 'pool_size = 2\nmax_invocations = 3\n'),
      ...counters('recycled', 'max_invocations = 3\n'),
      ...counters('trapped'),
      ...counters('quieted'),
      ...counters('restarted'),
      ...counters('reloaded'),
      'brittle.wasm': BRITTLE,
      'brittle.toml': { raw: 'service = "brittle"\n' },
      'brittle-threads.wasm': BRITTLE,
      'brittle-threads.toml': { raw: 'service = "brittle-threads"\npool_size = 2\n' },
    });
    // Built now, so the reload test only copies it in.
    await buildComponent(COUNTERS_CHANGED);
    rt = await InProcessRt.start({ configToml: `repo_urls = ["file://${repo}"]` });
  });

  after(async () => {
    await rt?.stop();
  });

  describe('a handle', () => {
    it('is made by the constructor (201, Location) and keeps its state across calls, each on a fresh connection', async () => {
      const res = await construct('acme/counters', 'counter', { start: 100 });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.have.all.keys('handle');
      const a = res.body.handle as string;
      expect(a).to.be.a('string').with.length.of.at.least(22);
      expect(res.headers.get('location')).to.equal(`/api/services/acme/counters/handles/${a}`);
      const b = await create('acme/counters', [-5]);
      expect(b).to.not.equal(a);

      let sumA = 100;
      let sumB = -5;
      for (let i = 1; i <= 20; i++) {
        // Through the Location the constructor answered with.
        const addA = await fresh(`${res.headers.get('location')!.slice('/api/services/'.length)}/invoke/add`, { n: i });
        const addB = await fresh(`acme/counters/handles/${b}/invoke/add`, [2]);
        sumA += i;
        sumB += 2;
        expect([addA.status, addB.status], addA.text + addB.text).to.deep.equal([200, 200]);
        expect([addA.body.result, addB.body.result], `after ${i} calls each`).to.deep.equal([sumA, sumB]);
        for (const add of [addA, addB]) expect(add.headers.get('connection'), 'the connection closes after each answer').to.equal('close');
      }
      expect(await value('acme/counters', a)).to.equal(100 + 210);
      expect(await value('acme/counters', b)).to.equal(-5 + 40);
    });

    it('is passed as borrow to a static (counter.merge, also by its interface name) and to total(list<borrow>), and stays', async () => {
      const a = await create('acme/counters', { start: 3 });
      const b = await create('acme/counters', { start: 4 });
      const merged = await invoke('acme/counters', 'counter.merge', { a: { $handle: a }, b: { $handle: b } });
      expect(merged.status, merged.text).to.equal(200);
      expect(merged.body.result).to.have.all.keys('$handle');
      const m = (merged.body.result as { $handle: string }).$handle;
      expect([m, a, b]).to.have.members([...new Set([m, a, b])]);
      expect(await value('acme/counters', m), 'a static returning own makes a handle').to.equal(7);
      const again = await result(invoke('acme/counters', 'counters.counter.merge', [{ $handle: m }, { $handle: a }]));
      expect(await value('acme/counters', (again as { $handle: string }).$handle)).to.equal(10);

      expect(await result(invoke('acme/counters', 'total', { all: [{ $handle: a }, { $handle: b }, { $handle: m }, { $handle: a }] }))).to.equal(3 + 4 + 7 + 3);
      expect(await result(invoke('acme/counters', 'total', { all: [] }))).to.equal(0);
      // Borrowed, not moved: each still answers.
      expect([await value('acme/counters', a), await value('acme/counters', b)]).to.deep.equal([3, 4]);
    });

    it('is moved into a call that owns it (consume): its destructor runs in the call, and using it afterwards answers 410 "moved"', async () => {
      const c = await create('acme/counters', { start: 41 });
      await result(method('acme/counters', c, 'add', { n: 1 }));
      const before = { dropped: await dropped('acme/counters'), live: await live('acme/counters'), listed: (await listed('acme/counters')).length };
      expect(await result(invoke('acme/counters', 'consume', { c: { $handle: c } }))).to.equal(42);
      expect(await dropped('acme/counters'), 'destructors run').to.equal(before.dropped + 1);
      expect(await live('acme/counters')).to.equal(before.live - 1);
      expect((await listed('acme/counters')).length).to.equal(before.listed - 1);
      await gone(method('acme/counters', c, 'value'), /moved/);
      await gone(invoke('acme/counters', 'consume', { c: { $handle: c } }), /moved/);
      await gone(invoke('acme/counters', 'total', { all: [{ $handle: c }] }), /moved/);
      await gone(drop('acme/counters', c), /moved/);
    });

    it('comes out of a record and an option (pair), and goes back in as own (both)', async () => {
      const pair = (await result(invoke('acme/counters', 'pair', { a: 3, b: 4 }))) as { left: { $handle: string }; right: { $handle: string } | null };
      expect(pair).to.have.all.keys('left', 'right');
      expect(pair.left).to.have.all.keys('$handle');
      expect(pair.right).to.have.all.keys('$handle');
      expect(await value('acme/counters', pair.left.$handle)).to.equal(3);
      expect(await value('acme/counters', pair.right!.$handle)).to.equal(4);
      const single = (await result(invoke('acme/counters', 'pair', { a: 5, b: null }))) as { left: { $handle: string }; right: null };
      expect(single.right).to.equal(null);
      expect(await value('acme/counters', single.left.$handle)).to.equal(5);

      const before = await dropped('acme/counters');
      expect(await result(invoke('acme/counters', 'both', { d: pair }))).to.equal(7);
      expect(await result(invoke('acme/counters', 'both', { d: { left: single.left, right: null } }))).to.equal(5);
      expect(await dropped('acme/counters')).to.equal(before + 3);
      for (const h of [pair.left, pair.right!, single.left]) await gone(method('acme/counters', h.$handle, 'value'), /moved/);
    });

    it('is dropped by DELETE (204, its destructor has run), then answers 410, DELETE again too', async () => {
      const h = await create('acme/counters', { start: 1 });
      const before = { dropped: await dropped('acme/counters'), live: await live('acme/counters') };
      const res = await drop('acme/counters', h);
      expect(res.status, res.text).to.equal(204);
      expect(res.text).to.equal('');
      expect(await dropped('acme/counters'), 'destructors run by the time DELETE answered').to.equal(before.dropped + 1);
      expect(await live('acme/counters')).to.equal(before.live - 1);
      await gone(method('acme/counters', h, 'value'), /dropped/);
      await gone(drop('acme/counters', h), /dropped/);
      await gone(invoke('acme/counters', 'total', { all: [{ $handle: h }] }), /dropped/);
      expect(await dropped('acme/counters'), 'one destructor call').to.equal(before.dropped + 1);
    });

    it('is listed by GET .../handles while it lives, with its resource and times', async () => {
      const mine = [await create('acme/counters', [0]), await create('acme/counters', [0])];
      const handles = await listed('acme/counters');
      const ids = handles.map((h) => h.handle);
      expect(ids, 'listed shortened: rt has no control token here').to.include.members(mine.map(shortened));
      expect(new Set(ids).size).to.equal(ids.length);
      expect(await live('acme/counters'), 'the instance holds what the listing shows').to.equal(handles.length);
      const entry = handles.find((h) => h.handle === shortened(mine[0]))!;
      expect(entry).to.include({ resource: 'counter' });
      expect(entry).to.include.keys('created', 'last_used', 'expires');
      const [created, lastUsed, expires] = [entry.created, entry.last_used, entry.expires].map((t) => Date.parse(t as string));
      expect(Math.abs(Date.now() - created), 'created just now').to.be.below(30_000);
      expect(lastUsed).to.be.at.least(created);
      expect(expires - lastUsed, 'the default handle_idle_seconds (300)').to.equal(300_000);

      expect((await drop('acme/counters', mine[0])).status).to.equal(204);
      const after = (await listed('acme/counters')).map((h) => h.handle);
      expect(after).to.have.length(ids.length - 1);
      expect(after).to.not.include(shortened(mine[0]));
      expect(after).to.include(shortened(mine[1]));
    });

    it('is never logged whole: its id is a capability', async () => {
      const h = await create('acme/counters', { start: 0 });
      await result(method('acme/counters', h, 'add', { n: 1 }));
      await gone(invoke('acme/counters', 'consume', { c: { $handle: h } }).then(() => method('acme/counters', h, 'value')), /moved/);
      await rt.workerLogsFlushed();
      const secret = h.slice(h.indexOf('.') + 1);
      expect(rt.output.split('\n').filter((l) => l.includes(secret)), 'log lines with the random part of an id').to.deep.equal([]);
    });
  });

  describe('what is not there', () => {
    let h: string;
    before(async () => {
      h = await create('acme/counters', { start: 0 });
    });

    it('answers 404 for an id rt never issued, well-formed or not, in the path and in a body', async () => {
      // Shaped like rt's ids (worker.random.tag), with a tag rt did not make: its first character changed (the
      // last one carries padding bits in base64url, which a decoder may ignore: changing it could leave the tag as it was).
      const dot = h.lastIndexOf('.') + 1;
      const forged = h.slice(0, dot) + (h[dot] === 'A' ? 'B' : 'A') + h.slice(dot + 1);
      for (const id of [forged, `1.${'A'.repeat(22)}.${'A'.repeat(11)}`, 'nope', '%E2%9C%93']) {
        failed(await method('acme/counters', id, 'value'), 404, 'RT_ERR_UNKNOWN_HANDLE', /was ever issued/);
        failed(await drop('acme/counters', id), 404, 'RT_ERR_UNKNOWN_HANDLE', /was ever issued/);
      }
      failed(await invoke('acme/counters', 'total', { all: [{ $handle: h }, { $handle: forged }] }), 404, 'RT_ERR_UNKNOWN_HANDLE', /was ever issued/);
      failed(await invoke('acme/counters', 'consume', { c: { $handle: 'nope' } }), 404, 'RT_ERR_UNKNOWN_HANDLE', /was ever issued/);
      expect(await value('acme/counters', h), 'the real one is untouched').to.equal(0);
    });

    it('answers 404 for a live handle of another service: ids are issued per service', async () => {
      const other = await create('acme/bounded', { start: 5 });
      failed(await method('acme/counters', other, 'value'), 404, 'RT_ERR_UNKNOWN_HANDLE', /was ever issued/);
      failed(await invoke('acme/counters', 'total', { all: [{ $handle: other }] }), 404, 'RT_ERR_UNKNOWN_HANDLE', /^all\[0\]: .*was ever issued/);
      expect(await value('acme/bounded', other), 'where it was made, it lives on').to.equal(5);
      expect((await drop('acme/bounded', other)).status).to.equal(204);
    });

    it('answers 404 for an unknown resource, and for a method the handle\'s resource does not have', async () => {
      const res = await construct('acme/counters', 'nope', {});
      failed(res, 404, 'RT_ERR_UNKNOWN_RESOURCE', /exports no resource "nope" \(resources: counter\)/);
      expect(res.body).to.include({ service: 'acme.counters' });
      failed(await method('acme/counters', h, 'nope'), 404, 'RT_ERR_UNKNOWN_METHOD', /has no method "nope" \(methods: .*\badd\b/);
      // Functions of the service that are not the resource's methods are not reached through a handle.
      failed(await method('acme/counters', h, 'live'), 404, 'RT_ERR_UNKNOWN_METHOD', /has no method "live"/);
      failed(await call(url('acme/nope/resources/counter'), json({ start: 1 })), 404, 'RT_ERR_UNKNOWN_SERVICE', /./);
    });

    it('answers 400 naming the path for a body that does not fit, and calls nothing', async () => {
      failed(await method('acme/counters', h, 'add', { n: 'seven' }), 400, 'RT_ERR_INVALID_ARGUMENTS', /^n: expected s64/);
      failed(await method('acme/counters', h, 'add', {}), 400, 'RT_ERR_INVALID_ARGUMENTS', /\bn\b/);
      failed(await construct('acme/counters', 'counter', { start: 1.5 }), 400, 'RT_ERR_INVALID_ARGUMENTS', /^start: expected s64/);
      failed(await invoke('acme/counters', 'total', { all: [{ $handle: h }, { handle: h }] }), 400, 'RT_ERR_INVALID_ARGUMENTS', /^all\[1\]/);
      failed(await invoke('acme/counters', 'both', { d: { left: { $handle: h }, right: 5 } }), 400, 'RT_ERR_INVALID_ARGUMENTS', /^d\.right/);
      failed(await call(url(`acme/counters/handles/${h}/invoke/add`), { body: '{"n": 1', contentType: 'application/json' }), 400, 'RT_ERR_INVALID_JSON', /./);
      // `both` would have moved h had it been called.
      expect(await value('acme/counters', h)).to.equal(0);
    });
  });

  describe('lifetime', () => {
    it('a handle unused for handle_idle_seconds expires: 410 with the reason, its destructor has run; one in use lives on', async function () {
      this.timeout(20_000);
      const idle = await create('acme/idle', { start: 1 });
      const busy = await create('acme/idle', { start: 1 });
      const before = await dropped('acme/idle');
      const started = performance.now();
      // The busy one is used every 300 ms, well within its second; the idle one expires 1 to 1.25 s in (its directory looks every 250 ms).
      for (let i = 0; i < 6; i++) {
        await letTimePass(300, 'the busy handle is used every 300 ms, the idle one not at all');
        expect(await result(method('acme/idle', busy, 'add', { n: 1 })), `busy, after ${Math.round(performance.now() - started)} ms`).to.equal(2 + i);
      }
      await eventually(async () => gone(method('acme/idle', idle, 'value'), /expired: unused for handle_idle_seconds \(1 s\)/), { what: 'the idle handle to expire', timeoutMs: 3_000 });
      expect(await dropped('acme/idle'), 'the expired one\'s destructor').to.equal(before + 1);
      expect((await listed('acme/idle')).map((h) => h.handle)).to.deep.equal([shortened(busy)]);
      // Left alone too, the busy one expires in turn.
      await eventually(async () => (await method('acme/idle', busy, 'value')).status === 410, { what: 'the busy handle to expire once unused', timeoutMs: 5_000, intervalMs: 1_500 });
      await eventually(async () => expect(await dropped('acme/idle')).to.equal(before + 2), { what: 'its destructor' });
      expect(await listed('acme/idle')).to.deep.equal([]);
    });

    it('max_handles bounds the live handles: beyond it 503 with Retry-After, until one is dropped', async () => {
      const a = await create('acme/bounded', { start: 1 });
      const b = await create('acme/bounded', { start: 2 });
      const refused = await construct('acme/bounded', 'counter', { start: 3 });
      failed(refused, 503, 'RT_ERR_TOO_MANY_HANDLES', /max_handles \(2\)/);
      expect(refused.headers.get('retry-after')).to.equal('1');
      // A static that would make one is refused alike; calls that make none are not.
      failed(await invoke('acme/bounded', 'counter.merge', { a: { $handle: a }, b: { $handle: b } }), 503, 'RT_ERR_TOO_MANY_HANDLES', /max_handles/);
      expect(await result(method('acme/bounded', a, 'add', { n: 1 }))).to.equal(2);
      expect(await result(invoke('acme/bounded', 'total', { all: [{ $handle: a }, { $handle: b }] }))).to.equal(4);
      expect(await live('acme/bounded'), 'nothing was made for the refused calls').to.equal(2);

      expect((await drop('acme/bounded', a)).status).to.equal(204);
      const c = await create('acme/bounded', { start: 3 });
      expect(await value('acme/bounded', c)).to.equal(3);
      failed(await construct('acme/bounded', 'counter', { start: 4 }), 503, 'RT_ERR_TOO_MANY_HANDLES', /max_handles/);
      // An own parameter frees a place too.
      expect(await result(invoke('acme/bounded', 'consume', { c: { $handle: c } }))).to.equal(3);
      expect(await value('acme/bounded', await create('acme/bounded', { start: 5 }))).to.equal(5);
    });

    it('a trap ends the instance and its handles: 410 naming the trap; the service serves on with a fresh instance', async () => {
      const h = await create('acme/trapped', { start: 1 });
      const other = await create('acme/trapped', { start: 2 });
      const trap = await method('acme/trapped', h, 'fail');
      expect(trap.status, trap.text).to.equal(500);
      expect(trap.body.code).to.equal('RT_ERR_COMPONENT_TRAPPED');
      const message = trap.body.details as string;
      expect(message).to.be.a('string').and.not.equal('');
      for (const id of [h, other]) {
        const res = await method('acme/trapped', id, 'value');
        failed(res, 410, 'RT_ERR_HANDLE_GONE', /trapped/);
        expect(res.body.details).to.include(message);
      }
      await gone(drop('acme/trapped', other), /trapped/);
      const next = await create('acme/trapped', { start: 7 });
      expect(await result(method('acme/trapped', next, 'add', { n: 1 }))).to.equal(8);
      expect(await live('acme/trapped'), 'a fresh instance: only the new counter').to.equal(1);
      expect(await dropped('acme/trapped')).to.equal(0);
      expect((await listed('acme/trapped')).map((l) => l.handle)).to.deep.equal([shortened(next)]);
    });

    for (const service of ['brittle', 'brittle-threads']) {
      it(`a trap in a constructor or a destructor ends the instance's handles too (${service})`, async () => {
        expect(BRITTLE.wat).to.not.equal((COUNTERS as WatSource).wat);
        const h = await create(`acme/${service}`, { start: 1 });
        failed(await construct(`acme/${service}`, 'counter', { start: -1 }), 500, 'RT_ERR_COMPONENT_TRAPPED', /unreachable/);
        await gone(method(`acme/${service}`, h, 'value'), /its instance ended: a call on it trapped: (wasm trap: wasm `)?unreachable/);
        expect(await listed(`acme/${service}`)).to.deep.equal([]);

        const a = await create(`acme/${service}`, { start: 5 });
        const b = await create(`acme/${service}`, { start: 0 });
        expect(await result(method(`acme/${service}`, b, 'add', { n: -13 }))).to.equal(-13);
        expect((await drop(`acme/${service}`, b)).status, 'b is gone, whatever its destructor did').to.equal(204);
        await gone(method(`acme/${service}`, a, 'value'), /its instance ended: a call on it trapped: (wasm trap: wasm `)?unreachable/);
        expect(await listed(`acme/${service}`)).to.deep.equal([]);
        const next = await create(`acme/${service}`, { start: 2 });
        expect(await value(`acme/${service}`, next)).to.equal(2);
        expect(await live(`acme/${service}`), 'a fresh instance').to.equal(1);
      });
    }

    it('quiesce ends the handles: 410 "quiesced"; the constructor answers 503', async () => {
      const h = await create('acme/quieted', { start: 1 });
      const quiesce = await call(url('acme/quieted/quiesce'), { method: 'PUT' });
      expect(quiesce.status, quiesce.text).to.equal(200);
      await gone(method('acme/quieted', h, 'value'), /quiesced/);
      await gone(drop('acme/quieted', h), /quiesced/);
      failed(await construct('acme/quieted', 'counter', { start: 1 }), 503, 'RT_ERR_SERVICE_QUIESCED', /quiesced/);
      expect(await listed('acme/quieted')).to.deep.equal([]);
      // A restart serves again, with no handles.
      expect((await call(url('acme/quieted/restart'))).status).to.equal(200);
      await gone(method('acme/quieted', h, 'value'), /quiesced/);
      expect(await value('acme/quieted', await create('acme/quieted', { start: 9 }))).to.equal(9);
    });

    it('a restart ends the handles: 410 "restarted"; new ones live on the new instance', async () => {
      const h = await create('acme/restarted', { start: 1 });
      const restart = await call(url('acme/restarted/restart'));
      expect(restart.status, restart.text).to.equal(200);
      await gone(method('acme/restarted', h, 'value'), /restarted/);
      await gone(invoke('acme/restarted', 'consume', { c: { $handle: h } }), /restarted/);
      const next = await create('acme/restarted', { start: 2 });
      expect(await value('acme/restarted', next)).to.equal(2);
      expect(await live('acme/restarted'), 'the new instance holds only the new counter').to.equal(1);
    });

    it('a reload that replaces the service ends its handles (410); handles of services it keeps live on', async () => {
      const h = await create('acme/reloaded', { start: 1 });
      const kept = await create('acme/counters', { start: 11 });
      await writeFile(join(repo, 'reloaded.wasm'), await buildComponent(COUNTERS_CHANGED));
      const reload = await call(`${rt.url}/api/reload`);
      expect(reload.status, reload.text).to.equal(200);
      expect(reload.body).to.deep.include({ updated: ['acme.reloaded'], added: [], removed: [] });
      await gone(method('acme/reloaded', h, 'value'), /reloaded/);
      expect(await value('acme/counters', kept)).to.equal(11);
      expect(await value('acme/reloaded', await create('acme/reloaded', { start: 3 }))).to.equal(3);
    });

    it('an instance_per_call service refuses to make handles: 409', async () => {
      failed(await construct('acme/per-call', 'counter', { start: 1 }), 409, 'RT_ERR_HANDLES_REFUSED', /instance_per_call/);
      failed(await invoke('acme/per-call', 'pair', { a: 1, b: 2 }), 409, 'RT_ERR_HANDLES_REFUSED', /instance_per_call/);
      expect(await live('acme/per-call'), 'nothing was made').to.equal(0);
      expect(await listed('acme/per-call')).to.deep.equal([]);
    });
  });

  describe('instances: threads (pool_size = 2), max_invocations = 3', () => {
    it('a handle keeps its state while calls run on both threads: each call runs where its handle lives', async () => {
      const described = await call(url('acme/pooled'), { method: 'GET' });
      expect(described.body.instances).to.include({ placement: 'threads', live: 2, pool_size: 2, max_invocations: 3 });
      const starts = [10, 20, 30, 40];
      const ids = await Promise.all(starts.map((start) => create('acme/pooled', { start })));
      const answers = await Promise.all(ids.flatMap((id) => Array.from({ length: 5 }, () => method('acme/pooled', id, 'add', { n: 1 }))).concat(Array.from({ length: 6 }, () => invoke('acme/pooled', 'live'))));
      for (const res of answers) expect(res.status, res.text).to.equal(200);
      expect(await Promise.all(ids.map((id) => value('acme/pooled', id)))).to.deep.equal(starts.map((s) => s + 5));
      expect((await call(url('acme/pooled'), { method: 'GET' })).body.instances).to.include({ handles: 4, live: 2 });
      // Moved into a call on its thread.
      expect(await result(invoke('acme/pooled', 'consume', { c: { $handle: ids[0] } }))).to.equal(15);
      await gone(method('acme/pooled', ids[0], 'value'), /moved/);
      for (const id of ids.slice(1)) expect((await drop('acme/pooled', id)).status).to.equal(204);
      expect(await listed('acme/pooled')).to.deep.equal([]);
    });

    for (const [service, placement] of [
      ['pooled', 'threads'],
      ['recycled', 'inline'],
    ] as const) {
      it(`an instance holding a live handle is not recycled at max_invocations; once it holds none, it is (${placement})`, async () => {
        expect((await call(url(`acme/${service}`), { method: 'GET' })).body.instances).to.include({ placement, max_invocations: 3 });
        // Calls one after another go to the first thread.
        const h = await create(`acme/${service}`, { start: 0 });
        for (let i = 1; i <= 6; i++) expect(await result(method(`acme/${service}`, h, 'add', { n: 1 })), `call ${i + 1} on the instance`).to.equal(i);
        expect(await value(`acme/${service}`, h)).to.equal(6);
        const res = await drop(`acme/${service}`, h);
        expect(res.status, res.text).to.equal(204);
        if (placement === 'threads') {
          // Past its count and holding nothing: this call is its last.
          expect(await dropped(`acme/${service}`), 'its destructor ran on the instance that held it').to.be.at.least(1);
        }
        // Inline, the drop was its last call.
        expect(await dropped(`acme/${service}`), 'a fresh instance').to.equal(0);
      });
    }
  });

  describe('the cart example (componentize-js)', () => {
    const cart = (id: string, name: string, args?: unknown) => result(method('example/cart', id, name, args));

    it('makes carts, adds lines, totals them, merges two (result<cart, string>), and checks one out (own): 410 after', async () => {
      const a = await create('example/cart', { currency: 'EUR' }, 'cart');
      const b = await create('example/cart', ['EUR'], 'cart');
      expect(await cart(a, 'add', { sku: 'apple', quantity: 3, 'unit-price-cents': 40 })).to.equal(1);
      expect(await cart(a, 'add', { sku: 'pear', quantity: 1, 'unit-price-cents': 75 })).to.equal(2);
      expect(await cart(a, 'add', ['apple', 2, 40])).to.equal(2);
      expect(await cart(b, 'add', { sku: 'fig', quantity: 4, 'unit-price-cents': 25 })).to.equal(1);
      expect(await cart(a, 'total')).to.deep.equal({ currency: 'EUR', cents: 5 * 40 + 75 });
      expect(await cart(a, 'lines')).to.deep.equal([
        { sku: 'apple', quantity: 5, 'unit-price-cents': 40 },
        { sku: 'pear', quantity: 1, 'unit-price-cents': 75 },
      ]);

      // ok: the new cart's handle as the result itself; a and b stay as they were.
      const merged = await invoke('example/cart', 'cart.merge', { a: { $handle: a }, b: { $handle: b } });
      expect(merged.status, merged.text).to.equal(200);
      expect(merged.body).to.have.all.keys('result');
      expect(merged.body.result).to.have.all.keys('$handle');
      const m = (merged.body.result as { $handle: string }).$handle;
      expect(await cart(m, 'total')).to.deep.equal({ currency: 'EUR', cents: 5 * 40 + 75 + 100 });
      expect((await cart(m, 'lines') as { sku: string }[]).map((l) => l.sku)).to.deep.equal(['apple', 'pear', 'fig']);
      expect(await cart(b, 'total')).to.deep.equal({ currency: 'EUR', cents: 100 });
      // err: 500 with the component's text.
      const usd = await create('example/cart', { currency: 'USD' }, 'cart');
      const refused = await invoke('example/cart', 'cart.merge', { a: { $handle: a }, b: { $handle: usd } });
      failed(refused, 500, 'RT_ERR_METHOD_RETURNED_ERROR', /^cannot merge a cart in EUR with a cart in USD$/);
      expect(refused.body.value).to.equal('cannot merge a cart in EUR with a cart in USD');

      const receipt = await result(invoke('example/cart', 'checkout', { c: { $handle: a } }));
      expect(receipt).to.deep.equal({
        lines: [
          { sku: 'apple', quantity: 5, 'unit-price-cents': 40 },
          { sku: 'pear', quantity: 1, 'unit-price-cents': 75 },
        ],
        items: 6,
        total: { currency: 'EUR', cents: 275 },
      });
      await gone(method('example/cart', a, 'total'), /moved/);
      await gone(invoke('example/cart', 'checkout', { c: { $handle: a } }), /moved/);
      // The others are untouched.
      expect(await cart(m, 'total')).to.deep.equal({ currency: 'EUR', cents: 375 });
      expect((await drop('example/cart', b)).status).to.equal(204);
      await gone(method('example/cart', b, 'lines'), /dropped/);
      expect((await listed('example/cart')).map((h) => h.handle)).to.have.members([m, usd].map(shortened));
      expect((await listed('example/cart')).map((h) => h.resource)).to.deep.equal(['cart', 'cart']);
    });
  });
});
