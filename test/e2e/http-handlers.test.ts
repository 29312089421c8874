// End to end: HTTP handler components (docs/api.md §5.8), built with
// componentize-js in both styles people write them (wasi:http/types and
// fetch-event), served by the real CLI at /api/services/{d}/{s}/http/… and
// at a sidecar's mount; and a WASI 0.3 handler (§5.9) of rt's own, in WAT.

import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile, rm } from 'node:fs/promises';
import { Agent, request, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { eventually, letTimePass, within } from '../support/eventually.js';
import { repository, versioned } from '../support/fixtures.js';
import { openStream } from '../support/stream-client.js';
import { FETCH_HANDLER, OUTGOING_FETCH_HANDLER, OUTGOING_TYPES_HANDLER, TYPES_HANDLER } from '../support/http-handler-fixtures.js';
import { loopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import autocannon from 'autocannon';
import { call, RtProcess, tempDir } from '../support/rt-process.js';
import { uploadBeforeReading } from '../support/raw-connection.js';
import { P3_HANDLER, P3_MIDDLEWARE, P3_PROXY } from '../support/async-components.js';
import { hasJspi } from '../../lib/platform.js';

/** An answer as the client saw it, trailers included. */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  trailers: Record<string, string | undefined>;
  /** Whether the body arrived whole (a chunked body without its final chunk did not). */
  complete: boolean;
}

/** One request on a fresh connection; the body may come in timed pieces. */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString(), trailers: res.trailers, complete: true }));
      res.on('error', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString(), trailers: {}, complete: false }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A chunked POST whose body the test writes (`req`) as it likes, and its answer once that has ended. */
function upload(url: string, headers: Record<string, string> = {}): { req: ClientRequest; answer: Promise<Answer> } {
  let answered!: (a: Answer) => void;
  const answer = new Promise<Answer>((resolve) => (answered = resolve));
  const req = request(url, { method: 'POST', headers: { 'transfer-encoding': 'chunked', ...headers }, agent: false }, (res) => {
    let body = '';
    res.on('data', (c: Buffer) => (body += c.toString()));
    res.on('end', () => answered({ status: res.statusCode!, headers: res.headers, body, trailers: res.trailers, complete: true }));
  });
  return { req, answer };
}

const TIMEOUT_S = 5;

