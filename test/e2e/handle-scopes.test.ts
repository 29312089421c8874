// End to end: handle scopes (docs/api.md §5.1.2). A constructor that names
// a scope (`RT-Handle-Scope`) makes its handle in that scope's own
// instance, in the scope's home worker: handles of one scope can be passed
// together whichever connections made them; handles of two scopes cannot
// (409 naming them); a trap or a memory cap in one scope's instance ends
// only that scope's handles. `handle_scope = "required"`, `max_scopes` and
// `max_handles` per scope have their answers.

import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { expect } from 'chai';
import { repository } from '../support/fixtures.js';
import { BRITTLE, COUNTERS, GROWING } from '../support/resource-fixtures.js';
import { RtProcess } from '../support/rt-process.js';
import { sendOn } from '../support/worker-connections.js';

const newScope = () => randomBytes(16).toString('hex');
const ref = (id: string) => ({ $handle: id });

/** The helpers of one rt: requests on fresh connections, so that any worker may take each. */
function client(rt: () => RtProcess) {
  const send = async (path: string, body?: unknown, headers: Record<string, string> = {}, method = 'POST') => {
    const answer = await sendOn(new Agent({ keepAlive: false }), `${rt().url}/api/services/${path}`, method, body === undefined ? undefined : JSON.stringify(body), headers);
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(answer.body) as Record<string, unknown>;
    } catch {
      // a 204
    }
    return { ...answer, json };
  };
  const make = async (service: string, scope: string | undefined, start = 1) => {
    const made = await send(`acme/${service}/resources/counter`, { start }, scope === undefined ? {} : { 'rt-handle-scope': scope });
    expect(made.status, made.body).to.equal(201);
    return made.json.handle as string;
  };
  const value = (service: string, id: string) => send(`acme/${service}/handles/${id}/invoke/value`);
  return { send, make, value };
}

