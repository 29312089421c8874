// Components that export wasi:http/incoming-handler@0.2.10, built by
// componentize-js with the vendored WASI WIT (examples/wit/wasi-0.2.10, which
// the bundled HTTP examples build with too), in the two styles people write
// them: against wasi:http/types directly (`incomingHandler.handle`) and as a
// fetch-event handler. A fetch-event build answers one request per instance
// (StarlingMonkey never resets its FetchEvent).

import type { JsSource } from '../../examples/builder.js';
import { WASI_WIT } from '../../examples/index.js';

/** The repository's vendored WASI WIT: the folder the bundled HTTP examples build with. */
export const WASI_WIT_DEPS = WASI_WIT;

const WORLD = `package local:handler;
world handler {
  import wasi:clocks/monotonic-clock@0.2.10;
  export wasi:http/incoming-handler@0.2.10;
}
`;

/**
 * wasi:http/types style, by path:
 * - `/echo…`: 200, a JSON body {method, path, scheme, authority, headers}.
 * - `/body`: reads the whole request body (blocking reads) and answers
 *   `got <n> bytes: <text>`, with the request's trailers as `x-trailers`.
 * - `/body-slow-to-fail`: reads the request body; when a read fails (rt
 *   refused the body), sleeps 500 ms, then throws.
 * - `/stream`: sets the response, then writes `part1;` `part2;` `part3;`
 *   30 ms apart (a monotonic-clock sleep), flushing each.
 * - `/timer`: sleeps 50 ms, then answers the elapsed milliseconds.
 * - `/none`: returns without setting a response.
 * - `/bad-length`: a response with `content-length: abc`.
 * - `/bad-status`: a response with status 103.
 * - `/trailers`: body `with trailers`, finished with `x-checksum: 42`.
 * - `/big?n`: n bytes of 'x' written within check-write, polling for credit.
 * - `/throw`: throws (a trap).
 * - `/set-then-throw`: sets a 200 response and opens its body, then throws before writing any of it.
 * - `/refuse`: sets the error code internal-error("nope") instead of a response.
 * - `/sleep?ms`: sleeps ms milliseconds, then sets its response.
 * - `/forge`: 200 with headers that are rt's own (`x-request-id`,
 *   `x-rt-worker`, `x-content-type-options`) and a CSP of its own.
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
import { Fields, IncomingBody, OutgoingResponse, OutgoingBody, ResponseOutparam } from 'wasi:http/types@0.2.10';
import { now, subscribeDuration } from 'wasi:clocks/monotonic-clock@0.2.10';

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
    if (path === '/body-slow-to-fail') {
      // A guest that takes its time to give up on a body rt refused: its answer comes well after the refusal.
      const stream = req.consume().stream();
      try { for (;;) stream.blockingRead(65536n); } catch (e) {
        if (e.tag === 'closed' || e.payload?.tag === 'closed') return respond(out, 200, [], ['read it all']);
        subscribeDuration(500000000n).block();
        throw e;
      }
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
    if (path === '/forge') return respond(out, 200, [['x-request-id', 'forged'], ['X-Rt-Worker', '99'], ['x-content-type-options', 'sniff-away'], ['content-security-policy', "default-src 'self'"]], ['forged']);
    if (path === '/throw') throw new Error('boom');
    if (path === '/set-then-throw') {
      const res = new OutgoingResponse(new Fields());
      const body = res.body();
      ResponseOutparam.set(out, { tag: 'ok', val: res });
      body.write();
      throw new Error('boom after the headers');
    }
    if (path === '/refuse') return ResponseOutparam.set(out, { tag: 'err', val: { tag: 'internal-error', val: 'nope' } });
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

const OUTGOING_WORLD = `package local:outgoing;
world handler {
  import wasi:clocks/monotonic-clock@0.2.10;
  import wasi:http/outgoing-handler@0.2.10;
  export wasi:http/incoming-handler@0.2.10;
}
`;

/**
 * wasi:http/outgoing-handler + types style. `/call?url=…` sends one request
 * and answers 200 with JSON saying what came back:
 * `{stage, error}` when it failed (`handle` refused it, the future held an
 * error-code), else `{status, headers, secondGet, bytes, text, allX,
 * bodyError, trailers}`. Query parameters:
 * - `method` (default GET), `body` (text sent as the request body, written
 *   after `handle` in 4 KiB pieces; without one the body is finished empty
 *   before `handle`), `bodyFirst=1` (the body written and finished before
 *   `handle`), `scheme=none` (no scheme set);
 * - `connectMs`, `firstByteMs`, `betweenMs`: request-options timeouts;
 * - `readSize` (default 65536), `readDelayMs`: a slow reader sleeps this long
 *   before each read;
 * - `dropAfter=n`: after n reads the guest drops the stream and the body
 *   without finishing (and answers at once);
 * - `leave=ms`: the guest sleeps that long after `handle`, then answers
 *   `{stage: 'left'}`, leaving the request in flight.
 */
