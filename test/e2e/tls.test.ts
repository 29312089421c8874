// End to end: HTTPS on http.tls_port, with configured or self-signed certificates.

import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { generate } from 'selfsigned';
import { examplesRepository } from '../support/fixtures.js';
import { freePort, RtProcess, tempDir } from '../support/rt-process.js';

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

  it('refuses to start with a certificate file it cannot read', async () => {
    const rt = await RtProcess.start({ workers: 1, env: { RT__HTTP__TLS_ENABLE: 'true', RT__HTTP__TLS_CERT: '/nonexistent/cert.pem', RT__HTTP__TLS_KEY: '/nonexistent/key.pem' } });
    expect(await rt.exited).to.equal(1);
    expect(rt.output).to.include('http.tls_cert: cannot read /nonexistent/cert.pem');
  });
});
