// End to end: handles with two workers (docs/api.md §5.1.2). A service's
// handles live in one worker, their home (lib/worker/execution/handle-homes.ts):
// a constructor, or a call on a handle, that reaches the other worker is
// forwarded there over its peer socket (lib/worker/http/peers.ts), logged
// once by the worker the client reached; so handles made on any connections
// can be passed together. A worker that dies takes its handles with it: 410,
// promptly. Connections are steered to a worker by opening them until they
// land there (test/support/worker-connections.ts).

import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { eventually, letTimePass } from '../support/eventually.js';
import { repository } from '../support/fixtures.js';
import type { WatSource } from '../../examples/builder.js';
import { COUNTERS } from '../support/resource-fixtures.js';
import { RtProcess } from '../support/rt-process.js';
import { redactHandleId as shortened } from '../../lib/worker/execution/handle-ids.js';
import { closeConnections, connectionsByWorker, sendOn, type WorkerAnswer } from '../support/worker-connections.js';


const MAX_BODY = 4096;

/** COUNTERS with a method whose result is raw bytes: `raw()` gives the counter's 8 bytes (little-endian). */
const RAW: WatSource = {
  ...(COUNTERS as WatSource),
  wit: (COUNTERS as WatSource).wit.replace('value: func() -> s64;', 'value: func() -> s64;\n    raw: func() -> list<u8>;'),
  wat: (COUNTERS as WatSource).wat.replace(
    '(func (export "acme:counters/counters@1.0.0#[method]counter.value")',
    `(func (export "acme:counters/counters@1.0.0#[method]counter.raw") (param $self i32) (result i32)
    (i32.store (i32.const 0) (local.get $self))
    (i32.store (i32.const 4) (i32.const 8))
    (i32.const 0))
  (func (export "acme:counters/counters@1.0.0#[method]counter.value")`,
  ),
};

