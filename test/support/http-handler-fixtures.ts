// Components that export wasi:http/incoming-handler@0.2.3, built by
// componentize-js with the vendored WASI WIT (examples/wit/wasi-0.2.3, which
// the bundled HTTP examples build with too), in the two styles people write
// them: against wasi:http/types directly (`incomingHandler.handle`) and as a
// fetch-event handler. A fetch-event build answers one request per instance
// (StarlingMonkey never resets its FetchEvent: notes of issue 24, §1).

import type { JsSource } from '../../examples/builder.js';
import { WASI_WIT } from '../../examples/index.js';

/** The repository's vendored WASI WIT: the folder the bundled HTTP examples build with. */
export const WASI_WIT_DEPS = WASI_WIT;

const WORLD = `package local:handler;
world handler {
  import wasi:clocks/monotonic-clock@0.2.3;
  export wasi:http/incoming-handler@0.2.3;
}
`;

/**
 * wasi:http/types style, by path:
 * - `/echo…`: 200, a JSON body {method, path, scheme, authority, headers}.
 * - `/body`: reads the whole request body (blocking reads) and answers
 *   `got <n> bytes: <text>`, with the request's trailers as `x-trailers`.
 * - `/stream`: sets the response, then writes `part1;` `part2;` `part3;`
 *   30 ms apart (a monotonic-clock sleep), flushing each.
 * - `/timer`: sleeps 50 ms, then answers the elapsed milliseconds.
 * - `/none`: returns without setting a response.
 * - `/bad-length`: a response with `content-length: abc`.
 * - `/bad-status`: a response with status 103.
 * - `/trailers`: body `with trailers`, finished with `x-checksum: 42`.
 * - `/big?n`: n bytes of 'x' written within check-write, polling for credit.
 * - `/throw`: throws (a trap).
 * - `/sleep?ms`: sleeps ms milliseconds, then sets its response.
 * - `/drip?ms`: sets the response, then writes `tick;` every ms
 *   milliseconds until a write fails (its client left), then returns.
 */
