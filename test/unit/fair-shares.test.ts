// Fair shares (lib/worker/http/fair-shares.ts, docs/api.md §5.10) and a
// body's pace (body-pace.ts), as pure bookkeeping: who may hold what, what a
// refusal answers, how often it is logged, and when a body falls behind.

import { expect } from 'chai';
import { pino } from 'pino';
import { ApiError } from '../../lib/errors.js';
import type { HostedService } from '../../lib/worker/execution/hosted-service.js';
import { BodyPace } from '../../lib/worker/http/body-pace.js';
import { FairShares, shareOf, type ShareKind } from '../../lib/worker/http/fair-shares.js';

/** The two things shares read of a service. */
const service = (name: string, threadsAtMost: number) => ({ name, holdable: () => ({ whole: threadsAtMost, what: 'instance threads' }) }) as unknown as HostedService;

describe('fair shares', () => {
  let lines: Record<string, unknown>[];
  let counted: [ShareKind, string][];
  let shares: FairShares;

  beforeEach(() => {
    lines = [];
    counted = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    shares = new FairShares(50, log, (share, name) => counted.push([share, name]));
  });

  const refusalOf = (take: () => unknown): ApiError => {
    try {
      take();
    } catch (e) {
      return e as ApiError;
    }
    throw new Error('not refused');
  };

  it('is the percentage of the whole, rounded down, and at least one', () => {
    expect(shareOf(10, 50)).to.equal(5);
    expect(shareOf(5, 50)).to.equal(2);
    expect(shareOf(3, 10)).to.equal(1);
    expect(shareOf(1000, 100)).to.equal(1000);
  });

  it("lets a client hold its share of a service's threads, refuses the next with 503 and Retry-After, and leaves the rest to the others", () => {
    const ticker = service('example.ticker', 10);
    const held = Array.from({ length: 5 }, () => shares.take(ticker, '10.0.0.1', 'streams'));
    const refusal = refusalOf(() => shares.take(ticker, '10.0.0.1', 'request_bodies'));
    // A stream's request was read whole: its connection stays.
    expect(refusalOf(() => shares.take(ticker, '10.0.0.1', 'streams')).headers).to.deep.equal({ 'Retry-After': '1' });
    expect(refusal.status).to.equal(503);
    expect(refusal.code).to.equal('RT_ERR_OVER_SHARE');
    expect(refusal.headers).to.deep.equal({ 'Retry-After': '1', Connection: 'close' });
    expect(refusal.body()).to.include({ service: 'example.ticker' });
    expect(refusal.details).to.include('holds 5 of example.ticker\'s 10 instance threads').and.include('its share is 5 (http.client_share_percent: 50)');
    // Another client, and the same client on another service, are not touched.
    for (let i = 0; i < 5; i++) shares.take(ticker, '10.0.0.2', 'streams');
    shares.take(service('example.other', 10), '10.0.0.1', 'streams');
    // A release gives one back, once however often it is called.
    held[0]();
    held[0]();
    shares.take(ticker, '10.0.0.1', 'streams');
    expect(() => shares.take(ticker, '10.0.0.1', 'streams')).to.throw(ApiError);
  });

  it('at 100 % refuses no thread: a client that holds them all waits in the queue, as without shares', () => {
    const whole = new FairShares(100, pino({ level: 'silent' }), () => {});
    const ticker = service('example.ticker', 5);
    const held = Array.from({ length: 8 }, () => whole.take(ticker, '10.0.0.1', 'streams'));
    expect(held).to.have.length(8);
  });

  it("counts every refusal, and logs at most one line per share and service every 10 s, with how many it stands for", () => {
    const handler = service('example.hello-http', 5);
    shares.take(handler, 'a', 'request_bodies');
    shares.take(handler, 'a', 'request_bodies');
    for (let i = 0; i < 20; i++) refusalOf(() => shares.take(handler, 'a', 'request_bodies'));
    shares.refusal('connections', '', 'b', 'too many');
    expect(counted).to.have.length(21);
    expect(counted[0]).to.deep.equal(['request_bodies', 'example.hello-http']);
    expect(lines.map((l) => [l.msg, l.share, l.service, l.client, l.refused])).to.deep.equal([
      ['client over its fair share', 'request_bodies', 'example.hello-http', 'a', 1],
      ['client over its fair share', 'connections', undefined, 'b', 1],
    ]);
  });

  it('answers a slow body 408 and closes its connection, a connection past the share 503 and closes it', () => {
    const slow = shares.refusal('body_rate', 'example.hello-http', 'a', 'slow');
    expect([slow.status, slow.code, slow.headers]).to.deep.equal([408, 'RT_ERR_REQUEST_TIMEOUT', { Connection: 'close' }]);
    const connection = shares.refusal('connections', '', 'a', 'many');
    expect([connection.status, connection.code, connection.headers]).to.deep.equal([503, 'RT_ERR_OVER_SHARE', { 'Retry-After': '1', Connection: 'close' }]);
    expect(connection.body()).to.not.have.property('service');
  });
});

describe("a body's pace", () => {
  it('is behind once the bytes received fall short of the rate over the time waited, past the first 2 s', () => {
    const pace = new BodyPace(1000, 0);
    expect(pace.tooSlow(1_900)).to.equal(false);
    expect(pace.tooSlow(2_100)).to.equal(true);
    pace.received(500);
    // 500 bytes cover 0.5 s past the grace.
    expect(pace.tooSlow(2_400)).to.equal(false);
    expect(pace.tooSlow(2_600)).to.equal(true);
  });

  it('gives credit for bytes that came early, for a stall later', () => {
    const pace = new BodyPace(1000, 0);
    pace.received(10_000);
    expect(pace.tooSlow(11_900)).to.equal(false);
    expect(pace.tooSlow(12_100)).to.equal(true);
  });

  it("does not count the time the reader had enough (paused): that is the guest's, not the client's", () => {
    const pace = new BodyPace(1000, 0);
    pace.pause(1_000);
    expect(pace.tooSlow(60_000)).to.equal(false);
    pace.resume(60_000);
    expect(pace.tooSlow(60_900)).to.equal(false);
    expect(pace.tooSlow(61_100)).to.equal(true);
  });

  it('is never behind with no minimum (0)', () => {
    expect(new BodyPace(0, 0).tooSlow(1e9)).to.equal(false);
  });
});
