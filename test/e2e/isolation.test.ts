// End to end: hostile components are contained (docs/api.md §5.1, §8). Each test
// shows the contained outcome and that the worker keeps serving. One worker,
// so every call lands on the same instances and the same event loop.

import { readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { letTimePass } from '../support/eventually.js';
import { ENDLESS_START, examplesRepository, GRANTEE, HOSTILE, repository, RUNAWAY } from '../support/fixtures.js';
import { loopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { call, invoke, RtProcess } from '../support/rt-process.js';
import { P3_FILES } from '../support/async-components.js';
import { hasJspi } from '../../lib/platform.js';

const TIMEOUT_S = 2;

describe('isolation and limits (e2e)', function () {
  let rt: RtProcess;
  let repo: string;
  /** The server granted components may reach (allowed_outbound_hosts). */
  let outbound: LoopbackServer;

  before(async function () {
    this.timeout(300_000);
    const examples = await examplesRepository();
    outbound = await loopbackServer();
    repo = await repository({
      runaway: RUNAWAY,
      hostile: HOSTILE,
      'endless-start': ENDLESS_START,
      'granted.wasm': HOSTILE,
      'granted.toml': { raw: 'service = "granted"\n[env]\nGREETING = "hello"\n' },
      'pooled.wasm': RUNAWAY,
      'pooled.toml': { raw: 'service = "pooled"\npool_size = 2\n' },
      'recycled.wasm': RUNAWAY,
      'recycled.toml': { raw: 'service = "recycled"\nmax_invocations = 3\n' },
      'fresh.wasm': RUNAWAY,
      'fresh.toml': { raw: 'service = "fresh"\ninstance_per_call = true\n' },
      grantee: GRANTEE,
      'files.wasm': GRANTEE,
      'files.toml': {
        raw: [
          'service = "files"',
          '[[allowed_paths]]\nhost = "shared"\nguest = "/data"',
          '[[allowed_paths]]\nhost = "scratch"\nguest = "/scratch"\nwritable = true',
        ].join('\n'),
      },
      'shared/hello.txt': { raw: 'hello from the host' },
      'scratch/.keep': { raw: '' },
      'online.wasm': GRANTEE,
      'online.toml': { raw: `service = "online"\nallowed_outbound_hosts = ["127.0.0.1:${outbound.port}"]\n` },
    });
    // An operator's symlink pointing out of a grant: followed only while it stays inside.
    await symlink('/etc', join(repo, 'shared', 'etc-link'));
    rt = await RtProcess.start({
      workers: 1,
      configToml: `repo_urls = ["file://${examples}", "file://${repo}"]`,
      env: { RT__HTTP__REQUEST_TIMEOUT_SECONDS: String(TIMEOUT_S), RT__RUNTIME__MAX_MEMORY_MB: '32', SECRET_OF_THE_HOST: 'do-not-leak' },
    });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
    await outbound?.close();
  });

  describe('a call that never ends', () => {
    it('is cut off with 504 within the timeout + 1 s while the worker keeps serving others at normal latency', async function () {
      this.timeout(30_000);
      // Latency of another service before the runaway, for comparison.
      const before = await latencies(() => invoke(rt, 'example/calculator/invoke/add', { a: 1, b: 2 }), 30);

      const started = performance.now();
      const runaway = invoke(rt, 'acme/runaway/invoke/forever', {});
      let settled = false;
      void runaway.then(() => (settled = true));
      const during: number[] = [];
      while (!settled) {
        const t = performance.now();
        const res = await invoke(rt, 'example/calculator/invoke/add', { a: 1, b: 2 });
        during.push(performance.now() - t);
        expect(res.body).to.deep.equal({ result: 3 });
        await letTimePass(10, 'paced: this measures latency beside the runaway, not throughput');
      }
      const res = await runaway;
      const elapsed = performance.now() - started;

      expect(res.status).to.equal(504);
      expect(res.body).to.include({ error: 'call timed out', code: 'RT_ERR_CALL_TIMEOUT', service: 'acme.runaway', method: 'forever' });
      expect(res.body.details).to.match(/request_timeout_seconds/);
      expect(elapsed).to.be.at.least(TIMEOUT_S * 1000 - 50);
      expect(elapsed).to.be.below(TIMEOUT_S * 1000 + 1000);
      expect(during.length).to.be.above(20);
      // p99 within +50 ms of the quiet figure is the goal; the bound is generous for loaded CI machines.
      expect(p99(during)).to.be.below(p99(before) + 250);
    });

    it('does not stall its own service: calls behind it run on another instance', async function () {
      this.timeout(30_000);
      const first = (await invoke(rt, 'acme/runaway/invoke/count', {})).body.result as number;
      const runaway = invoke(rt, 'acme/runaway/invoke/forever', {});
      let settled = false;
      void runaway.then(() => (settled = true));
      // Calls run on the idle instance, counting on from `first`, until the runaway call holds it:
      // the first call behind it runs on another instance, which counts from 1.
      let counted;
      let elapsed;
      for (let expected = first + 1; ; expected++) {
        const t = performance.now();
        counted = await invoke(rt, 'acme/runaway/invoke/count', {});
        elapsed = performance.now() - t;
        expect(counted.status).to.equal(200);
        if (counted.body.result !== expected) break;
        expect(settled, 'the runaway call ended before a call ran behind it').to.equal(false);
      }
      expect(counted.body.result, 'a fresh instance').to.equal(1);
      expect(elapsed).to.be.below(1000);
      expect(settled, 'the runaway call is still running').to.equal(false);
      expect((await runaway).status).to.equal(504);
    });

    it('leaves the service working: the next call succeeds', async () => {
      const res = await invoke(rt, 'acme/runaway/invoke/count', {});
      expect(res.status).to.equal(200);
      expect(res.body.result).to.be.a('number');
    });

    it('cuts off a JavaScript loop in a componentize-js component the same way', async function () {
      this.timeout(30_000);
      const res = await invoke(rt, 'acme/hostile/invoke/spin', {});
      expect(res.status).to.equal(504);
      expect((await invoke(rt, 'acme/hostile/invoke/env', {})).status).to.equal(200);
    });
  });

  describe('a start function that never ends', () => {
    it('fails the component at the timeout instead of holding up the worker, and the rest is served', async () => {
      const listing = (await call(`${rt.url}/api/services`, { method: 'GET' })).body as { services: { service: string }[]; failed: { source: string; error: string }[] };
      expect(listing.services.map((s) => s.service)).to.include('runaway').and.not.include('endless-start');
      const failure = listing.failed.find((f) => f.source.endsWith('endless-start.wasm'));
      expect(failure?.error).to.equal(`failed to instantiate: the instance was not ready within ${TIMEOUT_S} s (http.request_timeout_seconds): its start function or init ran too long`);
    });
  });

  describe('memory', () => {
    it('a memory bomb traps at runtime.max_memory_mb with a message saying so, and the service recovers', async () => {
      const res = await invoke(rt, 'acme/runaway/invoke/bomb', {});
      expect(res.status).to.equal(500);
      expect(res.body).to.include({ error: 'component trapped', code: 'RT_ERR_COMPONENT_TRAPPED', method: 'bomb' });
      expect(res.body.details).to.match(/memory reached 3[12] MiB; runtime\.max_memory_mb is 32/);
      expect((await invoke(rt, 'acme/runaway/invoke/count', {})).body).to.deep.equal({ result: 1 });
    });
  });

  describe('instances', () => {
    it('reuses one instance across calls by default', async () => {
      const first = (await invoke(rt, 'acme/runaway/invoke/count', {})).body.result as number;
      expect((await invoke(rt, 'acme/runaway/invoke/count', {})).body.result).to.equal(first + 1);
      expect((await invoke(rt, 'acme/runaway/invoke/count', {})).body.result).to.equal(first + 2);
    });

    it('max_invocations recycles an instance after N calls', async () => {
      expect(await sequence('recycled', 7)).to.deep.equal([1, 2, 3, 1, 2, 3, 1]);
    });

    it('instance_per_call gives every call a fresh instance', async () => {
      expect(await sequence('fresh', 4)).to.deep.equal([1, 1, 1, 1]);
    });

    it('pool_size runs concurrent calls on separate instances, never interleaved inside one', async () => {
      const listing = await call(`${rt.url}/api/services/acme/pooled`, { method: 'GET' });
      expect(listing.body.instances).to.deep.equal({ pool_size: 2, max_instances: 6, max_concurrency: 16, max_invocations: null, live: 2, waiting: 0, placement: 'threads', placements: { 1: 'threads' }, max_queue: 64, handles: 0, max_handles: 1000, handle_idle_seconds: 300 });
      const fresh = await call(`${rt.url}/api/services/acme/fresh`, { method: 'GET' });
      expect(fresh.body.instances).to.include({ pool_size: 1, max_invocations: 1 });
      // Each call keeps its instance busy for a while (~10 ms), so the calls overlap; short of the 100 ms after which an overflow instance would join.
      const results = await Promise.all(Array.from({ length: 20 }, () => invoke(rt, 'acme/pooled/invoke/busy-count', { spins: 10_000_000 })));
      const counts = results.map((r) => r.body.result as number).sort((a, b) => a - b);
      // Two instances, each counting its own calls from where it was: every count appears at most twice.
      const seen = new Map<number, number>();
      for (const c of counts) seen.set(c, (seen.get(c) ?? 0) + 1);
      expect([...seen.values()].every((n) => n <= 2)).to.equal(true);
      expect(Math.max(...seen.values())).to.equal(2);
    });

    async function sequence(service: string, n: number): Promise<number[]> {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await invoke(rt, `acme/${service}/invoke/count`, {})).body.result as number);
      return out;
    }
  });

  describe('sandbox', () => {
    it('shows the component none of the host environment', async () => {
      const res = await invoke(rt, 'acme/hostile/invoke/env', {});
      expect(res.body).to.deep.equal({ result: [] });
    });

    it('shows exactly the variables its sidecar grants', async () => {
      const res = await invoke(rt, 'acme/granted/invoke/env', {});
      expect(res.body).to.deep.equal({ result: ['GREETING=hello'] });
    });

    it('opens no outbound connection: the call answers 500 naming the missing import, and nothing reaches the server', async () => {
      const server = await loopbackServer();
      try {
        const res = await invoke(rt, 'acme/hostile/invoke/fetch-url', { url: `${server.url}/` });
        expect(res.status).to.equal(500);
        expect(res.body.details).to.match(/wasi:http\/outgoing-handler/);
        expect(await server.connections()).to.equal(0);
      } finally {
        await server.close();
      }
      expect((await invoke(rt, 'acme/hostile/invoke/env', {})).status).to.equal(200);
    });

    it('ends the call, not the worker, when the component calls exit', async () => {
      const pids = rt.workerPids();
      const res = await invoke(rt, 'acme/hostile/invoke/quit', {});
      expect(res.status).to.equal(500);
      expect(res.body).to.include({ error: 'component exited', code: 'RT_ERR_COMPONENT_EXITED' });
      expect((await invoke(rt, 'acme/hostile/invoke/env', {})).status).to.equal(200);
      expect(rt.workerPids()).to.deep.equal(pids);
    });

    it('sends stdout to the log under the service name, capped per call', async function () {
      this.timeout(60_000);
      const res = await invoke(rt, 'acme/hostile/invoke/shout', { bytes: 4 * 1024 * 1024 });
      expect(res.body).to.deep.equal({ result: 4 * 1024 * 1024 });
      const found = await rt.logged((l) => l.service === 'acme.hostile' && l.stream === 'stdout' && typeof l.dropped === 'number');
      expect(found).to.equal(true);
      const line = rt.logLines().find((l) => l.service === 'acme.hostile' && l.stream === 'stdout')!;
      expect(String(line.msg)).to.match(/^x+/);
      expect(String(line.msg).length).to.be.at.most(16 * 1024);
      expect(line.dropped).to.be.above(4_000_000);
      expect(rt.output.length).to.be.below(1024 * 1024);
    });
  });

  describe('grants (docs/api.md §8)', () => {
    it('without allowed_paths the component has no directory: /etc/passwd cannot be read, and the call answers 200', async () => {
      expect((await invoke(rt, 'acme/grantee/invoke/preopens', {})).body).to.deep.equal({ result: [] });
      const res = await invoke(rt, 'acme/grantee/invoke/read-file', { dir: '/', path: 'etc/passwd' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ result: 'error: no preopen /' });
    });

    it('allowed_paths: the component sees exactly the granted directories and reads a file in one', async () => {
      expect((await invoke(rt, 'acme/files/invoke/preopens', {})).body).to.deep.equal({ result: ['/data', '/scratch'] });
      const res = await invoke(rt, 'acme/files/invoke/read-file', { dir: '/data', path: 'hello.txt' });
      expect(res.body).to.deep.equal({ result: 'hello from the host' });
    });

    it('a read-only grant refuses writes with read-only; a writable one takes them', async () => {
      for (const path of ['hello.txt', 'new.txt']) {
        const res = await invoke(rt, 'acme/files/invoke/write-file', { dir: '/data', path, text: 'overwritten' });
        expect(res.body, path).to.deep.equal({ result: 'error: read-only' });
      }
      expect(await readFile(join(repo, 'shared', 'hello.txt'), 'utf8')).to.equal('hello from the host');
      const written = await invoke(rt, 'acme/files/invoke/write-file', { dir: '/scratch', path: 'note.txt', text: 'noted' });
      expect(written.body).to.deep.equal({ result: 'wrote 5' });
      expect(await readFile(join(repo, 'scratch', 'note.txt'), 'utf8')).to.equal('noted');
    });

    it('no escape from a grant with .., an absolute path or a symlink: not-permitted', async () => {
      for (const path of ['../../../../../../etc/passwd', '/etc/passwd', 'etc-link/passwd', '../files.toml']) {
        const res = await invoke(rt, 'acme/files/invoke/read-file', { dir: '/data', path });
        expect(res.body, path).to.deep.equal({ result: 'error: not-permitted' });
      }
    });

    it('allowed_outbound_hosts: a request to a listed host goes through', async function () {
      this.timeout(30_000);
      const before = await outbound.connections();
      const res = await invoke(rt, 'acme/online/invoke/fetch-url', { url: `${outbound.url}/` });
      expect(res.body).to.deep.equal({ result: '200 reached' });
      expect(await outbound.connections()).to.equal(before + 1);
    });

    it('allowed_outbound_hosts: a host not on the list is refused and nothing connects', async function () {
      this.timeout(30_000);
      const server = await loopbackServer();
      try {
        const res = await invoke(rt, 'acme/online/invoke/fetch-url', { url: `${server.url}/` });
        // StarlingMonkey's fetch rejects without the wasi:http error code (HTTP-request-denied).
        expect(res.status).to.equal(200);
        expect(res.body.result).to.match(/^error: .*An error occurred while using the host API/);
        expect(await server.connections()).to.equal(0);
      } finally {
        await server.close();
      }
      expect((await invoke(rt, 'acme/online/invoke/fetch-url', { url: `${outbound.url}/` })).body).to.deep.equal({ result: '200 reached' });
    });
  });
});