describe('handle scopes, 2 workers (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;
  const { send, make, value } = client(() => rt);

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({ counters: GROWING, 'strict.wasm': COUNTERS, 'strict.toml': { raw: 'service = "strict"\nhandle_scope = "required"\n' } });
    rt = await RtProcess.start({ workers: 2, configToml: `repo_urls = ["file://${repo}"]\n[runtime]\nmax_memory_mb = 4\n` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('passes handles of one scope together, whichever connections and workers made them', async () => {
    const scope = newScope();
    const made: string[] = [];
    for (let i = 1; i <= 6; i++) made.push(await make('counters', scope, i));
    for (let i = 0; i + 1 < made.length; i++) {
      const merged = await send('acme/counters/invoke/counter.merge', { a: ref(made[i]), b: ref(made[i + 1]) });
      expect(merged.status, merged.body).to.equal(200);
    }
    const total = await send('acme/counters/invoke/total', { all: made.map(ref) });
    expect(total.status, total.body).to.equal(200);
    expect(total.json.result).to.equal(21);
  });

  it('answers 409 to a call that passes handles of two scopes, naming them', async () => {
    const first = newScope();
    const a = await make('counters', first);
    const worker = a.split('.')[0];
    // Another scope whose home is the same worker: the call reaches both handles there.
    let other = newScope();
    let b = await make('counters', other);
    for (let tries = 0; b.split('.')[0] !== worker && tries < 40; tries++) {
      // At home in the other worker: refused too, for living in different workers.
      const apart = await send('acme/counters/invoke/total', { all: [ref(a), ref(b)] });
      expect(apart.status, apart.body).to.equal(409);
      expect(apart.json.details).to.match(/^the handles it names live in different workers, so they belong to different handle scopes/);
      other = newScope();
      b = await make('counters', other);
    }
    expect(b.split('.')[0], 'a second scope at home in the same worker').to.equal(worker);
    const mixed = await send('acme/counters/invoke/total', { all: [ref(a), ref(b)] });
    expect(mixed.status, mixed.body).to.equal(409);
    expect(mixed.json.code).to.equal('RT_ERR_HANDLES_REFUSED');
    expect(mixed.json.details).to.include(`${first.slice(0, 6)}…`).and.include(`${other.slice(0, 6)}…`);
    expect(mixed.body, 'scopes are never shown whole').to.not.include(first).and.not.include(other);
    // With the default scope too.
    const mine = await make('counters', undefined);
    if (mine.split('.')[0] === worker) {
      const withDefault = await send('acme/counters/invoke/total', { all: [ref(a), ref(mine)] });
      expect(withDefault.status).to.equal(409);
      expect(withDefault.json.details).to.include('default');
    }
  });

  it("ends only one scope's handles when its instance traps, or reaches its memory cap", async () => {
    const [trapping, growing, bystander] = [newScope(), newScope(), newScope()];
    const doomed = [await make('counters', trapping, 1), await make('counters', trapping, 2)];
    const bloated = await make('counters', growing, 3);
    const safe = [await make('counters', bystander, 4), await make('counters', undefined, 5)];

    const trapped = await send(`acme/counters/handles/${doomed[0]}/invoke/fail`);
    expect(trapped.status, trapped.body).to.equal(500);
    for (const id of doomed) expect((await value('counters', id)).status, 'the trapping scope').to.equal(410);
    // 100 pages (6.25 MiB) past runtime.max_memory_mb (4): the guest's memory.grow answers -1 and it traps.
    const capped = await send(`acme/counters/handles/${bloated}/invoke/grow`, { pages: 100 });
    expect(capped.status, capped.body).to.equal(500);
    expect((await value('counters', bloated)).status, 'the scope that grew').to.equal(410);

    for (const [i, id] of safe.entries()) {
      const answer = await value('counters', id);
      expect(answer.status, `${i ? 'the default scope' : 'another named scope'}: ${answer.body}`).to.equal(200);
      expect(answer.json.result).to.equal(4 + i);
    }
    // The scopes that ended serve again, with a fresh instance.
    expect((await value('counters', await make('counters', trapping, 7))).json.result).to.equal(7);
  });

  it('lists each handle with its scope, shortened', async () => {
    const scope = newScope();
    const id = await make('counters', scope);
    const listed = await send('acme/counters/handles', undefined, {}, 'GET');
    const entry = (listed.json.handles as { handle: string; scope: string }[]).find((h) => id.startsWith(h.handle.slice(0, -1)));
    expect(entry?.scope).to.equal(`${scope.slice(0, 6)}…`);
    expect(listed.body).to.not.include(scope);
    expect((listed.json.handles as { scope: string }[]).some((h) => h.scope === 'default')).to.equal(true);
  });

  it('refuses a constructor without a scope where the service requires one (400), and a scope that is not one (400)', async () => {
    const bare = await send('acme/strict/resources/counter', { start: 1 });
    expect(bare.status, bare.body).to.equal(400);
    expect(bare.json.code).to.equal('RT_ERR_BAD_HANDLE_SCOPE');
    expect(bare.json.details).to.include('RT-Handle-Scope');
    expect(await make('strict', newScope())).to.be.a('string');
    for (const bad of ['short', 'x'.repeat(129), `${newScope()}!`]) {
      const refused = await send('acme/counters/resources/counter', { start: 1 }, { 'rt-handle-scope': bad });
      expect(refused.status, `${bad}: ${refused.body}`).to.equal(400);
      expect(refused.json.code).to.equal('RT_ERR_BAD_HANDLE_SCOPE');
    }
  });
});

describe('handle scope limits, 1 worker (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;
  const { send, make } = client(() => rt);

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({
      'few.wasm': COUNTERS,
      'few.toml': { raw: 'service = "few"\nmax_scopes = 2\nmax_handles = 3\n' },
      'brittle.wasm': BRITTLE,
      'brittle.toml': { raw: 'service = "brittle"\nmax_scopes = 1\n' },
    });
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('bounds the handles of each scope by max_handles (503 naming the scope), and the scopes by max_scopes (503), until handles are dropped', async () => {
    const [one, two, three] = [newScope(), newScope(), newScope()];
    const ones = [await make('few', one), await make('few', one), await make('few', one)];
    const full = await send('acme/few/resources/counter', { start: 1 }, { 'rt-handle-scope': one });
    expect(full.status, full.body).to.equal(503);
    expect(full.json.code).to.equal('RT_ERR_TOO_MANY_HANDLES');
    expect(full.json.details).to.include(`scope ${one.slice(0, 6)}…`);
    expect(full.headers['retry-after']).to.equal('1');
    // Another scope, and the default one, have their own max_handles.
    await make('few', two);
    for (let i = 0; i < 3; i++) await make('few', undefined);

    const tooMany = await send('acme/few/resources/counter', { start: 1 }, { 'rt-handle-scope': three });
    expect(tooMany.status, tooMany.body).to.equal(503);
    expect(tooMany.json.code).to.equal('RT_ERR_TOO_MANY_SCOPES');
    expect(tooMany.json.details).to.include('max_scopes (2)');
    const metrics = await (await fetch(`${rt.url}/api/metrics`)).text();
    expect(metrics, 'scopes are counted').to.include('rt_handle_scopes{service="acme.few"} 2\n');
    expect(metrics, 'never a label per scope').to.not.include(one.slice(0, 6));
    // A scope whose handles are all dropped ends, and makes room.
    for (const id of ones) expect((await send(`acme/few/handles/${id}`, undefined, {}, 'DELETE')).status).to.equal(204);
    let made: { status: number } | undefined;
    for (let tries = 0; tries < 50 && made?.status !== 201; tries++) made = await send('acme/few/resources/counter', { start: 1 }, { 'rt-handle-scope': three });
    expect(made?.status).to.equal(201);
  });

  it('ends the instance of a scope whose first constructor failed: it takes no place among max_scopes', async () => {
    // BRITTLE's constructor traps for a start of -1.
    const failed = await send('acme/brittle/resources/counter', { start: -1 }, { 'rt-handle-scope': newScope() });
    expect(failed.status, failed.body).to.equal(500);
    let made: { status: number; body: string } | undefined;
    for (let tries = 0; tries < 50 && made?.status !== 201; tries++) made = await send('acme/brittle/resources/counter', { start: 1 }, { 'rt-handle-scope': newScope() });
    expect(made?.status, made?.body).to.equal(201);
  });
});

