// Outgoing HTTP for wasi:http handlers (lib/worker/wasi-host outgoing.ts and
// outgoing-channel.ts) with real components: componentize-js handlers on an
// instance thread send requests through wasi:http/outgoing-handler (directly,
// and through StarlingMonkey's fetch()), which the main thread's
// OutgoingClient performs against a loopback node:http server started here.

import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildComponent } from '../../examples/builder.js';
import { Fields } from '../../lib/worker/wasi-host/core/fields.js';
import { RESPONSE_WINDOW } from '../../lib/worker/wasi-host/index.js';
import { errorCodeOf } from '../../lib/worker/wasi-host/core/error-codes.js';
import { OutgoingRequest } from '../../lib/worker/wasi-host/p2/outgoing.js';
import { eventually } from '../support/eventually.js';
import { HandlerThread } from '../support/handler-host.js';
import { OUTGOING_FETCH_HANDLER, OUTGOING_TYPES_HANDLER } from '../support/http-handler-fixtures.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** What the loopback server saw and did, for the assertions. */
interface Upstream {
  port: number;
  seen: Seen[];
  /** Each response as it closed, and whether it was closed before it was finished. */
  ends: { url: string; cutShort: boolean }[];
  close(): Promise<void>;
}

/**
 * - `/hello`: 200 `hello from loopback`, `x-served-by: loopback`.
 * - `/echo`: 200, JSON {method, body, xFrom} of the request.
 * - `/trailers`: a chunked body `with trailers`, then `x-sum: 42`.
 * - `/big?<n>`: n bytes of `x`, written as fast as the connection takes them.
 * - `/hang`: never answers. `/stall`: sends 3 bytes, then nothing.
 * - `/n?i=<i>`: answers `n<i>` once 3 such requests wait at the same time.
 */
