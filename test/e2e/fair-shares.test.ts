// End to end: fair shares (docs/api.md §5.10) against the attacks that
// locked a service or a worker for everyone (slow bodies to an HTTP handler,
// long streams, many connections from one address), each replayed by one
// client address while a second, well-behaved one is served beside it; the
// 408 for a body slower than http.min_body_bytes_per_second, and neither a
// guest that reads slowly nor an answer that has begun counted against the
// client; shares per client behind a trusted proxy. Clients choose their
// address among 127.x.y.z, which all reach the loopback listener.

import { request } from 'node:http';
import { expect } from 'chai';
import { hasJspi } from '../../lib/platform.js';
import { eventually, letTimePass, StopWaiting } from '../support/eventually.js';
import { repository } from '../support/fixtures.js';
import { asyncBodies } from '../support/async-components.js';
import { TYPES_HANDLER } from '../support/http-handler-fixtures.js';
import { answerJson, Raw } from '../support/raw-connection.js';
import { RtProcess } from '../support/rt-process.js';
import { openStream, type StreamedAnswer } from '../support/stream-client.js';
import { STREAMS } from '../support/streaming-fixtures.js';

const ATTACKER = '127.0.0.1';
const NEIGHBOUR = '127.0.0.2';
const PROXY = '127.0.0.3';
/** Long enough that a request held for it shows as a 504, not as slowness. */
const TIMEOUT_S = 12;
/** A pool of one thread may have 5 (4 overflow: instance-pool.ts); half of them is 2. */
const THREADS = 5;
const SHARE = 2;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A whole request from address `from` on a connection of its own. */
function send(port: number, from: string, method: string, path: string, opts: { body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, localAddress: from, agent: false, headers: opts.headers ?? {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The counter of refusals for `share` (and `service`), from the metrics. */
async function refusals(rt: RtProcess, share: string, service = ''): Promise<number> {
  const text = await (await fetch(`${rt.url}/api/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`rt_fair_share_refusals_total{share="${share}",service="${service}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('fair shares (e2e)', function () {
  this.timeout(180_000);
  let rt: RtProcess;
  const handlerPath = (path: string) => `/api/services/default/hello/http${path}`;
  const streamUrl = () => `${rt.url}/api/services/acme/streams/invoke/count`;
  const open: (Raw | StreamedAnswer)[] = [];

  before(async function () {
    this.timeout(600_000);
    const repo = await repository({ hello: TYPES_HANDLER, 'hello.toml': { raw: 'service = "hello"\n' }, streams: STREAMS, ...(hasJspi ? { 'p3-body.wasm': { raw: await asyncBodies() } } : {}) });
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n[http]\nrequest_timeout_seconds = ${TIMEOUT_S}\ntrusted_proxies = ["${PROXY}"]\n` });
    await rt.ready();
  });

  afterEach(async () => {
    for (const held of open.splice(0)) held.close();
    // Held threads are let go once their requests end: the next test starts from none.
    await letTimePass(500, 'the instances let go of the closed requests');
  });

  after(async () => {
    await rt?.stop();
  });

  /** A POST to the handler's `/body` from `from` declaring `length` bytes, of which it sends `first`. */
  const slowBody = async (from: string, length: number, first: number): Promise<Raw> => {
    const raw = await Raw.open(rt.port, from);
    open.push(raw);
    return raw.send(`POST ${handlerPath('/body')} HTTP/1.1\r\nHost: rt\r\nContent-Length: ${length}\r\n\r\n${'x'.repeat(first)}`);
  };

  it('lets one address hold only its share of a handler\'s threads with bodies that keep arriving; another address is served meanwhile (issue: "a few slow bodies lock an HTTP handler")', async () => {
    // Six uploads at 4 KiB a second (above http.min_body_bytes_per_second), each long enough to last past the deadline.
    const uploads = await Promise.all(Array.from({ length: 6 }, () => slowBody(ATTACKER, 1_000_000, 4096)));
    let sending = true;
    const trickle = (async () => {
      while (sending) {
        await letTimePass(1_000, 'the slow uploads send their next part');
        for (const raw of uploads) if (!raw.socket.destroyed) raw.send('x'.repeat(4096));
      }
    })();
    try {
      // All but the share are refused at once: 503, Retry-After, the error body naming the share.
      const refused = await eventually(
        () => {
          const answered = uploads.filter((raw) => raw.data.includes('\r\n\r\n'));
          expect(answered.length).to.equal(uploads.length - SHARE);
          return answered;
        },
        { what: 'the uploads past the share to be refused', timeoutMs: 10_000 },
      );
      for (const raw of refused) {
        const answer = await raw.answer();
        expect(answer.status).to.equal(503);
        expect(answer.headers['retry-after']).to.equal('1');
        expect(answerJson(answer)).to.include({ code: 'RT_ERR_OVER_SHARE', service: 'default.hello' });
        expect(answerJson(answer).details).to.include(`its share is ${SHARE} (http.client_share_percent: 50)`);
      }
      // The neighbour's requests are answered while the share is held (without it, each would wait for its deadline: 504).
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        const answer = await send(rt.port, NEIGHBOUR, 'GET', handlerPath('/echo'));
        expect(answer.status, answer.text).to.equal(200);
        expect(performance.now() - started, 'well before the deadline').to.be.below((TIMEOUT_S * 1000) / 2);
      }
      // The share's uploads are still being taken.
      expect(uploads.filter((raw) => raw.data === '').length).to.equal(SHARE);
      expect(await refusals(rt, 'request_bodies', 'default.hello')).to.be.at.least(uploads.length - SHARE);
      expect(await rt.logged((l) => l.msg === 'client over its fair share' && l.share === 'request_bodies' && l.client === ATTACKER)).to.equal(true);
    } finally {
      sending = false;
      await trickle;
    }
  });

  it('answers 408 for a handler body slower than http.min_body_bytes_per_second, for an invoke body, and for a stream<u8> parameter the guest reads as it comes (WASI 0.3), and closes the connection', async () => {
    const handler = await slowBody(ATTACKER, 1000, 1);
    const invoke = await Raw.open(rt.port, ATTACKER);
    open.push(invoke);
    invoke.send('POST /api/services/acme/streams/invoke/stats HTTP/1.1\r\nHost: rt\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
    const streamed = await Raw.open(rt.port, ATTACKER);
    open.push(streamed);
    if (hasJspi) streamed.send('POST /api/services/default/p3-body/invoke/digest?seed=1 HTTP/1.1\r\nHost: rt\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000\r\n\r\nx');
    for (const [raw, service] of [
      [handler, 'default.hello'],
      [invoke, 'acme.streams'],
      ...(hasJspi ? ([[streamed, 'default.p3-body']] as const) : []),
    ] as const) {
      // The first 2 s are free; then the sweep (4 a second) finds it behind.
      const answer = await raw.answer();
      expect(answer.status).to.equal(408);
      expect(answer.headers['connection']).to.equal('close');
      expect(answerJson(answer)).to.include({ code: 'RT_ERR_REQUEST_TIMEOUT', service });
      expect(answerJson(answer).details).to.equal('the body arrived slower than http.min_body_bytes_per_second (1024 bytes a second)');
      await raw.closedWithin(5_000);
      expect(await refusals(rt, 'body_rate', service)).to.be.at.least(1);
    }
  });

  it("does not count against a body the time its guest does not read it, nor a body still arriving once the handler's answer has begun", async () => {
    // The guest sleeps 2.75 s without reading: what arrived fills the window, and rt stops waiting for more.
    const unread = send(rt.port, NEIGHBOUR, 'POST', handlerPath('/sleep?2750'), { body: 'x'.repeat(4 << 20), headers: { 'content-type': 'application/octet-stream' } });
    // The guest answers at once, then drips; its client sends one byte and nothing more.
    const duplex = await Raw.open(rt.port, NEIGHBOUR);
    open.push(duplex);
    duplex.send(`POST ${handlerPath('/drip?200')} HTTP/1.1\r\nHost: rt\r\nContent-Length: 1000\r\n\r\nx`);
    // The sweep (4 a second) would have found either body behind by 2.25 s.
    await letTimePass(2_750, 'past the first 2 s of both bodies, and a sweep');
    expect(duplex.data).to.match(/^HTTP\/1\.1 200 /);
    expect(duplex.data).to.include('tick;');
    expect(duplex.socket.destroyed).to.equal(false);
    const slept = await unread;
    expect(slept.status, slept.text).to.equal(200);
    expect(slept.text).to.equal('slept');
  });

  it('lets one address hold only its share of a streaming service, and another stream the while (issue: "a few long streams lock a streaming service")', async () => {
    // As many long streams as the service has threads: the share opens, the rest are refused.
    const attempts = await Promise.all(Array.from({ length: THREADS }, () => openStream(streamUrl(), { n: 100_000, 'delay-ms': 100 }, {}, { from: ATTACKER })));
    open.push(...attempts);
    const opened = attempts.filter((s) => s.status === 200);
    expect(opened.length).to.equal(SHARE);
    for (const s of attempts.filter((s) => s.status !== 200)) {
      expect(s.status).to.equal(503);
      expect(s.res.headers['retry-after']).to.equal('1');
      await s.ended;
      expect(JSON.parse(s.text())).to.include({ code: 'RT_ERR_OVER_SHARE', service: 'acme.streams' });
    }
    // The neighbour's whole stream comes while the share is held (without the share, it would wait for its deadline: 504).
    const mine = await openStream(streamUrl(), { n: 3, 'delay-ms': 0 }, {}, { from: NEIGHBOUR });
    expect(mine.status).to.equal(200);
    expect((await mine.ended).complete).to.equal(true);
    expect(mine.text().trim().split('\n')).to.have.length(3);
    expect(opened.every((s) => s.res.complete === false)).to.equal(true);
    expect(await refusals(rt, 'streams', 'acme.streams')).to.be.at.least(THREADS - SHARE);
  });

  it('counts shares per client behind a trusted proxy, not per proxy', async () => {
    const from = (client: string) => openStream(streamUrl(), { n: 100_000, 'delay-ms': 100 }, { 'x-forwarded-for': client }, { from: PROXY });
    const first = await Promise.all(Array.from({ length: SHARE + 1 }, () => from('198.51.100.1')));
    open.push(...first);
    expect(first.map((s) => s.status).sort()).to.deep.equal([200, 200, 503]);
    // Another client behind the same proxy has a share of its own.
    const second = await from('198.51.100.2');
    open.push(second);
    expect(second.status).to.equal(200);
  });
});

describe('connection shares (e2e)', function () {
  this.timeout(120_000);
  const MAX_CONNECTIONS = 6;
  let rt: RtProcess;
  const opened: Raw[] = [];
  const connect = async (from: string) => {
    const raw = await Raw.open(rt.port, from);
    opened.push(raw);
    return raw;
  };
  const health = 'GET /api/health HTTP/1.1\r\nHost: rt\r\n\r\n';

  before(async () => {
    rt = await RtProcess.start({ workers: 1, env: { RT__HTTP__MAX_CONNECTIONS: String(MAX_CONNECTIONS), RT__HTTP__TRUSTED_PROXIES: PROXY } });
    // Not rt.ready(): fetch would keep its connection open, and it would count.
    await eventually(
      async () => {
        if (rt.child.exitCode !== null) throw new StopWaiting('rt exited');
        return (await send(rt.port, NEIGHBOUR, 'GET', '/api/ready')).status === 200;
      },
      { what: 'rt to become ready', timeoutMs: 120_000, intervalMs: 100, context: () => rt.output },
    );
  });

  after(async () => {
    for (const raw of opened) raw.close();
    await rt?.stop();
  });

  it('keeps one address to its share of a worker\'s connections, so another still connects (issue: "connections have no per-client share")', async () => {
    // Twice the cap, idle, from one address: half the cap is its share.
    const idle = await Promise.all(Array.from({ length: 2 * MAX_CONNECTIONS }, () => connect(ATTACKER)));
    // The neighbour is served (without the share, the cap would be full: 503).
    const neighbour = (await connect(NEIGHBOUR)).send(health);
    expect((await neighbour.answer()).status).to.equal(200);
    // A connection past the share that asks learns why, and is closed.
    const past = idle[idle.length - 1].send(health);
    const answer = await past.answer();
    expect(answer.status).to.equal(503);
    expect(answer.headers['retry-after']).to.equal('1');
    expect(answer.headers['connection']).to.equal('close');
    expect(answerJson(answer)).to.include({ code: 'RT_ERR_OVER_SHARE' });
    expect(answerJson(answer).details).to.include(`${MAX_CONNECTIONS / 2} of http.max_connections (${MAX_CONNECTIONS}`);
    await past.closedWithin(5_000);
    // Those past the share that ask nothing are closed within seconds; the share's stay open.
    await Promise.all(idle.slice(MAX_CONNECTIONS / 2, -1).map((raw) => raw.closedWithin(8_000)));
    expect(idle.slice(0, MAX_CONNECTIONS / 2).every((raw) => !raw.socket.destroyed)).to.equal(true);
    expect(await rt.logged((l) => l.msg === 'client over its fair share' && l.share === 'connections' && l.client === ATTACKER)).to.equal(true);
    for (const raw of idle) raw.close();
  });

  it("does not count a trusted proxy's connections against one client's share: they carry many clients", async () => {
    await letTimePass(200, "the server lets go of the previous test's connections");
    const viaProxy = await Promise.all(Array.from({ length: MAX_CONNECTIONS - 1 }, () => connect(PROXY)));
    const answers = await Promise.all(viaProxy.map((raw) => raw.send(health).answer()));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(MAX_CONNECTIONS - 1).fill(200));
  });
});
