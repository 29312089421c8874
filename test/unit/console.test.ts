// The console's pure logic (console/src): reading /api/metrics, what its plots
// draw of /api/metrics/history, and the schema its forms are generated from. The page itself is tested in a
// browser: test/e2e/console.test.ts.

import { expect } from 'chai';
import { formSchema, parameterCount } from '../../console/src/form-schema.js';
import { ALL, plotData, servicesIn } from '../../console/src/plot-data.js';
import { parsePrometheus, serviceRates, servicePoll } from '../../console/src/prometheus.js';
import type { MetricsHistory, RequestFigures } from '../../lib/metrics-history.js';
import { requestSchema } from '../../lib/wit/json-schema.js';
import type { WitFunction, WitType } from '../../lib/wit/types.js';
import { func, list, option, prim, result, tuple, variant } from '../support/wit-types.js';

const METRICS = `# HELP rt_http_requests_total HTTP requests answered
# TYPE rt_http_requests_total counter
rt_http_requests_total{service="",method="",status="200"} 4
rt_http_requests_total{service="example.greeter",method="greet",status="200"} 10
rt_http_requests_total{service="example.greeter",method="greet-person",status="400"} 2
rt_http_requests_total{service="example.greeter",method="greet",status="500"} 1
rt_http_requests_total{service="odd \\"name\\"",method="a\\\\b",status="200"} 3

rt_http_request_duration_seconds_bucket{le="+Inf",service="example.greeter",method="greet"} 11
rt_http_request_duration_seconds_sum{service="example.greeter",method="greet"} 0.5
rt_http_request_duration_seconds_sum{service="example.greeter",method="greet-person"} 0.25
rt_http_request_duration_seconds_count{service="example.greeter",method="greet"} 11
rt_instances{service="example.greeter"} 2
rt_streams_open{service="example.ticker",method="start"} 1
rt_worker_process_cpu_seconds_total 1.5 1700000000000
`;

