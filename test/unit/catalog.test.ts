// Building the catalog (lib/primary/catalog.ts), its components described
// several at once: services and failures come out in the repository's order
// as a one-by-one build gave them, a file that is no component fails alone,
// a component found twice compiles once, and each compile says in the log
// where it is.

import { componentEmbed, componentNew } from '@bytecodealliance/jco-transpile/wasm-tools';
import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import type { WatSource } from '../../examples/builder.js';
import { buildCatalog } from '../../lib/primary/catalog.js';
import { serviceKey } from '../../lib/service.js';
import { repository, versioned } from '../support/fixtures.js';
import { silentLog } from '../support/hosting.js';
import { tempDir } from '../support/rt-process.js';

describe('catalog', function () {
  this.timeout(120_000);
  const saved = process.env.RT_CACHE_DIR;
  let cache: string;

  beforeEach(async () => {
    // A cache of the test's own: every component compiles.
    cache = await tempDir('rt-catalog-cache-');
    process.env.RT_CACHE_DIR = cache;
  });

  afterEach(async () => {
    if (saved === undefined) delete process.env.RT_CACHE_DIR;
    else process.env.RT_CACHE_DIR = saved;
    await rm(cache, { recursive: true, force: true });
  });

  it("keeps the repository's order, fails a broken file alone, compiles a component found twice once, and logs each compile", async () => {
    const repo = await repository({
      a: versioned(1, 'alpha'),
      b: { raw: 'not a component' },
      c: versioned(2, 'gamma'),
      d: versioned(3, 'delta'),
      e: versioned(1, 'alpha'),
    });
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push((JSON.parse(line) as { msg: string }).msg) });
    const { services, failures } = await buildCatalog([pathToFileURL(repo).href], repo, { download: { timeoutMs: 10_000, maxBytes: 1 << 20, cacheRoot: join(cache, 'repositories') }, trusted: [], maxComponentBytes: 256 << 20 }, log);

    expect(services.map((s) => basename(s.source))).to.deep.equal(['a.wasm', 'c.wasm', 'd.wasm']);
    expect(failures.map((f) => basename(f.source))).to.deep.equal(['b.wasm', 'e.wasm']);
    expect(failures[1].error).to.match(/^shadowed: .*\/a\.wasm serves /);

    const transpiled = lines.filter((l) => l.startsWith('transpiling '));
    expect(transpiled).to.have.length(3);
    for (const stem of ['c', 'd']) {
      expect(lines).to.include(`transpiling ${stem} (first load of this version)...`);
      expect(lines).to.include(`instrumenting ${stem} for inline calls...`);
      expect(lines.some((l) => new RegExp(`^${stem} compiled in \\d+\\.\\d s \\([1-5]/5\\)$`).test(l)), `"${stem} compiled in ..." in ${JSON.stringify(lines)}`).to.equal(true);
    }
    expect(lines.filter((l) => / compiled in /.test(l))).to.have.length(3);
  });

  it('serves a file stem with underscores by its kebab-case name; of two files that map to one name, the kebab-case one serves and the other is shadowed', async () => {
    const worldOnly = (answer: number): WatSource => ({
      kind: 'wat',
      world: 'w',
      wit: 'package acme:w@1.0.0;\nworld w { export run-async: func() -> u32; }',
      wat: `(module (func (export "run-async") (result i32) (i32.const ${answer})))`,
    });
    // Scanned in this order: the underscore file is found first, and loses all the same.
    const repo = await repository({ 'a/my_component': worldOnly(1), 'b/my-component': worldOnly(2), 'c/async_call': worldOnly(3) });
    const { services, failures } = await buildCatalog([pathToFileURL(repo).href], repo, { download: { timeoutMs: 10_000, maxBytes: 1 << 20, cacheRoot: join(cache, 'repositories') }, trusted: [], maxComponentBytes: 256 << 20 }, silentLog);
    expect(services.map((s) => [serviceKey(s.id), relative(repo, s.source)])).to.deep.equal([
      ['default/my-component', 'b/my-component.wasm'],
      ['default/async-call', 'c/async_call.wasm'],
    ]);
    expect(failures).to.deep.equal([{ source: join(repo, 'a/my_component.wasm'), error: `shadowed: ${join(repo, 'b/my-component.wasm')} serves default/my-component` }]);
  });

  it('fails a component over repositories.max_component_mib before reading it, and serves the rest', async () => {
    const repo = await repository({ small: versioned(1, 'small'), 'huge.wasm': { raw: new Uint8Array(3 * 2 ** 20 + 1) } });
    const { services, failures } = await buildCatalog([pathToFileURL(repo).href], repo, { download: { timeoutMs: 10_000, maxBytes: 1 << 20, cacheRoot: join(cache, 'repositories') }, trusted: [], maxComponentBytes: 2 * 2 ** 20 }, silentLog);
    expect(services.map((s) => s.id.service)).to.deep.equal(['small']);
    // Not "not a component": its size refused it before its bytes were read.
    expect(failures).to.deep.equal([{ source: join(repo, 'huge.wasm'), error: 'the component is 3 MiB, over repositories.max_component_mib (2 MiB)' }]);
  });

  it('serves wasi:http handlers at their routes: a route claimed twice fails the later service by address, naming both; a route on a component that is no handler fails it; a route within another is logged, naming both', async () => {
    const handler = await handlerComponent();
    const repo = await repository({
      'b.wasm': { raw: handler },
      'b.toml': { raw: 'service = "b"\nhttp_route = "/site"\n' },
      'a.wasm': { raw: handler },
      'a.toml': { raw: 'service = "a"\nhttp_route = "/site"\n' },
      'nested.wasm': { raw: handler },
      'nested.toml': { raw: 'service = "nested"\nhttp_route = "/site/admin"\n' },
      'unmounted.wasm': { raw: handler },
      'unmounted.toml': { raw: 'service = "unmounted"\n' },
      plain: versioned(1, 'plain'),
      'plain.toml': { raw: 'http_route = "/plain"\n' },
    });
    const warnings: { msg: string; route?: string; within?: string }[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as { msg: string }) });
    const { services, failures } = await buildCatalog([pathToFileURL(repo).href], repo, { download: { timeoutMs: 10_000, maxBytes: 1 << 20, cacheRoot: join(cache, 'repositories') }, trusted: [], maxComponentBytes: 256 << 20 }, log);
    expect(warnings.filter((w) => w.route !== undefined).map((w) => [w.route, w.within, w.msg])).to.deep.equal([
      ['/site/admin', '/site', 'http_route /site/admin of default.nested lies within /site of default.a: requests below /site/admin go to default.nested'],
    ]);
    expect(services.map((s) => [s.id.service, s.http])).to.deep.equal([
      ['a', { interface: 'wasi:http/incoming-handler@0.2.3', version: '0.2.3', wasi: '0.2', route: '/site' }],
      ['nested', { interface: 'wasi:http/incoming-handler@0.2.3', version: '0.2.3', wasi: '0.2', route: '/site/admin' }],
      ['unmounted', { interface: 'wasi:http/incoming-handler@0.2.3', version: '0.2.3', wasi: '0.2', route: null }],
    ]);
    expect(failures.map((f) => [basename(f.source), f.error])).to.deep.equal([
      ['plain.wasm', `${join(repo, 'plain.toml')}: http_route: the component exports no HTTP handler (wasi:http/incoming-handler@0.2.x or wasi:http/handler@0.3.x) to mount`],
      // A handler's only package is wasi:http, so its domain is the default one (a sidecar names it otherwise).
      ['b.wasm', `http_route "/site" is claimed by default.a (${join(repo, 'a.wasm')}) already`],
    ]);
  });
});

/** A component exporting wasi:http/incoming-handler@0.2.3 (of package acme:site), its core module made up by wasm-tools. */
async function handlerComponent(): Promise<Uint8Array> {
  const wit = `package acme:site@1.0.0;
    package wasi:http@0.2.3 {
      interface types { resource incoming-request; resource response-outparam; }
      interface incoming-handler {
        use types.{incoming-request, response-outparam};
        handle: func(request: incoming-request, response-out: response-outparam);
      }
    }
    world site { export wasi:http/incoming-handler@0.2.3; }`;
  return componentNew(await componentEmbed({ dummy: true, witSource: wit, world: 'site' }), []);
}