describe('HTTP handler components (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;
  /** What the handlers granted outbound hosts may reach. */
  let upstream: LoopbackServer;
  let workers: number[];
  const api = (service: string, path: string) => `${rt.url}/api/services/default/${service}/http${path}`;

  before(async function () {
    this.timeout(600_000);
    upstream = await loopbackServer();
    const granted = `allowed_outbound_hosts = ["127.0.0.1:${upstream.port}"]\n`;
    const repo = await repository({
      caller: OUTGOING_TYPES_HANDLER,
      'caller.toml': { raw: `service = "caller"\n${granted}` },
      fetcher: OUTGOING_FETCH_HANDLER,
      'fetcher.toml': { raw: `service = "fetcher"\n${granted}` },
      'closed.wasm': OUTGOING_FETCH_HANDLER,
      'closed.toml': { raw: 'service = "closed"\n' },
      // A typed service, which has no handler to reach.
      plain: versioned(1, 'plain'),
      // Mounts that cannot be: claimed already (by hello, first by address), and inside rt's API.
      'zclash.wasm': TYPES_HANDLER,
      'zclash.toml': { raw: 'service = "zclash"\nhttp_route = "/hello"\n' },
      'inapi.wasm': TYPES_HANDLER,
      'inapi.toml': { raw: 'service = "inapi"\nhttp_route = "/API/services"\n' },
      hello: TYPES_HANDLER,
      'hello.toml': { raw: 'service = "hello"\nhttp_route = "/hello"\n' },
      fetch: FETCH_HANDLER,
      'fetch.toml': { raw: 'service = "fetch"\n' },
    });
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n[http]\nrequest_timeout_seconds = ${TIMEOUT_S}\nmax_body_bytes = 1048576\n` });
    await rt.ready();
    workers = rt.workerPids();
  });

  after(async () => {
    await rt?.stop();
    await upstream?.close();
  });

  afterEach(function () {
    // No handler failure ends a worker: a trap, a timeout, a client gone, a malformed answer.
    expect(rt.workerPids(), `the workers after "${this.currentTest?.title}"`).to.deep.equal(workers);
  });

  it('passes method, path with query, scheme, authority and headers to the handler', async () => {
    const r = await send(api('hello', '/echo/a%20b?x=1&y=two'), { headers: { 'x-q': 'qv', connection: 'keep-alive', 'keep-alive': 'timeout=5' } });
    expect(r.status, r.body).to.equal(200);
    const echoed = JSON.parse(r.body) as { method: string; path: string; scheme: string; authority: string; headers: [string, string][] };
    expect(echoed).to.include({ method: 'GET', path: '/echo/a%20b?x=1&y=two' });
    // As the fixture reads the scheme variant's case: HTTP.
    expect(echoed.scheme.toLowerCase()).to.equal('http');
    expect(echoed.authority).to.equal(new URL(rt.url).host);
    const names = echoed.headers.map(([n]) => n);
    expect(names).to.include('x-q');
    expect(names).to.not.include('connection');
    expect(names).to.not.include('keep-alive');
    expect(r.headers['content-security-policy']).to.match(/^sandbox/);
    expect(r.headers['x-request-id']).to.be.a('string');
  });

  it("keeps rt's own headers whatever the handler sets: its request id, its worker, nosniff; the handler's CSP beside rt's", async () => {
    const r = await send(api('hello', '/forge'), { headers: { 'x-request-id': 'asked-for-this-one' } });
    expect(r.status, r.body).to.equal(200);
    expect(r.headers['x-request-id']).to.equal('asked-for-this-one');
    expect(r.headers['x-rt-worker']).to.match(/^\d+$/).and.not.equal('99');
    expect(r.headers['x-content-type-options']).to.equal('nosniff');
    expect(r.headers['content-security-policy']).to.equal("default-src 'self', sandbox allow-scripts allow-forms allow-popups allow-downloads");
    expect(await rt.logged((l) => l.msg === 'request' && l.reqId === 'asked-for-this-one', 10_000), 'its log line carries the same id').to.equal(true);
  });

  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    it(`serves ${method}`, async () => {
      const r = await send(api('hello', '/echo?m=1'), { method });
      expect(r.status, r.body).to.equal(200);
      expect(JSON.parse(r.body)).to.include({ method, path: '/echo?m=1' });
    });
  }

  it('serves a mount with the request’s whole path, and nothing beside it', async () => {
    // The fixture answers paths it does not know with 404 and the path it got.
    const r = await send(`${rt.url}/hello/echo?z=9`);
    expect(r.status, r.body).to.equal(404);
    expect(r.body).to.equal('no such path /hello/echo?z=9');
    expect((await send(`${rt.url}/hello`)).body).to.equal('no such path /hello');
    const beside = await send(`${rt.url}/helloworld`);
    expect(beside.status).to.equal(404);
    expect(JSON.parse(beside.body)).to.include({ code: 'RT_ERR_NOT_FOUND' });
  });

  it('reaches a mount however the path spells it (escapes of unreserved characters, ; parameters, dot segments), with the path as sent', async () => {
    for (const path of ['/%68ello/echo', '/hello;v=1/echo', '/x/../hello/echo']) {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        // A raw path: a URL would be normalised by the client before it is sent.
        const req = request({ host: '127.0.0.1', port: rt.port, path, agent: false }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.end();
      });
      // The fixture answers paths it does not know with 404 and the path it got: rt's own 404 would be JSON.
      expect(answer, path).to.deep.equal({ status: 404, body: `no such path ${path}` });
    }
  });

  it('streams a request body to the guest and gives it the trailers', async () => {
    const { req, answer } = upload(api('hello', '/body'), { trailer: 'x-sum' });
    req.write('hel');
    await letTimePass(30, 'the body arrives in pieces');
    req.write('lo ');
    await letTimePass(30, 'the body arrives in pieces');
    req.addTrailers({ 'x-sum': '7' });
    req.end('world');
    const r = await answer;
    expect(r.status, r.body).to.equal(200);
    expect(r.body).to.equal('got 11 bytes: hello world');
    expect(r.headers['x-trailers']).to.equal('x-sum=7');
  });

  it('sends the response’s trailers', async () => {
    const r = await send(api('hello', '/trailers'));
    expect(r.body).to.equal('with trailers');
    expect(r.trailers).to.deep.include({ 'x-checksum': '42' });
  });

  it('answers 500 RT_ERR_NO_RESPONSE for a handler that sets no response', async () => {
    const r = await send(api('hello', '/none'));
    expect(r.status).to.equal(500);
    expect(JSON.parse(r.body)).to.include({ code: 'RT_ERR_NO_RESPONSE', service: 'default.hello' });
  });

  it('answers 502 RT_ERR_BAD_RESPONSE naming the problem of a malformed response', async () => {
    const length = await send(api('hello', '/bad-length'));
    expect(length.status).to.equal(502);
    expect(JSON.parse(length.body)).to.include({ code: 'RT_ERR_BAD_RESPONSE' });
    expect((JSON.parse(length.body) as { details: string }).details).to.match(/content-length/i);
    const status = await send(api('hello', '/bad-status'));
    expect(status.status).to.equal(502);
    expect((JSON.parse(status.body) as { details: string }).details).to.match(/103/);
  });

  it('serves a fetch-event handler, one request after another', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await send(api('fetch', '/echo?i=' + i), { method: 'POST', headers: { 'x-q': 'v' + i }, body: 'body' + i });
      expect(r.status, r.body).to.equal(201);
      expect(r.body).to.equal(`echo:POST http://${new URL(rt.url).host}/echo?i=${i} v${i} body${i}`);
      expect(r.headers['x-a']).to.equal('1');
    }
  });

  it('answers 500 RT_ERR_COMPONENT_TRAPPED for a handler that throws, and serves the next request', async () => {
    const r = await send(api('hello', '/throw'));
    expect(r.status).to.equal(500);
    expect(JSON.parse(r.body)).to.include({ code: 'RT_ERR_COMPONENT_TRAPPED', service: 'default.hello' });
    expect((await send(api('hello', '/echo'))).status).to.equal(200);
  });

  for (const [style, service, path] of [
    ['a wasi:http/types handler that sets its response, then traps', 'hello', '/set-then-throw'],
    ['a fetch-event handler that throws', 'fetch', '/throw'],
  ]) {
    it(`answers a complete 500 with the error body for ${style} before any of its body: Node's client and curl read it whole`, async () => {
      const r = await send(api(service, path));
      expect(r.complete, 'the answer arrived whole').to.equal(true);
      expect(r.status, r.body).to.equal(500);
      expect(JSON.parse(r.body), r.body).to.include({ service: `default.${service}`, code: 'RT_ERR_COMPONENT_TRAPPED' });
      expect(r.headers['x-request-id']).to.be.a('string');
      // curl exits 18 for a body cut short ("transfer closed with outstanding read data remaining").
      const curl = spawnSync('curl', ['--silent', '--show-error', '--output', '/dev/null', '--write-out', '%{http_code}', api(service, path)], { encoding: 'utf8', timeout: 30_000 });
      expect(curl.status, curl.stderr).to.equal(0);
      expect(curl.stdout).to.equal('500');
    });
  }

  it('answers 504 for a handler that has not answered by the deadline', async () => {
    const started = performance.now();
    const r = await send(api('hello', `/sleep?${TIMEOUT_S * 4000}`));
    expect(r.status).to.equal(504);
    expect(JSON.parse(r.body)).to.include({ code: 'RT_ERR_CALL_TIMEOUT', service: 'default.hello' });
    expect(performance.now() - started).to.be.below(TIMEOUT_S * 1000 + 2000);
    expect((await send(api('hello', '/echo'))).status).to.equal(200);
  });

  it('cuts the body short of a response still being written at the deadline', async () => {
    const r = await send(api('hello', '/drip?100'));
    expect(r.status).to.equal(200);
    expect(r.complete, 'the body ends without its final chunk').to.equal(false);
    expect(r.body).to.match(/^(tick;){5,}$/);
    expect((await send(api('hello', '/echo'))).status).to.equal(200);
  });

  it('ends the handler’s writes when its client goes away mid-response (logged as 499)', async () => {
    const answer = await openStream(api('hello', '/drip?20'), {});
    await eventually(() => answer.pieces.length >= 3, { what: 'three ticks', timeoutMs: 5_000, intervalMs: 10 });
    answer.res.destroy();
    expect(await rt.logged((l) => l.msg === 'request' && l.status === 499 && l.route === '/api/services/default/hello/http')).to.equal(true);
    // Its thread is free well before the deadline: the guest saw its write fail and returned.
    const next = await send(api('hello', '/echo'));
    expect(next.status).to.equal(200);
  });

  it('keeps a slow reader’s response within a bounded window, and delivers 64 MiB whole', async function () {
    this.timeout(60_000);
    const [worker] = rt.workerPids();
    const before = (await RtProcess.status(worker)).rssMiB;
    const size = 64 * 1024 * 1024;
    const answer = await openStream(api('hello', `/big?${size}`), {}, {}, { paused: true });
    let peak = 0;
    for (let i = 0; i < 5; i++) {
      await letTimePass(200, 'the reader takes nothing for 1 s, its worker sampled every 200 ms');
      peak = Math.max(peak, (await RtProcess.status(worker)).rssMiB);
    }
    expect(peak - before, `worker RSS grew from ${before} to ${peak} MiB`).to.be.below(48);
    let received = 0;
    answer.res.on('data', (bytes: Buffer) => (received += bytes.length));
    const { complete, at } = await answer.ended;
    console.log(`      64 MiB in ${Math.round(at)} ms (1 s of it paused)`);
    expect(complete).to.equal(true);
    expect(received).to.equal(size);
  });

  it('refuses a body over http.max_body_bytes with 413, declared or not', async () => {
    const declared = await send(api('hello', '/body'), { method: 'POST', body: Buffer.alloc(1048577) });
    expect(declared.status).to.equal(413);
    expect(JSON.parse(declared.body)).to.include({ code: 'RT_ERR_BODY_TOO_LARGE' });
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = request(api('hello', '/body'), { method: 'POST', headers: { 'transfer-encoding': 'chunked' }, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      for (let i = 0; i < 20; i++) req.write(Buffer.alloc(65536));
      req.end();
    });
    expect(chunked).to.equal(413);
  });

  it('answers 413 to every chunked upload of 50 MB, which the client reads instead of a reset (20 times, with curl)', async function () {
    this.timeout(300_000);
    // curl streams the upload from a file as fast as the connection takes it, and exits 0 once it has read an answer.
    const dir = await tempDir('rt-upload-');
    const file = join(dir, 'fifty.bin');
    await writeFile(file, Buffer.alloc(50 * 2 ** 20));
    try {
      for (let i = 0; i < 20; i++) {
        const curl = spawnSync('curl', ['--silent', '--show-error', '--output', '/dev/null', '--write-out', '%{http_code}', '-H', 'Transfer-Encoding: chunked', '--data-binary', `@${file}`, api('hello', '/body')], { encoding: 'utf8', timeout: 60_000 });
        expect({ try: i + 1, status: curl.status, code: curl.stdout, stderr: curl.stderr }).to.deep.equal({ try: i + 1, status: 0, code: '413', stderr: '' });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('answers 413 to a client that sends its whole upload before reading, which reads it (the connection lingers; 5 times)', async () => {
    for (let i = 0; i < 5; i++) expect({ try: i + 1, answer: await uploadBeforeReading(rt.port, '/api/services/default/hello/http/body', 50 * 2 ** 20) }).to.deep.equal({ try: i + 1, answer: 'HTTP/1.1 413 Payload Too Large' });
  });

  it('answers 413 to a client on a slow link that goes on sending for 4 s after its answer, which reads it: the connection lingers while bytes come', async () => {
    expect(await uploadBeforeReading(rt.port, '/api/services/default/hello/http/body', 2 * 2 ** 20, { frames: 8, everyMs: 500 })).to.equal('HTTP/1.1 413 Payload Too Large');
  });

  it('closes a lingering connection once its client has sent nothing for 2 s, well before the request deadline: what it sends later is reset', async () => {
    // Half-open allowed: this client does not end its side when rt ends its own, as Node's clients do by default.
    const socket = connect({ port: rt.port, host: '127.0.0.1', allowHalfOpen: true });
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    const failed = new Promise<string>((resolve) => socket.once('error', (e: Error & { code?: string }) => resolve(e.code ?? e.message)));
    socket.write('POST /api/services/default/hello/http/body HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n');
    const frame = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(65536), Buffer.from('\r\n')]);
    try {
      for (let i = 0; i < 40; i++) socket.write(frame);
      await eventually(() => expect(got).to.match(/^HTTP\/1\.1 413 /), { what: 'the 413', timeoutMs: 5_000, intervalMs: 10 });
      // Past the idle close, before the requestTimeout (6 s after the request began) would end it.
      await letTimePass(3_000, 'the client sends nothing for longer than the lingering close waits');
      const probes = setInterval(() => socket.write(frame), 100);
      try {
        expect(await within(failed, 2_000, 'a reset of what the client sent late')).to.be.oneOf(['ECONNRESET', 'EPIPE']);
      } finally {
        clearInterval(probes);
      }
    } finally {
      socket.destroy();
    }
  });

  it('answers 413 to a client that sends its whole upload and half-closes before the handler has given up on the body (3 times)', async () => {
    // The guest answers 500 ms after the refusal, long after the last byte and the client's FIN arrived: a server that read on would see the FIN and close unanswered.
    for (let i = 0; i < 3; i++) expect({ try: i + 1, answer: await uploadBeforeReading(rt.port, '/api/services/default/hello/http/body-slow-to-fail', 20 * 2 ** 20) }).to.deep.equal({ try: i + 1, answer: 'HTTP/1.1 413 Payload Too Large' });
  });

  it('lists a handler as kind http with its routes', async () => {
    const listed = await call(`${rt.url}/api/services`, { method: 'GET' });
    const services = listed.body.services as Record<string, unknown>[];
    expect(services.find((x) => x.service === 'hello')).to.include({ kind: 'http', handler: 'wasi:http/incoming-handler@0.2.10' }).and.to.have.deep.property('routes', ['/api/services/default/hello/http', '/hello']);
    expect(services.find((x) => x.service === 'fetch')).to.have.deep.property('routes', ['/api/services/default/fetch/http']);
    const described = await call(`${rt.url}/api/services/default/hello`, { method: 'GET' });
    expect(described.body).to.include({ kind: 'http' });
  });

  it('documents each handler route in the OpenAPI document, which validates', async () => {
    const res = await call(`${rt.url}/api/openapi.json`, { method: 'GET' });
    const validator = new Validator();
    const result = await validator.validate(res.body);
    expect(result.valid, JSON.stringify(result.errors)).to.equal(true);
    const paths = res.body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    expect(Object.keys(paths)).to.include.members(['/api/services/default/hello/http', '/api/services/default/hello/http/{path}', '/hello', '/hello/{path}', '/api/services/default/fetch/http/{path}']);
    expect(Object.keys(paths['/hello/{path}'])).to.include.members(['get', 'post', 'put', 'delete', 'patch']);
    expect(paths['/hello'].post.responses).to.include.keys('default', '500', '502', '504');
  });

  it('counts handler requests by service, route and status', async () => {
    for (const url of [`${rt.url}/hello/metrics-probe`, api('hello', '/echo'), api('hello', '/none')]) await send(url);
    const metrics = await (await fetch(`${rt.url}/api/metrics`)).text();
    expect(metrics).to.match(/^rt_http_requests_total\{service="default\.hello",route="\/api\/services\/default\/hello\/http",status="200"\} [1-9]\d*$/m);
    expect(metrics).to.match(/^rt_http_requests_total\{service="default\.hello",route="\/hello",status="404"\} [1-9]\d*$/m);
    expect(metrics).to.match(/^rt_http_requests_total\{service="default\.hello",route="\/api\/services\/default\/hello\/http",status="500"\} [1-9]\d*$/m);
  });

  describe('outgoing requests', () => {
    const json = async (url: string) => {
      const r = await send(url);
      return { status: r.status, body: JSON.parse(r.body) as Record<string, unknown> };
    };

    it('reach a host the sidecar allows, through wasi:http/outgoing-handler and through fetch()', async () => {
      const before = await upstream.connections();
      const typed = await json(api('caller', `/call?url=${encodeURIComponent(`${upstream.url}/x`)}`));
      expect(typed.status).to.equal(200);
      expect(typed.body).to.include({ status: 200, text: 'reached' });
      const fetched = await json(api('fetcher', `/fetch?url=${encodeURIComponent(`${upstream.url}/y`)}`));
      expect(fetched.body).to.include({ status: 200, text: 'reached' });
      expect(await upstream.connections()).to.be.above(before);
    });

    it('fail with HTTP-request-denied for any other host, and nothing connects', async () => {
      const before = await upstream.connections();
      const other = await json(api('caller', `/call?url=${encodeURIComponent('http://127.0.0.1:9/x')}`));
      expect(other.body).to.deep.equal({ stage: 'handle', error: { tag: 'HTTP-request-denied' } });
      // A service granted nothing reaches nothing, not even the host the others may reach.
      const closed = await json(api('closed', `/fetch?url=${encodeURIComponent(`${upstream.url}/z`)}`));
      expect(closed.status).to.equal(502);
      // StarlingMonkey's fetch rejects with a message of its own, whatever the error code was.
      expect(String(closed.body.error)).to.match(/error/i);
      expect(await upstream.connections()).to.equal(before);
    });
  });

  it('fails the load of a handler whose mount is taken or inside /api, naming why; the others serve', async () => {
    const listed = await call(`${rt.url}/api/services`, { method: 'GET' });
    const failed = listed.body.failed as { source: string; error: string }[];
    const why = (file: string) => failed.find((f) => f.source.endsWith(file))?.error;
    expect(why('zclash.wasm')).to.match(/http_route "\/hello" is claimed by default\.hello \(.*hello\.wasm\) already/);
    expect(why('inapi.wasm')).to.match(/http_route.*\/API\/services.*rt's API/);
    expect((await send(`${rt.url}/hello/x`)).body).to.equal('no such path /hello/x');
  });

  it('answers 404 for a service that is not an HTTP handler, and for an unknown one', async () => {
    const typed = await send(`${rt.url}/api/services/acme/plain/http/x`, { method: 'POST' });
    expect(typed.status).to.equal(404);
    expect(JSON.parse(typed.body)).to.include({ code: 'RT_ERR_NOT_FOUND', service: 'acme.plain' });
    expect((JSON.parse(typed.body) as { details: string }).details).to.match(/not an HTTP handler.*\/api\/services\/acme\/plain\/invoke\//);
    const unknown = await send(`${rt.url}/api/services/default/nope/http/x`);
    expect(unknown.status).to.equal(404);
    expect(JSON.parse(unknown.body)).to.include({ code: 'RT_ERR_UNKNOWN_SERVICE' });
  });

  it('answers 500 RT_ERR_HANDLER_ERROR naming the error code a handler set instead of a response', async () => {
    const r = await send(api('hello', '/refuse'));
    expect(r.status).to.equal(500);
    const body = JSON.parse(r.body) as { code: string; service: string; details: string };
    expect(body).to.include({ code: 'RT_ERR_HANDLER_ERROR', service: 'default.hello' });
    expect(body.details).to.match(/internal-error/).and.match(/nope/);
  });
});

describe('HTTP handler components under control operations, 2 workers (e2e)', function () {
  this.timeout(180_000);
  let rt: RtProcess;
  const LOAD_SECONDS = 8;
  /** Restarts and reloads, taking turns. */
  const OPERATIONS = 6;

  before(async function () {
    this.timeout(600_000);
    const repo = await repository({ hello: TYPES_HANDLER, 'hello.toml': { raw: 'service = "hello"\nhttp_route = "/hello"\npool_size = 2\n' } });
    rt = await RtProcess.start({ workers: 2, quiet: true, configToml: `repo_urls = ["file://${repo}"]\n` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it(`answers every request while the handler is restarted and reloaded, ${OPERATIONS} times and for ${LOAD_SECONDS} s at least (16 connections, both workers)`, async () => {
    // Stopped once the operations are done, however long a busy machine makes them take.
    const load = autocannon({ url: `${rt.url}/api/services/default/hello/http/echo?load`, connections: 16, duration: 120 });
    let operations = 0;
    const until = Date.now() + LOAD_SECONDS * 1000;
    try {
      while (operations < OPERATIONS || Date.now() < until) {
        const op = operations % 2 === 0 ? call(`${rt.url}/api/services/default/hello/restart`) : call(`${rt.url}/api/reload`);
        const res = await op;
        expect(res.status, res.text).to.equal(200);
        operations++;
        // The mount follows each new generation too (the fixture answers 404 with the path it got).
        expect(await (await fetch(`${rt.url}/hello/x`)).text()).to.equal('no such path /hello/x');
        await letTimePass(300, 'the load meets each generation for a while before the next operation');
      }
    } finally {
      load.stop();
    }
    const result = await load;
    console.log(`      ${result.requests.total} requests, ${operations} restarts and reloads, p99 ${result.latency.p99} ms`);
    expect(result.requests.total).to.be.greaterThan(100);
    expect({ non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts }).to.deep.equal({ non2xx: 0, errors: 0, timeouts: 0 });
  });

  it('lets a request in flight finish when the handler is quiesced, refuses new ones with 503, and serves again after a restart', async () => {
    const running = fetch(`${rt.url}/api/services/default/hello/http/sleep?800`);
    await letTimePass(200, 'the request reaches its instance before the quiesce');
    const quiesced = await call(`${rt.url}/api/services/default/hello/quiesce`, { method: 'PUT' });
    expect(quiesced.status, quiesced.text).to.equal(200);
    const finished = await running;
    expect(finished.status).to.equal(200);
    expect(await finished.text()).to.equal('slept');
    for (const url of [`${rt.url}/api/services/default/hello/http/echo`, `${rt.url}/hello/x`]) {
      const refused = await call(url, { method: 'GET' });
      expect(refused.status).to.equal(503);
      expect(refused.body).to.include({ code: 'RT_ERR_SERVICE_QUIESCED', service: 'default.hello' });
    }
    expect((await call(`${rt.url}/api/services/default/hello/restart`)).status).to.equal(200);
    await eventually(async () => (await fetch(`${rt.url}/api/services/default/hello/http/echo`)).status === 200, { what: 'the handler to serve again', timeoutMs: 10_000, intervalMs: 100 });
  });
});

// On a Node without JSPI (22) a 0.3 handler does not load, as any WASI 0.3 component (platform.test.ts).
if (hasJspi) describe('WASI 0.3 HTTP handlers (e2e)', function () {
  this.timeout(120_000);
  const DEADLINE_S = 2;
  let rt: RtProcess;
  let workers: number[];
  /** What the proxy's sidecar lets it reach. */
  let upstream: LoopbackServer;
  const api = (path: string) => `${rt.url}/api/services/default/web/http${path}`;

  before(async function () {
    this.timeout(600_000);
    upstream = await loopbackServer();
    // One instance takes up to 32 requests at once: the naps below share it.
    const repo = await repository({
      web: P3_HANDLER,
      'web.toml': { raw: 'service = "web"\nhttp_route = "/web"\nmax_concurrency = 32\n' },
      // The same, its instance renewed after two requests.
      recycled: P3_HANDLER,
      'recycled.toml': { raw: 'service = "recycled"\nmax_invocations = 2\n' },
      proxy: P3_PROXY,
      'proxy.toml': { raw: `service = "proxy"\nallowed_outbound_hosts = ["127.0.0.1:${upstream.port}"]\n` },
      'closed.wasm': P3_PROXY,
      'closed.toml': { raw: 'service = "closed"\n' },
      // A middleware whose downstream handler is `web`, through a link.
      mw: P3_MIDDLEWARE,
      'mw.toml': { raw: 'service = "mw"\nhttp_route = "/mw"\n[imports]\n"wasi:http/handler" = "default/web"\n' },
      // Two middlewares whose downstream is each other: a load error, not a request that waits on itself.
      'loop-a.wasm': P3_MIDDLEWARE,
      'loop-a.toml': { raw: 'service = "loop-a"\n[imports]\n"wasi:http/handler" = "default/loop-b"\n' },
      'loop-b.wasm': P3_MIDDLEWARE,
      'loop-b.toml': { raw: 'service = "loop-b"\n[imports]\n"wasi:http/handler" = "default/loop-a"\n' },
      // A 0.2 handler beside them.
      'old.wasm': TYPES_HANDLER,
      'old.toml': { raw: 'service = "old"\nhttp_route = "/old"\n' },
    });
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n[http]\nrequest_timeout_seconds = ${DEADLINE_S}\nmax_body_bytes = 67108864\n` });
    await rt.ready();
    workers = rt.workerPids();
  });

  after(async () => {
    await rt?.stop();
    await upstream?.close();
  });

  afterEach(function () {
    if (rt) expect(rt.workerPids(), `the workers after "${this.currentTest?.title}"`).to.deep.equal(workers);
  });

  it('serves a 0.2 and a 0.3 handler side by side, each at its mount, listed with its line', async () => {
    const [p3, p2, mounted] = await Promise.all([send(`${rt.url}/web/x`), send(`${rt.url}/api/services/default/old/http/echo?z=1`), send(`${rt.url}/old/x`)]);
    expect([p3.status, p3.body]).to.deep.equal([200, 'Hello, world!\n']);
    expect(p2.status, p2.body).to.equal(200);
    expect(JSON.parse(p2.body)).to.include({ method: 'GET', path: '/echo?z=1' });
    // The 0.2 fixture answers a path it does not know (its whole path, at its mount) itself.
    expect([mounted.status, mounted.body]).to.deep.equal([404, 'no such path /old/x']);
    const { body } = await call(`${rt.url}/api/services`, { method: 'GET' });
    const lines = Object.fromEntries((body.services as { service: string; wasi?: string }[]).map((s) => [s.service, s.wasi]));
    expect(lines).to.include({ web: '0.3', old: '0.2' });
  });

  it('sends a request through wasi:http/client to a host its sidecar allows, and answers with the response it got', async () => {
    const before = await upstream.connections();
    const r = await send(`${rt.url}/api/services/default/proxy/http/`, { headers: { 'x-target': `127.0.0.1:${upstream.port}` } });
    expect(r.status, r.body).to.equal(200);
    expect(r.body).to.equal('reached');
    expect(await upstream.connections()).to.be.above(before);
  });

  it('fails a client.send to any other host with HTTP-request-denied, and nothing connects', async () => {
    const before = await upstream.connections();
    for (const service of ['proxy', 'closed']) {
      const target = service === 'proxy' ? '127.0.0.1:9' : `127.0.0.1:${upstream.port}`;
      const r = await send(`${rt.url}/api/services/default/${service}/http/`, { headers: { 'x-target': target } });
      expect(r.status, r.body).to.equal(500);
      expect(JSON.parse(r.body)).to.include({ code: 'RT_ERR_HANDLER_ERROR', service: `default.${service}` });
      expect((JSON.parse(r.body) as { details: string }).details).to.match(/HTTP-request-denied/);
    }
    expect(await upstream.connections()).to.equal(before);
  });

  it('serves a middleware through the handler its sidecar links ([imports]): a request and its streamed body pass to it and its response back, no network between them', async () => {
    const before = await upstream.connections();
    const hello = await send(`${rt.url}/mw/x`);
    expect([hello.status, hello.body]).to.deep.equal([200, 'Hello, world!\n']);
    const { req, answer } = upload(`${rt.url}/api/services/default/mw/http/echo`, { trailer: 'x-sum' });
    req.write('through ');
    await letTimePass(30, 'the body arrives in pieces');
    req.addTrailers({ 'x-sum': '9' });
    req.end('the link');
    const echoed = await answer;
    expect([echoed.status, echoed.body]).to.deep.equal([200, 'through the link']);
    expect(echoed.trailers).to.deep.include({ 'x-sum': '9' });
    const body = Buffer.alloc(4 * 1_048_576);
    for (let i = 0; i < body.length; i += 4) body.writeUInt32LE(i, i);
    const big = await fetch(`${rt.url}/api/services/default/mw/http/big`, { method: 'POST', body });
    expect(big.status).to.equal(200);
    expect(Buffer.from(await big.arrayBuffer()).equals(body), 'the same 4 MiB').to.equal(true);
    expect(await upstream.connections()).to.equal(before);
    const { body: listing } = await call(`${rt.url}/api/services`, { method: 'GET' });
    const mw = (listing.services as Record<string, unknown>[]).find((s) => s.service === 'mw');
    expect(mw).to.deep.include({ links: { 'wasi:http/handler@0.3.0': 'default/web' }, unsatisfied_imports: [] });
  });

  it('fails two middlewares linked to each other at load, naming the cycle; the rest serve', async () => {
    const { body } = await call(`${rt.url}/api/services`, { method: 'GET' });
    const failed: Record<string, string> = Object.fromEntries((body.failed as { source: string; error: string }[]).map((f) => [f.source.split('/').pop(), f.error]));
    expect(failed['loop-a.wasm']).to.equal('its [imports] make a link cycle: default.loop-a → default.loop-b → default.loop-a (a call across it would wait on itself)');
    expect(failed['loop-b.wasm']).to.equal('its [imports] make a link cycle: default.loop-b → default.loop-a → default.loop-b (a call across it would wait on itself)');
    expect((await send(`${rt.url}/api/services/default/loop-a/http/`)).status).to.equal(404);
    expect((await send(`${rt.url}/mw/`)).status).to.equal(200);
  });

  it("answers a linked handler's error-code, trap or bad status as the middleware's error, and both serve on", async () => {
    const refused = await send(`${rt.url}/mw/`, { method: 'PATCH' });
    expect(refused.status).to.equal(500);
    expect(JSON.parse(refused.body)).to.include({ code: 'RT_ERR_HANDLER_ERROR', service: 'default.mw' });
    expect((JSON.parse(refused.body) as { details: string }).details).to.match(/connection-refused/);
    for (const method of ['DELETE', 'PUT']) {
      const failed = await send(`${rt.url}/mw/`, { method });
      expect(failed.status, method).to.equal(500);
      expect(JSON.parse(failed.body), method).to.include({ code: 'RT_ERR_HANDLER_ERROR', service: 'default.mw' });
      expect((JSON.parse(failed.body) as { details: string }).details, method).to.match(/internal-error/);
    }
    expect((await send(`${rt.url}/mw/`)).status).to.equal(200);
    expect((await send(api('/'))).status).to.equal(200);
  });

  it('lists it as kind http with its WASI line, its routes and no unsatisfied import', async () => {
    const { body } = await call(`${rt.url}/api/services`, { method: 'GET' });
    const web = (body.services as Record<string, unknown>[]).find((s) => s.service === 'web');
    expect(web).to.include({ kind: 'http', handler: 'wasi:http/handler@0.3.0', wasi: '0.3' });
    expect(web).to.deep.include({ routes: ['/api/services/default/web/http', '/web'], unsatisfied_imports: [] });
  });

  it('serves a response the guest writes after handle returned, at its API path and its mount', async () => {
    for (const url of [api('/x?y=1'), `${rt.url}/web/a`]) {
      const r = await send(url);
      expect(r.status, r.body).to.equal(200);
      expect(r.body).to.equal('Hello, world!\n');
      expect(r.complete).to.equal(true);
      // No length from the guest: chunked (docs/api.md §5.8), whole (its final chunk came: complete above).
      expect([r.headers['content-length'], r.headers['transfer-encoding']]).to.deep.equal([undefined, 'chunked']);
      expect(r.headers['x-request-id']).to.be.a('string');
      expect(r.headers['content-security-policy']).to.match(/^sandbox/);
    }
  });

  it('streams a request body through the guest and back, trailers included (an echo)', async () => {
    const { req, answer } = upload(api('/echo'), { trailer: 'x-sum' });
    req.write('hel');
    await letTimePass(30, 'the body arrives in pieces');
    req.write('lo ');
    req.addTrailers({ 'x-sum': '7' });
    req.end('world');
    const r = await answer;
    expect(r.status, r.body).to.equal(200);
    expect(r.body).to.equal('hello world');
    expect(r.trailers).to.deep.include({ 'x-sum': '7' });
  });

  it('echoes 16 MiB whole', async () => {
    const body = Buffer.alloc(16 * 1_048_576);
    for (let i = 0; i < body.length; i += 4) body.writeUInt32LE(i, i);
    const r = await fetch(api('/big'), { method: 'POST', body });
    expect(r.status).to.equal(200);
    expect(Buffer.from(await r.arrayBuffer()).equals(body), 'the same bytes').to.equal(true);
  });

  it('answers 502 RT_ERR_BAD_RESPONSE for a status no client can be sent, 500 RT_ERR_HANDLER_ERROR for an error-code, 500 RT_ERR_COMPONENT_TRAPPED for a trap; and serves on', async () => {
    const bad = await send(api('/'), { method: 'PUT' });
    expect(bad.status).to.equal(502);
    expect(JSON.parse(bad.body)).to.include({ code: 'RT_ERR_BAD_RESPONSE', service: 'default.web' });
    expect((JSON.parse(bad.body) as { details: string }).details).to.match(/status 700/);
    const refused = await send(api('/'), { method: 'PATCH' });
    expect(refused.status).to.equal(500);
    expect(JSON.parse(refused.body)).to.include({ code: 'RT_ERR_HANDLER_ERROR' });
    expect((JSON.parse(refused.body) as { details: string }).details).to.match(/connection-refused/);
    const trapped = await send(api('/'), { method: 'DELETE' });
    expect(trapped.status).to.equal(500);
    expect(JSON.parse(trapped.body)).to.include({ code: 'RT_ERR_COMPONENT_TRAPPED', service: 'default.web' });
    expect((await send(api('/'))).status).to.equal(200);
  });

  it('cuts the body short when the guest traps after writing some of it; the requests beside it on the instance are answered, and a fresh instance serves on', async () => {
    const beside = [send(api('/nap'), { method: 'OPTIONS' }), send(api('/nap'), { method: 'OPTIONS' })];
    await letTimePass(50, 'the naps are waiting in the instance');
    const cut = await send(api('/'), { method: 'PURGE' });
    expect(cut.status).to.equal(200);
    expect(cut.body).to.equal('Hello, world!\n');
    expect(cut.complete, 'no final chunk: the client knows the body is not whole').to.equal(false);
    const began = performance.now();
    for (const answer of await Promise.all(beside)) expect([200, 500], answer.body).to.include(answer.status);
    expect(performance.now() - began, 'none waits for its deadline').to.be.below(DEADLINE_S * 1000);
    const after = await send(api('/'));
    expect([after.status, after.body]).to.deep.equal([200, 'Hello, world!\n']);
    await eventually(() => rt.logLines().some((l) => l.msg === 'handler response cut short' && l.service === 'default.web'), { what: 'the cut in the log', timeoutMs: 5_000 });
  });

  it('takes more requests with bodies still arriving from one client than its share of instance threads: they hold places in a shared instance', async () => {
    // 5 instance threads at most (pool_size 1 + 4), half of them a client's share; 5 × 32 places.
    const answers = Array.from({ length: 4 }, (_, i) => {
      const started = upload(api('/echo'));
      started.req.write(`part ${i}, `);
      return started;
    });
    await letTimePass(300, 'every body is arriving at once');
    for (const [i, { req }] of answers.entries()) req.end(`end ${i}`);
    const done = await Promise.all(answers.map((a) => a.answer));
    expect(done.map((a) => [a.status, a.body])).to.deep.equal([0, 1, 2, 3].map((i) => [200, `part ${i}, end ${i}`]));
  });

  it('serves 20 requests that wait 300 ms each side by side in one instance', async () => {
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(api('/nap'), { method: 'OPTIONS' })));
    const took = performance.now() - started;
    expect(answers.map((a) => a.status)).to.deep.equal(Array(20).fill(200));
    expect(answers.every((a) => a.body === 'Hello, world!\n')).to.equal(true);
    // One after another they would take 6 s.
    expect(took).to.be.below(2_500);
    const { body } = await call(`${rt.url}/api/services`, { method: 'GET' });
    const web = (body.services as { service: string; instances: { live: number } }[]).find((s) => s.service === 'web')!;
    expect(web.instances.live, 'one instance served them').to.equal(1);
  });

  it('answers 504 for a request still waiting at its deadline, while the requests beside it are answered', async () => {
    const started = performance.now();
    const [late, ...others] = await Promise.all([send(api('/long'), { method: 'TRACE' }), ...Array.from({ length: 3 }, () => send(api('/nap'), { method: 'OPTIONS' }))]);
    expect(late.status).to.equal(504);
    expect(JSON.parse(late.body)).to.include({ code: 'RT_ERR_CALL_TIMEOUT', service: 'default.web' });
    expect(performance.now() - started).to.be.below(DEADLINE_S * 1000 + 2000);
    expect(others.map((a) => a.status)).to.deep.equal([200, 200, 200]);
    expect((await send(api('/'))).status).to.equal(200);
  });

  it('renews an inline handler’s instance at its max_invocations: each instance’s responses counted by the guest start over every two', async () => {
    const served: unknown[] = [];
    for (let i = 0; i < 5; i++) served.push((await send(`${rt.url}/api/services/default/recycled/http/`)).headers['x-served']);
    expect(served).to.deep.equal(['1', '2', '1', '2', '1']);
    const { body } = await call(`${rt.url}/api/services/default/recycled`, { method: 'GET' });
    expect((body.instances as { placement: string }).placement).to.equal('inline');
  });

  it('serves it inline on the worker’s main thread (rt’s own host); a guest that runs without waiting is cut off at the inline budget, and the service moves to instance threads and serves on', async () => {
    const placement = async () => ((await call(`${rt.url}/api/services/default/web`, { method: 'GET' })).body.instances as { placement: string }).placement;
    expect(await placement()).to.equal('inline');
    const spin = await send(api('/'), { method: 'LOCK' });
    expect(spin.status).to.equal(500);
    expect(JSON.parse(spin.body)).to.include({ code: 'RT_ERR_COMPONENT_TRAPPED', service: 'default.web' });
    expect((JSON.parse(spin.body) as { details: string }).details).to.match(/inline budget/);
    expect(await rt.logged((l) => l.msg === 'service moved to instance threads' && l.reason === 'over_budget')).to.equal(true);
    expect(await placement()).to.equal('threads');
    expect((await send(api('/'))).body).to.equal('Hello, world!\n');
  });
});

// On a Node without JSPI (22) a 0.3 handler does not load.
if (hasJspi) describe('WASI 0.3 handler: 1,000 requests waiting in one instance (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;

  before(async function () {
    this.timeout(600_000);
    const repo = await repository({
      naps: P3_HANDLER,
      'naps.toml': { raw: 'service = "naps"\nmax_concurrency = 1000\n' },
      other: P3_HANDLER,
      'other.toml': { raw: 'service = "other"\n' },
    });
    // One address may hold them all here (its share of the connections).
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n[http]\nmax_connections = 2000\nclient_share_percent = 100\n` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  /** The worker's threads (Linux: /proc). */
  const threads = (pid: number) => Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

  it('holds them side by side in one instance and one thread (HEAD: a nap of 3 s each), while another service answers at once', async () => {
    const [worker] = rt.workerPids();
    expect((await send(`${rt.url}/api/services/default/naps/http/`, { method: 'HEAD' })).status, 'a first one').to.equal(200);
    const before = threads(worker);
    const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
    const head = () =>
      new Promise<number>((resolve, reject) => {
        const req = request(`${rt.url}/api/services/default/naps/http/`, { method: 'HEAD', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end();
      });
    const started = performance.now();
    const waiting = Promise.all(Array.from({ length: 1000 }, head));
    await letTimePass(1_500, 'the naps are all waiting');
    expect(threads(worker), 'no thread each').to.be.at.most(before + 2);
    const others: number[] = [];
    for (let i = 0; i < 20; i++) {
      const asked = performance.now();
      expect((await send(`${rt.url}/api/services/default/other/http/`)).status).to.equal(200);
      others.push(performance.now() - asked);
    }
    const statuses = await waiting;
    expect(statuses.filter((s) => s === 200)).to.have.length(1000);
    // One after another they would take 50 minutes; a thread each, 1,000 threads.
    expect(performance.now() - started).to.be.below(30_000);
    expect(Math.max(...others), 'the other service answers while they wait').to.be.below(1_000);
    const { body } = await call(`${rt.url}/api/services/default/naps`, { method: 'GET' });
    expect((body.instances as { live: number }).live, 'one instance').to.equal(1);
  });
});
