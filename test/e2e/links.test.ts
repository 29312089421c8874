// Links through the real CLI (docs/api.md §5.9, sidecar `[imports]`): a
// service calls an interface another service in the same worker exports,
// values passed between the two instances; the target's err case is the
// caller's, its trap fails the caller's call and both serve on; a reload of
// the target is what the next call sees; a link that cannot hold is a load
// error naming both sides, and the rest serve.

import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildComponent } from '../../examples/builder.js';
import { repository } from '../support/fixtures.js';
import { calc, FRONT } from '../support/link-components.js';
import { call, RtProcess } from '../support/rt-process.js';
import { P3_DOZER, P3_NAP_SERVER } from '../support/async-components.js';
import { hasJspi } from '../../lib/platform.js';

describe('links (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;
  let repo: string;
  const invoke = (service: string, method: string, args: unknown) => call(`${rt.url}/api/services/acme/${service}/invoke/${method}`, { body: JSON.stringify(args), contentType: 'application/json' });

  before(async function () {
    this.timeout(600_000);
    repo = await repository({
      calc: calc(),
      'calc.toml': { raw: 'domain = "acme"\nservice = "calc"\n' },
      front: FRONT,
      'front.toml': { raw: 'domain = "acme"\nservice = "front"\n[imports]\n"acme:calc/math" = "acme/calc"\n' },
      // Each link below cannot hold: these fail to load, naming both sides.
      'lost.wasm': FRONT,
      'lost.toml': { raw: 'domain = "acme"\nservice = "lost"\n[imports]\n"acme:calc/math" = "acme/nowhere"\n' },
      'astray.wasm': FRONT,
      'astray.toml': { raw: 'domain = "acme"\nservice = "astray"\n[imports]\n"acme:calc/math" = "acme/front"\n' },
    });
    rt = await RtProcess.start({ workers: 2, configToml: `repo_urls = ["file://${repo}"]\n[http]\nrequest_timeout_seconds = 5\n` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('calls the linked service: numbers, strings and a result pass both ways, in every worker', async () => {
    for (let i = 0; i < 4; i++) {
      const sum = await invoke('front', 'sum-twice', { a: 2, b: 3 });
      expect([sum.status, sum.body], sum.text).to.deep.equal([200, { result: 10 }]);
      const relayed = await invoke('front', 'relay', { text: 'héllo' });
      expect(relayed.body).to.deep.equal({ result: 'got:héllo' });
      expect((await invoke('front', 'divide', { a: 7, b: 2 })).body).to.deep.equal({ result: 3 });
    }
    const { body } = await call(`${rt.url}/api/services/acme/front`, { method: 'GET' });
    expect(body).to.deep.include({ links: { 'acme:calc/math@1.0.0': 'acme/calc' }, unsatisfied_imports: [] });
  });

  it("answers the target's err case as the caller's, and a trap in the target as the caller's failure; both serve on", async () => {
    const refused = await invoke('front', 'divide', { a: 1, b: 0 });
    expect(refused.status).to.equal(500);
    expect(refused.body).to.include({ code: 'RT_ERR_METHOD_RETURNED_ERROR', service: 'acme.front' });
    expect(refused.body.value).to.equal('division by zero');
    const trapped = await invoke('front', 'boom', {});
    expect(trapped.status).to.equal(500);
    expect(trapped.body).to.include({ code: 'RT_ERR_COMPONENT_TRAPPED', service: 'acme.front' });
    expect(trapped.body.details).to.match(/acme:calc\/math@1\.0\.0#crash across the link to acme\/calc failed: it trapped/);
    expect((await invoke('front', 'sum-twice', { a: 1, b: 1 })).body).to.deep.equal({ result: 4 });
    expect((await invoke('calc', 'add', { a: 1, b: 1 })).body).to.deep.equal({ result: 2 });
  });

  it('fails a link to a service that is not served, or that does not export the interface, at load: the listing names both sides', async () => {
    const { body } = await call(`${rt.url}/api/services`, { method: 'GET' });
    const failed: Record<string, string> = Object.fromEntries((body.failed as { source: string; error: string }[]).map((f) => [f.source.split('/').pop(), f.error]));
    expect(failed['lost.wasm']).to.equal('acme.lost imports acme:calc/math@1.0.0 from acme/nowhere ([imports]): no service acme/nowhere is served (no component has that address, or it failed to load)');
    expect(failed['astray.wasm']).to.equal(`acme.astray imports acme:calc/math@1.0.0 from acme/front ([imports]): acme/front (${join(repo, 'front.wasm')}) does not export acme:calc/math@1.0.0`);
    expect((body.services as { service: string }[]).map((s) => s.service).sort()).to.deep.equal(['calc', 'front']);
  });

  it('sees a reload of the target in the next call across the link', async () => {
    await writeFile(join(repo, 'calc.wasm'), await buildComponent(calc(1000)));
    const reloaded = await call(`${rt.url}/api/reload`);
    expect(reloaded.status, reloaded.text).to.equal(200);
    expect(reloaded.body).to.deep.include({ updated: ['acme.calc'] });
    // add(add(2, 3) = 1005, 1005) = 3010, in whichever worker answers.
    for (let i = 0; i < 4; i++) expect((await invoke('front', 'sum-twice', { a: 2, b: 3 })).body).to.deep.equal({ result: 3010 });
  });
});

// WASI 0.3 components need JSPI (Node 24, 26): on 22 they do not load (platform.test.ts).
if (hasJspi) describe('async links (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;

  before(async function () {
    this.timeout(600_000);
    const repo = await repository({
      naps: P3_NAP_SERVER,
      'naps.toml': { raw: 'domain = "acme"\nservice = "naps"\nmax_concurrency = 64\n' },
      dozer: P3_DOZER,
      'dozer.toml': { raw: 'domain = "acme"\nservice = "dozer"\nmax_concurrency = 64\n[imports]\n"acme:rest/nap" = "acme/naps"\n' },
    });
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('awaits an async function across a link: 20 calls that wait 300 ms each, side by side, each in one instance', async () => {
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(`${rt.url}/api/services/acme/dozer/invoke/doze`, { body: JSON.stringify({ ns: 300_000_000 }), contentType: 'application/json' })));
    const took = performance.now() - started;
    for (const a of answers) {
      expect(a.status, a.text).to.equal(200);
      // What the target measured, passed back through the caller.
      expect(a.body.result).to.be.at.least(300_000_000);
    }
    // One after another they would take 6 s.
    expect(took).to.be.below(2_500);
    const { body } = await call(`${rt.url}/api/services`, { method: 'GET' });
    const live = Object.fromEntries((body.services as { service: string; instances: { live: number } }[]).map((s) => [s.service, s.instances.live]));
    expect(live, 'one instance each served them').to.deep.equal({ naps: 1, dozer: 1 });
  });
});
