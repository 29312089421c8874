// End to end: the worker's HTTP surface against clients that misbehave, over
// real loopback connections (raw sockets where a well-behaved client could
// not send the bytes): stalled bodies and headers cut at the deadline
// without cutting long answers, the connection cap and its refusal, the
// error body (docs/api.md §5.5) on Node's own answers and on those rt gives
// in Node's place (expectations, Host headers, CONNECT), and request ids (§5.7).

import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { eventually, letTimePass, StopWaiting } from '../support/eventually.js';
import { answerJson, Raw, type RawAnswer, uploadBeforeReading } from '../support/raw-connection.js';
import { BYTES, repository } from '../support/fixtures.js';
import { call, RtProcess } from '../support/rt-process.js';
import { ndjson, openStream } from '../support/stream-client.js';
import { DROPS } from '../support/streaming-fixtures.js';

/** Short, so that a stalled request is seen cut in a test; Node's default would hold it 300 s. */
const REQUEST_TIMEOUT_SECONDS = 2;
/** The longest a stalled request may hold its connection: the timeout, Node's check interval (1 s), slack for a loaded machine. */
const CUT_WITHIN_MS = (REQUEST_TIMEOUT_SECONDS + 4) * 1000;
const MAX_CONNECTIONS = 3;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const json = answerJson;