describe('handles across workers (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;
  let byWorker: Map<string, Agent[]>;
  /** The two workers' ids: acme.counters' handles live in `a`; `b` forwards to it. */
  let a: string;
  let b: string;
  const on = (worker: string) => byWorker.get(worker)![0];
  const base = () => `${rt.url}/api/services/acme/counters`;
  const post = (worker: string, path: string, json?: unknown) => sendOn(on(worker), `${base()}${path}`, 'POST', json === undefined ? undefined : JSON.stringify(json));
  const json = (answer: WorkerAnswer) => JSON.parse(answer.body) as Record<string, unknown>;
  /** A counter made through worker `worker`'s connection: it lives in `a`, whose id it names. */
  const counter = async (worker: string, start: number): Promise<string> => {
    const made = await post(worker, '/resources/counter', { start });
    expect(made.status, made.body).to.equal(201);
    expect(made.worker).to.equal(worker);
    const id = json(made).handle as string;
    expect(id.startsWith(`${a}.`), `${id} lives in worker ${a}`).to.equal(true);
    expect(made.headers.location).to.equal(`/api/services/acme/counters/handles/${id}`);
    return id;
  };
  const handleRef = (id: string) => ({ $handle: id });

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({ counters: COUNTERS, 'raw.wasm': RAW, 'raw.toml': { raw: 'service = "raw"\n' } });
    rt = await RtProcess.start({ workers: 2, configToml: `repo_urls = ["file://${repo}"]\n[http]\nmax_body_bytes = ${MAX_BODY}` });
    await rt.ready();
    // A second connection to each, for a request whose answer closes its connection.
    byWorker = await connectionsByWorker(rt.url, 2);
    const first = [...byWorker.keys()][0];
    const made = await sendOn(byWorker.get(first)![0], `${rt.url}/api/services/acme/counters/resources/counter`, 'POST', '{"start":0}');
    a = (JSON.parse(made.body) as { handle: string }).handle.split('.')[0];
    b = [...byWorker.keys()].find((w) => w !== a)!;
  });

  after(async () => {
    if (byWorker) closeConnections(byWorker);
    await rt?.stop();
  });

  it('keeps a handle\'s state across 20 calls, each on a fresh connection, whichever worker each reaches', async () => {
    const made = await sendOn(new Agent({ keepAlive: false }), `${base()}/resources/counter`, 'POST', '{"start":100}');
    const id = json(made).handle as string;
    const reached = new Set<string>();
    for (let i = 1; i <= 20; i++) {
      const answer = await sendOn(new Agent({ keepAlive: false }), `${base()}/handles/${id}/invoke/add`, 'POST', '{"n":1}');
      expect(answer.status, answer.body).to.equal(200);
      expect(json(answer)).to.deep.equal({ result: 100 + i });
      reached.add(answer.worker);
    }
    expect([...reached].every((w) => w === a || w === b)).to.equal(true);
  });

  it('forwards a call on a handle to the worker that holds it, and logs it once, where the client\'s connection landed', async () => {
    const id = await counter(a, 7);
    const answer = await post(b, `/handles/${id}/invoke/add`, { n: 5 });
    expect(answer.status, answer.body).to.equal(200);
    expect(json(answer)).to.deep.equal({ result: 12 });
    expect(answer.worker).to.equal(b);
    expect(json(await post(a, `/handles/${id}/invoke/value`))).to.deep.equal({ result: 12 });
    const reqId = String(answer.headers['x-request-id']);
    expect(await rt.logged((l) => l.reqId === reqId)).to.equal(true);
    await letTimePass(300, 'the owner logs nothing of its own: a line of its would come with the first');
    const lines = rt.logLines().filter((l) => l.reqId === reqId);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ worker: Number(b), forwarded: Number(a), status: 200, method: 'add', service: 'acme.counters' });
    // Never whole in a log line.
    expect(JSON.stringify(lines[0])).to.not.include(id);
  });

  it('forwards calls whose body names the handles: borrows, an own that moves, handles in a record', async () => {
    const [x, y] = [await counter(a, 2), await counter(a, 3)];
    expect(json(await post(b, '/invoke/total', { all: [handleRef(x), handleRef(y)] }))).to.deep.equal({ result: 5 });
    const merged = await post(b, '/invoke/counter.merge', { a: handleRef(x), b: handleRef(y) });
    expect(merged.status, merged.body).to.equal(200);
    const sum = (json(merged).result as { $handle: string }).$handle;
    expect(sum.startsWith(`${a}.`), 'a handle made where its arguments live').to.equal(true);
    expect(json(await post(b, `/handles/${sum}/invoke/value`))).to.deep.equal({ result: 5 });
    expect(json(await post(b, '/invoke/consume', { c: handleRef(x) }))).to.deep.equal({ result: 2 });
    const moved = await post(a, `/handles/${x}/invoke/value`);
    expect(moved.status).to.equal(410);
    expect(json(moved)).to.include({ code: 'RT_ERR_HANDLE_GONE' });
    expect(json(moved).details).to.match(/moved/);
    const both = await post(b, '/invoke/both', { d: { left: handleRef(y), right: handleRef(sum) } });
    expect(json(both)).to.deep.equal({ result: 8 });
  });

  it('reads a forwarded body as any other: decoded from gzip, refused past http.max_body_bytes (413), checked against the method (400)', async () => {
    const id = await counter(a, 0);
    const gzipped = gzipSync(Buffer.from('{"n":4}'));
    const answer = await new Promise<WorkerAnswer>((resolve, reject) => {
      const req = request(`${base()}/handles/${id}/invoke/add`, { agent: on(b), method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, worker: String(res.headers['x-rt-worker']), headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end(gzipped);
    });
    expect(answer.status, answer.body).to.equal(200);
    expect(json(answer)).to.deep.equal({ result: 4 });
    // A 413 closes its connection (the rest of the body is not read): the spare one to b, then.
    const large = await sendOn(byWorker.get(b)![1], `${base()}/handles/${id}/invoke/add`, 'POST', JSON.stringify({ n: 1, pad: 'x'.repeat(MAX_BODY) }));
    expect(large.worker).to.equal(b);
    expect(large.status).to.equal(413);
    expect(json(large)).to.include({ code: 'RT_ERR_BODY_TOO_LARGE' });
    const wrong = await post(b, `/handles/${id}/invoke/add`, { n: 'one' });
    expect(wrong.status).to.equal(400);
    expect(json(wrong).details).to.match(/^n: /);
    expect(json(await post(a, `/handles/${id}/invoke/value`))).to.deep.equal({ result: 4 });
  });

  it('answers a handle method\'s list<u8> as the component\'s bytes, with the headers that sandbox them, locally and forwarded', async () => {
    const made = await sendOn(on(a), `${rt.url}/api/services/acme/raw/resources/counter`, 'POST', '{"start":7}');
    const id = json(made).handle as string;
    for (const worker of [a, b]) {
      const answer = await sendOn(on(worker), `${rt.url}/api/services/acme/raw/handles/${id}/invoke/raw`, 'POST');
      expect(answer.status, answer.body).to.equal(200);
      expect(answer.body).to.equal(`\x07${'\0'.repeat(7)}`);
      expect(answer.headers).to.include({ 'content-type': 'application/octet-stream', 'x-content-type-options': 'nosniff' });
      expect(answer.headers['content-security-policy']).to.match(/^sandbox /);
      expect(answer.worker).to.equal(worker);
    }
  });

  it('makes handles through either worker in one instance of their home, so any of them can be passed together', async () => {
    const made: string[] = [];
    for (let i = 0; i < 6; i++) made.push(await counter(i % 2 ? b : a, i));
    const reqId = String((await post(b, '/resources/counter', { start: 0 })).headers['x-request-id']);
    await rt.logged((l) => l.reqId === reqId);
    expect(rt.logLines().filter((l) => l.reqId === reqId)[0]).to.include({ worker: Number(b), forwarded: Number(a), status: 201 });
    for (let i = 0; i + 1 < made.length; i++) {
      const merged = await post(i % 2 ? a : b, '/invoke/counter.merge', { a: handleRef(made[i]), b: handleRef(made[i + 1]) });
      expect(merged.status, merged.body).to.equal(200);
    }
    const total = await post(b, '/invoke/total', { all: made.map(handleRef) });
    expect(json(total)).to.deep.equal({ result: 15 });
  });

  it('drops a handle through the other worker (204), which then answers 410 from either', async () => {
    const id = await counter(a, 1);
    const dropped = await sendOn(on(b), `${base()}/handles/${id}`, 'DELETE');
    expect(dropped.status, dropped.body).to.equal(204);
    for (const worker of [a, b]) {
      const answer = await post(worker, `/handles/${id}/invoke/value`);
      expect(answer.status).to.equal(410);
      expect(json(answer).details).to.match(/dropped/);
    }
  });

  it('lists the live handles from either worker (ids shortened: no control token here)', async () => {
    const [x, y] = [await counter(a, 1), await counter(b, 1)];
    for (const worker of [a, b]) {
      const listed = await sendOn(on(worker), `${base()}/handles`, 'GET');
      expect(listed.status).to.equal(200);
      const handles = json(listed).handles as { handle: string; worker: number; resource: string }[];
      expect(handles.find((h) => h.handle === shortened(x))).to.include({ worker: Number(a), resource: 'counter' });
      expect(handles.find((h) => h.handle === shortened(y))).to.include({ worker: Number(a), resource: 'counter' });
      expect(new Set(handles.map((h) => h.handle)).size).to.equal(handles.length);
    }
  });

  it('counts live handles and how they ended in /api/metrics, summed over the workers', async () => {
    const metric = async (line: string) => {
      const text = (await sendOn(on(a), `${rt.url}/api/metrics`, 'GET')).body;
      const found = text.split('\n').find((l) => l.startsWith(`${line} `));
      return found === undefined ? 0 : Number(found.slice(found.lastIndexOf(' ') + 1));
    };
    const listed = async () => (json(await sendOn(on(a), `${base()}/handles`, 'GET')).handles as unknown[]).length;
    const [created, dropped] = [await metric('rt_handle_events_total{service="acme.counters",event="created"}'), await metric('rt_handle_events_total{service="acme.counters",event="dropped"}')];
    const [x, y] = [await counter(a, 1), await counter(b, 1)];
    expect(await metric('rt_handles_live{service="acme.counters"}')).to.equal(await listed());
    expect(await metric('rt_handle_events_total{service="acme.counters",event="created"}')).to.equal(created + 2);
    for (const id of [x, y]) expect((await sendOn(on(a), `${base()}/handles/${id}`, 'DELETE')).status).to.equal(204);
    expect(await metric('rt_handle_events_total{service="acme.counters",event="dropped"}')).to.equal(dropped + 2);
    expect(await metric('rt_handles_live{service="acme.counters"}')).to.equal(await listed());
  });

  it('answers 410 for the handles of a worker that was killed, at once, and lists them no more', async () => {
    const id = await counter(a, 9);
    const pid = rt.workerPids().find((p) => workerIdOf(p) === a);
    expect(pid, `the pid of worker ${a}`).to.be.a('number');
    process.kill(pid!, 'SIGKILL');
    await eventually(() => !rt.workerPids().includes(pid!), { what: `worker ${a} to exit` });
    const started = performance.now();
    const answer = await post(b, `/handles/${id}/invoke/value`);
    expect(performance.now() - started).to.be.below(2_000);
    expect(answer.status, answer.body).to.equal(410);
    expect(json(answer)).to.include({ code: 'RT_ERR_HANDLE_GONE' });
    expect(json(answer).details).to.include(`worker ${a}`);
    const listed = json(await sendOn(on(b), `${base()}/handles`, 'GET')).handles as { worker: number }[];
    expect(listed.some((h) => h.worker === Number(a))).to.equal(false);
    // The replacement is a new worker: the id still names the one that is gone.
    await eventually(() => rt.workerPids().length === 2, { what: 'a replacement worker' });
    await rt.ready();
    const fresh = await sendOn(new Agent({ keepAlive: false }), `${base()}/handles/${id}/invoke/value`, 'POST');
    expect(fresh.status).to.equal(410);
    // It took the dead worker's slot: the service's new handles live in it.
    const replacement = rt.workerPids().map(workerIdOf).find((w) => w !== b)!;
    // Until it listens, a constructor answers 503 with Retry-After.
    const next = await eventually(async () => {
      const answer = await post(b, '/resources/counter', { start: 1 });
      if (answer.status === 503) expect(answer.headers['retry-after'], answer.body).to.equal('1');
      return answer.status === 201 && answer;
    }, { what: 'the replacement to make the handles' });
    expect(json(next).handle).to.match(new RegExp(`^${replacement}\\.`));
  });
});

/** The cluster worker id of process `pid` (node:cluster gives each worker NODE_UNIQUE_ID). */
function workerIdOf(pid: number): string | undefined {
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return environ.find((e) => e.startsWith('NODE_UNIQUE_ID='))?.slice('NODE_UNIQUE_ID='.length);
}
