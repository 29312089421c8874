// Request metrics kept as plain numbers (lib/worker/http/request-stats.ts) must
// read, once summed by prom-client's cluster aggregation as the primary does,
// as the counter and histogram prom-client itself would have written.

import { expect } from 'chai';
import { AggregatorRegistry } from 'prom-client';
import { RequestStats } from '../../lib/worker/http/request-stats.js';

describe('request metrics', () => {
  it('counts by status and buckets durations, summed across workers', async () => {
    const workers = [new RequestStats(), new RequestStats()];
    const [a, b] = workers;
    const add = a.series('acme.calc', 'add');
    add.observe(200, 0.0004);
    add.observe(200, 0.003);
    add.observe(400, 0.02);
    b.series('acme.calc', 'add').observe(200, 45);
    b.series('', '').observe(404, 0.0001);
    expect(a.series('acme.calc', 'add')).to.equal(add);

    const text = await AggregatorRegistry.aggregate(workers.map((w) => w.metrics())).metrics();
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}."+]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('rt_http_requests_total{service="acme.calc",method="add",status="200"}')).to.equal(3);
    expect(value('rt_http_requests_total{service="acme.calc",method="add",status="400"}')).to.equal(1);
    expect(value('rt_http_requests_total{service="",method="",status="404"}')).to.equal(1);
    expect(value('rt_http_request_duration_seconds_bucket{le="0.0005",service="acme.calc",method="add"}')).to.equal(1);
    expect(value('rt_http_request_duration_seconds_bucket{le="0.005",service="acme.calc",method="add"}')).to.equal(2);
    expect(value('rt_http_request_duration_seconds_bucket{le="30",service="acme.calc",method="add"}')).to.equal(3);
    expect(value('rt_http_request_duration_seconds_bucket{le="+Inf",service="acme.calc",method="add"}')).to.equal(4);
    expect(value('rt_http_request_duration_seconds_count{service="acme.calc",method="add"}')).to.equal(4);
    expect(value('rt_http_request_duration_seconds_sum{service="acme.calc",method="add"}')).to.be.closeTo(45.0234, 1e-9);
    expect(text).to.match(/^# TYPE rt_http_request_duration_seconds histogram$/m);
  });

  it("counts an HTTP handler's requests by route, apart from its service's methods", async () => {
    const workers = [new RequestStats(), new RequestStats()];
    const [a, b] = workers;
    a.series('default.shop', '', '/shop').observe(200, 0.001);
    b.series('default.shop', '', '/shop').observe(200, 0.002);
    a.series('default.shop', '', '/api/services/default/shop/http').observe(502, 0.001);
    a.series('default.shop', 'stats').observe(200, 0.001);
    expect(a.series('default.shop', '', '/shop')).to.not.equal(a.series('default.shop', ''));
    const text = await AggregatorRegistry.aggregate(workers.map((w) => w.metrics())).metrics();
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}."+/]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('rt_http_requests_total{service="default.shop",route="/shop",status="200"}')).to.equal(2);
    expect(value('rt_http_requests_total{service="default.shop",route="/api/services/default/shop/http",status="502"}')).to.equal(1);
    expect(value('rt_http_requests_total{service="default.shop",method="stats",status="200"}')).to.equal(1);
    expect(value('rt_http_request_duration_seconds_count{service="default.shop",route="/shop"}')).to.equal(2);
  });
});