describe("each client's share of the default scope, 2 workers behind a trusted proxy (e2e)", function () {
  this.timeout(120_000);
  let rt: RtProcess;
  const { send } = client(() => rt);
  /** A constructor from client `address`, as a proxy (this test, on loopback) forwards it. */
  const makeFrom = (address: string, extra: Record<string, string> = {}) => send('acme/shared/resources/counter', { start: 1 }, { 'x-forwarded-for': address, ...extra });

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({ 'shared.wasm': COUNTERS, 'shared.toml': { raw: 'service = "shared"\nmax_handles = 5\n' } });
    rt = await RtProcess.start({ workers: 2, configToml: `repo_urls = ["file://${repo}"]\n[http]\ntrusted_proxies = ["127.0.0.0/8", "::1"]\n` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('lets one client fill only its own share (max_handles), whichever worker its connections reach: the others still make handles', async () => {
    const attacker = '198.51.100.66';
    for (let i = 0; i < 5; i++) expect((await makeFrom(attacker)).status).to.equal(201);
    const refused = await makeFrom(attacker);
    expect(refused.status, refused.body).to.equal(503);
    expect(refused.json.code).to.equal('RT_ERR_TOO_MANY_HANDLES');
    expect(refused.json.details).to.include("live handles of this client's address in its default scope");
    // Naming another address in a header of rt's own is not taken from a client.
    expect((await makeFrom(attacker, { 'x-rt-client': '203.0.113.1' })).status).to.equal(503);
    for (const victim of ['198.51.100.7', '198.51.100.8']) {
      const made = await makeFrom(victim);
      expect(made.status, `${victim}: ${made.body}`).to.equal(201);
    }
  });
});
