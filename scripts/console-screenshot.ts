// `npm run console:screenshot -- <file.png>`: a picture of the console's plots
// for a reviewer (README "Console"). Starts rt on the bundled examples in a
// temporary directory, drives a bounded load (greetings, sums, small
// Mandelbrot renders, and a division by zero now and then for the 5xx share), waits until rt has sampled a few
// intervals of it, opens the console in Chromium and saves the page as PNG.
// Everything but the PNG goes with the run's temporary directory.

import { resolve } from 'node:path';
import type { MetricsHistory } from '../lib/metrics-history.js';
import { launchChromium } from '../test/support/chromium.js';
import { eventually } from '../test/support/eventually.js';
import { examplesRepository } from '../test/support/fixtures.js';
import { loadLoop } from '../test/support/load-loop.js';
import { RtProcess } from '../test/support/rt-process.js';

/** Intervals of load the plots show before the picture is taken (rt samples every 5 s). */
const LOADED_SAMPLES = 4;
const MAX_REQUESTS = 200_000;

async function main(): Promise<void> {
  const [file] = process.argv.slice(2);
  if (!file?.endsWith('.png')) {
    process.stderr.write('usage: npm run console:screenshot -- <file.png>\n');
    process.exit(2);
  }
  // npm runs scripts in the package's directory: a relative path is the caller's.
  const out = resolve(process.env.INIT_CWD ?? process.cwd(), file);
  const repo = await examplesRepository();
  const rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]\n[log]\nrequests = false`, workers: 2, quiet: true });
  const stop = new AbortController();
  let load: Promise<unknown> = Promise.resolve();
  const browser = await launchChromium();
  try {
    await rt.ready();
    const calls = [
      { path: '/api/services/example/greeter/invoke/greet', body: { name: 'reviewer' } },
      { path: '/api/services/example/calculator/invoke/add', body: [2, 40] },
      { path: '/api/services/example/mandelbrot/invoke/render', body: { width: 96, height: 64, iterations: 60 } },
      { path: '/api/services/example/greeter/invoke/greet', body: { name: 'reviewer' } },
      { path: '/api/services/example/calculator/invoke/divide', body: { a: 1, b: 0 } },
    ];
    load = loadLoop(rt.url, calls, { count: MAX_REQUESTS, concurrency: 2, signal: stop.signal });
    process.stderr.write(`rt at ${rt.url}, under load; waiting for ${LOADED_SAMPLES} samples of it\n`);
    await eventually(
      async () => {
        const history = (await (await fetch(`${rt.url}/api/metrics/history`)).json()) as MetricsHistory;
        return history.samples.filter((s) => s.all.requests > 0).length >= LOADED_SAMPLES;
      },
      { what: `${LOADED_SAMPLES} samples of the load`, timeoutMs: 90_000, intervalMs: 1000 },
    );
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${rt.url}/console/`);
    await page.waitForFunction(() => Number(document.querySelector('.plots figure.plot[data-plot="rate"]')?.getAttribute('data-max')) > 0, undefined, { timeout: 30_000 });
    // The services' own rates come from two polls of /api/metrics, 2 s apart.
    await page.locator('section.service[data-service="example/greeter"] .service-rates').filter({ hasText: /[1-9][\d.]* req\/s/ }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: out });
    process.stderr.write(`saved ${out}\n`);
  } finally {
    stop.abort();
    await load.catch(() => {});
    await browser.close();
    await rt.stop();
  }
}

await main();