export const OUTGOING_TYPES_HANDLER: JsSource = {
  kind: 'js',
  wit: OUTGOING_WORLD,
  world: 'handler',
  witDeps: WASI_WIT_DEPS,
  disableFeatures: ['random', 'stdio', 'fetch-event'],
  js: `
import { Fields, IncomingBody, OutgoingBody, OutgoingRequest, OutgoingResponse, RequestOptions, ResponseOutparam, httpErrorCode } from 'wasi:http/types@0.2.10';
import { handle as send } from 'wasi:http/outgoing-handler@0.2.10';
import { subscribeDuration } from 'wasi:clocks/monotonic-clock@0.2.10';

const enc = new TextEncoder();
const dec = new TextDecoder();
const METHODS = ['get', 'head', 'post', 'put', 'delete', 'connect', 'options', 'trace', 'patch'];
const codeOf = (e) => (e && e.payload !== undefined ? e.payload : e);
const sleep = (ms) => subscribeDuration(BigInt(ms) * 1000000n).block();

function call(q) {
  const target = new URL(q.get('url'));
  const headers = new Fields();
  headers.append('x-from', enc.encode('types'));
  const text = q.get('body');
  if (text !== null) headers.append('content-type', enc.encode('text/plain'));
  const req = new OutgoingRequest(headers);
  const method = (q.get('method') || 'GET').toLowerCase();
  req.setMethod(METHODS.includes(method) ? { tag: method } : { tag: 'other', val: q.get('method') });
  if (q.get('scheme') !== 'none') req.setScheme(target.protocol === 'https:' ? { tag: 'HTTPS' } : { tag: 'HTTP' });
  req.setAuthority(target.host);
  req.setPathWithQuery(target.pathname + target.search);
  const outBody = req.body();
  const writeBody = () => {
    const out = outBody.write();
    if (text !== null) {
      const bytes = enc.encode(text);
      for (let i = 0; i < bytes.length; i += 4096) out.blockingWriteAndFlush(bytes.subarray(i, i + 4096));
    }
    out[Symbol.dispose]();
    OutgoingBody.finish(outBody, undefined);
  };
  const bodyFirst = text === null || q.has('bodyFirst');
  if (bodyFirst) writeBody();
  let options;
  for (const [key, setter] of [['connectMs', 'setConnectTimeout'], ['firstByteMs', 'setFirstByteTimeout'], ['betweenMs', 'setBetweenBytesTimeout']]) {
    if (!q.has(key)) continue;
    options = options || new RequestOptions();
    options[setter](BigInt(q.get(key)) * 1000000n);
  }
  let future;
  try {
    future = send(req, options);
  } catch (e) {
    return { stage: 'handle', error: codeOf(e) };
  }
  if (q.has('leave')) {
    sleep(Number(q.get('leave')));
    return { stage: 'left' };
  }
  // Otherwise the body goes after handle: streamed to a request already on its way.
  if (!bodyFirst) writeBody();
  future.subscribe().block();
  const got = future.get();
  if (got.tag !== 'ok') return { stage: 'get', error: 'the first get was err' };
  if (got.val.tag === 'err') return { stage: 'response', error: got.val.val };
  const again = future.get();
  const response = got.val.val;
  const result = { status: response.status(), headers: response.headers().entries().map(([k, v]) => [k, dec.decode(v)]), secondGet: again && again.tag };
  const body = response.consume();
  const stream = body.stream();
  const readSize = BigInt(q.get('readSize') || 65536);
  const readDelay = Number(q.get('readDelayMs') || 0);
  const dropAfter = q.has('dropAfter') ? Number(q.get('dropAfter')) : Infinity;
  let n = 0;
  let reads = 0;
  let allX = true;
  let kept = '';
  for (;;) {
    if (reads >= dropAfter) {
      stream[Symbol.dispose]();
      body[Symbol.dispose]();
      result.dropped = true;
      result.bytes = n;
      return result;
    }
    if (readDelay > 0) sleep(readDelay);
    let bytes;
    try {
      bytes = stream.blockingRead(readSize);
    } catch (e) {
      const p = codeOf(e);
      if (p.tag !== 'closed') result.bodyError = p.tag === 'last-operation-failed' ? (httpErrorCode(p.val) || p.val.toDebugString()) : p;
      break;
    }
    reads += 1;
    n += bytes.length;
    // Native decode and regex: a loop over the bytes in the guest's interpreter takes ~3 µs a byte.
    const text = dec.decode(bytes);
    if (kept.length < 1000) kept += text;
    if (allX && !/^x*$/.test(text)) allX = false;
  }
  stream[Symbol.dispose]();
  Object.assign(result, { bytes: n, reads, text: kept.slice(0, 1000), allX });
  if (result.bodyError) return result;
  const trailers = IncomingBody.finish(body);
  trailers.subscribe().block();
  const t = trailers.get();
  result.trailers = t && t.tag === 'ok' && t.val.tag === 'ok' && t.val.val ? t.val.val.entries().map(([k, v]) => [k, dec.decode(v)]) : t && t.tag === 'ok' && t.val.tag === 'err' ? { error: t.val.val } : null;
  return result;
}

export const incomingHandler = {
  handle(req, out) {
    const path = req.pathWithQuery() || '';
    const q = new URL('http://x' + path).searchParams;
    let answer;
    try {
      answer = call(q);
    } catch (e) {
      answer = { stage: 'threw', error: String(e && e.message || e), payload: codeOf(e) };
    }
    const res = new OutgoingResponse(Fields.fromList([['content-type', enc.encode('application/json')]]));
    const body = res.body();
    ResponseOutparam.set(out, { tag: 'ok', val: res });
    const stream = body.write();
    const bytes = enc.encode(JSON.stringify(answer, (k, v) => (typeof v === 'bigint' ? String(v) : v)));
    for (let i = 0; i < bytes.length; i += 4096) stream.blockingWriteAndFlush(bytes.subarray(i, i + 4096));
    stream[Symbol.dispose]();
    OutgoingBody.finish(body, undefined);
  },
};
`,
};

