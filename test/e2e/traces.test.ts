// OpenTelemetry traces (docs/api.md §7), end to end: a real rt exporting to
// an OTLP receiver on loopback. A server span per request (named by its
// route, continuing an incoming traceparent), a child span per component
// call, a client span per outgoing request a component makes (whose
// traceparent the far side gets); spans exported as OTLP/JSON or protobuf,
// the last ones at SIGTERM, those lost counted; settings rt cannot honour
// refused at start.

import { expect } from 'chai';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { eventually } from '../support/eventually.js';
import { FAULTY, repository, versioned } from '../support/fixtures.js';
import { OUTGOING_TYPES_HANDLER } from '../support/http-handler-fixtures.js';
import { otlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { call, isolatedEnv, RtProcess, runRt, tempDir } from '../support/rt-process.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';
const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;
const ERROR = 2;

/** A server on loopback that answers `reached` and keeps the headers of each request. */
async function downstream(): Promise<{ url: string; port: number; seen: IncomingHttpHeaders[]; server: Server }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.end('reached');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, seen, server };
}

/** The metric's value in a Prometheus text exposition (0 when absent). */
function metric(text: string, line: string): number {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

describe('traces (e2e)', function () {
  this.timeout(120_000);
  let repo: string;
  let down: Awaited<ReturnType<typeof downstream>>;
  /** An rt (one worker) serving the test's repository, exporting to a receiver of its own as `env` says. */
  const tracedRt = async (env: Record<string, string>): Promise<{ rt: RtProcess; receiver: OtlpReceiver }> => {
    const receiver = await otlpReceiver();
    const rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n`, env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env } });
    await rt.ready();
    return { rt, receiver };
  };

  before(async function () {
    this.timeout(600_000);
    down = await downstream();
    repo = await repository({
      plain: versioned(1, 'plain'),
      faulty: FAULTY,
      caller: OUTGOING_TYPES_HANDLER,
      'caller.toml': { raw: `service = "caller"\nallowed_outbound_hosts = ["127.0.0.1:${down.port}"]\n` },
    });
  });

  after(async () => {
    down?.server.closeAllConnections();
    await new Promise((resolve) => down?.server.close(resolve));
  });

  describe('exporting OTLP/JSON', () => {
    let rt: RtProcess;
    let receiver: OtlpReceiver;
    /** The spans of the request whose X-Request-Id is `id`: its server span first, then its descendants (children before grandchildren). */
    const spansOf = (id: string): ReceivedSpan[] => {
      const server = receiver.spans.find((s) => s.kind === SERVER && s.attributes['rt.request_id'] === id);
      if (!server) return [];
      const family = [server];
      for (let i = 0; i < family.length; i++) family.push(...receiver.spans.filter((s) => s.parentSpanId === family[i].spanId));
      return family;
    };

    before(async function () {
      this.timeout(120_000);
      ({ rt, receiver } = await tracedRt({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_SERVICE_NAME: 'rt-under-test', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-token' }));
    });

    after(async () => {
      await rt?.stop();
      await receiver?.close();
    });

    it('continues an incoming traceparent: a server span named by its route, a child span for the call, the trace id on the log line', async () => {
      const answer = await call(`${rt.url}/api/services/acme/plain/invoke/version`, { headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, tracestate: 'vendor=x' } });
      expect(answer.status, answer.text).to.equal(200);
      const id = answer.headers.get('x-request-id')!;
      const [server, child] = await eventually(() => spansOf(id).length >= 2 && spansOf(id), { what: 'the request’s two spans at the receiver' });
      expect(server).to.include({ traceId: TRACE_ID, parentSpanId: PARENT_ID, name: 'POST /api/services/{domain}/{service}/invoke/{method}' });
      expect(server.attributes).to.include({ 'http.request.method': 'POST', 'http.route': '/api/services/{domain}/{service}/invoke/{method}', 'http.response.status_code': 200, 'url.path': '/api/services/acme/plain/invoke/version', 'server.port': rt.port });
      expect(server.resource).to.include({ 'service.name': 'rt-under-test', 'deployment.environment.name': 'test' });
      expect(receiver.posts[0], 'OTEL_EXPORTER_OTLP_HEADERS on every export').to.include({ path: '/v1/traces', contentType: 'application/json', authorization: 'Bearer collector-token' });
      expect(child).to.include({ traceId: TRACE_ID, parentSpanId: server.spanId, kind: INTERNAL, name: 'call acme.plain version' });
      expect(child.attributes).to.include({ 'rt.service': 'acme.plain', 'rt.method': 'version', 'rt.outcome': 'ok' });
      expect(['inline', 'threads']).to.include(child.attributes['rt.placement']);
      expect(await rt.logged((l) => l.msg === 'request' && l.reqId === id && l.traceId === TRACE_ID), 'the request’s log line, with the trace id').to.equal(true);
    });

    it('starts a trace for a request that carries none; a call that traps has an error span, and its 500 too', async () => {
      const answer = await call(`${rt.url}/api/services/acme/faulty/invoke/boom`);
      expect(answer.status, answer.text).to.equal(500);
      const id = answer.headers.get('x-request-id')!;
      const [server, child] = await eventually(() => spansOf(id).length >= 2 && spansOf(id), { what: 'the failed request’s spans' });
      expect(server.traceId).to.match(/^[0-9a-f]{32}$/).and.not.equal(TRACE_ID);
      expect(server.parentSpanId).to.equal(undefined);
      expect(server.status.code).to.equal(ERROR);
      expect(server.attributes).to.include({ 'http.response.status_code': 500, 'error.type': '500' });
      expect(child.attributes).to.include({ 'rt.outcome': 'trap' });
      expect(child.status.code).to.equal(ERROR);
    });

    it("gives a component's outgoing request a client span, child of its call, and the far side that span's traceparent", async () => {
      const before = down.seen.length;
      const answer = await call(`${rt.url}/api/services/default/caller/http/call?url=${encodeURIComponent(`${down.url}/x`)}`, { method: 'GET', headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` } });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body).to.include({ status: 200, text: 'reached' });
      const sent = down.seen.slice(before).map((h) => h.traceparent);
      expect(sent).to.have.length(1);
      const [, traceId, spanId, flags] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(String(sent[0]))!;
      expect([traceId, flags]).to.deep.equal([TRACE_ID, '01']);
      const id = answer.headers.get('x-request-id')!;
      const [server, handle, outgoing] = await eventually(() => spansOf(id).length >= 3 && spansOf(id), { what: 'the handler request’s three spans' });
      expect(server.name).to.equal('GET /api/services/{domain}/{service}/http/{path}');
      expect(handle).to.include({ name: 'call default.caller handle', parentSpanId: server.spanId });
      expect(handle.attributes).to.include({ 'rt.outcome': 'ok', 'rt.placement': 'threads' });
      expect(outgoing).to.include({ kind: CLIENT, spanId, parentSpanId: handle.spanId, name: 'GET' });
      expect(outgoing.attributes).to.include({ 'http.request.method': 'GET', 'server.address': '127.0.0.1', 'server.port': down.port, 'url.full': `${down.url}/x`, 'http.response.status_code': 200 });
    });
  });

  describe('exporting OTLP/protobuf (the default), batched', () => {
    let rt: RtProcess;
    let receiver: OtlpReceiver;
    const metrics = async () => (await fetch(`${rt.url}/api/metrics`)).text();
    const invoke = async () => {
      const answer = await call(`${rt.url}/api/services/acme/plain/invoke/version`);
      expect(answer.status, answer.text).to.equal(200);
      return answer.headers.get('x-request-id')!;
    };
    const received = (id: string) => receiver.spans.some((s) => s.attributes['rt.request_id'] === id);

    before(async function () {
      this.timeout(120_000);
      // Batches of 4 at most, 4 waiting at most, and no export but of a full batch.
      ({ rt, receiver } = await tracedRt({ OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_BSP_MAX_QUEUE_SIZE: '4', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4' }));
    });

    after(async () => {
      await rt?.stop();
      await receiver?.close();
    });

    it('counts the spans it drops while the collector does not answer, and those whose export failed', async () => {
      receiver.answer('hold');
      // Two spans a request: the first full batch goes out and waits; the queue fills behind it; the rest are dropped.
      for (let i = 0; i < 6; i++) await invoke();
      await eventually(async () => metric(await metrics(), 'rt_trace_spans_total{fate="dropped"}') > 0, { what: 'dropped spans counted' });
      receiver.answer('refuse');
      for (let i = 0; i < 2; i++) await invoke();
      await eventually(async () => metric(await metrics(), 'rt_trace_spans_total{fate="failed"}') > 0, { what: 'failed exports counted' });
      receiver.answer('accept');
      const exportedBefore = metric(await metrics(), 'rt_trace_spans_total{fate="exported"}');
      // Eight spans and what was left queued: at least one full batch with some of these requests' spans goes out.
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push(await invoke());
      await eventually(() => ids.some(received), { what: 'a batch of protobuf spans with a request id in it' });
      const server = receiver.spans.find((s) => ids.includes(s.attributes['rt.request_id'] as string))!;
      expect(server, 'a server span, read back field by field').to.deep.include({ kind: 2, name: 'POST /api/services/{domain}/{service}/invoke/{method}' });
      expect(server.traceId).to.match(/^[0-9a-f]{32}$/);
      expect(server.attributes).to.deep.include({ 'http.response.status_code': 200, 'http.request.method': 'POST' });
      expect(server.resource).to.include({ 'service.name': 'rt' });
      await eventually(async () => metric(await metrics(), 'rt_trace_spans_total{fate="exported"}') > exportedBefore, { what: 'exported spans counted' });
    });

  });

  it('exports the spans still batched when it is stopped (SIGTERM)', async () => {
    // Batches of 512 (the default), and no export but of a full batch until the end.
    const { rt, receiver } = await tracedRt({ OTEL_BSP_SCHEDULE_DELAY: '600000' });
    try {
      const answer = await call(`${rt.url}/api/services/acme/plain/invoke/version`);
      expect(answer.status, answer.text).to.equal(200);
      const id = answer.headers.get('x-request-id')!;
      const received = () => receiver.spans.some((s) => s.attributes['rt.request_id'] === id);
      expect(received(), 'a few requests’ spans fill no batch: nothing sent yet').to.equal(false);
      expect(await rt.stop()).to.equal(0);
      expect(received(), 'sent on the way out').to.equal(true);
    } finally {
      await rt.stop();
      await receiver.close();
    }
  });

  it('refuses, at start, OTEL_* settings it cannot honour: exit 2, naming the variable', async () => {
    const cwd = await tempDir();
    const start = (env: Record<string, string>) => runRt(['start', '--logo-off'], { cwd, env: isolatedEnv(join(cwd, 'user-config'), { RT__HTTP__PORT: '1', ...env }) });
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    const cases: [Record<string, string>, string][] = [
      [{ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'rt: OTEL_EXPORTER_OTLP_PROTOCOL: expected http/protobuf or http/json (rt exports over OTLP/HTTP; grpc is not built in), got "grpc"'],
      [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://collector:21' }, 'rt: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: expected an http: or https: URL, got "ftp://collector:21"'],
      [{ ...endpoint, OTEL_TRACES_SAMPLER: 'sometimes' }, 'rt: OTEL_TRACES_SAMPLER: expected always_on, always_off, traceidratio, or one of them after parentbased_, got "sometimes"'],
      [{ ...endpoint, OTEL_BSP_MAX_QUEUE_SIZE: 'lots' }, 'rt: OTEL_BSP_MAX_QUEUE_SIZE: expected a whole number of at least 1, got "lots"'],
    ];
    for (const [env, message] of cases) {
      const run = start(env);
      expect(run.status, run.stderr).to.equal(2);
      expect(run.stderr.trim()).to.equal(message);
    }
  });
});
