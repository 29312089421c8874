// End to end: HTTPS on http.tls_port, with configured or self-signed certificates.

import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { generate } from 'selfsigned';
import { examplesRepository } from '../support/fixtures.js';
import { freePort, isolatedEnv, RT_BIN, RtProcess, tempDir } from '../support/rt-process.js';

/** GET over HTTPS without verifying the certificate; resolves to status, body and the server's certificate. */
function httpsGet(port: number, path: string): Promise<{ status: number; body: string; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false, agent: false }, (res) => {
      // Read before the body ends: the socket is released after that.
      const fingerprint = (res.socket as TLSSocket).getPeerX509Certificate()?.fingerprint256 ?? '';
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body, fingerprint }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HTTPS (e2e)', function () {
  this.timeout(120_000);

  it('serves with a generated self-signed certificate when none is configured, and warns', async () => {
    const tlsPort = await freePort();
    const examples = await examplesRepository();
    const rt = await RtProcess.start({
      configToml: `repo_urls = ["file://${examples}/calculator.wasm"]`,
      workers: 1,
      env: { RT__HTTP__TLS_ENABLE: 'true', RT__HTTP__TLS_PORT: String(tlsPort) },
    });
    try {
      await rt.ready();
      const res = await httpsGet(tlsPort, '/api/ready');
      expect(res.status).to.equal(200);
      expect(JSON.parse(res.body)).to.deep.equal({ status: 'ready' });
      expect(await rt.logged((l) => l.level === 40 && String(l.msg).includes('self-signed'))).to.equal(true);
    } finally {
      await rt.stop();
    }
  });

  it('serves with the configured certificate and key', async () => {
    const dir = await tempDir('rt-tls-');
    const pems = await generate([{ name: 'commonName', value: 'rt.test' }], { keySize: 2048 });
    await writeFile(join(dir, 'cert.pem'), pems.cert);
    await writeFile(join(dir, 'key.pem'), pems.private);
    const tlsPort = await freePort();
    const rt = await RtProcess.start({
      configToml: `[http]\ntls_enable = true\ntls_port = ${tlsPort}\ntls_cert = "${join(dir, 'cert.pem')}"\ntls_key = "${join(dir, 'key.pem')}"\n`,
      workers: 1,
    });
    try {
      await rt.ready();
      const res = await httpsGet(tlsPort, '/api/health');
      expect(res.status).to.equal(200);
      const expected = new X509Certificate(await readFile(join(dir, 'cert.pem'))).fingerprint256;
      expect(res.fingerprint).to.equal(expected);
    } finally {
      await rt.stop();
    }
  });

  /** Runs `rt start` with TLS on and `env` until it exits (`wrap`: a command to run it under); its exit code and stderr. */
  async function startTls(env: Record<string, string>, wrap: string[] = []): Promise<{ status: number | null; stderr: string }> {
    const cwd = await tempDir();
    const base = isolatedEnv(join(cwd, 'user-config'), {
      RT__HTTP__PORT: String(await freePort()),
      RT__HTTP__TLS_PORT: String(await freePort()),
      RT__HTTP__HOST: '127.0.0.1',
      RT__HTTP__TLS_ENABLE: 'true',
      RT__WORKERS: '1',
    });
    const command = [...wrap, process.execPath, RT_BIN, 'start', '--logo-off'];
    const result = spawnSync(command[0], command.slice(1), { cwd, env: { ...base, ...env }, encoding: 'utf8', timeout: 30_000 });
    await rm(cwd, { recursive: true, force: true });
    return { status: result.status, stderr: result.stderr };
  }

  function expectOneLine(stderr: string, ...mentions: string[]): void {
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).to.have.length(1);
    for (const m of mentions) expect(lines[0]).to.include(m);
    expect(stderr).not.to.match(/\n\s+at /);
  }

  it('refuses to start with a certificate file it cannot read: exit 2, one line', async () => {
    const out = await startTls({ RT__HTTP__TLS_CERT: '/nonexistent/cert.pem', RT__HTTP__TLS_KEY: '/nonexistent/key.pem' });
    expect(out.status, out.stderr).to.equal(2);
    expectOneLine(out.stderr, 'http.tls_cert: cannot read /nonexistent/cert.pem');
  });

  it('refuses files that are not a certificate and its key before any worker starts: exit 2, one line naming the file', async () => {
    const dir = await tempDir('rt-tls-');
    try {
      const junk = join(dir, 'junk.pem');
      await writeFile(junk, 'root:x:0:0:root:/root:/bin/bash\n');
      const [one, other] = await Promise.all([generate([{ name: 'commonName', value: 'one' }], { keySize: 2048 }), generate([{ name: 'commonName', value: 'other' }], { keySize: 2048 })]);
      const files = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem'), otherKey: join(dir, 'other.key') };
      await Promise.all([writeFile(files.cert, one.cert), writeFile(files.key, one.private), writeFile(files.otherKey, other.private)]);
      const cases: [Record<string, string>, string][] = [
        [{ RT__HTTP__TLS_CERT: junk, RT__HTTP__TLS_KEY: files.key }, `http.tls_cert: ${junk} is not a PEM certificate`],
        [{ RT__HTTP__TLS_CERT: files.cert, RT__HTTP__TLS_KEY: junk }, `http.tls_key: ${junk} is not a PEM private key`],
        [{ RT__HTTP__TLS_CERT: files.cert, RT__HTTP__TLS_KEY: files.otherKey }, `http.tls_key: ${files.otherKey} is not the key of the certificate in ${files.cert}`],
      ];
      for (const [env, line] of cases) {
        const out = await startTls(env);
        expect(out.status, out.stderr).to.equal(2);
        expectOneLine(out.stderr, line);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('with a data directory where the self-signed pair cannot be written', () => {
    it('exits 2 with one line naming the directory and what to do', async () => {
      // Under a regular file: unwritable even for root, which chmod does not stop.
      const dir = await tempDir('rt-tls-');
      await writeFile(join(dir, 'afile'), '');
      const out = await startTls({ RT_DATA_DIR: join(dir, 'afile', 'data') });
      expect(out.status, out.stderr).to.equal(2);
      expectOneLine(out.stderr, `${join(dir, 'afile', 'data', 'tls')}: ${join(dir, 'afile')} is not a directory`, 'http.tls_cert', `make ${join(dir, 'afile', 'data')} writable`);
      await rm(dir, { recursive: true, force: true });
    });

    it('on a read-only file system, names it read-only (Node itself says ENOENT)', async function () {
      // A read-only mount in a mount namespace of its own: needs root and unshare.
      const dir = await tempDir('rt-tls-');
      const probe = spawnSync('unshare', ['-m', 'sh', '-c', `mount -t tmpfs -o ro tmpfs ${dir}`]);
      if (probe.status !== 0) {
        await rm(dir, { recursive: true, force: true });
        this.skip();
      }
      const script = `mount -t tmpfs -o ro tmpfs ${dir} && exec "$@"`;
      const out = await startTls({ RT_DATA_DIR: dir }, ['unshare', '-m', 'sh', '-c', script, 'sh']);
      expect(out.status, out.stderr).to.equal(2);
      expectOneLine(out.stderr, `${dir} is not writable (EROFS)`, 'http.tls_cert');
      expect(out.stderr).not.to.include('ENOENT');
      await rm(dir, { recursive: true, force: true });
    });
  });
});
