// End to end: what rt prints (docs/api.md §3, §7). JSON lines when stdout is not
// a terminal, pretty lines on a terminal, and `--verbose` shows every
// worker's debug lines.

import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { eventually, StopWaiting } from '../support/eventually.js';
import { repository, SLOW } from '../support/fixtures.js';
import { freePort, isolatedEnv, RT_BIN, RtProcess, tempDir } from '../support/rt-process.js';

describe('logs (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess | undefined;
  let repo: string;

  before(async () => {
    repo = await repository({ slow: SLOW });
  });

  afterEach(async () => {
    await rt?.stop();
    rt = undefined;
  });

  after(async () => {
    await rm(repo, { recursive: true, force: true });
  });

  it('are JSON lines when stdout is not a terminal, at info level without --verbose', async () => {
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, workers: 2 });
    await rt.ready();
    // A client's own X-Forwarded-For: no proxy is trusted, so the log names the peer.
    await fetch(`${rt.url}/api/services/acme/slow/invoke/spin`, { method: 'POST', body: '{"n": 1}', headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.7' } });
    await rt.stop();
    const lines = rt.output.split('\n').filter((l) => l.trim() !== '');
    expect(lines.length).to.be.greaterThan(2);
    for (const line of lines) {
      const parsed = JSON.parse(line) as { level: number; time: number; msg: string };
      expect(parsed.level).to.be.a('number').and.at.least(30);
      expect(parsed.msg).to.be.a('string');
    }
    // One line for the call, with what it was, and who asked.
    const calls = rt.logLines().filter((l) => l.service === 'acme.slow' && l.method === 'spin' && l.status === 200);
    expect(calls).to.have.length(1);
    expect(calls[0].client).to.equal('127.0.0.1');
  });

  it('names the client behind a trusted proxy by the address the proxy forwarded for (http.trusted_proxies)', async () => {
    // This test is the proxy: its loopback address is trusted.
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]\n[http]\ntrusted_proxies = ["127.0.0.0/8", "::1"]\n`, workers: 1 });
    await rt.ready();
    const forwarded = { '198.51.100.7': '198.51.100.7', '1.2.3.4, 198.51.100.8': '198.51.100.8', '198.51.100.9, 127.0.0.5': '198.51.100.9', 'not-an-address': '127.0.0.1' };
    for (const [xff, client] of Object.entries(forwarded)) {
      const res = await fetch(`${rt.url}/api/health`, { headers: { 'x-forwarded-for': xff } });
      const reqId = res.headers.get('x-request-id');
      await rt.logged((l) => l.reqId === reqId);
      expect(rt.logLines().find((l) => l.reqId === reqId)!.client, xff).to.equal(client);
    }
  });

  it("--verbose shows every worker's debug lines", async () => {
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, workers: 2, args: ['--verbose'] });
    await rt.ready();
    const debugFrom = (worker: number) => rt!.logged((l) => l.level === 20 && l.worker === worker && l.msg === 'components loaded');
    expect(await debugFrom(1)).to.equal(true);
    expect(await debugFrom(2)).to.equal(true);
  });

  it('are pretty lines on a terminal', async () => {
    const cwd = await tempDir();
    try {
      await mkdir(join(cwd, 'rt'), { recursive: true });
      await writeFile(join(cwd, 'rt', 'config.toml'), `repo_urls = ["file://${repo}"]\nworkers = 1\n`);
      const port = await freePort();
      const env = isolatedEnv(join(cwd, 'user-config'), { RT__HTTP__PORT: String(port), RT__HTTP__HOST: '127.0.0.1' });
      // `script` runs rt on a pseudo-terminal of its own (util-linux, in every Debian).
      const child = spawn('script', ['-qfec', `exec ${process.execPath} ${RT_BIN} start --logo-off`, '/dev/null'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        await eventually(
          () => {
            if (output.includes('ready:')) return true;
            if (child.exitCode !== null) throw new StopWaiting(`rt exited (${child.exitCode})`);
            return false;
          },
          { what: 'rt to print that it is ready', timeoutMs: 60_000, intervalMs: 100, context: () => output },
        );
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
      const ready = output.split(/\r?\n/).find((l) => l.includes('ready:'));
      expect(ready, output).to.be.a('string');
      // pino-pretty: a time, a coloured level name, the message; not a JSON object.
      expect(ready).to.match(/\[\d\d:\d\d:\d\d\.\d{3}\] .*INFO.*ready: 1 service/);
      expect(ready!.trim().startsWith('{')).to.equal(false);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