export const TYPES_HANDLER: JsSource = {
  kind: 'js',
  wit: WORLD,
  world: 'handler',
  witDeps: WASI_WIT_DEPS,
  disableFeatures: ['random', 'stdio', 'fetch-event'],
  js: `
import { Fields, IncomingBody, OutgoingResponse, OutgoingBody, ResponseOutparam } from 'wasi:http/types@0.2.3';
import { now, subscribeDuration } from 'wasi:clocks/monotonic-clock@0.2.3';

const enc = new TextEncoder();
const dec = new TextDecoder();

function respond(out, status, headers, chunks, trailers) {
  const res = new OutgoingResponse(Fields.fromList(headers.map(([k, v]) => [k, enc.encode(v)])));
  res.setStatusCode(status);
  const body = res.body();
  ResponseOutparam.set(out, { tag: 'ok', val: res });
  const stream = body.write();
  for (const chunk of chunks) {
    if (typeof chunk === 'number') { subscribeDuration(BigInt(chunk) * 1000000n).block(); continue; }
    stream.blockingWriteAndFlush(enc.encode(chunk));
  }
  stream[Symbol.dispose]();
  OutgoingBody.finish(body, trailers ? Fields.fromList(trailers.map(([k, v]) => [k, enc.encode(v)])) : undefined);
}

function methodName(m) { return m.tag === 'other' ? m.val : m.tag.toUpperCase(); }

export const incomingHandler = {
  handle(req, out) {
    const path = req.pathWithQuery() ?? '';
    if (path.startsWith('/echo')) {
      const headers = req.headers().entries().map(([k, v]) => [k, dec.decode(v)]);
      const scheme = req.scheme();
      const info = { method: methodName(req.method()), path, scheme: scheme && (scheme.tag === 'other' ? scheme.val : scheme.tag), authority: req.authority(), headers };
      return respond(out, 200, [['content-type', 'application/json']], [JSON.stringify(info)]);
    }
    if (path === '/body') {
      const incoming = req.consume();
      const stream = incoming.stream();
      const parts = [];
      let n = 0;
      for (;;) {
        let bytes;
        try { bytes = stream.blockingRead(65536n); } catch (e) { if (e.tag === 'closed' || e.payload?.tag === 'closed') break; throw e; }
        parts.push(dec.decode(bytes, { stream: true }));
        n += bytes.length;
      }
      stream[Symbol.dispose]();
      const future = IncomingBody.finish(incoming);
      future.subscribe().block();
      const t = future.get();
      const trailers = t && t.tag === 'ok' && t.val.tag === 'ok' && t.val.val ? t.val.val.entries().map(([k, v]) => k + '=' + dec.decode(v)).join(',') : '';
      return respond(out, 200, [['x-trailers', trailers]], ['got ' + n + ' bytes: ' + parts.join('')]);
    }
    if (path === '/stream') return respond(out, 200, [], ['part1;', 30, 'part2;', 30, 'part3;']);
    if (path === '/timer') {
      const start = now();
      subscribeDuration(50000000n).block();
      return respond(out, 200, [], ['slept ' + Number((now() - start) / 1000000n) + ' ms']);
    }
    if (path === '/none') return;
    if (path === '/bad-length') return respond(out, 200, [['content-length', 'abc']], ['x']);
    if (path === '/bad-status') return respond(out, 103, [], []);
    if (path === '/trailers') return respond(out, 200, [], ['with trailers'], [['x-checksum', '42']]);
    if (path === '/throw') throw new Error('boom');
    if (path.startsWith('/sleep?')) {
      subscribeDuration(BigInt(path.slice(7)) * 1000000n).block();
      return respond(out, 200, [], ['slept']);
    }
    if (path.startsWith('/drip?')) {
      const ms = BigInt(path.slice(6));
      const res = new OutgoingResponse(new Fields());
      const body = res.body();
      ResponseOutparam.set(out, { tag: 'ok', val: res });
      const stream = body.write();
      for (;;) {
        try { stream.blockingWriteAndFlush(enc.encode('tick;')); } catch (e) { return; }
        subscribeDuration(ms * 1000000n).block();
      }
    }
    if (path.startsWith('/big?')) {
      let left = Number(path.slice(5));
      const res = new OutgoingResponse(new Fields());
      const body = res.body();
      ResponseOutparam.set(out, { tag: 'ok', val: res });
      const stream = body.write();
      const pollable = stream.subscribe();
      // Filled once: a fill is a loop in StarlingMonkey's interpreter, slower than anything rt does with the bytes.
      const block = new Uint8Array(65536).fill(120);
      while (left > 0) {
        pollable.block();
        const n = Math.min(Number(stream.checkWrite()), left, block.length);
        if (n === 0) continue;
        stream.write(n === block.length ? block : block.subarray(0, n));
        left -= n;
      }
      stream.blockingFlush();
      stream[Symbol.dispose]();
      return OutgoingBody.finish(body, undefined);
    }
    respond(out, 404, [], ['no such path ' + path]);
  },
};
`,
};

/**
 * Fetch-event style (StarlingMonkey's `addEventListener('fetch', …)`):
 * - `/echo`: awaits the request body, then a 20 ms timer, then answers 201
 *   `echo:<method> <url> <x-q header> <body>`.
 * - `/stream`: a ReadableStream of `chunk1;` … `chunk3;`, 30 ms apart.
 * - `/throw`: the handler throws.
 */
export const FETCH_HANDLER: JsSource = {
  kind: 'js',
  wit: WORLD,
  world: 'handler',
  witDeps: WASI_WIT_DEPS,
  disableFeatures: ['random', 'stdio'],
  js: `
addEventListener('fetch', (event) => event.respondWith((async () => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.pathname === '/echo') {
    const body = await request.text();
    await new Promise((r) => setTimeout(r, 20));
    return new Response('echo:' + request.method + ' ' + request.url + ' ' + request.headers.get('x-q') + ' ' + body, { status: 201, headers: { 'x-a': '1' } });
  }
  if (url.pathname === '/stream') {
    let i = 0;
    const enc = new TextEncoder();
    const stream = new ReadableStream({
      async pull(controller) {
        if (i > 0) await new Promise((r) => setTimeout(r, 30));
        if (i++ < 3) controller.enqueue(enc.encode('chunk' + i + ';'));
        else controller.close();
      },
    });
    return new Response(stream);
  }
  if (url.pathname === '/throw') throw new Error('boom');
  return new Response('not found', { status: 404 });
})()));
`,
};
