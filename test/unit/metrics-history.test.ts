// The history of request rates and latencies (docs/api.md §7): the maths of
// lib/primary/request-tallies.ts on snapshots a real RequestStats writes (as
// a worker sends them), and the ring of lib/primary/metrics-history-ring.ts
// fed by a fake set of workers.

import { expect } from 'chai';
import type { MetricsSnapshot } from '../../lib/ipc.js';
import { MetricsHistoryRing } from '../../lib/primary/metrics-history-ring.js';
import { emptyTally, figures, increase, quantile, sumTallies, talliesIncrease, talliesOf, type RequestTally } from '../../lib/primary/request-tallies.js';
import { DURATION_BUCKETS } from '../../lib/request-metrics.js';
import { RequestStats } from '../../lib/worker/http/request-stats.js';
import { eventually, letTimePass } from '../support/eventually.js';

/** A cumulative histogram over DURATION_BUCKETS from the number of durations in each bucket (+Inf last), as given. */
function cumulative(perBucket: Record<number, number>): number[] {
  let sum = 0;
  return Array.from({ length: DURATION_BUCKETS.length + 1 }, (_, i) => (sum += perBucket[i] ?? 0));
}

const tally = (requests: number, errors: number, perBucket: Record<number, number>): RequestTally => ({ requests, errors, buckets: cumulative(perBucket) });

/** A worker's counts: `requests` answers of each of `statuses` by service and method, each taking `seconds`. */
function worker(calls: { service: string; method: string; status: number; seconds: number; times?: number }[]): RequestStats {
  const stats = new RequestStats();
  for (const { service, method, status, seconds, times = 1 } of calls) for (let i = 0; i < times; i++) stats.series(service, method).observe(status, seconds);
  return stats;
}

