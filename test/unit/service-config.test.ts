// A service's configuration: its file, its format, its flattened keys, and
// restart bodies kept across host restarts.

import { mkdir, readdir, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { PersistedConfigs } from '../../lib/primary/persisted-configs.js';
import { ServiceConfigError, findConfigFile, flatten, readConfigFile, serviceConfig } from '../../lib/primary/service-config.js';
import { tempDir } from '../support/rt-process.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('service configuration', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await tempDir('rt-service-config-');
  });

  describe('flatten', () => {
    it('joins nested keys with dots and indexes arrays', () => {
      expect(flatten({ a: { b: { c: 'x' } }, list: [1, { k: true }], n: null, f: 1.5 })).to.deep.equal([
        ['a.b.c', 'x'],
        ['list.0', '1'],
        ['list.1.k', 'true'],
        ['n', 'null'],
        ['f', '1.5'],
      ]);
    });

    it('has no keys for a bare value', () => {
      expect(flatten('text')).to.deep.equal([]);
    });
  });

  describe('serviceConfig', () => {
    it('flattens JSON (also +json) and TOML, and keeps the bytes as they are', () => {
      const json = serviceConfig(bytes('{"db": {"port": 5432}}'), 'application/json; charset=utf-8', 'restart body');
      expect(json.entries).to.deep.equal([['db.port', '5432']]);
      expect(new TextDecoder().decode(json.bytes)).to.equal('{"db": {"port": 5432}}');
      expect(serviceConfig(bytes('{"a": "b"}'), 'application/vnd.acme+json', 'x').entries).to.deep.equal([['a', 'b']]);
      expect(serviceConfig(bytes('[db]\nhost = "h"\n'), 'application/toml', 'x').entries).to.deep.equal([['db.host', 'h']]);
    });

    it('gives other formats to init only', () => {
      const text = serviceConfig(bytes('a = = b'), 'text/plain', 'x');
      expect(text.entries).to.deep.equal([]);
      expect(text.contentType).to.equal('text/plain');
    });

    it('rejects JSON and TOML that do not parse, and text that is not UTF-8', () => {
      expect(() => serviceConfig(bytes('{'), 'application/json', 'x')).to.throw(ServiceConfigError, /^the configuration is not valid JSON: /);
      expect(() => serviceConfig(bytes('a = = 1'), 'application/toml', 'x')).to.throw(ServiceConfigError, /^the configuration is not valid TOML: /);
      expect(() => serviceConfig(new Uint8Array([0xff, 0xfe]), 'application/json', 'x')).to.throw(ServiceConfigError, /not valid JSON/);
    });
  });

  describe('findConfigFile', () => {
    it('is the sidecar\'s path, relative to the component', async () => {
      expect(await findConfigFile(join(dir, 'c.wasm'), 'conf/c.json', dir)).to.equal(join(dir, 'conf', 'c.json'));
    });

    it('is the one <stem>.config.* beside the component, or none', async () => {
      expect(await findConfigFile(join(dir, 'c.wasm'), undefined, dir)).to.equal(null);
      await writeFile(join(dir, 'c.config.json'), '{}');
      await writeFile(join(dir, 'cc.config.json'), '{}');
      expect(await findConfigFile(join(dir, 'c.wasm'), undefined, dir)).to.equal(join(dir, 'c.config.json'));
      await writeFile(join(dir, 'c.config.toml'), '');
      const error = await findConfigFile(join(dir, 'c.wasm'), undefined, dir).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(ServiceConfigError);
      expect((error as Error).message).to.equal('several configuration files for c.wasm: c.config.json, c.config.toml; name one with the sidecar\'s "config" key');
    });

    it('must resolve inside the repository: no absolute path, no ".." out of it, no link out of it', async () => {
      const repo = join(dir, 'repo');
      await mkdir(join(repo, 'sub'), { recursive: true });
      await writeFile(join(dir, 'outside.json'), '{}');
      await writeFile(join(repo, 'shared.json'), '{}');
      const wasm = join(repo, 'sub', 'c.wasm');
      const refusal = (config: string | undefined) =>
        findConfigFile(wasm, config, repo).then(
          () => '',
          (e: unknown) => (e instanceof ServiceConfigError ? e.message : String(e)),
        );
      expect(await findConfigFile(wasm, '../shared.json', repo)).to.equal(join(repo, 'shared.json'));
      expect(await refusal('/etc/passwd')).to.equal(`${join(repo, 'sub', 'c.toml')}: config: "/etc/passwd" is an absolute path; name a file of the repository, relative to the sidecar`);
      expect(await refusal('../../outside.json')).to.equal(`${join(repo, 'sub', 'c.toml')}: config: "../../outside.json" leaves the repository (${repo})`);
      expect(await refusal('../../../../../../../etc/passwd')).to.match(/config: "(\.\.\/)+etc\/passwd" leaves the repository/);
      await symlink('/etc/passwd', join(repo, 'sub', 'c.config.txt'));
      expect(await refusal(undefined)).to.equal(`the configuration file ${join(repo, 'sub', 'c.config.txt')} resolves to /etc/passwd, outside the repository (${repo})`);
      await symlink('../../outside.json', join(repo, 'sub', 'linked.json'));
      expect(await refusal('linked.json')).to.match(/linked\.json resolves to .*outside\.json, outside the repository/);
      // A link that stays inside is followed.
      await symlink('../shared.json', join(repo, 'sub', 'inside.json'));
      expect(await findConfigFile(wasm, 'inside.json', repo)).to.equal(join(await realpath(repo), 'shared.json'));
    });

    it('takes the media type from the extension', async () => {
      await writeFile(join(dir, 'a.toml'), 'x = 1');
      await writeFile(join(dir, 'a.bin'), 'x');
      expect((await readConfigFile(join(dir, 'a.toml'))).contentType).to.equal('application/toml');
      expect((await readConfigFile(join(dir, 'a.bin'))).contentType).to.equal('application/octet-stream');
    });
  });

  describe('PersistedConfigs', () => {
    it('keeps a configuration until it is removed, and nothing else in its directory', async () => {
      const store = new PersistedConfigs(join(dir, 'kept'));
      const id = { domain: 'acme', service: 'svc' };
      const errors: string[] = [];
      expect(await store.load(id, (m) => errors.push(m))).to.equal(null);
      await store.save(id, serviceConfig(bytes('{"a": 1}'), 'application/json', 'restart body'));
      const loaded = await new PersistedConfigs(join(dir, 'kept')).load(id, (m) => errors.push(m));
      expect(loaded && { type: loaded.contentType, text: new TextDecoder().decode(loaded.bytes), entries: loaded.entries, origin: loaded.origin }).to.deep.equal({
        type: 'application/json',
        text: '{"a": 1}',
        entries: [['a', '1']],
        origin: 'restart body',
      });
      expect(await readdir(join(dir, 'kept'))).to.deep.equal(['acme.svc.json']);
      await store.remove(id);
      expect(await store.load(id, (m) => errors.push(m))).to.equal(null);
      expect(errors).to.deep.equal([]);
    });

    it("keeps each configuration its owner's alone (0600 in a 0700 directory), and tightens what an older rt kept", async () => {
      const store = new PersistedConfigs(join(dir, 'kept'));
      await store.save({ domain: 'acme', service: 'svc' }, serviceConfig(bytes('token = "s3cret"'), 'application/toml', 'restart body'));
      expect((await stat(join(dir, 'kept'))).mode & 0o777).to.equal(0o700);
      expect((await stat(join(dir, 'kept', 'acme.svc.json'))).mode & 0o777).to.equal(0o600);

      const older = join(dir, 'older');
      await mkdir(older, { mode: 0o755 });
      await writeFile(join(older, 'acme.svc.json'), '{}', { mode: 0o644 });
      expect(await new PersistedConfigs(older).tighten()).to.equal(1);
      expect((await stat(older)).mode & 0o777).to.equal(0o700);
      expect((await stat(join(older, 'acme.svc.json'))).mode & 0o777).to.equal(0o600);
      expect(await new PersistedConfigs(join(dir, 'none')).tighten()).to.equal(0);
    });

    it('reports a stored file it cannot read, and ignores it', async () => {
      const store = new PersistedConfigs(dir);
      await writeFile(join(dir, 'acme.svc.json'), 'not json');
      const errors: string[] = [];
      expect(await store.load({ domain: 'acme', service: 'svc' }, (m) => errors.push(m))).to.equal(null);
      expect(errors).to.have.length(1);
      expect(errors[0]).to.match(/acme\.svc\.json/);
    });
  });
});