/**
 * Fetch-event style with `fetch()` (StarlingMonkey sends it through
 * wasi:http/outgoing-handler). `/fetch?url=…&method=…&body=…` answers 200
 * `{status, from, text}` (`from`: the reply's `x-served-by` header), or 502
 * `{error}` when fetch rejected; `/all?url=…&n=3` fetches `url?i=<i>` n times
 * at once and answers the bodies in order.
 */
export const OUTGOING_FETCH_HANDLER: JsSource = {
  kind: 'js',
  wit: OUTGOING_WORLD,
  world: 'handler',
  witDeps: WASI_WIT_DEPS,
  disableFeatures: ['random', 'stdio'],
  js: `
addEventListener('fetch', (event) => event.respondWith((async () => {
  const url = new URL(event.request.url);
  const q = url.searchParams;
  try {
    if (url.pathname === '/fetch') {
      const init = { method: q.get('method') || 'GET', headers: { 'x-from': 'fetch' } };
      if (q.has('body')) init.body = q.get('body');
      const r = await fetch(q.get('url'), init);
      const text = await r.text();
      return new Response(JSON.stringify({ status: r.status, from: r.headers.get('x-served-by'), text }));
    }
    if (url.pathname === '/all') {
      const n = Number(q.get('n'));
      const texts = await Promise.all(Array.from({ length: n }, (_, i) => fetch(q.get('url') + '?i=' + i).then((r) => r.text())));
      return new Response(JSON.stringify({ texts }));
    }
  } catch (e) {
    return new Response(JSON.stringify({ error: String(e) }), { status: 502 });
  }
  return new Response('not found', { status: 404 });
})()));
`,
};
