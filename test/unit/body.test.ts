// Request bodies (lib/worker/http/body.ts) as a real node:http server receives
// them: plain and compressed, capped, and the client's errors as 4xx.

import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { ApiError } from '../../lib/errors.js';
import { bodyLength, mediaType, readBody, type BodyLimits } from '../../lib/worker/http/body.js';
import type { RequestState } from '../../lib/worker/http/request-state.js';
import { brotliBomb } from '../support/brotli-bomb.js';
import { letTimePass } from '../support/eventually.js';

const MAX = 1024;
/** How long the server gives a body; a test of the deadline shortens it. */
let deadlineMs = 10_000;
/** http.min_body_bytes_per_second; 0 (none) but in the test of it. */
let minRate = 0;
const SLOW_CODE = 'RT_ERR_REQUEST_TIMEOUT';

describe('request bodies', () => {
  let server: Server;
  let port: number;
  /** What the server made of the last request. */
  let seen: Promise<{ bytes?: Buffer; error?: ApiError; req: IncomingMessage }>;

  before(async () => {
    server = createServer((req, res) => {
      const limits: BodyLimits = { maxBytes: MAX, minBytesPerSecond: minRate, tooSlow: (state) => new ApiError(SLOW_CODE, `too slow from ${state.client}`) };
      const state: RequestState = { arrived: performance.now(), deadline: performance.now() + deadlineMs, requestId: 'r', answerHeaders: [], client: 'c' };
      seen = readBody(req, limits, state).then(
        (bytes) => ({ bytes, req }),
        (error: ApiError) => ({ error, req }),
      );
      void seen.then(() => res.end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(() => server.close());

  /** Sends `body` (in chunks, without a length, when `chunked`) and waits for the server's reading of it. */
  async function send(body: Buffer, headers: Record<string, string> = {}, chunked = false) {
    await new Promise<void>((resolve) => {
      const req = request({ port, method: 'POST', headers: chunked ? headers : { ...headers, 'content-length': String(body.length) } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', () => resolve());
      if (chunked) for (let i = 0; i < body.length; i += 100) req.write(body.subarray(i, i + 100));
      else req.write(body);
      req.end();
    });
    return seen;
  }

  const text = Buffer.from(JSON.stringify({ greeting: 'hello'.repeat(20) }));

  /** A body declared 1,000 bytes long of which 10 come: the server's reading of it, and how long that took from the request's arrival. */
  async function stalledBody(): Promise<{ error?: ApiError; waited: number }> {
    const arrived = once(server, 'request');
    const req = request({ port, method: 'POST', headers: { 'content-length': '1000' } });
    req.on('error', () => {});
    req.write(Buffer.alloc(10));
    await arrived;
    const started = performance.now();
    const { error } = await seen;
    req.destroy();
    return { ...(error ? { error } : {}), waited: performance.now() - started };
  }

  it('reports a client that hangs up mid-body as a closed request (499), not as a bad request or a server error', async () => {
    const arrived = once(server, 'request');
    const req = request({ port, method: 'POST', headers: { 'content-length': '1000' } });
    req.on('error', () => {});
    req.write(Buffer.alloc(10));
    await arrived;
    const read = seen;
    req.destroy();
    const { error } = await read;
    expect(error).to.be.instanceOf(ApiError);
    expect(error!.status).to.equal(499);
    expect(error!.body()).to.deep.equal({ error: 'client closed request', code: 'RT_ERR_CLIENT_CLOSED_REQUEST', details: 'the client closed the connection before its body arrived' });
  });

  it("answers 408 for a body that has not arrived by the request's deadline, and closes the connection", async () => {
    deadlineMs = 300;
    try {
      const { error, waited } = await stalledBody();
      expect(error?.status).to.equal(408);
      expect(error?.headers).to.deep.equal({ Connection: 'close' });
      expect(waited).to.be.below(5_000);
    } finally {
      deadlineMs = 10_000;
    }
  });

  it('answers a body slower than http.min_body_bytes_per_second with its 408 (after the grace), and takes one that keeps the pace', async function () {
    this.timeout(20_000);
    minRate = 100;
    try {
      // Behind the rate once the first 2 s have passed.
      const { error, waited } = await stalledBody();
      expect(error?.code).to.equal(SLOW_CODE);
      expect(error?.details).to.equal('too slow from c');
      expect(waited).to.be.within(1_800, 6_000);

      // 50 bytes every 0.25 s (200 a second) for 2.5 s, past the grace: slow, but above the rate.
      const paced = Buffer.alloc(500, 'x');
      const kept = once(server, 'request');
      const ok = request({ port, method: 'POST', headers: { 'content-length': String(paced.length) } }, (res) => res.resume());
      ok.on('error', () => {});
      await new Promise<void>((resolve) => ok.once('socket', () => resolve()));
      const reading = kept.then(() => seen);
      for (let i = 0; i < paced.length; i += 50) {
        ok.write(paced.subarray(i, i + 50));
        await letTimePass(250, 'the next part of a paced body');
      }
      ok.end();
      const outcome = await reading;
      expect(outcome.error, outcome.error?.details).to.equal(undefined);
      expect(outcome.bytes?.length).to.equal(paced.length);
    } finally {
      minRate = 0;
    }
  });

  it('reads a plain body, and one compressed with gzip, deflate or br', async () => {
    expect((await send(text)).bytes).to.deep.equal(text);
    expect((await send(gzipSync(text), { 'content-encoding': 'gzip' })).bytes).to.deep.equal(text);
    expect((await send(deflateSync(text), { 'content-encoding': 'deflate' })).bytes).to.deep.equal(text);
    expect((await send(brotliCompressSync(text), { 'content-encoding': 'br' })).bytes).to.deep.equal(text);
    expect((await send(text, {}, true)).bytes).to.deep.equal(text);
  });

  it('413 for a body over the cap: declared, streamed without a length, or decompressed (a compression bomb)', async () => {
    const big = Buffer.alloc(MAX + 1, 'x');
    for (const outcome of [await send(big), await send(big, {}, true), await send(gzipSync(Buffer.alloc(10 * MAX * MAX)), { 'content-encoding': 'gzip' })]) {
      expect(outcome.error?.status).to.equal(413);
      expect(outcome.error?.details).to.include(`${MAX} bytes`);
      // The rest of the body is not read: the connection cannot carry another request.
      expect(outcome.error?.headers).to.deep.equal({ Connection: 'close' });
    }
  });

  it('stops decompressing a bomb once it has refused it: no CPU is spent on it after the 413 (docs/api.md §5.5)', async function () {
    this.timeout(60_000);
    const bomb = await brotliBomb(1024 ** 3);
    const outcome = await send(bomb, { 'content-encoding': 'br' });
    expect(outcome.error?.status).to.equal(413);
    // Not counted: the piece the decoder was inflating when the body was refused.
    await letTimePass(100, 'the decoder finishes the piece it was inflating when the body was refused');
    const cpu = process.cpuUsage();
    await letTimePass(1_000, 'a second in which a decoder still at work would spend CPU');
    const { user, system } = process.cpuUsage(cpu);
    expect((user + system) / 1000, 'ms of CPU in the second after the 413').to.be.below(150);
  });

  it('400 for a body that does not decode as its Content-Encoding says, 415 for an encoding it does not know', async () => {
    const corrupt = await send(Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' });
    expect(corrupt.error?.status).to.equal(400);
    expect(corrupt.error?.details).to.match(/does not decode as its Content-Encoding says/);
    const unknown = await send(text, { 'content-encoding': 'zstd' });
    expect(unknown.error?.status).to.equal(415);
    expect(unknown.error?.details).to.include('"zstd"');
    expect(unknown.error?.headers).to.deep.equal({ 'Accept-Encoding': 'gzip, deflate, br' });
  });

  it('tells the media type without parameters, and whether a body is there at all', async () => {
    const { req } = await send(text, { 'content-type': 'Application/JSON; charset=utf-8' });
    expect(mediaType(req)).to.equal('application/json');
    expect(bodyLength(req)).to.deep.equal({ present: true, length: text.length });
  });
});

