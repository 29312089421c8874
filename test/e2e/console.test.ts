// The web console (README "Console"), used in a real browser (Debian's
// Chromium, driven by playwright-core) against rt serving the bundled
// examples (and a component exporting a resource): invoke through a generated
// form, a PNG answer shown as an image, a stream's items appearing as they
// come, a handle made, called and dropped, a restart with a configuration
// body, request rates from /api/metrics, plots of the last minutes drawn while
// a load runs; and the switch that turns it off.

import { expect } from 'chai';
import { get } from 'node:http';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.js';
import { examplesRepository, repository } from '../support/fixtures.js';
import { COUNTERS } from '../support/resource-fixtures.js';
import { RtProcess } from '../support/rt-process.js';
import { asyncBodies } from '../support/async-components.js';
import { hasJspi } from '../../lib/platform.js';
import { eventually } from '../support/eventually.js';
import { loadLoop } from '../support/load-loop.js';

describe('console (e2e, Chromium)', function () {
  let rt: RtProcess;
  let browser: Browser;
  let page: Page;
  /** Whatever the page reported as an error: CSP refusals, failed loads, exceptions. */
  const pageErrors: string[] = [];

  before(async function () {
    this.timeout(300_000);
    browser = await launchChromium();
    // A WASI 0.3 service whose methods read the request body as a stream, where this Node runs it (JSPI).
    const counters = await repository({ counters: COUNTERS, ...(hasJspi ? { 'p3-body.wasm': { raw: await asyncBodies() } } : {}) });
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${await examplesRepository()}", "file://${counters}"]`, workers: 2 });
    await rt.ready();
    page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(m.text());
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });

  after(async () => {
    await browser?.close();
    await rt?.stop();
  });

  const service = (name: string): Locator => page.locator(`section.service[data-service="${name}"]`);

  /** Opens a service and one of its methods; resolves with the method's panel. */
  async function openMethod(serviceName: string, method: string): Promise<Locator> {
    const s = service(serviceName);
    const details = s.locator('details').first();
    if (!(await details.evaluate((d) => (d as HTMLDetailsElement).open))) await s.locator('summary').first().click();
    const m = s.locator(`details.method[data-method="${method}"]`);
    await m.locator('summary').click();
    await m.locator('.invoke-panel').waitFor();
    return m;
  }

  it('redirects / to the page, which lists the services with their state and versions', async function () {
    this.timeout(30_000);
    await page.goto(rt.url);
    expect(new URL(page.url()).pathname).to.equal('/console/');
    await service('example/greeter').waitFor();
    const names = await page.locator('section.service').evaluateAll((sections) => sections.map((s) => s.getAttribute('data-service')));
    expect(names).to.have.members(['acme/counters', 'example/calculator', 'example/cart', 'example/digits', 'example/fetch-handler', 'example/greeter', 'example/hello-http', 'example/library', 'example/mandelbrot', 'example/primes', 'example/tally', 'example/ticker', ...(hasJspi ? ['default/p3-body', 'example/hello-p3'] : [])]);
    expect(await service('example/greeter').locator('summary').first().innerText()).to.match(/example\/greeter@1\.0\.0\s*active/);
  });

  if (hasJspi) {
    it('shows a method that reads the request body as a stream with a note naming its parameter, and no form', async function () {
      this.timeout(30_000);
      const s = service('default/p3-body');
      await s.locator('summary').first().click();
      const digest = s.locator('details.method[data-method="digest"]');
      await digest.locator('summary').click();
      expect(await digest.locator('p.muted').innerText()).to.equal('Reads parameter "data" from the request body (application/octet-stream) as it arrives, and the others from the query string: call it with curl or any HTTP client (docs/api.md §5.9).');
      expect(await digest.locator('.invoke-panel').count()).to.equal(0);
    });
  }

  it('invokes the greeter through its form and shows the answer', async function () {
    this.timeout(30_000);
    const greet = await openMethod('example/greeter', 'greet');
    expect(await greet.locator('summary .signature').innerText()).to.equal('func(name: string) -> string');
    await greet.locator('input[name="root[name]"]').fill('World');
    await greet.getByRole('button', { name: 'Invoke' }).click();
    await greet.locator('.answer-body pre').filter({ hasText: 'Hello, World!' }).waitFor();
    expect(JSON.parse(await greet.locator('.answer-body pre').innerText())).to.deep.equal({ result: 'Hello, World!' });
    expect(await greet.locator('.answer-status').innerText()).to.match(/^200 OK/);
  });

  it('shows the rate of requests per service from /api/metrics', async function () {
    this.timeout(30_000);
    // The greeter was called above; the page polls the metrics every 2 s.
    await service('example/greeter').locator('.service-rates').filter({ hasText: /[1-9]\d* total/ }).waitFor({ timeout: 10_000 });
    expect(await service('example/greeter').locator('.service-rates').innerText()).to.match(/\d+\.\d req\/s · mean (–|[\d.]+ ms)/);
  });

  it('shows the Mandelbrot PNG as an image', async function () {
    this.timeout(30_000);
    const render = await openMethod('example/mandelbrot', 'render');
    await render.locator('input[name="root[width]"]').fill('64');
    await render.locator('input[name="root[height]"]').fill('48');
    await render.locator('input[name="root[iterations]"]').fill('20');
    await render.getByRole('button', { name: 'Invoke' }).click();
    const img = render.locator('img.answer-image');
    await img.waitFor();
    await page.waitForFunction((el) => (el as HTMLImageElement).complete, await img.elementHandle());
    expect(await img.evaluate((el) => [(el as HTMLImageElement).naturalWidth, (el as HTMLImageElement).naturalHeight])).to.deep.equal([64, 48]);
    expect(await render.locator('.answer-status').innerText()).to.match(/^200 OK · image\/png/);
  });

  it("shows the ticker's items as they come", async function () {
    this.timeout(30_000);
    const start = await openMethod('example/ticker', 'start');
    await start.locator('input[name="root[count]"]').fill('4');
    await start.locator('input[name="root[interval-ms]"]').fill('400');
    await start.locator('input[name="root[message]"]').fill('tock');
    await start.getByRole('button', { name: 'Invoke' }).click();
    const items = start.locator('ol.stream-items li');
    await items.first().waitFor();
    // The first tick is on screen while the others are still being made, 400 ms apart.
    expect(await items.count()).to.be.below(4);
    expect(JSON.parse(await items.first().innerText())).to.include({ seq: 0, message: 'tock' });
    await start.locator('.stream-count').filter({ hasText: '· ended' }).waitFor();
    expect(await items.count()).to.equal(4);
    expect(JSON.parse(await items.last().innerText())).to.include({ seq: 3, message: 'tock' });
  });

  it("creates a counter through its constructor's form, calls its methods through the handle, and drops it", async function () {
    this.timeout(30_000);
    const s = service('acme/counters');
    if (!(await s.locator('details').first().evaluate((d) => (d as HTMLDetailsElement).open))) await s.locator('summary').first().click();
    const counter = s.locator('details.resource[data-resource="counter"]');
    // Listed before it is opened (hidden text, hence textContent).
    expect(await counter.locator('.members').textContent()).to.include('constructor(start: s64)').and.include('add: func(n: s64) -> s64');
    // Statics stay methods: counter.merge is invoked by name.
    await s.locator('details.method[data-method="counter.merge"]').waitFor();
    await counter.locator('summary').click();

    const create = counter.locator('.create-panel');
    await create.locator('input[name="root[start]"]').fill('5');
    await create.getByRole('button', { name: 'Create' }).click();
    await create.locator('.answer-status').filter({ hasText: /^201 Created/ }).waitFor();
    const { handle } = JSON.parse(await create.locator('.answer-body pre').innerText()) as { handle: string };
    expect(handle).to.be.a('string').and.not.equal('');
    const row = s.locator(`.handles-table tr[data-handle="${handle}"]`);
    await row.waitFor();
    expect(await row.innerText()).to.include('counter');

    const callPanel = counter.locator('.call-panel');
    await callPanel.locator('select.handle-select').selectOption(handle);
    await callPanel.locator('select.method-select').selectOption('add');
    await callPanel.locator('input[name="root[n]"]').fill('3');
    await callPanel.getByRole('button', { name: 'Call' }).click();
    await callPanel.locator('.answer-body pre').filter({ hasText: '"result": 8' }).waitFor();
    await callPanel.locator('select.method-select').selectOption('value');
    expect(await callPanel.locator('.method-request').innerText()).to.include('No parameters.');
    await callPanel.getByRole('button', { name: 'Call' }).click();
    await callPanel.locator('.answer-body pre').filter({ hasText: '"result": 8' }).waitFor();
    expect(await callPanel.locator('.answer-status').innerText()).to.match(/^200 OK/);

    await row.getByRole('button', { name: 'Drop' }).click();
    await s.locator('.handles .answer-status').filter({ hasText: /^204/ }).waitFor();
    await row.waitFor({ state: 'detached' });
    expect(await callPanel.locator('select.handle-select option').allInnerTexts()).not.to.include(handle);
  });

  it("shows an HTTP handler's routes and sends it a request from its box", async function () {
    this.timeout(30_000);
    const s = service('example/hello-http');
    await s.locator('summary').first().click();
    expect(await s.locator('.handler-facts').innerText()).to.include('/api/services/example/hello-http/http').and.include('/hello');
    const box = s.locator('.handler');
    // The description, fetched when the service is opened, brings the box.
    await box.locator('.handler-routes a').first().waitFor();
    expect(await box.locator('.handler-routes a').evaluateAll((links) => links.map((a) => a.getAttribute('href')))).to.deep.equal(['/api/services/example/hello-http/http/', '/hello/']);
    await box.locator('select.handler-method').selectOption('POST');
    await box.locator('select.handler-route').selectOption('/hello');
    await box.locator('input.handler-path').fill('/upper');
    await box.locator('textarea.handler-body').fill('from the console');
    await box.getByRole('button', { name: 'Send' }).click();
    await box.locator('.answer-body').filter({ hasText: 'FROM THE CONSOLE' }).waitFor();
    expect(await box.locator('.answer-status').innerText()).to.match(/^200 OK/);
  });

  it('restarts the greeter with a configuration body, and the next call greets with it', async function () {
    this.timeout(30_000);
    const greeter = service('example/greeter');
    await greeter.locator('textarea.restart-config').fill('{"greeting": "Bonjour"}');
    await greeter.locator('input.restart-content-type').fill('application/json');
    await greeter.getByRole('button', { name: 'Restart' }).click();
    await greeter.locator('.controls .control-answer').filter({ hasText: '"status":"restarted"' }).waitFor();
    const greet = greeter.locator('details.method[data-method="greet"]');
    await greet.getByRole('button', { name: 'Invoke' }).click();
    await greet.locator('.answer-body pre').filter({ hasText: 'Bonjour, World!' }).waitFor();
  });

  it('sends the control token the user entered, and asks for it when rt answers 401', async function () {
    this.timeout(30_000);
    const greeter = service('example/greeter');
    // The answer rt gives when http.control.token is set and the token is missing or wrong (docs/api.md §5.6).
    await page.route('**/api/services/example/greeter/quiesce', (route) =>
      route.fulfill({ status: 401, contentType: 'application/json', body: JSON.stringify({ error: 'unauthorized', details: 'a control token is required', service: 'example.greeter' }) }),
    );
    const sent = page.waitForRequest('**/quiesce');
    await greeter.getByRole('button', { name: 'Quiesce' }).click();
    expect((await sent).headers()).to.not.have.property('authorization');
    await greeter.locator('.controls .control-answer').filter({ hasText: 'Enter the control token' }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('control-token');

    await page.locator('#control-token').fill('s3cret');
    await page.locator('#control-token').press('Tab');
    const again = page.waitForRequest('**/quiesce');
    await greeter.getByRole('button', { name: 'Quiesce' }).click();
    expect((await again).headers().authorization).to.equal('Bearer s3cret');
    await page.unroute('**/api/services/example/greeter/quiesce');
  });

  it('reloads the components through the control endpoint', async function () {
    this.timeout(30_000);
    await page.getByRole('button', { name: 'Reload components' }).click();
    await page.locator('.reload-answer').filter({ hasText: '"status":"reloaded"' }).waitFor();
  });

  it('plots requests per second, p50/p99 latency and the 5xx share of the last minutes while a load runs, for all of rt and per service', async function () {
    this.timeout(60_000);
    const stop = new AbortController();
    const greet = { path: '/api/services/example/greeter/invoke/greet', body: { name: 'load' } };
    const divideByZero = { path: '/api/services/example/calculator/invoke/divide', body: { a: 1, b: 0 } };
    // Bounded: it stops once the plots are seen, or after this many requests.
    const load = loadLoop(rt.url, [greet, greet, greet, divideByZero], { count: 20_000, concurrency: 2, signal: stop.signal });
    const plot = (name: string) => page.locator(`.plots figure.plot[data-plot="${name}"]`);
    const figure = async (name: string, key: 'points' | 'max') => Number(await plot(name).getAttribute(`data-${key}`));
    try {
      // Loaded anew under load (the tests above leave panels open, which this one does not need).
      await page.goto(`${rt.url}/console/`);
      // rt samples every 5 s and the page polls as often: a few polls at most.
      await eventually(async () => (await figure('rate', 'max')) > 0, { what: 'the request rate of all of rt plotted', timeoutMs: 20_000, intervalMs: 250 });
      expect(await page.locator('.plots canvas').count()).to.be.at.least(3);
      await page.locator('select.plots-service').selectOption('example.calculator');
      expect(await page.locator('.plots').getAttribute('data-service')).to.equal('example.calculator');
      await eventually(async () => (await figure('errors', 'max')) > 0, { what: "the calculator's 5xx share plotted", timeoutMs: 20_000, intervalMs: 250 });
      expect(await figure('errors', 'max')).to.be.at.most(100);
      expect(await figure('latency', 'points')).to.be.at.least(1);
      expect(await figure('latency', 'max')).to.be.greaterThan(0);
    } finally {
      stop.abort();
    }
    const statuses = await load;
    expect(statuses.get(200)).to.be.greaterThan(0);
    expect(statuses.get(500)).to.be.greaterThan(0);
    // Drawn, not only handed over: the rate's line is on its canvas in its colour (#2456c7).
    const inked = await plot('rate')
      .locator('canvas')
      .evaluate((canvas: HTMLCanvasElement) => {
        const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
        let n = 0;
        for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i] - 0x24) < 24 && Math.abs(data[i + 1] - 0x56) < 24 && Math.abs(data[i + 2] - 0xc7) < 24 && data[i + 3] > 128) n++;
        return n;
      });
    expect(inked).to.be.greaterThan(10);
    expect(await plot('latency').locator('.u-legend').innerText()).to.include('p99 ≈');
    expect(await page.locator('.plots-note').innerText()).to.include('≈ approximate, from histogram buckets');
  });

  it('ran without errors in the page: nothing refused by its Content-Security-Policy', () => {
    expect(pageErrors.filter((e) => !e.includes('401'))).to.deep.equal([]);
  });

  it('serves its files with a self-only CSP, cache validators and gzip, and nothing else', async function () {
    this.timeout(30_000);
    const res = await fetch(`${rt.url}/console/`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).to.include("default-src 'none'; script-src 'self'; style-src 'self'");
    expect(res.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    expect(res.headers.get('cache-control')).to.equal('no-cache');
    const etag = res.headers.get('etag')!;
    // node:http, not fetch: fetch adds `Cache-Control: no-cache` to a conditional request, which rules out a 304.
    const revalidated = await new Promise<number | undefined>((resolve, reject) =>
      get(`${rt.url}/console/`, { headers: { 'if-none-match': etag } }, (r) => resolve(r.resume().statusCode)).on('error', reject),
    );
    expect(revalidated).to.equal(304);

    const script = /src="([^"]+\.js)"/.exec(await res.text())![1];
    const bundle = await fetch(`${rt.url}/console/${script}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(bundle.status).to.equal(200);
    expect(bundle.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect(bundle.headers.get('content-encoding')).to.equal('gzip');
    expect(bundle.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');

    for (const path of ['/console/../package.json', '/console/%2e%2e/package.json', '/console/..%2fpackage.json', '/console/nothing.js', '/console/src/prometheus.js']) {
      const missing = await fetch(`${rt.url}${path}`);
      expect(missing.status, path).to.equal(404);
      expect(await missing.json(), path).to.have.property('error', 'not found');
    }
    const post = await fetch(`${rt.url}/console/`, { method: 'POST' });
    expect(post.status).to.equal(405);
  });

  it('is off with console.enabled = false: / answers 404', async function () {
    this.timeout(60_000);
    const off = await RtProcess.start({ workers: 1, env: { RT__CONSOLE__ENABLED: 'false' } });
    try {
      await off.ready();
      for (const path of ['/', '/console/']) {
        const res = await fetch(`${off.url}${path}`, { redirect: 'manual' });
        expect(res.status, path).to.equal(404);
        expect(res.headers.get('content-type'), path).to.match(/^application\/json/);
        expect(await res.json(), path).to.deep.include({ error: 'not found', code: 'RT_ERR_NOT_FOUND' });
      }
    } finally {
      await off.stop();
    }
  });
});
