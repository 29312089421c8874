// End to end: what a repository's files may ask of the host (docs/api.md §8).
// A sidecar from an https:// repository (a loopback server whose CA rt trusts
// through repositories.ca_file) may not grant allowed_paths, env or
// allowed_outbound_hosts unless repositories.trusted lists the repository; a
// configuration file must resolve, symlinks followed, inside the repository,
// whichever its scheme; a file name that is no service name does not name
// one. Each refusal fails its component alone, with the key or path named.

import { createHash } from 'node:crypto';
import { symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { expect } from 'chai';
import { buildComponent, type ComponentSource } from '../../examples/builder.js';
import { CONFIGURED, HOSTILE, repository, versioned } from '../support/fixtures.js';
import { certificates, startServer, type TestServer } from '../support/https-server.js';
import { call, invoke, isolatedEnv, RtProcess, runRt, tempDir } from '../support/rt-process.js';

/** A component whose only export is a world-level function: without a sidecar, its file name names the service. */
const WORLD_LEVEL: ComponentSource = {
  kind: 'wat',
  world: 'answer',
  wit: 'package acme:answer@1.0.0;\nworld answer { export answer: func() -> u32; }',
  wat: '(module (func (export "answer") (result i32) (i32.const 42)) (memory (export "memory") 1))',
};

interface Listing {
  services: { domain: string; service: string }[];
  failed: { source: string; error: string }[];
}

describe('repository trust (e2e)', function () {
  this.timeout(120_000);
  let server: TestServer;
  let rt: RtProcess;
  let local: string;
  let listing: Listing;
  const remote = (name: string) => `${server.url}/${name}/`;

  /** Serves `files` under /<name>/, the .wasm ones listed in its index.json. */
  const publish = (name: string, files: Record<string, Uint8Array | string>) => {
    const components: { path: string }[] = [];
    for (const [path, bytes] of Object.entries(files)) {
      server.routes.set(`/${name}/${path}`, { body: Buffer.from(bytes), etag: `"${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}"` });
      if (path.endsWith('.wasm')) components.push({ path });
    }
    server.routes.set(`/${name}/index.json`, { body: JSON.stringify({ components }) });
  };
  /** The load failure of the component whose file is `name` (its local copy, for an https: repository). */
  const failure = (name: string) => listing.failed.find((f) => basename(f.source) === name)?.error;
  const served = (service: string) => listing.services.some((s) => s.service === service);

  before(async function () {
    this.timeout(300_000);
    const pems = await certificates();
    server = await startServer(pems);
    const dir = await tempDir('rt-trust-e2e-');
    await writeFile(join(dir, 'ca.pem'), pems.ca);
    const [configured, hostile] = await Promise.all([buildComponent(CONFIGURED), buildComponent(HOSTILE)]);
    const grants = {
      allowed_paths: '[[allowed_paths]]\nhost = "/"\nguest = "/host"\nwritable = true\n',
      env: '[env]\nGREETING = "hello"\n',
      allowed_outbound_hosts: 'allowed_outbound_hosts = ["127.0.0.1:9"]\n',
    };
    publish('untrusted', {
      ...Object.fromEntries(Object.entries(grants).flatMap(([key, toml]) => [[`${key}.wasm`, configured], [`${key}.toml`, `service = "${key.replaceAll('_', '-')}"\n${toml}`]])),
      'environ.wasm': configured,
      'environ.toml': 'service = "environ"\nconfig = "/proc/self/environ"\n',
      'escape.wasm': configured,
      'escape.toml': 'service = "escape"\nconfig = "../../../../../../etc/passwd"\n',
      // A file the repository serves is its own: it may configure a component.
      'served.wasm': configured,
      'served.toml': 'service = "served"\nconfig = "plain.toml"\n',
      'plain.wasm': await buildComponent(versioned(1, 'plain')),
      'plain.toml': 'service = "plain"\n',
    });
    publish('trusted', { 'granted.wasm': hostile, 'granted.toml': `service = "granted"\n${grants.env}` });
    local = await repository({
      'dotdot.wasm': CONFIGURED,
      'dotdot.toml': { raw: 'service = "dotdot"\nconfig = "../../../../../../etc/passwd"\n' },
      'absolute.wasm': CONFIGURED,
      'absolute.toml': { raw: 'service = "absolute"\nconfig = "/etc/passwd"\n' },
      'linked.wasm': CONFIGURED,
      'linked.toml': { raw: 'service = "linked"\n' },
      'inside.wasm': CONFIGURED,
      'inside.toml': { raw: 'service = "inside"\n' },
      'inside.config.txt': { raw: 'from the repository' },
      '<img src=x>.wasm': WORLD_LEVEL,
      'answer.wasm': WORLD_LEVEL,
    });
    await symlink('/etc/passwd', join(local, 'linked.config.txt'));
    rt = await RtProcess.start({
      workers: 1,
      configToml: [
        `repo_urls = ["${remote('untrusted')}", "${remote('trusted')}", "file://${local}"]`,
        '[repositories]',
        `ca_file = "${join(dir, 'ca.pem')}"`,
        // Without its trailing slash: the same repository.
        `trusted = ["${remote('trusted').slice(0, -1)}"]`,
      ].join('\n'),
      env: { SECRET_OF_THE_HOST: 'do-not-leak' },
    });
    await rt.ready();
    const res = await call(`${rt.url}/api/services`, { method: 'GET' });
    expect(res.status).to.equal(200);
    listing = res.body as unknown as Listing;
  });

  after(async () => {
    await rt?.stop();
    await server?.close();
  });

  describe('an https:// repository not in repositories.trusted', () => {
    for (const key of ['allowed_paths', 'env', 'allowed_outbound_hosts']) {
      it(`may not grant ${key}: its component fails to load, the error naming the key`, () => {
        expect(failure(`${key}.wasm`)).to.match(new RegExp(`${key}\\.toml: ${key}: a sidecar from ${remote('untrusted').replaceAll('.', '\\.')} may not grant ${key}; list the repository in repositories\\.trusted`));
        expect(served(key.replaceAll('_', '-'))).to.equal(false);
      });
    }

    it('may not name a host file as configuration: an absolute path, or a ".." out of the repository', () => {
      expect(failure('environ.wasm')).to.match(/environ\.toml: config: "\/proc\/self\/environ" is an absolute path/);
      expect(failure('escape.wasm')).to.match(/escape\.toml: config: "(\.\.\/)+etc\/passwd" leaves the repository/);
      expect(served('environ') || served('escape')).to.equal(false);
    });

    it('configures a component with a file the repository serves, and its other components load', async () => {
      expect(served('plain')).to.equal(true);
      const res = await invoke(rt, 'acme/served/invoke/config-text', {});
      expect(res.body).to.deep.equal({ result: 'service = "plain"\n' });
    });
  });

  it("honours repositories.trusted: a trusted https:// repository's grants work", async () => {
    expect(failure('granted.wasm')).to.equal(undefined);
    const res = await invoke(rt, 'acme/granted/invoke/env', {});
    expect(res.body).to.deep.equal({ result: ['GREETING=hello'] });
  });

  describe('a file:// repository', () => {
    it('may not name a configuration file outside itself: a ".." escape, an absolute path, a symlink to /etc/passwd', () => {
      expect(failure('dotdot.wasm')).to.equal(`${join(local, 'dotdot.toml')}: config: "../../../../../../etc/passwd" leaves the repository (${local})`);
      expect(failure('absolute.wasm')).to.equal(`${join(local, 'absolute.toml')}: config: "/etc/passwd" is an absolute path; name a file of the repository, relative to the sidecar`);
      expect(failure('linked.wasm')).to.equal(`the configuration file ${join(local, 'linked.config.txt')} resolves to /etc/passwd, outside the repository (${local})`);
      for (const service of ['dotdot', 'absolute', 'linked']) expect(served(service), service).to.equal(false);
    });

    it('configures a component with a file inside it', async () => {
      const res = await invoke(rt, 'acme/inside/invoke/config-text', {});
      expect(res.body).to.deep.equal({ result: 'from the repository' });
    });

    it('may not name a service by a file name that is no service name', async () => {
      expect(failure('<img src=x>.wasm')).to.equal('the file name "<img src=x>" is not a service name (expected a name of letters, digits and dashes); rename the file, or name the service in its sidecar (service = "...")');
      expect((await invoke(rt, 'default/answer/invoke/answer', {})).body).to.deep.equal({ result: 42 });
    });
  });

  it('rt config shows repositories.trusted, and refuses a value that is not an https: URL', async () => {
    const cwd = await tempDir('rt-trust-config-');
    const env = isolatedEnv(join(cwd, 'user-config'));
    const shown = runRt(['config', '--format', 'json'], { cwd, env: { ...env, RT__REPOSITORIES__TRUSTED: 'https://repo.example/components/' } });
    expect(shown.status, shown.stderr).to.equal(0);
    expect((JSON.parse(shown.stdout) as { repositories: { trusted: string[] } }).repositories.trusted).to.deep.equal(['https://repo.example/components/']);
    const refused = runRt(['config'], { cwd, env: { ...env, RT__REPOSITORIES__TRUSTED: 'file:///srv/components' } });
    expect(refused.status).to.equal(2);
    expect(refused.stderr).to.match(/RT__REPOSITORIES__TRUSTED.*https: URL/);
  });
});
