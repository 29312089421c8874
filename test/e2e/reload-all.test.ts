// bin/rt-reload-all.js, the reload fan-out for replicas (docs/deployment.md,
// "Reloading every pod"): against two real rt processes sharing one
// repository, as two pods sharing a volume, and against small local servers
// standing in for a pod that records what it was sent and for the Kubernetes
// API.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { buildComponent } from '../../examples/builder.js';
import { repository, versioned } from '../support/fixtures.js';
import { certificates } from '../support/https-server.js';
import { invoke, RtProcess, tempDir } from '../support/rt-process.js';

const SCRIPT = fileURLToPath(new URL('../../../bin/rt-reload-all.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the script (asynchronously: the rt processes and servers it calls live in this process's event loop). */
async function reloadAll(args: string[], opts: { env?: Record<string, string>; stdin?: string } = {}): Promise<Run> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'RT_CONTROL_TOKEN' && k !== 'RT__HTTP__CONTROL__TOKEN') env[k] = v;
  const child = spawn(process.execPath, [SCRIPT, ...args], { env: { ...env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(opts.stdin ?? '');
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

interface PodReport {
  url: string;
  pod?: string;
  ok: boolean;
  error?: string;
  added?: string[];
  updated?: string[];
  removed?: string[];
  failed?: { source: string; error: string }[];
}

function report(run: Run): { ok: boolean; pods: PodReport[]; not_ready: { url: string }[] } {
  try {
    return JSON.parse(run.stdout) as ReturnType<typeof report>;
  } catch {
    throw new Error(`not a JSON report (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

/** A stand-in pod: answers every request as a reload would, and records the headers of each. */
async function recordingPod(): Promise<{ server: Server; port: number; seen: { method?: string; url?: string; headers: IncomingHttpHeaders }[] }> {
  const seen: { method?: string; url?: string; headers: IncomingHttpHeaders }[] = [];
  const server = createHttpServer((req, res) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ status: 'reloaded', added: [], updated: [], removed: [], failed: [] }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port, seen };
}

describe('rt-reload-all: a reload on every replica (e2e)', function () {
  this.timeout(180_000);

  describe('two rt processes sharing a repository', () => {
    let repo: string;
    let a: RtProcess;
    let b: RtProcess;
    const targets = () => `127.0.0.1:${a.port},127.0.0.1:${b.port}`;

    before(async () => {
      repo = await repository({ versioned: versioned(1) });
      const config = `repo_urls = ["file://${repo}"]`;
      [a, b] = await Promise.all([RtProcess.start({ configToml: config, workers: 1 }), RtProcess.start({ configToml: config, workers: 1 })]);
      await Promise.all([a.ready(), b.ready()]);
    });

    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await rm(repo, { recursive: true, force: true });
    });

    it('reloads both, and a change in the shared repository reaches both', async () => {
      await writeFile(join(repo, 'versioned.wasm'), await buildComponent(versioned(2)));
      await writeFile(join(repo, 'second.wasm'), await buildComponent(versioned(7, 'second')));
      const run = await reloadAll(['--targets', targets(), '--json']);
      expect(run.code, run.stderr).to.equal(0);
      const { ok, pods } = report(run);
      expect(ok).to.equal(true);
      expect(pods.map((p) => p.url)).to.deep.equal([a.url, b.url]);
      for (const pod of pods) expect(pod).to.deep.include({ ok: true, added: ['acme.second'], updated: ['acme.versioned'], removed: [], failed: [] });
      for (const rt of [a, b]) {
        expect((await invoke(rt, 'acme/versioned/invoke/version')).body).to.deep.equal({ result: 2 });
        expect((await invoke(rt, 'acme/second/invoke/version')).body).to.deep.equal({ result: 7 });
      }
      // The same, as text: one line per pod, then the total.
      const text = await reloadAll(['--targets', targets()]);
      expect(text.code).to.equal(0);
      expect(text.stdout).to.include(`${a.url}: reloaded: added 0, updated 0, removed 0, failed 0`);
      expect(text.stdout).to.include('2 pod(s): 2 reloaded, 0 failed');
    });

    it('exits 3 when every pod reloaded but a component failed to load, naming it', async () => {
      await writeFile(join(repo, 'broken.wasm'), 'not a component');
      try {
        const run = await reloadAll(['--targets', targets(), '--json']);
        expect(run.code).to.equal(3);
        for (const pod of report(run).pods) {
          expect(pod.ok).to.equal(true);
          expect(pod.failed!.map((f) => f.source).join()).to.include('broken.wasm');
        }
        const text = await reloadAll(['--targets', targets()]);
        expect(text.stdout).to.match(/failed to load .*broken\.wasm/);
      } finally {
        await unlink(join(repo, 'broken.wasm'));
      }
    });

    it('reports a stopped rt as failed, still reloads the other, and exits 1', async () => {
      expect(await b.stop()).to.equal(0);
      const run = await reloadAll(['--targets', targets(), '--json']);
      expect(run.code).to.equal(1);
      const [first, second] = report(run).pods;
      expect(first).to.deep.include({ url: a.url, ok: true });
      expect(second).to.deep.include({ url: b.url, ok: false });
      expect(second.error).to.include('ECONNREFUSED');
      const text = await reloadAll(['--targets', targets()]);
      expect(text.stdout).to.include(`${b.url}: FAILED: connect ECONNREFUSED`);
      expect(text.stdout).to.include('2 pod(s): 1 reloaded, 1 failed');
    });
  });

  describe('what it sends, and where it finds the pods', () => {
    let pods: Awaited<ReturnType<typeof recordingPod>>[];

    beforeEach(async () => {
      pods = [await recordingPod(), await recordingPod()];
    });

    afterEach(() => {
      for (const p of pods) p.server.close();
    });

    it("sends RT_CONTROL_TOKEN (else an rt pod's RT__HTTP__CONTROL__TOKEN) as a bearer token, and no Authorization header without either", async () => {
      const targets = pods.map((p) => `127.0.0.1:${p.port}`).join(',');
      expect((await reloadAll(['--targets', targets], { env: { RT_CONTROL_TOKEN: 's3cret', RT__HTTP__CONTROL__TOKEN: 'pod' } })).code).to.equal(0);
      expect((await reloadAll(['--targets', targets], { env: { RT__HTTP__CONTROL__TOKEN: 'pod' } })).code).to.equal(0);
      expect((await reloadAll(['--targets', targets])).code).to.equal(0);
      for (const p of pods) {
        expect(p.seen.map((s) => `${s.method} ${s.url}`)).to.deep.equal(['POST /api/reload', 'POST /api/reload', 'POST /api/reload']);
        expect(p.seen.map((s) => s.headers.authorization)).to.deep.equal(['Bearer s3cret', 'Bearer pod', undefined]);
      }
    });

    it('reads the ready pods from kubectl JSON on stdin, EndpointSlices or Endpoints, and skips pods not ready', async () => {
      const [one, two] = pods;
      const slices = {
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { kind: 'EndpointSlice', metadata: { name: 'rt-a' }, ports: [{ name: 'http', port: one.port }], endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true }, targetRef: { name: 'rt-1' } }] },
          {
            kind: 'EndpointSlice',
            metadata: { name: 'rt-b' },
            ports: [{ name: 'metrics', port: 1 }, { name: 'http', port: two.port }],
            endpoints: [
              { addresses: ['127.0.0.1'], conditions: { ready: true }, targetRef: { name: 'rt-2' } },
              { addresses: ['127.0.0.9'], conditions: { ready: false }, targetRef: { name: 'rt-3' } },
            ],
          },
        ],
      };
      const fromSlices = report(await reloadAll(['--endpoints', '-', '--json'], { stdin: JSON.stringify(slices) }));
      expect(fromSlices.pods.map((p) => [p.pod, p.url, p.ok])).to.deep.equal([
        ['rt-1', `http://127.0.0.1:${one.port}`, true],
        ['rt-2', `http://127.0.0.1:${two.port}`, true],
      ]);
      expect(fromSlices.not_ready.map((p) => p.url)).to.deep.equal([`http://127.0.0.9:${two.port}`]);

      const endpoints = {
        kind: 'Endpoints',
        metadata: { name: 'rt' },
        subsets: [
          { addresses: [{ ip: '127.0.0.1', targetRef: { name: 'rt-1' } }], ports: [{ name: 'http', port: one.port }] },
          { addresses: [{ ip: '127.0.0.1' }], notReadyAddresses: [{ ip: '127.0.0.9' }], ports: [{ port: two.port }] },
        ],
      };
      const fromEndpoints = await reloadAll(['--endpoints', '-'], { stdin: JSON.stringify(endpoints) });
      expect(fromEndpoints.code, fromEndpoints.stderr).to.equal(0);
      expect(fromEndpoints.stdout).to.include(`http://127.0.0.9:${two.port}: skipped: not ready`);
      expect(fromEndpoints.stdout).to.include('2 pod(s): 2 reloaded, 0 failed, 1 not ready');
      for (const p of pods) expect(p.seen).to.have.length(2);
    });

    it('in a pod, lists the EndpointSlices of the service from the Kubernetes API with the service account', async () => {
      const pems = await certificates();
      const apiSeen: { url?: string; authorization?: string }[] = [];
      const api = createHttpsServer({ key: pems.key, cert: pems.cert }, (req, res) => {
        apiSeen.push({ url: req.url, authorization: req.headers.authorization });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ kind: 'EndpointSliceList', items: pods.map((p, i) => ({ metadata: { name: `rt-${i}` }, ports: [{ name: 'http', port: p.port }], endpoints: [{ addresses: ['127.0.0.1'] }] })) }));
      });
      api.listen(0, '127.0.0.1');
      await once(api, 'listening');
      const account = await tempDir('rt-serviceaccount-');
      try {
        await mkdir(account, { recursive: true });
        await writeFile(join(account, 'token'), 'sa-token\n');
        await writeFile(join(account, 'ca.crt'), pems.ca);
        await writeFile(join(account, 'namespace'), 'shop\n');
        const args = ['--service', 'rt', '--service-account-dir', account, '--api-server', `https://127.0.0.1:${(api.address() as AddressInfo).port}`];
        const run = await reloadAll(args);
        expect(run.code, `${run.stdout}${run.stderr}`).to.equal(0);
        expect(apiSeen).to.deep.equal([{ url: '/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Drt', authorization: 'Bearer sa-token' }]);
        for (const p of pods) expect(p.seen).to.have.length(1);
      } finally {
        api.close();
        await rm(account, { recursive: true, force: true });
      }
    });

    it("docs/deployment.md's reload section uses only options the script has", async () => {
      const guide = await readFile(fileURLToPath(new URL('../../../docs/deployment.md', import.meta.url)), 'utf8');
      const start = guide.indexOf('## Reloading every pod: rt-reload-all');
      expect(start, 'the section in docs/deployment.md').to.be.at.least(0);
      const end = guide.indexOf('\n## ', start + 1);
      const section = guide.slice(start, end < 0 ? undefined : end);
      const used = new Set(section.match(/--[a-z][a-z-]*/g));
      expect(used.size, 'options found in docs/deployment.md').to.be.at.least(5);
      const { stdout } = await reloadAll(['--help']);
      for (const option of used) expect(stdout, option).to.match(new RegExp(`^\\s+${option}\\b`, 'm'));
    });

    it('exits 2 with the usage on bad arguments, and when no pod is ready', async () => {
      for (const args of [[], ['--targets', 'a:1', '--service', 'rt'], ['--targets', 'a:1', '--timeout', 'soon'], ['--bogus']]) {
        const run = await reloadAll(args);
        expect(run.code, args.join(' ')).to.equal(2);
        expect(run.stderr).to.include('usage: rt-reload-all');
      }
      const none = await reloadAll(['--endpoints', '-'], { stdin: JSON.stringify({ kind: 'Endpoints', subsets: [{ notReadyAddresses: [{ ip: '10.0.0.1' }], ports: [{ port: 9481 }] }] }) });
      expect(none.code).to.equal(2);
      expect(none.stderr).to.include('no ready pod address found (1 not ready)');
    });
  });
});
