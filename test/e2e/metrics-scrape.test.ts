// End to end: scraping /api/metrics leaves nothing behind in the primary
// (once, every worker's snapshot was kept until the worker died, ~47 KB a
// worker a scrape, until the primary ran out of heap). The primary's heap is
// measured after a full collection (test/support/heap-probe.ts), so what is
// compared is what it retains, not what its collector has yet to free.

import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { SLOW, repository } from '../support/fixtures.js';
import { RtProcess } from '../support/rt-process.js';

const SCRAPES = 3_000;
const WARM_UP = 300;
const CONCURRENCY = 8;
/** What the primary may retain more after the scrapes than after the warm-up: far below one snapshot a scrape. */
const MAX_GROWTH_BYTES = 3 * 1024 * 1024;

describe('metrics scrapes (e2e)', function () {
  this.timeout(180_000);
  let rt: RtProcess;

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({ slow: SLOW });
    const probe = new URL('../support/heap-probe.js', import.meta.url).href;
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]\n[log]\nrequests = false`, workers: 2, env: { NODE_OPTIONS: `--import=${probe}` } });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  /** `n` scrapes, `CONCURRENCY` at a time; each must answer 200 with both workers' series. */
  async function scrape(n: number): Promise<void> {
    let next = 0;
    const scraper = async () => {
      while (next++ < n) {
        const res = await fetch(`${rt.url}/api/metrics`);
        const text = await res.text();
        expect(res.status).to.equal(200);
        expect(text).to.match(/^rt_workers 2$/m);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, scraper));
  }

  /** The primary's heap after a full collection, as the probe prints it. */
  async function retained(): Promise<{ heapUsed: number; rss: number }> {
    const probes = () => rt.logLines().filter((l) => 'heap_probe' in l);
    const before = probes().length;
    process.kill(rt.child.pid!, 'SIGUSR2');
    const answer = await eventually(() => probes()[before] ?? false, { what: 'the heap probe to answer', timeoutMs: 10_000 });
    return answer.heap_probe as { heapUsed: number; rss: number };
  }

  it(`retains nothing of ${SCRAPES} scrapes after a warm-up`, async () => {
    await scrape(WARM_UP);
    const warm = await retained();
    await scrape(SCRAPES);
    const after = await retained();
    const growth = after.heapUsed - warm.heapUsed;
    console.log(`      primary heap ${mib(warm.heapUsed)} → ${mib(after.heapUsed)} MiB, RSS ${mib(warm.rss)} → ${mib(after.rss)} MiB`);
    expect(growth, `heap growth over ${SCRAPES} scrapes (bytes)`).to.be.below(MAX_GROWTH_BYTES);
  });
});

const mib = (bytes: number) => (bytes / 1024 ** 2).toFixed(1);
