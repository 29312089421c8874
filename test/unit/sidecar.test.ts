// Sidecar validation: every key's wrong value answers with the file, the key and what was expected.

import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { readSidecar, SidecarError } from '../../lib/primary/sidecar.js';
import { tempDir } from '../support/rt-process.js';

/** A file: repository's: its sidecars may grant. */
const LOCAL = { repository: 'file:///repo', mayGrant: true };

describe('sidecar', () => {
  let dir: string;

  before(async () => {
    dir = await realpath(await tempDir('rt-sidecar-'));
    await mkdir(join(dir, 'data'));
    await mkdir(join(dir, 'out'));
    await symlink('data', join(dir, 'linked'));
    await writeFile(join(dir, 'file.txt'), 'not a directory');
  });

  async function read(toml: string): Promise<unknown> {
    const wasm = join(dir, 'c.wasm');
    await writeFile(join(dir, 'c.toml'), toml);
    return readSidecar(wasm, LOCAL);
  }

  async function failure(toml: string): Promise<string> {
    try {
      await read(toml);
    } catch (e) {
      expect(e).to.be.instanceOf(SidecarError);
      return (e as Error).message;
    }
    throw new Error('expected the sidecar to be rejected');
  }

  it('reads every key', async () => {
    const sidecar = await read(
      'domain = "acme"\nservice = "svc"\nconfig = "conf/svc.json"\npool_size = 3\nmax_invocations = 10\ninstance_per_call = false\nmax_queue = 0\nmax_concurrency = 1000\nmax_instances = 8\nhandle_idle_seconds = 60\nmax_handles = 5\n[env]\nGREETING = "hi"\n[media_types]\nrender = "image/png"\n',
    );
    expect(sidecar).to.deep.equal({
      domain: 'acme',
      service: 'svc',
      config: 'conf/svc.json',
      pool_size: 3,
      max_invocations: 10,
      instance_per_call: false,
      max_queue: 0,
      max_concurrency: 1000,
      max_instances: 8,
      handle_idle_seconds: 60,
      max_handles: 5,
      env: { GREETING: 'hi' },
      media_types: { render: 'image/png' },
    });
  });

  it('reads path grants: host relative to the sidecar, symlinks resolved, read-only unless writable', async () => {
    const sidecar = await read(
      `[[allowed_paths]]\nhost = "data"\nguest = "/data"\n[[allowed_paths]]\nhost = "${join(dir, 'out')}"\nguest = "/out/"\nwritable = true\n[[allowed_paths]]\nhost = "linked"\nguest = "/"\n`,
    );
    expect(sidecar).to.deep.equal({
      allowed_paths: [
        { host: join(dir, 'data'), guest: '/data', writable: false },
        { host: join(dir, 'out'), guest: '/out', writable: true },
        { host: join(dir, 'data'), guest: '/', writable: false },
      ],
    });
  });

  it('reads outbound hosts', async () => {
    const hosts = ['api.example.com', 'https://API.example.com', 'http://127.0.0.1:8080', 'localhost:3000'];
    expect(await read(`allowed_outbound_hosts = ${JSON.stringify(hosts)}`)).to.deep.equal({ allowed_outbound_hosts: hosts });
  });

  it("refuses every grant from a repository that may not grant, naming the key, before it looks at a host path", async () => {
    const remote = { repository: 'https://repo.example/', mayGrant: false };
    await writeFile(join(dir, 'c.toml'), 'domain = "acme"\nconfig = "c.json"\n[media_types]\nrender = "text/html"\n');
    expect(await readSidecar(join(dir, 'c.wasm'), remote)).to.deep.equal({ domain: 'acme', config: 'c.json', media_types: { render: 'text/html' } });
    const grants = {
      allowed_paths: '[[allowed_paths]]\nhost = "/nowhere"\nguest = "/host"\nwritable = true',
      env: '[env]\nA = "1"',
      allowed_outbound_hosts: 'allowed_outbound_hosts = ["api.example.com"]',
      // A mount takes a piece of rt's own paths: the operator's to give (docs/api.md §8).
      http_route: 'http_route = "/shop"',
      // A link reaches another service's instances.
      imports: '[imports]\n"wasi:http/handler" = "acme/echo"',
    };
    for (const [key, toml] of Object.entries(grants)) {
      await writeFile(join(dir, 'c.toml'), toml);
      const refused = await readSidecar(join(dir, 'c.wasm'), remote).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused, key).to.be.instanceOf(SidecarError);
      expect((refused as Error).message).to.equal(`${join(dir, 'c.toml')}: ${key}: a sidecar from https://repo.example/ may not grant ${key}; list the repository in repositories.trusted to allow its grants`);
    }
  });

  it('reads links: an interface with or without its version, to a service', async () => {
    expect(await read('[imports]\n"wasi:http/handler" = "acme/echo"\n"example:llm/generate@1.2.0" = "acme/model"\n')).to.deep.equal({
      imports: { 'wasi:http/handler': 'acme/echo', 'example:llm/generate@1.2.0': 'acme/model' },
    });
  });

  it('keeps a mount as it is matched: normalised', async () => {
    await writeFile(join(dir, 'c.toml'), 'http_route = "/sh%6fp;v=2/cart"\n');
    expect(await readSidecar(join(dir, 'c.wasm'), LOCAL)).to.deep.equal({ http_route: '/shop/cart' });
  });

  it('is empty when there is no sidecar file', async () => {
    expect(await readSidecar(join(dir, 'none.wasm'), LOCAL)).to.deep.equal({});
  });

  const cases: [toml: string, message: RegExp][] = [
    ['pool_size = 0', /c\.toml: pool_size: expected an integer between 1 and 64, got 0$/],
    ['pool_size = 65', /pool_size: expected an integer between 1 and 64, got 65$/],
    ['pool_size = "2"', /pool_size: expected an integer between 1 and 64, got "2"$/],
    ['max_invocations = 1.5', /max_invocations: expected an integer of at least 1, got 1.5$/],
    ['max_queue = -1', /max_queue: expected an integer between 0 and 100000, got -1$/],
    ['max_queue = 100001', /max_queue: expected an integer between 0 and 100000, got 100001$/],
    ['max_queue = "64"', /max_queue: expected an integer between 0 and 100000, got "64"$/],
    ['max_concurrency = 0', /max_concurrency: expected an integer between 1 and 10000, got 0$/],
    ['max_concurrency = 10001', /max_concurrency: expected an integer between 1 and 10000, got 10001$/],
    ['max_instances = 0', /max_instances: expected an integer between 1 and 128, got 0$/],
    ['max_instances = 129', /max_instances: expected an integer between 1 and 128, got 129$/],
    ['handle_idle_seconds = 0', /handle_idle_seconds: expected an integer between 1 and 86400, got 0$/],
    ['handle_idle_seconds = 86401', /handle_idle_seconds: expected an integer between 1 and 86400, got 86401$/],
    ['handle_idle_seconds = "5m"', /handle_idle_seconds: expected an integer between 1 and 86400, got "5m"$/],
    ['max_handles = 0', /max_handles: expected an integer between 1 and 100000, got 0$/],
    ['max_handles = 100001', /max_handles: expected an integer between 1 and 100000, got 100001$/],
    ['max_handles = 2.5', /max_handles: expected an integer between 1 and 100000, got 2.5$/],
    ['http_route = "hello"', /http_route: expected a path such as "\/hello" \(absolute, no "\." or "\.\." segments, no trailing slash\), got "hello"$/],
    ['http_route = "/hello/"', /http_route: expected a path such as .*, got "\/hello\/"$/],
    ['http_route = "/a/../api"', /http_route: expected a path such as .*, got "\/a\/\.\.\/api"$/],
    ['http_route = 1', /http_route: expected a path such as .*, got 1$/],
    ['http_route = "/api"', /c\.toml: http_route: "\/api" lies in rt's API \(\/api\); mount the handler elsewhere$/],
    ['http_route = "/Api/services"', /http_route: "\/Api\/services" lies in rt's API \(\/api\)/],
    ['http_route = "/console/x"', /http_route: "\/console\/x" lies in the console \(\/console\)/],
    ['http_route = "/%61pi"', /http_route: "\/%61pi" lies in rt's API \(\/api\)/],
    ['http_route = "/api;x"', /http_route: "\/api;x" lies in rt's API \(\/api\)/],
    ['http_route = "/cons%6fle"', /http_route: "\/cons%6fle" lies in the console \(\/console\)/],
    ['instance_per_call = "yes"', /instance_per_call: expected true or false, got "yes"$/],
    ['env = "A=1"', /env: expected a table of NAME = "value", got "A=1"$/],
    ['[env]\n"1BAD" = "x"', /env: "1BAD" is not a variable name$/],
    ['[env]\nA = 1', /env\.A: expected a string, got 1$/],
    ['media_types = 3', /media_types: expected a table of method = "media\/type", got 3$/],
    ['[media_types]\nrender = "png"', /media_types\.render: expected a media type such as "image\/png", got "png"$/],
    ['domain = "a b"', /domain: expected a name of letters, digits and dashes, got "a b"$/],
    ['config = 1', /config: expected the path of the configuration file, got 1$/],
    ['config = ""', /config: expected the path of the configuration file, got ""$/],
    ['colour = "red"', /unknown key "colour" \(known: domain, service, config, media_types, pool_size, max_invocations, instance_per_call, max_queue, max_concurrency, max_instances, handle_idle_seconds, max_handles, handle_scope, max_scopes, env, allowed_paths, allowed_outbound_hosts, http_route, imports\)$/],
    ['imports = "acme/echo"', /imports: expected a table of "namespace:package\/interface" = "domain\/service", got "acme\/echo"$/],
    ['[imports]\nhandler = "acme/echo"', /imports: "handler" is not an interface name such as "wasi:http\/handler"/],
    ['[imports]\n"wasi:http/handler" = "echo"', /imports\.wasi:http\/handler: expected a service as "domain\/service" \(each a name of letters, digits and dashes\), got "echo"$/],
    ['[imports]\n"wasi:http/handler" = "acme/echo/x"', /expected a service as "domain\/service" .*, got "acme\/echo\/x"$/],
    ['[imports]\n"wasi:http/handler" = 1', /expected a service as "domain\/service" .*, got 1$/],
    ['allowed_paths = "data"', /allowed_paths: expected an array of tables \(\[\[allowed_paths\]\] with host, guest and optional writable\), got "data"$/],
    ['[allowed_paths]\n"/data" = "data"', /allowed_paths: expected an array of tables .*, got \{"\/data":"data"\}$/],
    ['allowed_paths = ["data"]', /allowed_paths\[0\]: expected a table with host, guest and optional writable, got "data"$/],
    ['[[allowed_paths]]\nhost = "data"\nguest = "/data"\nmode = "ro"', /allowed_paths\[0\]: unknown key "mode" \(known: host, guest, writable\)$/],
    ['[[allowed_paths]]\nguest = "/data"', /allowed_paths\[0\]\.host: expected a directory path, got undefined$/],
    ['[[allowed_paths]]\nhost = 1\nguest = "/data"', /allowed_paths\[0\]\.host: expected a directory path, got 1$/],
    ['[[allowed_paths]]\nhost = "missing"\nguest = "/data"', /c\.toml: allowed_paths\[0\]\.host: "missing" \(\/.*\/missing\) does not exist$/],
    ['[[allowed_paths]]\nhost = "file.txt"\nguest = "/data"', /allowed_paths\[0\]\.host: "file\.txt" \(\/.*\/file\.txt\) is not a directory$/],
    ['[[allowed_paths]]\nhost = "data"', /allowed_paths\[0\]\.guest: expected an absolute path such as "\/data" \(no "\." or "\.\." segments\), got undefined$/],
    ['[[allowed_paths]]\nhost = "data"\nguest = "data"', /allowed_paths\[0\]\.guest: expected an absolute path .*, got "data"$/],
    ['[[allowed_paths]]\nhost = "data"\nguest = "/data/../etc"', /allowed_paths\[0\]\.guest: expected an absolute path .*, got "\/data\/\.\.\/etc"$/],
    ['[[allowed_paths]]\nhost = "data"\nguest = "/data"\nwritable = "yes"', /allowed_paths\[0\]\.writable: expected true or false, got "yes"$/],
    ['[[allowed_paths]]\nhost = "data"\nguest = "/d"\n[[allowed_paths]]\nhost = "out"\nguest = "/d/"', /allowed_paths\[1\]\.guest: "\/d\/" is granted twice$/],
    ['allowed_outbound_hosts = "api.example.com"', /allowed_outbound_hosts: expected a list of \[http:\/\/ or https:\/\/\]host\[:port\] \(such as .*\), got "api\.example\.com"$/],
    ['allowed_outbound_hosts = [1]', /allowed_outbound_hosts\[0\]: expected \[http:\/\/ or https:\/\/\]host\[:port\].*, got 1$/],
    ['allowed_outbound_hosts = ["ok.example", "ftp://files.example"]', /allowed_outbound_hosts\[1\]: expected .*, got "ftp:\/\/files\.example"$/],
    ['allowed_outbound_hosts = ["https://api.example.com/v1"]', /allowed_outbound_hosts\[0\]: expected .*, got "https:\/\/api\.example\.com\/v1"$/],
    ['allowed_outbound_hosts = ["*.example.com"]', /allowed_outbound_hosts\[0\]: expected .*, got "\*\.example\.com"$/],
    ['allowed_outbound_hosts = ["127.0.0.1:70000"]', /allowed_outbound_hosts\[0\]: expected .*, got "127\.0\.0\.1:70000"$/],
    ['allowed_outbound_hosts = ["127.0.0.1:0"]', /allowed_outbound_hosts\[0\]: expected .*, got "127\.0\.0\.1:0"$/],
    ['allowed_outbound_hosts = ["bad_host.example"]', /allowed_outbound_hosts\[0\]: expected .*, got "bad_host\.example"$/],
    ['allowed_outbound_hosts = ["[::1]:80"]', /allowed_outbound_hosts\[0\]: expected .*, got "\[::1\]:80"$/],
    ['allowed_outbound_hosts = [""]', /allowed_outbound_hosts\[0\]: expected .*, got ""$/],
    ['pool_size = ', /c\.toml: invalid TOML/],
  ];
  for (const [toml, message] of cases) {
    it(`rejects ${JSON.stringify(toml)}`, async () => {
      expect(await failure(toml)).to.match(message);
    });
  }
});
