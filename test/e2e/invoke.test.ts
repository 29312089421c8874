// End to end: the real `rt start` serving real components over HTTP.

import { expect } from 'chai';
import { PNG } from 'pngjs';
import { examplesRepository, FAULTY, repository } from '../support/fixtures.js';
import { hasJspi } from '../../lib/platform.js';
import { call, invoke, RtProcess } from '../support/rt-process.js';

describe('invoke (e2e)', function () {
  let rt: RtProcess;

  before(async function () {
    this.timeout(240_000);
    const examples = await examplesRepository();
    const extra = await repository({ faulty: FAULTY, 'broken.wasm': { raw: 'this is not wasm' } });
    rt = await RtProcess.start({
      configToml: `repo_urls = ["file://${examples}", "file://${extra}"]`,
      env: { RT__HTTP__MAX_BODY_BYTES: '4096' },
    });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('answers health and readiness', async () => {
    expect((await call(`${rt.url}/api/health`, { method: 'GET' })).status).to.equal(200);
    const ready = await call(`${rt.url}/api/ready`, { method: 'GET' });
    expect(ready.status).to.equal(200);
    expect(ready.body).to.deep.equal({ status: 'ready' });
  });

  it('calls a componentize-js component with a JSON object keyed by parameter names', async () => {
    const res = await invoke(rt, 'example/greeter/invoke/greet', { name: 'World' });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(res.body).to.deep.equal({ result: 'Hello, World!' });
  });

  it('accepts positional arguments and records', async () => {
    const res = await invoke(rt, 'example/greeter/invoke/greet-person', [{ name: 'Ada', age: 36 }]);
    expect(res.body).to.deep.equal({ result: 'Hello, Ada! You are 36 years old.' });
  });

  it('calls a hand-written WAT component, by bare and by interface-qualified name', async () => {
    expect((await invoke(rt, 'example/calculator/invoke/add', { a: 2, b: 40 })).body).to.deep.equal({ result: 42 });
    expect((await invoke(rt, 'example/calculator/invoke/ops.subtract', [2, 40])).body).to.deep.equal({ result: -38 });
    expect((await invoke(rt, 'example/calculator/invoke/square-root', { x: 2.25 })).body).to.deep.equal({ result: 1.5 });
  });

  it('answers 500 for a trap, and the next call succeeds on a fresh instance', async () => {
    const trap = await invoke(rt, 'example/calculator/invoke/divide', { a: 1, b: 0 });
    expect(trap.status).to.equal(500);
    expect(trap.body).to.include({ error: 'component trapped', code: 'RT_ERR_COMPONENT_TRAPPED', service: 'example.calculator', method: 'divide' });
    expect(trap.body.details).to.match(/divide by zero/i);
    const reqId = trap.headers.get('x-request-id');
    expect(await rt.logged((l) => l.msg === 'request' && l.reqId === reqId && l.status === 500 && l.code === 'RT_ERR_COMPONENT_TRAPPED'), 'the log line names the error code').to.equal(true);
    // Enough calls to reach every worker, including the one whose instance trapped.
    for (let i = 0; i < 6; i++) {
      expect((await invoke(rt, 'example/calculator/invoke/divide', { a: 9, b: 3 })).body).to.deep.equal({ result: 3 });
    }
  });

  it('answers 500 naming an unsatisfied import when a call reaches it, and keeps serving', async () => {
    const res = await invoke(rt, 'acme/faulty/invoke/call-host');
    expect(res.status).to.equal(500);
    expect(res.body.error).to.equal('unsatisfied import');
    expect(res.body.details).to.include('acme:faulty/host@1.0.0#log');
    expect((await invoke(rt, 'acme/faulty/invoke/ok')).body).to.deep.equal({ result: 7 });
  });

  it('takes an empty body, with or without a content type, for a method without parameters', async () => {
    expect((await invoke(rt, 'acme/faulty/invoke/ok')).body).to.deep.equal({ result: 7 });
    const typed = await call(`${rt.url}/api/services/acme/faulty/invoke/ok`, { body: '', contentType: 'application/json' });
    expect(typed.body).to.deep.equal({ result: 7 });
    expect((await invoke(rt, 'acme/faulty/invoke/ok', {})).body).to.deep.equal({ result: 7 });
  });

  it('gives {"result": null} for a function without a result', async () => {
    expect((await invoke(rt, 'acme/faulty/invoke/noop')).body).to.deep.equal({ result: null });
  });

  it('names the trap: unreachable', async () => {
    const res = await invoke(rt, 'acme/faulty/invoke/boom');
    expect(res.status).to.equal(500);
    expect(res.body.error).to.equal('component trapped');
    expect(res.body.details).to.match(/unreachable/);
  });

  describe('errors', () => {
    it('404 for an unknown service, with the contract error body (naming the method the path names)', async () => {
      const res = await invoke(rt, 'nope/nothing/invoke/x', {});
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ error: 'unknown service', code: 'RT_ERR_UNKNOWN_SERVICE', details: 'no service nope.nothing is loaded', service: 'nope.nothing', method: 'x' });
    });

    it('404 for an unknown method, listing the methods', async () => {
      const res = await invoke(rt, 'example/greeter/invoke/Greet', { name: 'x' });
      expect(res.status).to.equal(404);
      expect(res.body).to.include({ error: 'unknown method', code: 'RT_ERR_UNKNOWN_METHOD', service: 'example.greeter', method: 'Greet' });
      expect(res.body.details).to.include('greet-person');
    });

    it('400 naming the parameter path and the expected type', async () => {
      const wrongType = await invoke(rt, 'example/greeter/invoke/greet', { name: 5 });
      expect(wrongType.status).to.equal(400);
      expect(wrongType.body).to.include({ service: 'example.greeter', method: 'greet' });
      expect(wrongType.body.details).to.match(/^name: expected string/);

      const outOfRange = await invoke(rt, 'example/greeter/invoke/greet-person', { person: { name: 'Old', age: 300 } });
      expect(outOfRange.status).to.equal(400);
      expect(outOfRange.body.details).to.equal('person.age: expected u8 (0..255), got 300');

      const missing = await invoke(rt, 'example/calculator/invoke/add', { a: 1 });
      expect(missing.status).to.equal(400);
      expect(missing.body.details).to.match(/\bb\b/);

      const extra = await invoke(rt, 'example/calculator/invoke/add', { a: 1, b: 2, c: 3 });
      expect(extra.status).to.equal(400);
      expect(extra.body.details).to.match(/\bc\b/);
    });

    it('400 for a body that is not JSON', async () => {
      const res = await call(`${rt.url}/api/services/example/calculator/invoke/add`, { body: '{"a": 1,', contentType: 'application/json' });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('invalid JSON');
    });

    it('415 for an unsupported content type', async () => {
      const res = await call(`${rt.url}/api/services/example/calculator/invoke/add`, { body: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' });
      expect(res.status).to.equal(415);
      expect(res.body).to.include({ error: 'unsupported content type', code: 'RT_ERR_UNSUPPORTED_CONTENT_TYPE', service: 'example.calculator', method: 'add' });
    });

    it('413 for a body over http.max_body_bytes', async () => {
      const res = await invoke(rt, 'example/greeter/invoke/greet', { name: 'x'.repeat(5000) });
      expect(res.status).to.equal(413);
      expect(res.body).to.include({ error: 'request body too large', code: 'RT_ERR_BODY_TOO_LARGE', service: 'example.greeter', method: 'greet' });
      expect(res.body.details).to.include('4096');
    });

    it('405 with the error body and Allow for a wrong HTTP method on a known path', async () => {
      const res = await call(`${rt.url}/api/services/example/calculator/invoke/add`, { method: 'GET' });
      expect(res.status).to.equal(405);
      expect(res.body.error).to.equal('method not allowed');
      expect(res.headers.get('allow')).to.include('POST');
    });

    it('404 with the error body for an unknown /api path', async () => {
      const res = await call(`${rt.url}/api/nothing-here`, { method: 'GET' });
      expect(res.status).to.equal(404);
      expect(res.body.error).to.equal('not found');
    });
  });

  describe('binary answers: the Mandelbrot example', () => {
    it('answers a PNG that decodes, with the media type its sidecar declares and its length', async function () {
      this.timeout(60_000);
      const res = await fetch(`${rt.url}/api/services/example/mandelbrot/invoke/render`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ width: 90, height: 60, iterations: 40 }),
      });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('image/png');
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(res.headers.get('content-length')).to.equal(String(bytes.length));
      const image = PNG.sync.read(bytes);
      expect([image.width, image.height]).to.deep.equal([90, 60]);
      const pixel = (x: number, y: number) => [...image.data.subarray((y * image.width + x) * 4, (y * image.width + x) * 4 + 3)];
      // The centre of the main cardioid is in the set (black); a corner is far outside it.
      const cx = Math.round(90 * 0.65 - 0.25 / (3 / Math.min(90, 60 * 1.5)));
      expect(pixel(cx, 30)).to.deep.equal([0, 0, 0]);
      expect(pixel(0, 0)).to.not.deep.equal([0, 0, 0]);
    });

    it('answers JSON (base64) when asked to, and 500 with the reason for a size it refuses', async () => {
      const json = await call(`${rt.url}/api/services/example/mandelbrot/invoke/render`, {
        body: JSON.stringify([8, 8, 10]),
        contentType: 'application/json',
        headers: { accept: 'application/json' },
      });
      expect(json.status).to.equal(200);
      expect(PNG.sync.read(Buffer.from(json.body.result as string, 'base64')).width).to.equal(8);
      const refused = await invoke(rt, 'example/mandelbrot/invoke/render', [2000, 2000, 10]);
      expect(refused.status).to.equal(500);
      expect(refused.body).to.include({ error: 'method returned an error', code: 'RT_ERR_METHOD_RETURNED_ERROR', details: 'at most 1000000 pixels, asked for 4000000' });
    });
  });

  describe('the sandbox: the library example', () => {
    it('reads the directory its sidecar grants, and nothing outside it; the grant is read-only', async () => {
      expect((await invoke(rt, 'example/library/invoke/titles', {})).body).to.deep.equal({ result: ['raven.txt', 'sonnet-18.txt'] });
      const raven = await invoke(rt, 'example/library/invoke/read', { name: 'raven.txt' });
      expect(raven.body.result).to.match(/^Once upon a midnight dreary/);
      for (const [name, code] of [
        ['../library.toml', 'not-permitted'],
        ['/etc/passwd', 'not-permitted'],
        ['missing.txt', 'no-entry'],
      ]) {
        const res = await invoke(rt, 'example/library/invoke/read', { name });
        expect(res.status, name).to.equal(500);
        expect(res.body, name).to.include({ error: 'method returned an error', code: 'RT_ERR_METHOD_RETURNED_ERROR', details: code });
      }
      const write = await invoke(rt, 'example/library/invoke/write', { name: 'new.txt', text: 'graffiti' });
      expect(write.body).to.include({ details: 'read-only' });
      expect((await invoke(rt, 'example/library/invoke/titles', {})).body.result).to.not.include('new.txt');
    });
  });

  describe('listing', () => {
    it('lists services with methods and signatures, and the files it skipped', async () => {
      const res = await call(`${rt.url}/api/services`, { method: 'GET' });
      expect(res.status).to.equal(200);
      const services = res.body.services as { domain: string; service: string; version: string; methods: { name: string; signature: string }[]; unsatisfied_imports: string[] }[];
      const calculator = services.find((s) => s.service === 'calculator')!;
      expect(calculator).to.include({ domain: 'example', version: '1.0.0' });
      expect(calculator.methods.find((m) => m.name === 'add')).to.include({ signature: 'func(a: s32, b: s32) -> s32', invocable: true });
      const faulty = services.find((s) => s.service === 'faulty')!;
      expect(faulty.unsatisfied_imports).to.deep.equal(['acme:faulty/host@1.0.0']);
      const failed = res.body.failed as { source: string; error: string }[];
      expect(failed).to.have.length(1);
      expect(failed[0].source).to.match(/broken\.wasm$/);
      expect(failed[0].error).to.match(/not a WebAssembly component/i);
    });

    it('logs the skipped file and one line per request', async () => {
      const addLines = () => rt.logLines().filter((l) => l.msg === 'request' && l.method === 'add');
      await rt.workerLogsFlushed(); // earlier requests' lines are in
      const before = addLines().length;
      for (let i = 0; i < 3; i++) await invoke(rt, 'example/calculator/invoke/add', { a: i, b: 1 });
      await rt.workerLogsFlushed();
      expect(await rt.logged((l) => String(l.msg).includes('skipped') && String(l.source).endsWith('broken.wasm'))).to.equal(true);
      const added = addLines().slice(before);
      expect(added).to.have.length(3);
      for (const line of added) {
        expect(line).to.include({ status: 200, service: 'example.calculator' });
        expect(line).to.not.have.property('code');
        expect(line.ms).to.be.a('number');
      }
    });
  });

  describe('the lane and the Koa path', () => {
    // A request without Origin is answered by the lane ahead of Koa (lib/worker/http/invoke-lane.ts);
    // the same request with one goes through Koa (CORS). Both run the one operation, and must answer alike.
    const cases: [string, { path: string; body: string; contentType?: string }][] = [
      ['a call', { path: 'example/calculator/invoke/add', body: '{"a":2,"b":40}' }],
      ['a call by alias, positional', { path: 'example/calculator/invoke/ops.add', body: '[2, 40]' }],
      ['a componentize-js call', { path: 'example/greeter/invoke/greet', body: '{"name":"Lane"}' }],
      ['invalid JSON', { path: 'example/calculator/invoke/add', body: '{"a":' }],
      ['arguments that do not fit', { path: 'example/calculator/invoke/add', body: '{"a":"x","b":1}' }],
      ['a content type it does not take', { path: 'example/calculator/invoke/add', body: 'a=1', contentType: 'text/plain' }],
      ['a body over max_body_bytes', { path: 'example/calculator/invoke/add', body: `{"a":1,"b":2,"pad":"${'x'.repeat(5000)}"}` }],
      ['a trap', { path: 'example/calculator/invoke/divide', body: '{"a":1,"b":0}' }],
      ['a record', { path: 'example/greeter/invoke/greet-person', body: '{"person":{"name":"Ada","age":36}}' }],
      ['the raw bytes of a list<u8> result', { path: 'example/mandelbrot/invoke/render', body: '{"width":8,"height":8,"iterations":10}' }],
      ['a stream', { path: 'example/digits/invoke/e', body: '{"count":50}' }],
      ['a WASI 0.2 handler’s response', { path: 'example/hello-http/http/', body: '' }],
      ['a handler’s request to a service that is no handler', { path: 'example/calculator/http/x', body: '' }],
      ['a handler’s request to a service that does not exist', { path: 'example/nothing/http/', body: '' }],
      ...(hasJspi ? [['a WASI 0.3 handler’s response', { path: 'example/hello-p3/http/', body: '' }] satisfies [string, { path: string; body: string }]] : []),
    ];
    for (const [what, { path, body, contentType }] of cases) {
      it(`answers ${what} the same way on both`, async () => {
        const send = (headers: Record<string, string>) => call(`${rt.url}/api/services/${path}`, { body, contentType: contentType ?? 'application/json', headers });
        const lane = await send({ 'x-request-id': `lane-${what.replace(/\W+/g, '-')}` });
        const koa = await send({ origin: 'http://page.test', 'x-request-id': `koa-${what.replace(/\W+/g, '-')}` });
        expect(koa.headers.get('access-control-allow-origin'), 'went through Koa').to.equal('*');
        expect(lane.headers.get('access-control-allow-origin'), 'went through the lane').to.equal(null);
        expect(lane.status, lane.text).to.equal(koa.status);
        expect(lane.text).to.equal(koa.text);
        for (const header of ['content-type', 'content-length', 'transfer-encoding', 'vary', 'connection', 'retry-after', 'cache-control', 'content-security-policy', 'x-content-type-options']) {
          expect(lane.headers.get(header), header).to.equal(koa.headers.get(header));
        }
        expect(lane.headers.get('x-request-id')).to.match(/^lane-/);
        expect(lane.headers.get('x-rt-worker')).to.match(/^\d+$/);
        await rt.workerLogsFlushed();
        const line = (id: string | null) => rt.logLines().find((l) => l.msg === 'request' && l.reqId === id);
        const [laneLine, koaLine] = [line(lane.headers.get('x-request-id')), line(koa.headers.get('x-request-id'))];
        expect(laneLine, 'the lane logs its request').to.not.equal(undefined);
        for (const field of ['status', 'service', 'method', 'req']) expect(laneLine![field], field).to.deep.equal(koaLine![field]);
      });
    }
  });

  describe('CORS', () => {
    it('answers a preflight with the configured methods, for any origin by default', async () => {
      const res = await fetch(`${rt.url}/api/services/example/calculator/invoke/add`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      });
      expect(res.status).to.equal(204);
      expect(res.headers.get('access-control-allow-origin')).to.equal('*');
      expect(res.headers.get('access-control-allow-methods')).to.equal('GET,POST,PUT,DELETE');
    });

    it('allows only the listed origins when http.cors.allowed_origins lists them, as a browser writes them (case, default port, slash)', async function () {
      this.timeout(120_000);
      const examples = await examplesRepository();
      const listed = await RtProcess.start({
        configToml: `repo_urls = ["file://${examples}/calculator.wasm"]\n[http.cors]\nallowed_origins = ["https://Good.example:443/"]`,
        workers: 1,
      });
      try {
        await listed.ready();
        const ask = (origin: string) => fetch(`${listed.url}/api/health`, { headers: { origin } });
        expect((await ask('https://good.example')).headers.get('access-control-allow-origin')).to.equal('https://good.example');
        expect((await ask('https://evil.example')).headers.get('access-control-allow-origin')).to.equal(null);
      } finally {
        await listed.stop();
      }
    });
  });
});
