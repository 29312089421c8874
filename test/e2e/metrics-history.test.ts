// GET /api/metrics/history (docs/api.md §7) against a real rt with two
// workers: its shape, and figures that follow a bounded load of real
// requests (a method that answers and one that traps), also across a worker
// killed and replaced.

import { expect } from 'chai';
import type { HistorySample, MetricsHistory } from '../../lib/metrics-history.js';
import { eventually } from '../support/eventually.js';
import { FAULTY, repository } from '../support/fixtures.js';
import { loadLoop } from '../support/load-loop.js';
import { RtProcess } from '../support/rt-process.js';

const SERVICE = 'acme.faulty';
const OK = { path: '/api/services/acme/faulty/invoke/ok' };
const BOOM = { path: '/api/services/acme/faulty/invoke/boom' };

describe('metrics history (e2e)', function () {
  this.timeout(60_000);
  let rt: RtProcess;

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({ faulty: FAULTY });
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]\n[log]\nrequests = false`, workers: 2 });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  async function history(): Promise<MetricsHistory> {
    const res = await fetch(`${rt.url}/api/metrics/history`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    return (await res.json()) as MetricsHistory;
  }

  /** What the samples so far counted for the service. */
  const counted = (samples: HistorySample[]) => ({
    requests: samples.reduce((n, s) => n + (s.services[SERVICE]?.requests ?? 0), 0),
    errors: samples.reduce((n, s) => n + (s.services[SERVICE]?.errors ?? 0), 0),
  });

  /** Every figure is a number ≥ 0 (or null where there were no requests), the quantiles in order. */
  function expectSane(samples: HistorySample[]): void {
    for (const s of samples) {
      for (const f of [s.all, ...Object.values(s.services)]) {
        expect(f.requests_per_second, s.at).to.be.at.least(0);
        expect(f.requests, s.at).to.be.at.least(0);
        if (f.requests === 0) continue;
        expect(f.error_rate, s.at).to.be.within(0, 1);
        expect(f.p50_seconds, s.at).to.be.a('number').and.at.least(0);
        expect(f.p99_seconds, s.at).to.be.a('number').and.at.least(f.p50_seconds!);
      }
    }
  }

  it('answers its interval, bound and buckets, and samples every 5 s', async () => {
    const h = await history();
    expect(h).to.include({ interval_seconds: 5, max_samples: 120 });
    expect(h.buckets).to.be.an('array').that.includes(0.005).and.includes(30);
    expect(h.samples).to.be.an('array');
    const first = h.samples.length;
    const later = await eventually(async () => ((await history()).samples.length > first ? history() : false), { what: 'a new sample', timeoutMs: 12_000, intervalMs: 500 });
    expect(later.samples.length).to.be.at.most(120);
    expect(later.samples.at(-1)!.seconds).to.be.within(2, 10);
  });

  it('counts every request of a load once, with the traps as errors, and figures that follow it', async () => {
    const before = counted((await history()).samples);
    const statuses = await loadLoop(rt.url, [OK, OK, OK, BOOM], { count: 80 });
    expect(Object.fromEntries(statuses)).to.deep.equal({ 200: 60, 500: 20 });
    // Each request counts in exactly one sample, once the primary has sampled after it.
    const h = await eventually(
      async () => {
        const now = await history();
        const c = counted(now.samples);
        expect(c.requests - before.requests).to.equal(80);
        return now;
      },
      { what: 'the samples to count the load', timeoutMs: 15_000, intervalMs: 500 },
    );
    expect(counted(h.samples).errors - before.errors).to.equal(20);
    const busy = h.samples.filter((s) => (s.services[SERVICE]?.requests ?? 0) > 0);
    expect(busy.length).to.be.at.least(1);
    for (const s of busy) {
      const f = s.services[SERVICE];
      expect(f.requests_per_second).to.be.closeTo(f.requests / s.seconds, 1e-9);
      expect(f.error_rate).to.be.greaterThan(0);
      expect(s.all.requests).to.be.at.least(f.requests);
    }
    expectSane(h.samples);
  });

  it('goes on counting, never negative, when a worker is killed and replaced', async () => {
    const before = counted((await history()).samples);
    const [victim] = rt.workerPids();
    process.kill(victim, 'SIGKILL');
    await eventually(() => rt.workerPids().length === 2 && !rt.workerPids().includes(victim), { what: 'a replacement worker', timeoutMs: 20_000 });
    await eventually(async () => (await fetch(`${rt.url}/api/ready`)).status === 200, { what: 'rt to be ready again', timeoutMs: 30_000 });
    const statuses = await loadLoop(rt.url, [OK], { count: 40 });
    expect(statuses.get(200)).to.equal(40);
    // What the killed worker counted after its last sample is lost with it; the load after is counted whole.
    const h = await eventually(
      async () => {
        const now = await history();
        expect(counted(now.samples).requests - before.requests).to.be.at.least(40);
        return now;
      },
      { what: 'the samples to count the load after the kill', timeoutMs: 15_000, intervalMs: 500 },
    );
    expectSane(h.samples);
  });

  it('is open to whoever may read /api/metrics: not a control operation, refused to no foreign page', async () => {
    const headers = { origin: 'https://elsewhere.example', 'sec-fetch-site': 'cross-site' };
    for (const path of ['/api/metrics', '/api/metrics/history']) expect((await fetch(`${rt.url}${path}`, { headers })).status, path).to.equal(200);
  });
});