async function latencies(fn: () => Promise<unknown>, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
}

// WASI 0.3 components need JSPI (Node 24, 26).
if (hasJspi) describe('WASI 0.3 files within the grants (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;
  let repo: string;
  const readFileOf = (service: string, path: string) => call(`${rt.url}/api/services/default/${service}/invoke/read-file`, { body: JSON.stringify({ path }), contentType: 'application/json', headers: { accept: 'application/json' } });
  const touch = (service: string, path: string) => call(`${rt.url}/api/services/default/${service}/invoke/touch`, { body: JSON.stringify({ path }), contentType: 'application/json' });
  /** The error-code case P3_FILES answers, by name (wasi:filesystem@0.3.0's order). */
  const CASE = { 'no-entry': 19, 'not-permitted': 30, 'read-only': 32 };
  const big = Buffer.alloc(100_000);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 251;

  before(async function () {
    this.timeout(300_000);
    repo = await repository({
      'ro.wasm': P3_FILES,
      'ro.toml': { raw: 'service = "ro"\n[[allowed_paths]]\nhost = "data"\nguest = "/data"\n' },
      'rw.wasm': P3_FILES,
      'rw.toml': { raw: 'service = "rw"\n[[allowed_paths]]\nhost = "out"\nguest = "/out"\nwritable = true\n' },
      'none.wasm': P3_FILES,
      'none.toml': { raw: 'service = "none"\n' },
      'data/hello.txt': { raw: 'hello from a file' },
      'data/big.bin': { raw: big },
      'out/.keep': { raw: '' },
      'secret.txt': { raw: 'outside every grant' },
    });
    await symlink(join(repo, 'secret.txt'), join(repo, 'data', 'escape'));
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('reads a granted file through wasi:filesystem@0.3 (open-at, read-via-stream), 100 KB in reads of 64 KiB', async () => {
    const hello = await readFileOf('ro', 'hello.txt');
    expect(hello.status, hello.text).to.equal(200);
    expect(Buffer.from(hello.body.result as string, 'base64').toString()).to.equal('hello from a file');
    const whole = await fetch(`${rt.url}/api/services/default/ro/invoke/read-file`, { method: 'POST', body: '{"path": "big.bin"}', headers: { 'content-type': 'application/json' } });
    expect(Buffer.from(await whole.arrayBuffer()).equals(big), 'the same 100 KB').to.equal(true);
    expect((await call(`${rt.url}/api/services/default/ro`, { method: 'GET' })).body.unsatisfied_imports).to.deep.equal([]);
  });

  it('answers no-entry for a missing file, not-permitted for a path or a symlink out of the grant, read-only for a write to a read-only grant; and none with no grant', async () => {
    const failed = async (answer: Promise<{ status: number; body: Record<string, unknown> }>) => {
      const { status, body } = await answer;
      expect(status).to.equal(500);
      return body.value;
    };
    expect(await failed(readFileOf('ro', 'missing.txt'))).to.equal(CASE['no-entry']);
    for (const path of ['../secret.txt', '/etc/passwd', 'escape']) expect(await failed(readFileOf('ro', path)), path).to.equal(CASE['not-permitted']);
    expect(await failed(touch('ro', 'new.txt'))).to.equal(CASE['read-only']);
    // P3_FILES answers 255 when it is given no directory.
    expect(await failed(readFileOf('none', 'hello.txt'))).to.equal(255);
    expect((await readFileOf('ro', 'hello.txt')).status, 'served on').to.equal(200);
  });

  it('creates a file in a writable grant, which the host sees and the guest reads back', async () => {
    expect((await touch('rw', 'made.txt')).status).to.equal(200);
    expect(await readFile(join(repo, 'out', 'made.txt'), 'utf8')).to.equal('');
    expect((await readFileOf('rw', 'made.txt')).body).to.deep.equal({ result: '' });
  });
});