describe('HTTP hardening (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;
  const invokePath = '/api/services/acme/bytes/invoke/size';

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({ bytes: BYTES, drops: DROPS });
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, workers: 1, env: { RT__HTTP__REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_SECONDS) } });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  const logLine = (reqId: string) => rt.logged((l) => l.msg === 'request' && l.reqId === reqId).then((found) => (found ? rt.logLines().find((l) => l.msg === 'request' && l.reqId === reqId) : undefined));

  describe('deadlines', () => {
    it('cuts a body that stalls at http.request_timeout_seconds: 408 with the error body, then the connection closes', async () => {
      const raw = await Raw.open(rt.port);
      raw.send(`POST ${invokePath} HTTP/1.1\r\nHost: rt\r\nContent-Type: application/octet-stream\r\nContent-Length: 100\r\n\r\nabc`);
      const answer = await raw.answer();
      const closedAfter = await raw.closedWithin(CUT_WITHIN_MS);
      expect(answer.status).to.equal(408);
      expect(json(answer)).to.deep.include({ error: 'request timeout', code: 'RT_ERR_REQUEST_TIMEOUT', service: 'acme.bytes', method: 'size' });
      expect(answer.headers['connection']).to.equal('close');
      expect(closedAfter).to.be.above(REQUEST_TIMEOUT_SECONDS * 1000 - 500);
      const line = await logLine(answer.headers['x-request-id']);
      expect(line, 'the request log line').to.deep.include({ status: 408, service: 'acme.bytes', method: 'size' });
    });

    it('cuts slow headers, and a body the route answered without reading, at the deadline', async () => {
      const headers = (await Raw.open(rt.port)).send('GET /api/health HTTP/1.1\r\nHost: rt\r\n');
      const body = (await Raw.open(rt.port)).send('GET /api/health HTTP/1.1\r\nHost: rt\r\nContent-Length: 100\r\n\r\nabc');
      const [slowHeaders, unread] = await Promise.all([headers.answer(), body.answer()]);
      // The health check answers at once; the rest of its body never comes.
      expect(unread.status).to.equal(200);
      expect(slowHeaders.status).to.equal(408);
      expect(json(slowHeaders)).to.include({ error: 'request timeout', code: 'RT_ERR_REQUEST_TIMEOUT' });
      expect(slowHeaders.headers['content-type']).to.match(/^application\/json/);
      expect(slowHeaders.headers['x-request-id']).to.match(UUID);
      await Promise.all([headers.closedWithin(CUT_WITHIN_MS), body.closedWithin(CUT_WITHIN_MS)]);
      expect(body.data).to.include('HTTP/1.1 408');
    });

    it('lets an answer outlast the request timeout once its request has arrived (a stream longer than it)', async () => {
      const items = 8;
      const delayMs = 400;
      const started = performance.now();
      const stream = await openStream(`${rt.url}/api/services/acme/drops/invoke/start`, { n: items, 'delay-ms': delayMs });
      const { complete } = await stream.ended;
      expect(stream.status).to.equal(200);
      expect(performance.now() - started).to.be.above(REQUEST_TIMEOUT_SECONDS * 1000);
      expect(complete, 'the stream ended with its final chunk').to.equal(true);
      expect(ndjson(stream.text())).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
    });
  });

  describe("Node's own answers carry the error body", () => {
    it('400 for a request that is not HTTP or lacks its Host, 431 for headers over the limit', async () => {
      const garbage = (await Raw.open(rt.port)).send('\x01\x02 hello\r\n\r\n');
      const hostless = (await Raw.open(rt.port)).send('GET /api/health HTTP/1.1\r\n\r\n');
      const huge = (await Raw.open(rt.port)).send(`GET /api/health HTTP/1.1\r\nHost: rt\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      const [bad, noHost, tooLarge] = await Promise.all([garbage.answer(), hostless.answer(), huge.answer()]);
      expect(bad.status).to.equal(400);
      expect(json(bad)).to.include({ error: 'bad request', code: 'RT_ERR_BAD_REQUEST' });
      expect(json(bad).details).to.match(/^the request is not valid HTTP: /);
      expect(noHost.status).to.equal(400);
      expect(json(noHost)).to.deep.equal({ error: 'bad request', code: 'RT_ERR_BAD_REQUEST', details: 'an HTTP/1.1 request needs a Host header' });
      expect(tooLarge.status).to.equal(431);
      expect(json(tooLarge)).to.include({ error: 'request header fields too large', code: 'RT_ERR_REQUEST_HEADERS_TOO_LARGE' });
      for (const answer of [bad, noHost, tooLarge]) {
        expect(answer.headers['content-type']).to.match(/^application\/json/);
        expect(answer.headers['x-request-id']).to.match(UUID);
        expect(answer.headers['connection']).to.equal('close');
      }
    });

    it('400 for a body with malformed chunking, logged as a 400 with the same request id (not as a client abort)', async () => {
      const raw = await Raw.open(rt.port);
      raw.send(`POST ${invokePath} HTTP/1.1\r\nHost: rt\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nX-Request-Id: chunky-1\r\n\r\n3\r\nabc\r\nZZ\r\n`);
      const answer = await raw.answer();
      expect(answer.status).to.equal(400);
      expect(json(answer)).to.include({ error: 'bad request', code: 'RT_ERR_BAD_REQUEST' });
      expect(answer.headers['x-request-id']).to.equal('chunky-1');
      expect(await logLine('chunky-1')).to.deep.include({ status: 400, service: 'acme.bytes', method: 'size' });
    });
  });

  describe('HTTP edges', () => {
    const assertRtError = (answer: RawAnswer, status: number, code: string) => {
      expect(answer.status, answer.body).to.equal(status);
      expect(answer.headers['content-type']).to.match(/^application\/json/);
      expect(answer.headers['x-request-id']).to.match(UUID);
      expect(json(answer)).to.include({ code });
    };

    it('413 for Expect: 100-continue with a Content-Length over http.max_body_bytes, before inviting the body', async () => {
      const raw = await Raw.open(rt.port);
      raw.send(`POST ${invokePath} HTTP/1.1\r\nHost: rt\r\nContent-Type: application/octet-stream\r\nContent-Length: 20000000\r\nExpect: 100-continue\r\n\r\n`);
      const answer = await raw.answer();
      expect(raw.data, 'no 100 Continue first').to.match(/^HTTP\/1\.1 413 /);
      assertRtError(answer, 413, 'RT_ERR_BODY_TOO_LARGE');
      expect(json(answer).details).to.include('20000000');
      // Named as the app's own answers name them (docs/api.md §5.5).
      expect(json(answer)).to.include({ service: 'acme.bytes', method: 'size' });
      await raw.closedWithin(CUT_WITHIN_MS);
    });

    it('100 Continue for Expect: 100-continue with a body within the limit, then the answer', async () => {
      const raw = await Raw.open(rt.port);
      raw.send(`POST ${invokePath} HTTP/1.1\r\nHost: rt\r\nContent-Type: application/octet-stream\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n`);
      await eventually(() => expect(raw.data, 'no 100 Continue').to.include('\r\n\r\n'), { what: 'an interim answer', timeoutMs: CUT_WITHIN_MS, intervalMs: 20 });
      expect(raw.data).to.equal('HTTP/1.1 100 Continue\r\n\r\n');
      raw.data = '';
      raw.send('abc');
      const answer = await raw.answer();
      expect(answer.status).to.equal(200);
      expect(json(answer)).to.deep.equal({ result: 3 });
      raw.close();
    });

    it('417 with the error body and a request id for any other expectation', async () => {
      const raw = await Raw.open(rt.port);
      raw.send('GET /api/health HTTP/1.1\r\nHost: rt\r\nExpect: 200-ok\r\nX-Request-Id: expect-1\r\n\r\n');
      const answer = await raw.answer();
      expect(answer.status).to.equal(417);
      expect(answer.headers['x-request-id']).to.equal('expect-1');
      expect(json(answer)).to.include({ error: 'expectation failed', code: 'RT_ERR_EXPECTATION_FAILED' });
      raw.close();
    });

    it('400 for a request with two Host headers', async () => {
      const raw = await Raw.open(rt.port);
      raw.send('GET /api/health HTTP/1.1\r\nHost: rt\r\nhost: elsewhere.example\r\n\r\n');
      const answer = await raw.answer();
      assertRtError(answer, 400, 'RT_ERR_BAD_REQUEST');
      expect(json(answer).details).to.equal('the request has several Host headers');
      await raw.closedWithin(CUT_WITHIN_MS);
    });

    it('an answer to CONNECT, with the error body (rt is no proxy), as for other methods it has no route for', async () => {
      const raw = await Raw.open(rt.port);
      raw.send('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      const answer = await raw.answer();
      assertRtError(answer, 501, 'RT_ERR_NOT_IMPLEMENTED');
      await raw.closedWithin(CUT_WITHIN_MS);
      const trace = await (await Raw.open(rt.port)).send('TRACE /api/health HTTP/1.1\r\nHost: rt\r\n\r\n').answer();
      expect(trace.status).to.equal(501);
    });
  });

  describe('bodies, lookups', () => {
    it("400 for a body that does not decode as its Content-Encoding says (invoke and restart); 415 naming the codings rt reads for one it does not know", async () => {
      const corrupt = { body: Buffer.from('not gzip at all'), headers: { 'content-encoding': 'gzip' } };
      const invoke = await call(`${rt.url}${invokePath}`, { ...corrupt, contentType: 'application/octet-stream' });
      const restart = await call(`${rt.url}/api/services/acme/bytes/restart`, { ...corrupt, contentType: 'application/json' });
      for (const res of [invoke, restart]) {
        expect(res.status, res.text).to.equal(400);
        expect(res.body).to.include({ error: 'invalid body', code: 'RT_ERR_INVALID_BODY', service: 'acme.bytes' });
      }
      expect(invoke.body).to.include({ method: 'size' });
      const truncated = await call(`${rt.url}${invokePath}`, { body: gzipSync(Buffer.alloc(1000)).subarray(0, 20), headers: { 'content-encoding': 'gzip' }, contentType: 'application/octet-stream' });
      expect(truncated.status, truncated.text).to.equal(400);
      const unknown = await call(`${rt.url}${invokePath}`, { body: 'abc', headers: { 'content-encoding': 'br2' }, contentType: 'application/octet-stream' });
      expect(unknown.status).to.equal(415);
      expect(unknown.body).to.include({ error: 'unsupported content encoding', code: 'RT_ERR_UNSUPPORTED_CONTENT_ENCODING', service: 'acme.bytes', method: 'size' });
      expect(unknown.headers.get('accept-encoding')).to.equal('gzip, deflate, br');
    });

    it('413 to a client that sends its whole body over http.max_body_bytes before reading: the connection lingers (RFC 9112 §9.6), so the answer is read, not lost to a reset (5 times)', async () => {
      for (let i = 0; i < 5; i++) expect({ try: i + 1, answer: await uploadBeforeReading(rt.port, invokePath, 60 * 2 ** 20) }).to.deep.equal({ try: i + 1, answer: 'HTTP/1.1 413 Payload Too Large' });
    });

    it('404 for an unknown service names the service and the method the path names', async () => {
      const res = await call(`${rt.url}/api/services/acme/nothing/invoke/size`);
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ error: 'unknown service', code: 'RT_ERR_UNKNOWN_SERVICE', details: 'no service acme.nothing is loaded', service: 'acme.nothing', method: 'size' });
    });
  });

  describe('request ids (docs/api.md §5.7)', () => {
    it("echoes a client's sane id on answers, errors and streams, and its log line carries it", async () => {
      const ok = await call(`${rt.url}/api/health`, { method: 'GET', headers: { 'x-request-id': 'abc-123_x.y:z' } });
      expect(ok.headers.get('x-request-id')).to.equal('abc-123_x.y:z');
      expect(await logLine('abc-123_x.y:z')).to.deep.include({ status: 200 });
      const missing = await call(`${rt.url}/api/services/acme/bytes/invoke/nothing`, { headers: { 'x-request-id': 'b2c0a7e4-missing' } });
      expect(missing.status).to.equal(404);
      expect(missing.headers.get('x-request-id')).to.equal('b2c0a7e4-missing');
      expect(await logLine('b2c0a7e4-missing')).to.deep.include({ status: 404 });
      const stream = await openStream(`${rt.url}/api/services/acme/drops/invoke/start`, { n: 2, 'delay-ms': 0 }, { 'x-request-id': 'stream/1+=' });
      await stream.ended;
      expect(stream.res.headers['x-request-id']).to.equal('stream/1+=');
      expect(await logLine('stream/1+=')).to.deep.include({ status: 200, service: 'acme.drops', method: 'start' });
    });

    it('gives an answer its own id when the client sends none or one that is not sane', async () => {
      for (const given of [undefined, '', 'has space', 'a'.repeat(201), 'quote"d', 'semi;colon']) {
        const res = await call(`${rt.url}/api/health`, { method: 'GET', headers: given === undefined ? {} : { 'x-request-id': given } });
        const id = res.headers.get('x-request-id');
        expect(id, String(given)).to.match(UUID);
        expect(await logLine(id!), 'its log line').to.deep.include({ status: 200 });
      }
    });

    it('lets browser pages read the id (Access-Control-Expose-Headers)', async () => {
      const res = await call(`${rt.url}/api/health`, { method: 'GET', headers: { origin: 'https://page.example' } });
      expect(res.headers.get('access-control-expose-headers')).to.include('X-Request-Id');
    });
  });
});

describe('connection cap (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;
  const opened: Raw[] = [];
  const open = async () => {
    const raw = await Raw.open(rt.port);
    opened.push(raw);
    return raw;
  };
  const health = 'GET /api/health HTTP/1.1\r\nHost: rt\r\n\r\n';

  before(async () => {
    // One address opens them all: no share of its own below the cap (fair-shares.test.ts tests the shares).
    rt = await RtProcess.start({ workers: 1, env: { RT__HTTP__MAX_CONNECTIONS: String(MAX_CONNECTIONS), RT__HTTP__CLIENT_SHARE_PERCENT: '100' } });
    // Not rt.ready(): fetch would keep its connection open, and it would count.
    await eventually(
      () => {
        if (rt.child.exitCode !== null) throw new StopWaiting('rt exited');
        return new Promise<boolean>((resolve) => {
          const req = request({ port: rt.port, host: '127.0.0.1', path: '/api/ready', agent: false }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode === 200));
          });
          req.on('error', () => resolve(false));
          req.end();
        });
      },
      { what: 'rt to become ready', timeoutMs: 240_000, intervalMs: 100, context: () => rt.output },
    );
  });

  after(async () => {
    for (const raw of opened) raw.close();
    await rt?.stop();
  });

  it('answers a request on a connection past http.max_connections with 503, Retry-After and the error body, and closes it', async () => {
    const held: Raw[] = [];
    for (let i = 0; i < MAX_CONNECTIONS; i++) {
      const raw = (await open()).send(health);
      expect((await raw.answer()).status, `connection ${i + 1}`).to.equal(200);
      held.push(raw);
    }
    const refused = (await open()).send(health);
    const answer = await refused.answer();
    expect(answer.status).to.equal(503);
    expect(json(answer)).to.include({ error: 'too many connections', code: 'RT_ERR_TOO_MANY_CONNECTIONS' });
    expect(json(answer).details).to.include(`http.max_connections (${MAX_CONNECTIONS})`);
    expect(answer.headers['retry-after']).to.equal('1');
    expect(answer.headers['connection']).to.equal('close');
    expect(answer.headers['x-request-id']).to.match(UUID);
    await refused.closedWithin(5_000);
    expect(await rt.logged((l) => l.msg === 'request' && l.status === 503 && l.reqId === answer.headers['x-request-id'])).to.equal(true);

    // One held connection goes: a new one is served again.
    held.shift()!.close();
    await eventually(
      async () => {
        const raw = (await open()).send(health);
        expect((await raw.answer()).status, 'a connection once one was closed').to.equal(200);
        held.push(raw);
      },
      { what: 'a new connection to be served', timeoutMs: 10_000 },
    );
    for (const raw of held) raw.close();
  });

  it('closes new connections unanswered past twice the cap (refusals take sockets too)', async () => {
    // The server must have let go of the previous test's connections; only
    // opening one more would show how many it holds, and that one would count.
    await letTimePass(200, "the server lets go of the previous test's connections");
    const idle: Raw[] = [];
    for (let i = 0; i < 3 * MAX_CONNECTIONS; i++) idle.push(await open());
    // The first 2 × cap are accepted and held; the rest are closed at once, before any byte.
    const closedAt = await Promise.all(idle.map((raw) => raw.closedWithin(1_000).catch(() => undefined)));
    const dropped = closedAt.filter((t) => t !== undefined).length;
    expect(dropped).to.equal(MAX_CONNECTIONS);
    expect(idle.every((raw) => raw.data === '')).to.equal(true);
    // A held one past the cap still learns why when it asks.
    const pastCap = idle[2 * MAX_CONNECTIONS - 1].send(health);
    expect((await pastCap.answer()).status).to.equal(503);
  });
});
