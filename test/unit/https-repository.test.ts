import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchHttpsRepository, httpsRepositoryChanged, type HttpsOptions } from '../../lib/primary/https-repository.js';
import { scanRepository } from '../../lib/primary/repositories.js';
import { eventually } from '../support/eventually.js';
import { certificates, startServer, type Pems, type TestServer } from '../support/https-server.js';

const sha = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('https: repositories', function () {
  let pems: Pems;
  let server: TestServer;
  let work: string;
  let options: HttpsOptions;

  const index = (components: unknown) => ({ body: JSON.stringify({ components }) });
  const requestsFor = (path: string) => server.requests.filter((r) => r.path === path);
  const cacheFolder = (url: string) => join(options.cacheRoot, sha(url));

  before(async () => {
    pems = await certificates();
    server = await startServer(pems);
  });

  after(() => server.close());

  beforeEach(() => {
    server.routes.clear();
    server.requests.length = 0;
    work = mkdtempSync(join(tmpdir(), 'rt-https-repo-'));
    const caFile = join(work, 'ca.pem');
    writeFileSync(caFile, pems.ca);
    options = { caFile, timeoutMs: 5_000, maxBytes: 1_000_000, cacheRoot: join(work, 'cache') };
  });

  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it('downloads a single .wasm URL into the cache folder of that URL', async () => {
    server.routes.set('/greeter.wasm', { body: 'greeter bytes' });
    const url = `${server.url}/greeter.wasm`;
    const scan = await fetchHttpsRepository(url, options);
    expect(scan.errors).to.deep.equal([]);
    const path = join(cacheFolder(url), 'greeter.wasm');
    expect(scan.components).to.deep.equal([{ path, stem: 'greeter', repository: url, root: cacheFolder(url) }]);
    expect(readFileSync(path, 'utf8')).to.equal('greeter bytes');
    // Only what the repository served: a sidecar naming a file in the folder names one of the repository's own.
    expect(readdirSync(cacheFolder(url))).to.deep.equal(['greeter.wasm']);
  });

  for (const slash of ['', '/']) {
    it(`reads index.json of a directory URL ${slash ? 'with' : 'without'} a trailing slash, subfolders kept`, async () => {
      server.routes.set('/repo/index.json', index([{ path: 'sub/a.wasm' }, { path: 'sub/deeper/b.wasm' }]));
      server.routes.set('/repo/sub/a.wasm', { body: 'A' });
      server.routes.set('/repo/sub/deeper/b.wasm', { body: 'B' });
      const url = `${server.url}/repo${slash}`;
      const scan = await fetchHttpsRepository(url, options);
      expect(scan.errors).to.deep.equal([]);
      const dir = cacheFolder(url);
      expect(scan.components.map((c) => [c.path, c.stem])).to.deep.equal([
        [join(dir, 'sub', 'a.wasm'), 'a'],
        [join(dir, 'sub', 'deeper', 'b.wasm'), 'b'],
      ]);
      expect(readFileSync(join(dir, 'sub', 'deeper', 'b.wasm'), 'utf8')).to.equal('B');
    });
  }

  it('accepts a component whose sha256 matches index.json', async () => {
    server.routes.set('/repo/index.json', index([{ path: 'a.wasm', sha256: sha('A').toUpperCase() }]));
    server.routes.set('/repo/a.wasm', { body: 'A' });
    const scan = await fetchHttpsRepository(`${server.url}/repo/`, options);
    expect(scan.errors).to.deep.equal([]);
    expect(scan.components).to.have.length(1);
  });

  it('rejects and does not keep a component whose sha256 differs', async () => {
    const url = `${server.url}/repo/`;
    server.routes.set('/repo/index.json', index([{ path: 'a.wasm', sha256: sha('expected') }, { path: 'b.wasm' }]));
    server.routes.set('/repo/a.wasm', { body: 'tampered' });
    server.routes.set('/repo/b.wasm', { body: 'B' });
    const scan = await fetchHttpsRepository(url, options);
    expect(scan.components.map((c) => c.stem)).to.deep.equal(['b']);
    expect(scan.errors).to.deep.equal([
      `${url}a.wasm: sha256 mismatch: index.json lists ${sha('expected')}, the download has ${sha('tampered')}`,
    ]);
    expect(existsSync(join(cacheFolder(url), 'a.wasm'))).to.equal(false);
  });

  it('revalidates with If-None-Match and reuses the cached file on 304', async () => {
    server.routes.set('/greeter.wasm', { body: 'v1', etag: '"v1"' });
    const url = `${server.url}/greeter.wasm`;
    await fetchHttpsRepository(url, options);
    const scan = await fetchHttpsRepository(url, options);
    expect(scan.errors).to.deep.equal([]);
    expect(requestsFor('/greeter.wasm')).to.deep.equal([{ path: '/greeter.wasm' }, { path: '/greeter.wasm', ifNoneMatch: '"v1"' }]);
    expect(readFileSync(scan.components[0].path, 'utf8')).to.equal('v1');
  });

  it('stores the new bytes when the ETag and content change', async () => {
    server.routes.set('/greeter.wasm', { body: 'v1', etag: '"v1"' });
    const url = `${server.url}/greeter.wasm`;
    await fetchHttpsRepository(url, options);
    server.routes.set('/greeter.wasm', { body: 'v2', etag: '"v2"' });
    const scan = await fetchHttpsRepository(url, options);
    expect(readFileSync(scan.components[0].path, 'utf8')).to.equal('v2');
    server.routes.set('/greeter.wasm', { body: 'v3', etag: '"v3"' });
    await fetchHttpsRepository(url, options);
    expect(requestsFor('/greeter.wasm').map((r) => r.ifNoneMatch)).to.deep.equal([undefined, '"v1"', '"v2"']);
    expect(readFileSync(scan.components[0].path, 'utf8')).to.equal('v3');
  });

  it('does not download a component whose index sha256 equals the cached copy', async () => {
    server.routes.set('/repo/index.json', index([{ path: 'a.wasm', sha256: sha('A') }]));
    server.routes.set('/repo/a.wasm', { body: 'A', etag: '"a"' });
    await fetchHttpsRepository(`${server.url}/repo`, options);
    const scan = await fetchHttpsRepository(`${server.url}/repo`, options);
    expect(scan.errors).to.deep.equal([]);
    expect(scan.components).to.have.length(1);
    expect(requestsFor('/repo/a.wasm')).to.have.length(1);
  });

  it('downloads a sidecar beside its component, and deletes it once it is gone', async () => {
    server.routes.set('/repo/index.json', index([{ path: 'sub/a.wasm' }, { path: 'b.wasm' }]));
    server.routes.set('/repo/sub/a.wasm', { body: 'A' });
    server.routes.set('/repo/sub/a.toml', { body: 'domain = "acme"\n' });
    server.routes.set('/repo/b.wasm', { body: 'B' });
    const url = `${server.url}/repo`;
    const scan = await fetchHttpsRepository(url, options);
    expect(scan.errors).to.deep.equal([]);
    const sidecar = join(cacheFolder(url), 'sub', 'a.toml');
    expect(readFileSync(sidecar, 'utf8')).to.equal('domain = "acme"\n');
    expect(existsSync(join(cacheFolder(url), 'b.toml'))).to.equal(false);
    expect(requestsFor('/repo/b.toml')).to.have.length(1);

    // A sidecar's configuration may hold secrets: the mirror is rt's user's alone, a file an older rt kept too.
    expect(statSync(sidecar).mode & 0o777).to.equal(0o600);
    chmodSync(sidecar, 0o644);
    await fetchHttpsRepository(url, options);
    expect(statSync(sidecar).mode & 0o777).to.equal(0o600);

    server.routes.delete('/repo/sub/a.toml');
    const again = await fetchHttpsRepository(url, options);
    expect(again.errors).to.deep.equal([]);
    expect(existsSync(sidecar)).to.equal(false);
  });

  it('fails a component whose sidecar cannot be fetched', async () => {
    server.routes.set('/greeter.wasm', { body: 'G' });
    server.routes.set('/greeter.toml', { status: 500 });
    const url = `${server.url}/greeter.wasm`;
    const scan = await fetchHttpsRepository(url, options);
    expect(scan.components).to.deep.equal([]);
    expect(scan.errors).to.deep.equal([`${server.url}/greeter.toml: answered 500`]);
  });

  it('removes the cached files of components the index no longer lists', async () => {
    server.routes.set('/repo/index.json', index([{ path: 'a.wasm' }, { path: 'b.wasm' }]));
    server.routes.set('/repo/a.wasm', { body: 'A' });
    server.routes.set('/repo/b.wasm', { body: 'B' });
    server.routes.set('/repo/b.toml', { body: '' });
    const url = `${server.url}/repo`;
    await fetchHttpsRepository(url, options);
    server.routes.set('/repo/index.json', index([{ path: 'a.wasm' }]));
    const scan = await fetchHttpsRepository(url, options);
    expect(scan.components.map((c) => c.stem)).to.deep.equal(['a']);
    expect(existsSync(join(cacheFolder(url), 'b.wasm'))).to.equal(false);
    expect(existsSync(join(cacheFolder(url), 'b.toml'))).to.equal(false);
  });

  it("fetches a scan's files over one connection, which ends with the scan", async () => {
    server.routes.set('/repo/index.json', index([{ path: 'a.wasm' }, { path: 'b.wasm' }]));
    server.routes.set('/repo/a.wasm', { body: 'A' });
    server.routes.set('/repo/a.toml', { body: '' });
    server.routes.set('/repo/b.wasm', { body: 'B' });
    const before = server.connections;
    const scan = await fetchHttpsRepository(`${server.url}/repo`, options);
    expect(scan.errors).to.deep.equal([]);
    // index.json, a.wasm, a.toml, b.wasm, b.toml (404): one TLS handshake, and the CA file parsed once.
    expect(server.requests).to.have.length(5);
    expect(server.connections - before).to.equal(1);
    await eventually(() => expect(server.open()).to.equal(0), { what: "the scan's connection to close", timeoutMs: 2_000, intervalMs: 10 });
  });

  it('follows redirects, but not more than 5', async () => {
    server.routes.set('/old.wasm', { status: 301, headers: { location: '/new.wasm' } });
    server.routes.set('/new.wasm', { body: 'moved' });
    const scan = await fetchHttpsRepository(`${server.url}/old.wasm`, options);
    expect(scan.errors).to.deep.equal([]);
    expect(readFileSync(scan.components[0].path, 'utf8')).to.equal('moved');

    server.routes.set('/loop.wasm', { status: 302, headers: { location: '/loop.wasm' } });
    const loop = await fetchHttpsRepository(`${server.url}/loop.wasm`, options);
    expect(loop.errors).to.deep.equal([`${server.url}/loop.wasm: more than 5 redirects`]);
  });

  it('reports an error status with the URL', async () => {
    server.routes.set('/repo/index.json', { status: 403 });
    const scan = await fetchHttpsRepository(`${server.url}/repo`, options);
    expect(scan).to.deep.equal({ components: [], errors: [`${server.url}/repo/index.json: answered 403`], unreadable: true });
  });

  for (const chunked of [false, true]) {
    it(`stops at max_download_bytes (${chunked ? 'streamed body' : 'announced by Content-Length'})`, async () => {
      server.routes.set('/big.wasm', { body: Buffer.alloc(10_000), chunked });
      const url = `${server.url}/big.wasm`;
      const scan = await fetchHttpsRepository(url, { ...options, maxBytes: 4_000 });
      expect(scan.components).to.deep.equal([]);
      expect(scan.errors).to.deep.equal([`${url}: larger than repositories.max_download_bytes (4000 bytes)`]);
      expect(existsSync(join(cacheFolder(url), 'big.wasm'))).to.equal(false);
    });
  }

  it('gives up on a server that never answers', async () => {
    server.routes.set('/repo/index.json', { hang: true });
    const started = Date.now();
    const scan = await fetchHttpsRepository(`${server.url}/repo`, { ...options, timeoutMs: 300 });
    expect(Date.now() - started).to.be.below(2_000);
    expect(scan.errors).to.deep.equal([`${server.url}/repo/index.json: no complete answer within 300 ms`]);
  });

  it('gives up on a body that stops arriving', async () => {
    server.routes.set('/slow.wasm', { body: 'part', stall: true, headers: { 'content-length': '100' } });
    const scan = await fetchHttpsRepository(`${server.url}/slow.wasm`, { ...options, timeoutMs: 300 });
    expect(scan.errors).to.deep.equal([`${server.url}/slow.wasm: no complete answer within 300 ms`]);
  });

  describe('an unreachable repository', () => {
    let gone: TestServer;

    beforeEach(async () => {
      gone = await startServer(pems);
      gone.routes.set('/repo/index.json', index([{ path: 'a.wasm' }, { path: 'b.wasm' }]));
      gone.routes.set('/repo/a.wasm', { body: 'A' });
      gone.routes.set('/repo/b.wasm', { body: 'B' });
    });

    it('fails with the network error when nothing was cached', async () => {
      await gone.close();
      const scan = await fetchHttpsRepository(`${gone.url}/repo`, options);
      expect(scan.components).to.deep.equal([]);
      expect(scan.errors).to.have.length(1);
      expect(scan.errors[0]).to.match(/^https:\/\/127\.0\.0\.1:\d+\/repo\/index\.json: connect ECONNREFUSED/);
    });

    it('keeps serving the components of the last good scan', async () => {
      const url = `${gone.url}/repo`;
      const good = await fetchHttpsRepository(url, options);
      await gone.close();
      const scan = await fetchHttpsRepository(url, options);
      expect(scan.components).to.deep.equal(good.components);
      expect(scan.errors).to.have.length(1);
      expect(scan.errors[0]).to.match(/ECONNREFUSED.*\(serving the 2 component\(s\) of the last good scan\)$/);
    });
  });

  it('keeps the previous version of a component whose new download fails', async () => {
    server.routes.set('/repo/index.json', index([{ path: 'a.wasm', sha256: sha('A1') }]));
    server.routes.set('/repo/a.wasm', { body: 'A1' });
    const url = `${server.url}/repo`;
    await fetchHttpsRepository(url, options);
    server.routes.set('/repo/index.json', index([{ path: 'a.wasm', sha256: sha('A2') }]));
    const scan = await fetchHttpsRepository(url, options);
    expect(scan.errors).to.have.length(1);
    expect(scan.errors[0]).to.contain('sha256 mismatch');
    expect(scan.components).to.have.length(1);
    expect(readFileSync(scan.components[0].path, 'utf8')).to.equal('A1');
  });

  it('does not trust a private CA unless repositories.ca_file names it', async () => {
    server.routes.set('/greeter.wasm', { body: 'G' });
    const url = `${server.url}/greeter.wasm`;
    const scan = await fetchHttpsRepository(url, { ...options, caFile: undefined });
    expect(scan.components).to.deep.equal([]);
    expect(scan.errors).to.have.length(1);
    expect(scan.errors[0]).to.match(/^https:\S+\/greeter\.wasm: certificate not trusted \(.+\): set repositories\.ca_file to trust its CA$/);
  });

  describe('a bad index.json', () => {
    const cases: [string, string, string][] = [
      ['not JSON', '{"components": [', 'not JSON: '],
      ['not an object', '[]', 'expected {"components": [{"path": "name.wasm", "sha256": "..."}, ...]}, got []'],
      ['without components', '{}', 'components: expected an array of {"path": "name.wasm", "sha256": "..."} objects, got nothing'],
      ['with components not an array', '{"components": {}}', 'components: expected an array of {"path": "name.wasm", "sha256": "..."} objects, got {}'],
      ['with an entry that is not an object', '{"components": ["a.wasm"]}', 'components[0]: expected an object with a "path", got "a.wasm"'],
      ['with an entry without a path (other fields are left for other tools)', '{"components": [{"name": "a"}]}', 'components[0].path: expected a path such as "name.wasm", got nothing'],
      ['with a path that is not a string', '{"components": [{"path": 3}]}', 'components[0].path: expected a path such as "name.wasm", got 3'],
      ['with a bad sha256', `{"components": [{"path": "a.wasm", "sha256": "abc"}]}`, 'components[0].sha256: expected 64 hex digits, got "abc"'],
      ['with a ../ path', '{"components": [{"path": "../a.wasm"}]}', 'components[0] "../a.wasm": ".." segments are not allowed'],
      ['with an encoded .. segment', '{"components": [{"path": "x/%2e%2e/%2E%2E/a.wasm"}]}', '".." segments are not allowed'],
      ['with an absolute URL', '{"components": [{"path": "https://elsewhere.example/a.wasm"}]}', 'must be a path relative to the repository'],
      ['with an absolute path', '{"components": [{"path": "/a.wasm"}]}', 'must be a path relative to the repository'],
      ['with a path not ending .wasm', '{"components": [{"path": "a.wasm.txt"}]}', 'components[0] "a.wasm.txt": is not a .wasm file'],
      ['with a ./ segment', '{"components": [{"path": "./a.wasm"}]}', 'components[0] "./a.wasm": invalid path segment "."'],
      ['listing a file twice', '{"components": [{"path": "a.wasm"}, {"path": "a.wasm"}]}', 'components[1] "a.wasm": listed twice'],
    ];
    for (const [name, body, expected] of cases) {
      it(`is reported: ${name}`, async () => {
        server.routes.set('/repo/index.json', { body });
        const scan = await fetchHttpsRepository(`${server.url}/repo`, options);
        expect(scan.components).to.deep.equal([]);
        expect(scan.errors).to.have.length(1);
        expect(scan.errors[0]).to.satisfy((e: string) => e.startsWith(`${server.url}/repo/index.json: `));
        expect(scan.errors[0]).to.contain(expected);
        expect(server.requests.map((r) => r.path)).to.deep.equal(['/repo/index.json']);
      });
    }
  });

  describe('httpsRepositoryChanged (repositories.watch, docs/api.md §5.4)', () => {
    const url = () => `${server.url}/repo/`;
    const changed = () => httpsRepositoryChanged(url(), options);
    const publishIndex = (components: unknown, etag?: string) => server.routes.set('/repo/index.json', { ...index(components), ...(etag === undefined ? {} : { etag }) });

    it('asks for the index alone, with its ETag, while nothing changed; a new index is a change', async () => {
      publishIndex([{ path: 'a.wasm', sha256: sha('A') }], '"i1"');
      server.routes.set('/repo/a.wasm', { body: 'A', etag: '"a"' });
      await fetchHttpsRepository(url(), options);
      server.requests.length = 0;
      expect(await changed()).to.equal(false);
      expect(await changed()).to.equal(false);
      expect(server.requests).to.deep.equal([
        { path: '/repo/index.json', ifNoneMatch: '"i1"' },
        { path: '/repo/index.json', ifNoneMatch: '"i1"' },
      ]);
      publishIndex([{ path: 'a.wasm', sha256: sha('A') }, { path: 'b.wasm' }], '"i2"');
      expect(await changed()).to.equal(true);
    });

    it('tells by the hash where the server sends no ETag', async () => {
      publishIndex([{ path: 'a.wasm', sha256: sha('A') }]);
      server.routes.set('/repo/a.wasm', { body: 'A' });
      await fetchHttpsRepository(url(), options);
      expect(await changed()).to.equal(false);
      publishIndex([{ path: 'a.wasm', sha256: sha('A2') }]);
      expect(await changed()).to.equal(true);
    });

    it('asks again for each component listed without a sha256: a new file behind the same index is a change, a 404 too', async () => {
      publishIndex([{ path: 'a.wasm' }, { path: 'b.wasm', sha256: sha('B') }], '"i1"');
      server.routes.set('/repo/a.wasm', { body: 'A', etag: '"a1"' });
      server.routes.set('/repo/b.wasm', { body: 'B', etag: '"b1"' });
      await fetchHttpsRepository(url(), options);
      server.requests.length = 0;
      expect(await changed()).to.equal(false);
      expect(server.requests).to.deep.equal([
        { path: '/repo/index.json', ifNoneMatch: '"i1"' },
        { path: '/repo/a.wasm', ifNoneMatch: '"a1"' },
      ]);
      server.routes.set('/repo/a.wasm', { body: 'A2', etag: '"a2"' });
      expect(await changed()).to.equal(true);
      server.routes.delete('/repo/a.wasm');
      expect(await changed()).to.equal(true);
    });

    it('is a change until a scan completes: one that failed somewhere is tried again', async () => {
      expect(await changed(), 'never scanned').to.equal(true);
      publishIndex([{ path: 'a.wasm', sha256: sha('expected') }], '"i1"');
      server.routes.set('/repo/a.wasm', { body: 'tampered' });
      await fetchHttpsRepository(url(), options);
      expect(await changed()).to.equal(true);
      server.routes.set('/repo/a.wasm', { body: 'expected' });
      expect((await fetchHttpsRepository(url(), options)).errors).to.deep.equal([]);
      expect(await changed()).to.equal(false);
    });

    it('asks a single .wasm URL for its file with its ETag', async () => {
      server.routes.set('/greeter.wasm', { body: 'v1', etag: '"v1"' });
      const single = `${server.url}/greeter.wasm`;
      await fetchHttpsRepository(single, options);
      server.requests.length = 0;
      expect(await httpsRepositoryChanged(single, options)).to.equal(false);
      expect(server.requests).to.deep.equal([{ path: '/greeter.wasm', ifNoneMatch: '"v1"' }]);
      server.routes.set('/greeter.wasm', { body: 'v2', etag: '"v2"' });
      expect(await httpsRepositoryChanged(single, options)).to.equal(true);
    });

    it('throws what the exchange failed with, naming the URL', async () => {
      publishIndex([], '"i1"');
      await fetchHttpsRepository(url(), options);
      server.routes.set('/repo/index.json', { status: 503, body: 'down' });
      let error: unknown;
      await changed().catch((e: unknown) => (error = e));
      expect(String(error)).to.contain(`${url()}index.json: answered 503`);
    });
  });

  describe('scanRepository', () => {
    it('dispatches https: URLs and reports failures beside cached components', async () => {
      server.routes.set('/greeter.wasm', { body: 'G' });
      const url = `${server.url}/greeter.wasm`;
      const first = await scanRepository(url, work, options);
      expect(first.components.map((c) => c.stem)).to.deep.equal(['greeter']);
      expect(first.errors).to.deep.equal([]);
      server.routes.set('/greeter.wasm', { status: 500 });
      const reported = await scanRepository(url, work, options);
      expect(reported.components).to.deep.equal(first.components);
      expect(reported.errors).to.deep.equal([`${url}: answered 500`]);
    });

    it('reports an https: repository with nothing to serve', async () => {
      const url = `${server.url}/missing.wasm`;
      expect(await scanRepository(url, work, options)).to.deep.equal({ components: [], errors: [`${url}: answered 404`] });
    });

    it('reports a file: repository that does not exist, as unreadable, instead of throwing', async () => {
      const reported = await scanRepository('file:///no/such/dir', work, options);
      expect(reported).to.deep.equal({ components: [], errors: ['file:///no/such/dir: /no/such/dir does not exist'], unreadable: true });
    });

    it('scans an empty file: repository as one without components, not as unreadable', async () => {
      const empty = join(work, 'empty-repo');
      mkdirSync(empty);
      expect(await scanRepository(`file://${empty}`, work, options)).to.deep.equal({ components: [], errors: [] });
    });
  });
});