describe('metrics history', () => {
  describe('talliesOf', () => {
    it("sums a worker's requests by service, counts 5xx (not 499) as errors, and keeps rt's own routes in all only", () => {
      const stats = worker([
        { service: 'example.greeter', method: 'greet', status: 200, seconds: 0.002, times: 3 },
        { service: 'example.greeter', method: 'greet-person', status: 500, seconds: 0.02 },
        { service: 'example.greeter', method: 'greet', status: 499, seconds: 40 },
        { service: 'example.ticker', method: 'start', status: 503, seconds: 0.0001 },
        { service: '', method: '', status: 404, seconds: 0.0001, times: 2 },
      ]);
      stats.series('default.shop', '', '/shop').observe(502, 0.3);
      const tallies = talliesOf(stats.metrics());
      expect(tallies.all).to.deep.equal(tally(9, 3, { 0: 3, 2: 3, 5: 1, 9: 1, 15: 1 }));
      expect([...tallies.services.keys()]).to.have.members(['example.greeter', 'example.ticker', 'default.shop']);
      expect(tallies.services.get('example.greeter')).to.deep.equal(tally(5, 1, { 2: 3, 5: 1, 15: 1 }));
      expect(tallies.services.get('default.shop')).to.deep.equal(tally(1, 1, { 9: 1 }));
    });

    it('reads nothing from a snapshot without request metrics', () => {
      const tallies = talliesOf([]);
      expect(tallies.all).to.deep.equal(emptyTally());
      expect(tallies.services.size).to.equal(0);
    });
  });

  describe('increase', () => {
    it('is what the counts grew by since the same worker\'s last snapshot', () => {
      expect(increase(tally(10, 1, { 0: 8, 3: 2 }), tally(15, 3, { 0: 9, 3: 5, 15: 1 }))).to.deep.equal(tally(5, 2, { 0: 1, 3: 3, 15: 1 }));
    });

    it('is all of the counts of a worker seen for the first time (it counts from its start)', () => {
      expect(increase(undefined, tally(4, 1, { 2: 4 }))).to.deep.equal(tally(4, 1, { 2: 4 }));
    });

    it('never goes negative: a count that went down started again, and is all of the increase', () => {
      const reset = increase(tally(100, 10, { 0: 100 }), tally(3, 0, { 0: 3 }));
      expect(reset).to.deep.equal(tally(3, 0, { 0: 3 }));
      // Fewer in one bucket is a new start too, even with more requests in all.
      expect(increase(tally(10, 0, { 0: 10 }), tally(12, 0, { 0: 2, 4: 10 }))).to.deep.equal(tally(12, 0, { 0: 2, 4: 10 }));
    });

    it("adds services a worker had not answered for before, and sums workers' increases", () => {
      const before = talliesOf(worker([{ service: 'a.x', method: 'm', status: 200, seconds: 0.001 }]).metrics());
      const after = talliesOf(worker([{ service: 'a.x', method: 'm', status: 200, seconds: 0.001, times: 3 }, { service: 'b.y', method: 'm', status: 500, seconds: 0.001 }]).metrics());
      const grew = talliesIncrease(before, after);
      expect(grew.all.requests).to.equal(3);
      expect(grew.services.get('a.x')!.requests).to.equal(2);
      expect(grew.services.get('b.y')).to.deep.include({ requests: 1, errors: 1 });
      const sum = sumTallies([grew, after]);
      expect(sum.all.requests).to.equal(7);
      expect(sum.services.get('b.y')!.errors).to.equal(2);
    });
  });

  describe('quantile', () => {
    it('interpolates linearly within the bucket the rank falls in, as histogram_quantile does', () => {
      // 10 durations ≤ 1 ms (bucket 1, from 0.5 ms) and 10 in (5 ms, 10 ms]: the median is the top of the first ten.
      const buckets = cumulative({ 1: 10, 4: 10 });
      expect(quantile(0.5, buckets)).to.be.closeTo(0.001, 1e-12);
      // rank 19.8: 9.8 of the 10 in (5 ms, 10 ms]
      expect(quantile(0.99, buckets)).to.be.closeTo(0.005 + 0.005 * 0.98, 1e-12);
      expect(quantile(0.25, buckets)).to.be.closeTo(0.0005 + 0.0005 * 0.5, 1e-12);
    });

    it('interpolates from 0 in the first bucket', () => {
      expect(quantile(0.5, cumulative({ 0: 4 }))).to.be.closeTo(0.00025, 1e-12);
    });

    it('answers the highest finite bound when the rank falls in the +Inf bucket', () => {
      expect(quantile(0.99, cumulative({ 0: 1, 15: 99 }))).to.equal(30);
      expect(quantile(0.5, cumulative({ 15: 1 }))).to.equal(30);
    });

    it('is null for an interval without requests', () => {
      expect(quantile(0.5, cumulative({}))).to.equal(null);
      expect(quantile(0.99, [])).to.equal(null);
    });

    it('reads the bounds it is given', () => {
      expect(quantile(0.5, [1, 2, 2], [1, 2])).to.equal(1);
      expect(quantile(0.75, [1, 2, 2], [1, 2])).to.equal(1.5);
    });
  });

  describe('figures', () => {
    it('gives requests per second, the 5xx share and the quantiles of an interval', () => {
      const f = figures(tally(20, 5, { 1: 10, 4: 10 }), 4);
      expect(f).to.deep.include({ requests: 20, requests_per_second: 5, errors: 5, error_rate: 0.25 });
      expect(f.p50_seconds).to.be.closeTo(0.001, 1e-12);
      expect(f.p99_seconds).to.be.closeTo(0.0099, 1e-12);
    });

    it('has no error rate or latency without requests', () => {
      expect(figures(emptyTally(), 5)).to.deep.equal({ requests: 0, requests_per_second: 0, errors: 0, error_rate: null, p50_seconds: null, p99_seconds: null });
    });
  });

  describe('the ring', () => {
    /** Workers by name; the test changes their counts and who answers between samples. */
    function fakeWorkers() {
      const workers = new Map<string, RequestStats>();
      const silent = new Set<string>();
      let asked = 0;
      const snapshots = async (): Promise<Map<string, MetricsSnapshot | undefined>> => {
        asked++;
        return new Map([...workers].map(([name, stats]) => [name, silent.has(name) ? undefined : stats.metrics()]));
      };
      return { workers, silent, snapshots, asked: () => asked };
    }

    it("samples what every worker counted in each interval, for all of rt and by service, and keeps a bounded number of samples", async () => {
      const fleet = fakeWorkers();
      const [a, b] = [new RequestStats(), new RequestStats()];
      fleet.workers.set('a', a).set('b', b);
      const ring = new MetricsHistoryRing({ snapshots: fleet.snapshots, intervalMs: 1000, maxSamples: 3 });
      a.series('example.greeter', 'greet').observe(200, 0.001);
      b.series('example.greeter', 'greet').observe(500, 0.001);
      b.series('', '').observe(404, 0.0001);
      await ring.sample();
      let [first] = ring.view().samples;
      expect(first.all).to.deep.include({ requests: 3, errors: 1 });
      expect(first.services['example.greeter']).to.deep.include({ requests: 2, errors: 1, error_rate: 0.5 });

      a.series('example.greeter', 'greet').observe(200, 0.001);
      await ring.sample();
      const second = ring.view().samples[1];
      expect(second.all).to.deep.include({ requests: 1, errors: 0, error_rate: 0 });
      expect(second.services['example.greeter'].requests).to.equal(1);
      expect(second.seconds).to.be.greaterThan(0);
      expect(Date.parse(second.at)).to.be.at.least(Date.parse(first.at));

      // Nothing answered: no services in the sample, no rates.
      await ring.sample();
      expect(ring.view().samples[2]).to.deep.include({ services: {} });
      expect(ring.view().samples[2].all).to.deep.include({ requests: 0, requests_per_second: 0, error_rate: null, p99_seconds: null });

      await ring.sample();
      const view = ring.view();
      expect(view).to.deep.include({ interval_seconds: 1, max_samples: 3, buckets: DURATION_BUCKETS });
      expect(view.samples).to.have.length(3);
      [first] = view.samples;
      expect(first).to.deep.equal(second);
    });

    it('takes a replaced worker\'s counts from zero, and a silent one\'s in the sample it next answers', async () => {
      const fleet = fakeWorkers();
      fleet.workers.set('a', worker([{ service: 's.t', method: 'm', status: 200, seconds: 0.001, times: 50 }]));
      fleet.workers.set('b', worker([{ service: 's.t', method: 'm', status: 200, seconds: 0.001, times: 50 }]));
      const ring = new MetricsHistoryRing({ snapshots: fleet.snapshots, intervalMs: 1000 });
      await ring.sample();
      // a dies; its replacement has counted 2 so far. b is silent this time, then answers with 5 more.
      fleet.workers.delete('a');
      fleet.workers.set('a2', worker([{ service: 's.t', method: 'm', status: 200, seconds: 0.001, times: 2 }]));
      fleet.silent.add('b');
      fleet.workers.get('b')!.series('s.t', 'm').observe(200, 0.001);
      await ring.sample();
      fleet.silent.delete('b');
      for (let i = 0; i < 4; i++) fleet.workers.get('b')!.series('s.t', 'm').observe(200, 0.001);
      await ring.sample();
      expect(ring.view().samples.map((s) => s.all.requests)).to.deep.equal([100, 2, 5]);
      expect(ring.view().samples.every((s) => s.all.requests_per_second >= 0)).to.equal(true);
    });

    it('samples on its own once started, and stops', async () => {
      const fleet = fakeWorkers();
      fleet.workers.set('a', new RequestStats());
      const ring = new MetricsHistoryRing({ snapshots: fleet.snapshots, intervalMs: 20 });
      ring.start();
      try {
        await eventually(() => ring.view().samples.length >= 2, { what: 'two samples' });
      } finally {
        ring.stop();
      }
      await eventually(() => ring.view().samples.length === fleet.asked(), { what: 'the last sample to be kept' });
      const asked = fleet.asked();
      await letTimePass(150, 'several ticks of 20 ms, none of which may come once stopped');
      expect(fleet.asked()).to.equal(asked);
    });
  });
});
