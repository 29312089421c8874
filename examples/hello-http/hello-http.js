// The hello-http example: an HTTP handler written against wasi:http/types,
// the way Spin, wasmCloud and `wasmtime serve` components are. rt calls
// `incomingHandler.handle` once per request, on a fresh instance, with the
// request and an "outparam" to set the response on; the body is a stream in
// both directions, read and written as it goes.
//
//   GET  /             a greeting
//   GET  /echo...      the request as JSON: method, path (with the query), headers
//   POST /upper        the request body upper-cased, streamed back as it arrives
//   GET  /stream?n=5   n lines, one every 200 ms
//
// Built by componentize-js with its `http` and `clocks` features (examples/index.ts).
import { Fields, IncomingBody, OutgoingBody, OutgoingResponse, ResponseOutparam } from 'wasi:http/types@0.2.10';
import { subscribeDuration } from 'wasi:clocks/monotonic-clock@0.2.10';

// The route the sidecar mounts this handler at (hello-http.toml). rt passes a
// mount's requests with their whole path: /hello/echo arrives as /hello/echo,
// the same request through /api/services/example/hello-http/http/echo as
// /echo. Dropping the mount from the path routes both alike.
const MOUNT = '/hello';

const TEXT = 'text/plain; charset=utf-8';
const enc = new TextEncoder();

// At most 4096 bytes per blocking write: the limit wasi:io/streams sets.
const WRITE_MAX = 4096;

function headers(list) {
  return Fields.fromList(list.map(([name, value]) => [name, enc.encode(value)]));
}

// Sets the response (status and headers) and returns its body's output
// stream: rt sends the head at once, and each write as it is flushed.
// `done` finishes the body.
function startResponse(out, status, contentType, extra = []) {
  const response = new OutgoingResponse(headers([['content-type', contentType], ...extra]));
  response.setStatusCode(status);
  const body = response.body();
  ResponseOutparam.set(out, { tag: 'ok', val: response });
  const stream = body.write();
  return {
    write(text) {
      const bytes = enc.encode(text);
      for (let i = 0; i < bytes.length; i += WRITE_MAX) stream.blockingWriteAndFlush(bytes.subarray(i, i + WRITE_MAX));
    },
    done() {
      // The stream is a child of the body: drop it before finishing the body (no trailers).
      stream[Symbol.dispose]();
      OutgoingBody.finish(body, undefined);
    },
  };
}

function respond(out, status, contentType, text, extra) {
  const response = startResponse(out, status, contentType, extra);
  response.write(text);
  response.done();
}

// Calls `each` with the request body's text piece by piece, as it arrives.
function readBody(request, each) {
  const body = request.consume();
  const stream = body.stream();
  const dec = new TextDecoder();
  for (;;) {
    let bytes;
    try {
      bytes = stream.blockingRead(16384n);
    } catch (e) {
      // The end of the body is the error `closed`.
      if (e.payload?.tag === 'closed') break;
      throw e;
    }
    each(dec.decode(bytes, { stream: true }));
  }
  each(dec.decode());
  stream[Symbol.dispose]();
  IncomingBody.finish(body);
}

function sleep(ms) {
  subscribeDuration(BigInt(ms) * 1000000n).block();
}

function methodName(method) {
  return method.tag === 'other' ? method.val : method.tag.toUpperCase();
}

export const incomingHandler = {
  handle(request, out) {
    const method = methodName(request.method());
    const pathWithQuery = request.pathWithQuery() ?? '/';
    const url = new URL(pathWithQuery, 'http://localhost');
    let path = url.pathname;
    if (path === MOUNT || path.startsWith(`${MOUNT}/`)) path = path.slice(MOUNT.length) || '/';

    if (method === 'GET' && path === '/') return respond(out, 200, TEXT, 'Hello from a wasi:http component!\n');

    if (path.startsWith('/echo')) {
      // Header names come lower-cased; a name sent twice is listed twice.
      const seen = {};
      for (const [name, value] of request.headers().entries()) {
        const text = new TextDecoder().decode(value);
        seen[name] = name in seen ? `${seen[name]}, ${text}` : text;
      }
      return respond(out, 200, 'application/json', JSON.stringify({ method, path: pathWithQuery, headers: seen }));
    }

    if (path === '/upper') {
      if (method !== 'POST') return respond(out, 405, TEXT, 'POST a body to /upper\n', [['allow', 'POST']]);
      // The answer starts before the body has all arrived: each piece is
      // upper-cased and written back as soon as it is read.
      const response = startResponse(out, 200, TEXT);
      readBody(request, (text) => response.write(text.toUpperCase()));
      return response.done();
    }

    if (method === 'GET' && path === '/stream') {
      const n = Math.min(Math.max(Number(url.searchParams.get('n') ?? 5) || 0, 1), 100);
      const response = startResponse(out, 200, TEXT);
      for (let i = 1; i <= n; i++) {
        if (i > 1) sleep(200);
        response.write(`line ${i} of ${n}\n`);
      }
      return response.done();
    }

    respond(out, 404, TEXT, `no route for ${method} ${pathWithQuery}\n`);
  },
};
