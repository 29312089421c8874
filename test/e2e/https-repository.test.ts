// End to end: an https:// repository through `rt start` and reload
// (docs/api.md §4): served from a local HTTPS server whose CA rt trusts through
// `repositories.ca_file`; updates found by ETag on reload; an unreachable
// repository leaves its last good components serving.

import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildComponent } from '../../examples/builder.js';
import { versioned } from '../support/fixtures.js';
import { certificates, startServer, type TestServer } from '../support/https-server.js';
import { call, invoke, RtProcess, tempDir } from '../support/rt-process.js';

describe('https:// repository (e2e)', function () {
  this.timeout(120_000);
  let server: TestServer;
  let rt: RtProcess;

  /** Serves `files` (name → bytes) under /repo/ with an index.json listing them (with their sha256 unless `hashes` is false), each with an ETag. */
  const publish = (files: Record<string, Uint8Array>, hashes = true) => {
    for (const key of [...server.routes.keys()]) if (key.startsWith('/repo/')) server.routes.delete(key);
    const components = Object.entries(files).map(([path, bytes]) => {
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      server.routes.set(`/repo/${path}`, { body: Buffer.from(bytes), etag: `"${sha256.slice(0, 16)}"` });
      return hashes ? { path, sha256 } : { path };
    });
    const index = JSON.stringify({ components });
    server.routes.set('/repo/index.json', { body: index, etag: `"${createHash('sha256').update(index).digest('hex').slice(0, 16)}"` });
  };
  const reload = async () => {
    const res = await call(`${rt.url}/api/reload`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const version = async (service: string) => (await invoke(rt, `acme/${service}/invoke/version`, {})).body;

  before(async function () {
    this.timeout(300_000);
    const pems = await certificates();
    server = await startServer(pems);
    const dir = await tempDir('rt-https-e2e-');
    await writeFile(join(dir, 'ca.pem'), pems.ca);
    publish({ 'alpha.wasm': await buildComponent(versioned(1, 'alpha')) });
    rt = await RtProcess.start({
      configToml: `repo_urls = ["${server.url}/repo/"]\n[repositories]\nca_file = "${join(dir, 'ca.pem')}"\n`,
    });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
    await server?.close();
  });

  it('serves the components its index.json lists', async () => {
    expect(await version('alpha')).to.deep.equal({ result: 1 });
    const listing = (await call(`${rt.url}/api/services`, { method: 'GET' })).body as { failed: unknown[] };
    expect(listing.failed).to.deep.equal([]);
  });

  it('on reload, downloads nothing that has not changed: by sha256 when the index lists it, else by ETag', async () => {
    server.requests.length = 0;
    expect(await reload()).to.deep.include({ added: [], updated: [], removed: [], failed: [] });
    // (It still asks for the sidecar alpha.toml, which does not exist: a 404 has no ETag.)
    expect(server.requests.map((r) => r.path).filter((p) => p.endsWith('.wasm'))).to.deep.equal([]);

    publish({ 'alpha.wasm': await buildComponent(versioned(1, 'alpha')) }, false);
    expect(await reload()).to.deep.include({ added: [], updated: [], removed: [], failed: [] });
    server.requests.length = 0;
    expect(await reload()).to.deep.include({ added: [], updated: [], removed: [], failed: [] });
    const alpha = server.requests.filter((r) => r.path === '/repo/alpha.wasm');
    expect(alpha).to.have.length(1);
    expect(alpha[0].ifNoneMatch).to.equal(server.routes.get('/repo/alpha.wasm')!.etag);
  });

  it('on reload, picks up an updated and an added component', async () => {
    publish({ 'alpha.wasm': await buildComponent(versioned(2, 'alpha')), 'beta.wasm': await buildComponent(versioned(5, 'beta')) });
    expect(await reload()).to.deep.include({ added: ['acme.beta'], updated: ['acme.alpha'], removed: [], failed: [] });
    for (let i = 0; i < 8; i++) expect(await version('alpha')).to.deep.equal({ result: 2 });
    expect(await version('beta')).to.deep.equal({ result: 5 });
  });

  it('keeps serving the last good components when the repository is unreachable, and reports it', async () => {
    server.routes.set('/repo/index.json', { status: 503, body: 'down for maintenance' });
    const body = await reload();
    expect(body).to.deep.include({ added: [], updated: [], removed: [] });
    const failed = body.failed as { source: string; error: string }[];
    expect(failed).to.have.length(1);
    expect(failed[0].source).to.equal(`${server.url}/repo/`);
    expect(failed[0].error).to.match(/503/);
    expect(await version('alpha')).to.deep.equal({ result: 2 });
    expect(await version('beta')).to.deep.equal({ result: 5 });
  });

  it('drops a component the index no longer lists', async () => {
    publish({ 'alpha.wasm': await buildComponent(versioned(2, 'alpha')) });
    expect(await reload()).to.deep.include({ added: [], updated: [], removed: ['acme.beta'], failed: [] });
    expect((await invoke(rt, 'acme/beta/invoke/version', {})).status).to.equal(404);
  });
});
