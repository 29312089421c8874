// Content a component makes never runs as rt's origin (docs/api.md §5.6),
// over HTTP to rt in process (test/support/in-process.ts). Its raw bytes and streams carry a sandboxing Content-Security-Policy
// and nosniff, rt's own JSON answers do not need them; and in Chromium, a
// component's HTML page, reached the way an attacker would reach it (a
// foreign page's auto-submitted form), runs in an opaque origin: its request
// to reload rt is a cross-origin one, which the control guard refuses.

import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import type { ComponentSource } from '../../examples/builder.js';
import { launchChromium } from '../support/chromium.js';
import { BYTES, repository } from '../support/fixtures.js';
import { InProcessRt } from '../support/in-process.js';
import { call, invoke } from '../support/rt-process.js';
import { openStream } from '../support/stream-client.js';
import { DROPS } from '../support/streaming-fixtures.js';

const SANDBOX = 'sandbox allow-scripts allow-forms allow-popups allow-downloads';

/** The page's script reports what its reload request got in the title: the test sees it ran. */
const PAGE = `<!doctype html><title>loaded</title><script>fetch('/api/reload', {method: 'POST'}).then((r) => { document.title = 'reload answered ' + r.status; }, (e) => { document.title = 'reload failed: ' + e.name; });</script>`;

/** `page: func() -> list<u8>`, the same HTML page every time (hand-written WAT). */
const PAGES: ComponentSource = {
  kind: 'wat',
  world: 'pages',
  wit: 'package acme:pages@1.0.0;\ninterface api { page: func() -> list<u8>; }\nworld pages { export api; }',
  wat: `(module
  (memory (export "memory") 1)
  (data (i32.const 64) ${JSON.stringify(PAGE)})
  (func (export "acme:pages/api@1.0.0#page") (result i32)
    (i32.store (i32.const 16) (i32.const 64))
    (i32.store (i32.const 20) (i32.const ${Buffer.byteLength(PAGE)}))
    (i32.const 16)))`,
};

describe('component content (in process)', function () {
  this.timeout(120_000);
  let rt: InProcessRt;

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({ pages: PAGES, 'pages.toml': { raw: '[media_types]\npage = "text/html"\n' }, bytes: BYTES, drops: DROPS });
    rt = await InProcessRt.start({ configToml: `repo_urls = ["file://${repo}"]` });
  });

  after(async () => {
    await rt?.stop();
  });

  const sandboxed = (headers: { get(name: string): string | null }) => ({ csp: headers.get('content-security-policy'), nosniff: headers.get('x-content-type-options') });

  it('sandboxes an answer in the media type the sidecar declares, and raw bytes', async () => {
    const page = await call(`${rt.url}/api/services/acme/pages/invoke/page`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(page.text).to.equal(PAGE);
    expect(sandboxed(page.headers)).to.deep.equal({ csp: SANDBOX, nosniff: 'nosniff' });
    const raw = await call(`${rt.url}/api/services/acme/bytes/invoke/reverse`, { body: 'abc', contentType: 'application/octet-stream' });
    expect(raw.headers.get('content-type')).to.equal('application/octet-stream');
    expect(sandboxed(raw.headers)).to.deep.equal({ csp: SANDBOX, nosniff: 'nosniff' });
  });

  it('sandboxes a streamed answer', async () => {
    const stream = await openStream(`${rt.url}/api/services/acme/drops/invoke/start`, { n: 2, 'delay-ms': 0 });
    await stream.ended;
    expect(stream.status).to.equal(200);
    expect(stream.res.headers).to.include({ 'content-security-policy': SANDBOX, 'x-content-type-options': 'nosniff' });
  });

  it("leaves rt's own JSON answers alone (the invoke lane's, Koa's, errors)", async () => {
    const answers = [
      await invoke(rt, 'acme/bytes/invoke/size', { data: 'AAAA' }),
      await call(`${rt.url}/api/services/acme/pages/invoke/page`, { headers: { accept: 'application/json' } }),
      await call(`${rt.url}/api/services`, { method: 'GET' }),
      await call(`${rt.url}/api/services/acme/pages/invoke/nothing`),
    ];
    for (const answer of answers) {
      expect(answer.headers.get('content-type')).to.match(/^application\/json/);
      expect(answer.headers.get('content-security-policy'), answer.text).to.equal(null);
    }
  });

  describe('in Chromium', () => {
    let browser: Browser;

    before(async function () {
      this.timeout(60_000);
      browser = await launchChromium();
    });

    after(async () => {
      await browser?.close();
    });

    it("a component's HTML page, opened by a foreign page's form, cannot reload rt", async function () {
      this.timeout(30_000);
      const page = await browser.newPage();
      const reloads = async () => (await call(`${rt.url}/api/metrics`, { method: 'GET' })).text.split('\n').filter((l) => l.startsWith('rt_control_operations_total{operation="reload",status="200"}'));
      const before = await reloads();
      // The attack: an empty form, auto-submitted, is an invoke without arguments.
      await page.setContent(`<form method="POST" action="${rt.url}/api/services/acme/pages/invoke/page"></form><script>document.forms[0].submit()</script>`);
      await page.waitForFunction(() => document.title.startsWith('reload '), undefined, { timeout: 20_000 });
      expect(new URL(page.url()).pathname).to.equal('/api/services/acme/pages/invoke/page');
      // Its origin is opaque: the request is cross-origin, refused by the guard, and its answer unreadable to the page.
      expect(await page.title()).to.equal('reload failed: TypeError');
      expect(await page.evaluate(() => window.origin)).to.equal('null');
      expect(await reloads(), 'reloads carried out').to.deep.equal(before);
      const refused = await rt.logged((l) => l.msg === 'request' && (l.req as { url?: string } | undefined)?.url === '/api/reload' && l.status === 403);
      expect(refused, 'the reload was refused with 403').to.equal(true);
      await page.close();
    });
  });
});