describe('console', () => {
  describe('parsePrometheus', () => {
    it('reads names, labels (with escapes) and values, and skips comments', () => {
      const samples = parsePrometheus(METRICS);
      expect(samples).to.have.length(12);
      expect(samples[1]).to.deep.equal({ name: 'rt_http_requests_total', labels: { service: 'example.greeter', method: 'greet', status: '200' }, value: 10 });
      expect(samples[4].labels).to.deep.equal({ service: 'odd "name"', method: 'a\\b', status: '200' });
      expect(samples[5].value).to.equal(11);
      expect(samples.at(-1)).to.deep.equal({ name: 'rt_worker_process_cpu_seconds_total', labels: {}, value: 1.5 });
    });

    it('reads +Inf and NaN, and skips lines it cannot read', () => {
      expect(parsePrometheus('a +Inf\nb NaN\nc{x="1"\nd{x="1"} nope\n').map((s) => [s.name, s.value])).to.deep.equal([
        ['a', Infinity],
        ['b', NaN],
      ]);
    });
  });

  describe('serviceRates', () => {
    it('sums a service over its methods and statuses, leaving out routes without a service', () => {
      const poll = servicePoll(parsePrometheus(METRICS), 0);
      expect([...poll.services.keys()]).to.have.members(['example.greeter', 'odd "name"', 'example.ticker']);
      expect(poll.services.get('example.greeter')).to.deep.equal({ requests: 13, errors: 1, durationSeconds: 0.75, instances: 2, streamsOpen: 0 });
      expect(poll.services.get('example.ticker')!.streamsOpen).to.equal(1);
    });

    it('gives requests and 5xx per second and the mean latency of the interval between two polls', () => {
      const before = servicePoll(parsePrometheus(METRICS), 10_000);
      const later = METRICS.replace('status="200"} 10', 'status="200"} 30').replace('status="500"} 1', 'status="500"} 5').replace('method="greet"} 0.5', 'method="greet"} 1.5');
      const rates = serviceRates(before, servicePoll(parsePrometheus(later), 12_000)).get('example.greeter')!;
      expect(rates.requestsPerSecond).to.equal(12); // 24 more in 2 s
      expect(rates.errorsPerSecond).to.equal(2);
      expect(rates.meanSeconds).to.be.closeTo(1 / 24, 1e-12);
      expect(rates.requests).to.equal(37);
    });

    it('has no rate on the first poll and no mean latency without requests', () => {
      const poll = servicePoll(parsePrometheus(METRICS), 0);
      expect(serviceRates(undefined, poll).get('example.greeter')).to.include({ requestsPerSecond: 0, meanSeconds: null, requests: 13 });
      const same = serviceRates(poll, servicePoll(parsePrometheus(METRICS), 1000)).get('example.greeter')!;
      expect(same).to.include({ requestsPerSecond: 0, meanSeconds: null });
    });

    it('takes a counter that went down (rt restarted) as counting from zero', () => {
      const before = servicePoll(parsePrometheus(METRICS), 0);
      const after = servicePoll(parsePrometheus('rt_http_requests_total{service="example.greeter",method="greet",status="200"} 3\n'), 1000);
      expect(serviceRates(before, after).get('example.greeter')!.requestsPerSecond).to.equal(3);
    });
  });

  describe('plotData', () => {
    const figures = (requests: number, errors: number, p50: number | null, p99: number | null): RequestFigures => ({
      requests,
      requests_per_second: requests / 5,
      errors,
      error_rate: requests > 0 ? errors / requests : null,
      p50_seconds: p50,
      p99_seconds: p99,
    });
    const history: MetricsHistory = {
      interval_seconds: 5,
      max_samples: 120,
      buckets: [0.001, 0.01],
      samples: [
        { at: '2026-01-01T00:00:05.000Z', seconds: 5, all: figures(10, 0, 0.001, 0.002), services: { 'example.greeter': figures(10, 0, 0.001, 0.002) } },
        { at: '2026-01-01T00:00:10.000Z', seconds: 5, all: figures(0, 0, null, null), services: {} },
        { at: '2026-01-01T00:00:15.000Z', seconds: 5, all: figures(20, 5, 0.003, 0.03), services: { 'example.calculator': figures(20, 5, 0.003, 0.03) } },
      ],
    };

    it('plots all of rt: rates, latencies in ms and the 5xx share in %, against the samples\' times in seconds', () => {
      const { rate, latency, errors } = plotData(history, ALL);
      const t0 = Date.parse('2026-01-01T00:00:05.000Z') / 1000;
      expect(rate).to.deep.equal({ times: [t0, t0 + 5, t0 + 10], lines: [[2, 0, 4]] });
      expect(latency.lines).to.deep.equal([
        [1, null, 3],
        [2, null, 30],
      ]);
      expect(errors.lines).to.deep.equal([[0, null, 25]]);
    });

    it("plots one service: no requests where a sample leaves it out, and no latency or error share there", () => {
      const { rate, latency, errors } = plotData(history, 'example.calculator');
      expect(rate.lines).to.deep.equal([[0, 0, 4]]);
      expect(latency.lines).to.deep.equal([
        [null, null, 3],
        [null, null, 30],
      ]);
      expect(errors.lines).to.deep.equal([[null, null, 25]]);
      expect(plotData({ ...history, samples: [] }, 'example.calculator').rate).to.deep.equal({ times: [], lines: [[]] });
    });

    it('names the services that answered in any sample', () => {
      expect(servicesIn(history)).to.deep.equal(['example.calculator', 'example.greeter']);
    });
  });

  describe('formSchema', () => {
    const fn = (params: [string, WitType][]): WitFunction => func('f', Object.fromEntries(params), null);

    it('is the object keyed by parameter name, with tuples as items arrays', () => {
      const schema = formSchema(requestSchema(fn([['pair', tuple(prim('u8'), prim('string'))]])));
      expect(schema).to.deep.include({ title: 'arguments', type: 'object', required: ['pair'] });
      const pair = (schema.properties as Record<string, Record<string, unknown>>).pair;
      expect(pair).to.not.have.property('prefixItems');
      expect(pair.items).to.deep.equal([{ type: 'integer', minimum: 0, maximum: 255 }, { type: 'string' }]);
      expect(pair.additionalItems).to.equal(false);
    });

    it('offers the first of several encodings of one value, and cases for options, results and variants', () => {
      const schema = formSchema(
        requestSchema(
          fn([
            ['big', prim('u64')],
            ['ratio', prim('f64')],
            ['data', list(prim('u8'))],
            ['maybe', option(prim('string'))],
            ['outcome', result(prim('string'), null)],
            ['v', variant({ 'none-yet': null, count: prim('u32') })],
            ['on', prim('bool')],
          ]),
        ),
      );
      const p = schema.properties as Record<string, Record<string, unknown>>;
      expect(p.big).to.deep.equal({ type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
      expect(p.ratio).to.deep.equal({ type: 'number' });
      expect(p.data).to.deep.equal({ type: 'string', contentEncoding: 'base64' });
      expect(p.maybe.anyOf).to.deep.equal([
        { type: 'null', title: 'none' },
        { type: 'string', title: 'some' },
      ]);
      expect((p.outcome.oneOf as { title: string }[]).map((c) => c.title)).to.deep.equal(['ok', 'err']);
      const cases = p.v.oneOf as Record<string, Record<string, Record<string, unknown>>>[];
      expect(cases.map((c) => c.title)).to.deep.equal(['none-yet', 'count']);
      expect(cases[1].properties.tag).to.deep.equal({ enum: ['count'], default: 'count' });
      expect(p.on).to.deep.equal({ type: 'boolean', format: 'checkbox' });
    });

    it('counts the parameters', () => {
      expect(parameterCount(requestSchema(fn([])))).to.equal(0);
      expect(parameterCount(requestSchema(fn([['a', prim('s32')], ['b', prim('s32')]])))).to.equal(2);
    });
  });
});