async function upstream(): Promise<Upstream> {
  const seen: Seen[] = [];
  const ends: Upstream['ends'] = [];
  const waitingN: [ServerResponse, string][] = [];
  const server: Server = createServer((req, res) => {
    res.on('close', () => ends.push({ url: req.url ?? '', cutShort: !res.writableFinished }));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      const body = Buffer.concat(chunks).toString();
      seen.push({ method: req.method ?? '', url, headers: req.headers, body });
      if (url === '/hello') return void res.writeHead(200, { 'x-served-by': 'loopback' }).end('hello from loopback');
      if (url === '/echo') return void res.end(JSON.stringify({ method: req.method, body, xFrom: req.headers['x-from'] }));
      if (url === '/trailers') {
        res.writeHead(200, { trailer: 'x-sum' });
        res.write('with trailers');
        res.addTrailers({ 'x-sum': '42' });
        return void res.end();
      }
      if (url.startsWith('/big?')) {
        let left = Number(url.slice(5));
        const piece = Buffer.alloc(64 * 1024, 'x');
        const pump = (): void => {
          while (left > 0) {
            const n = Math.min(left, piece.length);
            left -= n;
            if (!res.write(piece.subarray(0, n))) return void res.once('drain', pump);
          }
          res.end();
        };
        return pump();
      }
      if (url === '/hang') return;
      if (url === '/stall') return void res.writeHead(200).write('abc');
      if (url.startsWith('/n?i=')) {
        waitingN.push([res, url.slice(5)]);
        if (waitingN.length === 3) for (const [r, i] of waitingN.splice(0)) r.end(`n${i}`);
        return;
      }
      res.writeHead(404).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    ends,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A loopback port nothing listens on (it did a moment ago). */
async function deadPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

type Answer = Record<string, unknown> & { stage?: string; error?: { tag: string; val?: unknown }; status?: number; text?: string; bytes?: number };

/** The payload a result-typed import failed with (the glue's err), or 'ok'. */
function outcome(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return (e as { payload?: unknown }).payload;
  }
  return 'ok';
}

describe('wasi-host: outgoing HTTP from handlers on an instance thread', function () {
  this.timeout(180_000);

  describe('pieces without a component', () => {
    it('an outgoing-request starts as GET with nothing else set, owns its headers, and refuses malformed parts', () => {
      const headers = new Fields();
      const request = new OutgoingRequest(headers);
      expect([request.method(), request.scheme(), request.authority(), request.pathWithQuery()]).to.deep.equal([{ tag: 'get' }, undefined, undefined, undefined]);
      expect(outcome(() => headers.set('x-a', []))).to.deep.equal({ tag: 'immutable' });
      expect(outcome(() => request.setMethod({ tag: 'other', val: 'NOT A TOKEN' }))).to.equal(undefined);
      expect(outcome(() => request.setMethod({ tag: 'other', val: 'PURGE' }))).to.equal('ok');
      expect(outcome(() => request.setScheme({ tag: 'other', val: '1x' }))).to.equal(undefined);
      expect(outcome(() => request.setAuthority('user@host'))).to.equal(undefined);
      expect(outcome(() => request.setAuthority('host:70000'))).to.equal(undefined);
      expect(outcome(() => request.setAuthority('[::1]:8080'))).to.equal('ok');
      expect(outcome(() => request.setPathWithQuery('no-slash'))).to.equal(undefined);
      expect(outcome(() => request.setPathWithQuery('/a b'))).to.equal(undefined);
      expect(outcome(() => request.setPathWithQuery('/a?b=c'))).to.equal('ok');
      expect(outcome(() => request.body())).to.equal('ok');
      expect(outcome(() => request.body())).to.equal(undefined);
    });

    it('maps node’s network errors to wasi:http error-codes', () => {
      const error = (code: string, message = code): Error => Object.assign(new Error(message), { code });
      expect(errorCodeOf(error('ENOTFOUND'))).to.deep.equal({ tag: 'DNS-error', val: { rcode: 'ENOTFOUND', infoCode: undefined } });
      expect(errorCodeOf(error('ECONNREFUSED'))).to.deep.equal({ tag: 'connection-refused' });
      // Happy eyeballs: one error per address tried.
      expect(errorCodeOf(new AggregateError([error('ECONNREFUSED'), error('ECONNREFUSED')]))).to.deep.equal({ tag: 'connection-refused' });
      expect(errorCodeOf(error('ECONNRESET'))).to.deep.equal({ tag: 'connection-terminated' });
      expect(errorCodeOf(error('HPE_INVALID_CONSTANT'))).to.deep.equal({ tag: 'HTTP-protocol-error' });
      expect(errorCodeOf(error('DEPTH_ZERO_SELF_SIGNED_CERT'))).to.deep.equal({ tag: 'TLS-certificate-error' });
      expect(errorCodeOf(error('ERR_SSL_WRONG_VERSION_NUMBER'))).to.deep.equal({ tag: 'TLS-protocol-error' });
      expect(errorCodeOf(error('EWHATEVER', 'it broke'))).to.deep.equal({ tag: 'internal-error', val: 'EWHATEVER: it broke' });
    });
  });

  let server: Upstream;
  let dead: number;
  let base: string;
  before(async () => {
    server = await upstream();
    dead = await deadPort();
    base = `http://127.0.0.1:${server.port}`;
  });
  after(async () => server?.close());

  describe('a wasi:http/types handler using wasi:http/outgoing-handler', () => {
    let thread: HandlerThread;
    before(async () => {
      thread = await new HandlerThread().start(await buildComponent(OUTGOING_TYPES_HANDLER), { outgoing: { allowedHosts: [`127.0.0.1:${server.port}`, `127.0.0.1:${dead}`] } });
    });
    after(async () => thread?.stop());

    async function call(query: Record<string, string>): Promise<Answer> {
      const r = await thread.handle({ pathWithQuery: `/call?${new URLSearchParams(query).toString()}` });
      expect(r.handled.threw, 'handle threw').to.equal(undefined);
      expect(r.head?.status).to.equal(200);
      return JSON.parse(r.body) as Answer;
    }

    it('GET to an allowed host: status, headers and body reach the guest; the future answers once', async () => {
      const before = server.seen.length;
      const a = await call({ url: `${base}/hello` });
      expect(a).to.deep.include({ status: 200, text: 'hello from loopback', bytes: 19, secondGet: 'err', trailers: null });
      expect(a.headers).to.deep.include(['x-served-by', 'loopback']);
      // Connection-level headers stay the transport's.
      expect((a.headers as [string, string][]).map(([k]) => k)).to.not.include.members(['connection', 'keep-alive', 'transfer-encoding']);
      const request = server.seen[before];
      expect(request).to.deep.include({ method: 'GET', url: '/hello', body: '' });
      expect(request.headers).to.deep.include({ 'x-from': 'types', host: `127.0.0.1:${server.port}` });
    });

    it('POST: a body the guest writes after handle is streamed (chunked) to the server', async () => {
      const before = server.seen.length;
      const body = 'abcdefghij'.repeat(20_000);
      const a = await call({ url: `${base}/echo`, method: 'POST', body });
      expect(a.status).to.equal(200);
      const request = server.seen[before];
      expect(request).to.deep.include({ method: 'POST', body });
      expect(request.headers).to.deep.include({ 'transfer-encoding': 'chunked', 'content-type': 'text/plain' });
    });

    it('PUT: a body finished before handle is sent with its length', async () => {
      const before = server.seen.length;
      const a = await call({ url: `${base}/echo`, method: 'PUT', body: 'all at once', bodyFirst: '1' });
      expect(JSON.parse(a.text!)).to.deep.equal({ method: 'PUT', body: 'all at once', xFrom: 'types' });
      expect(server.seen[before].headers).to.deep.include({ 'content-length': '11' });
      expect(server.seen[before].headers).to.not.have.property('transfer-encoding');
    });

    it('response trailers reach the guest through future-trailers', async () => {
      const a = await call({ url: `${base}/trailers` });
      expect(a).to.deep.include({ text: 'with trailers', trailers: [['x-sum', '42']] });
    });

    it('an 8 MiB response to a slow reader streams through with bounded buffering', async () => {
      const size = 8 * 1024 * 1024;
      const a = await call({ url: `${base}/big?${size}`, readDelayMs: '1' });
      expect(a).to.deep.include({ status: 200, bytes: size, allX: true });
      const { maxUnreadBytes, inFlight } = thread.outgoing!.stats();
      // Paused at the window; a chunk already read from the socket may go over it.
      expect(maxUnreadBytes).to.be.at.most(RESPONSE_WINDOW + 64 * 1024);
      // The server is faster than the guest: the window was reached, so the bound is what held it back.
      expect(maxUnreadBytes).to.be.at.least(RESPONSE_WINDOW);
      expect(inFlight).to.equal(0);
    });

    it('a host not allowed: handle answers HTTP-request-denied and nothing is sent', async () => {
      const before = server.seen.length;
      expect(await call({ url: 'http://example.com/' })).to.deep.equal({ stage: 'handle', error: { tag: 'HTTP-request-denied' } });
      // An allowed host on another scheme's default port is another host.
      expect(await call({ url: `https://127.0.0.1/hello` })).to.deep.equal({ stage: 'handle', error: { tag: 'HTTP-request-denied' } });
      expect(server.seen.length).to.equal(before);
      expect(thread.outgoing!.stats().inFlight).to.equal(0);
    });

    it('connection refused comes through the future', async () => {
      expect(await call({ url: `http://127.0.0.1:${dead}/` })).to.deep.equal({ stage: 'response', error: { tag: 'connection-refused' } });
    });

    it('without a scheme the request goes out as https', async () => {
      // The loopback server speaks plain HTTP: a TLS handshake with it fails.
      const a = await call({ url: `${base}/hello`, scheme: 'none' });
      expect(a.stage).to.equal('response');
      expect(a.error?.tag).to.equal('TLS-protocol-error');
    });

    it('a first-byte timeout ends the wait with connection-read-timeout and drops the request', async () => {
      const started = performance.now();
      const a = await call({ url: `${base}/hang`, firstByteMs: '200' });
      expect(a).to.deep.equal({ stage: 'response', error: { tag: 'connection-read-timeout' } });
      expect(performance.now() - started).to.be.within(200, 5_000);
      await eventually(() => expect(server.ends.filter((e) => e.url === '/hang')).to.deep.equal([{ url: '/hang', cutShort: true }]), { what: 'the server to see /hang closed' });
    });

    it('a between-bytes timeout breaks the response body with connection-read-timeout', async () => {
      const a = await call({ url: `${base}/stall`, betweenMs: '200' });
      expect(a).to.deep.include({ status: 200, bytes: 3, bodyError: { tag: 'connection-read-timeout' } });
    });

    it('a body the guest drops unread stops the request: the server sees it cut short', async () => {
      const before = server.ends.length;
      const a = await call({ url: `${base}/big?${64 * 1024 * 1024}`, dropAfter: '1' });
      expect(a).to.deep.include({ status: 200, dropped: true });
      const url = `/big?${64 * 1024 * 1024}`;
      await eventually(() => expect(server.ends.slice(before).filter((e) => e.url === url)).to.deep.equal([{ url, cutShort: true }]), { what: 'the server to see /big closed' });
      expect(thread.outgoing!.stats().inFlight).to.equal(0);
    });

    it('a request still in flight when handle returns is stopped', async () => {
      const [seenBefore, before] = [server.seen.length, server.ends.length];
      // The guest sleeps 300 ms after handle: time for the request to reach the server.
      expect(await call({ url: `${base}/hang`, leave: '300' })).to.deep.equal({ stage: 'left' });
      expect(server.seen.slice(seenBefore).map((r) => r.url)).to.deep.equal(['/hang']);
      await eventually(() => expect(server.ends.slice(before).filter((e) => e.url === '/hang')).to.deep.equal([{ url: '/hang', cutShort: true }]), { what: 'the server to see /hang closed' });
      expect(thread.outgoing!.stats().inFlight).to.equal(0);
    });
  });

  describe('a fetch-event handler using fetch(), one instance per request', () => {
    let thread: HandlerThread;
    before(async () => {
      thread = await new HandlerThread().start(await buildComponent(OUTGOING_FETCH_HANDLER), { outgoing: { allowedHosts: [`127.0.0.1:${server.port}`] } });
    });
    after(async () => thread?.stop());

    async function fetched(path: string): Promise<{ status: number | undefined; answer: Answer }> {
      const r = await thread.handle({ pathWithQuery: path });
      expect(r.handled.threw, 'handle threw').to.equal(undefined);
      return { status: r.head?.status, answer: JSON.parse(r.body) as Answer };
    }

    it('GET: status, a header and the body', async () => {
      expect(await fetched(`/fetch?url=${encodeURIComponent(`${base}/hello`)}`)).to.deep.equal({ status: 200, answer: { status: 200, from: 'loopback', text: 'hello from loopback' } });
    });

    it('POST with a body', async () => {
      const { answer } = await fetched(`/fetch?url=${encodeURIComponent(`${base}/echo`)}&method=POST&body=hello%20upstream`);
      expect(JSON.parse(answer.text!)).to.deep.equal({ method: 'POST', body: 'hello upstream', xFrom: 'fetch' });
    });

    it('several requests in flight at once (the server answers only when all three wait)', async () => {
      const { answer } = await fetched(`/all?url=${encodeURIComponent(`${base}/n`)}&n=3`);
      expect(answer).to.deep.equal({ texts: ['n0', 'n1', 'n2'] });
    });

    it('a host not allowed: fetch rejects, nothing is sent', async () => {
      const before = server.seen.length;
      const { status, answer } = await fetched(`/fetch?url=${encodeURIComponent('http://example.com/')}`);
      expect(status).to.equal(502);
      expect(answer.error).to.match(/error/i);
      expect(server.seen.length).to.equal(before);
    });
  });
});
