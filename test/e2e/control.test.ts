// End to end: the control plane (docs/api.md §5.2–5.4). Restart with and
// without configuration (and its persistence across a host restart), quiesce
// with drain, reload of added, updated, removed and broken components.
// Two workers: every control operation must reach both.

import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildComponent } from '../../examples/builder.js';
import { CONFIGURED, GRANTEE, repository, SLOW, TRAPPING_INIT, versioned } from '../support/fixtures.js';
import { loopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { call, invoke, RtProcess, tempDir } from '../support/rt-process.js';
import { closeConnections, connectionsByWorker, sendOn } from '../support/worker-connections.js';

const CALLS_PER_CHECK = 16;
const MAX_BODY_BYTES = 65_536;
const CONFIG_FILE = 'greeting = "from the file"\n[db]\nhost = "db.local"\nport = 5432\n';

describe('control plane (e2e)', function () {
  this.timeout(120_000);
  let repo: string;
  let dataDir: string;
  let rt: RtProcess;
  /** Holds the requests of `acme.held` (allowed to reach it): calls in progress a test sees start and ends. */
  let upstream: LoopbackServer;

  const start = async () => {
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, env: { RT_DATA_DIR: dataDir, RT__HTTP__REQUEST_TIMEOUT_SECONDS: '10', RT__HTTP__MAX_BODY_BYTES: String(MAX_BODY_BYTES) } });
    await rt.ready();
  };
  /**
   * Calls `path` CALLS_PER_CHECK times, half on a connection to each worker,
   * and returns every answer's result. Chosen connections: new ones can all
   * land on one worker, and fetch keeps reusing those.
   */
  const results = async (path: string, json: unknown = {}) => {
    const byWorker = await connectionsByWorker(rt.url, 1);
    try {
      const perWorker = await Promise.all(
        [...byWorker].map(async ([worker, [agent]]) => {
          const out: unknown[] = [];
          for (let i = 0; i < CALLS_PER_CHECK / 2; i++) {
            const res = await sendOn(agent, `${rt.url}/api/services/${path}`, 'POST', JSON.stringify(json));
            expect(res.status, res.body).to.equal(200);
            expect(res.worker, 'the worker that answered').to.equal(worker);
            out.push((JSON.parse(res.body) as { result: unknown }).result);
          }
          return out;
        }),
      );
      expect(byWorker.size, 'workers that answered').to.equal(2);
      return perWorker.flat();
    } finally {
      closeConnections(byWorker);
    }
  };
  const restart = (service: string, body?: string, contentType?: string) =>
    call(`${rt.url}/api/services/${service}/restart`, body === undefined ? {} : contentType ? { body, contentType } : { body });
  const reload = () => call(`${rt.url}/api/reload`);

  before(async function () {
    this.timeout(300_000);
    upstream = await loopbackServer();
    repo = await repository({
      configured: CONFIGURED,
      'configured.config.toml': { raw: CONFIG_FILE },
      slow: SLOW,
      'held.wasm': GRANTEE,
      'held.toml': { raw: `service = "held"\nallowed_outbound_hosts = ["127.0.0.1:${upstream.port}"]\n` },
      versioned: versioned(1),
      'trapping-init': TRAPPING_INIT,
      'missing-config.wasm': versioned(1, 'missing-config'),
      'missing-config.toml': { raw: 'config = "nowhere.toml"\n' },
      'two-configs.wasm': versioned(1, 'two-configs'),
      'two-configs.config.toml': { raw: 'a = 1\n' },
      'two-configs.config.json': { raw: '{"a": 1}' },
      'bad-json.wasm': versioned(1, 'bad-json'),
      'bad-json.config.json': { raw: '{"a": ' },
      'conflict.wasm': versioned(1, 'conflict'),
      'conflict.toml': { raw: 'instance_per_call = true\nmax_invocations = 5\n' },
    });
    dataDir = join(await tempDir('rt-data-'), 'data');
    // As an older rt kept a restart body: readable by every user.
    await mkdir(join(dataDir, 'restart-configs'), { recursive: true, mode: 0o755 });
    await writeFile(join(dataDir, 'restart-configs', 'acme.gone.json'), JSON.stringify({ content_type: 'application/toml', data: '' }), { mode: 0o644 });
    await start();
  });

  after(async () => {
    await rt?.stop();
    await upstream?.close();
  });

  /** Starts a call that waits for `upstream.release()`; resolves once it is running, with its answer to come. */
  const heldCall = async () => {
    const holds = upstream.holds();
    const answer = invoke(rt, 'acme/held/invoke/fetch-url', { url: `${upstream.url}/hold` });
    await upstream.held(holds + 1);
    return { answer };
  };

  it("keeps restart bodies its user's alone, those an older rt kept too (a configuration often holds secrets)", async () => {
    const dir = join(dataDir, 'restart-configs');
    const res = await call(`${rt.url}/api/services/acme/configured/restart`, { body: 'password = "s3cret"\n', contentType: 'application/toml' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    try {
      expect((await stat(dir)).mode & 0o777).to.equal(0o700);
      for (const name of ['acme.gone.json', 'acme.configured.json']) expect((await stat(join(dir, name))).mode & 0o777, name).to.equal(0o600);
    } finally {
      // Back to the repository's file, for the tests that read it.
      expect((await call(`${rt.url}/api/services/acme/configured/restart`, { method: 'POST' })).status).to.equal(200);
    }
  });

  describe('configuration', () => {
    it('gives init the configuration file from the repository, once per instance', async () => {
      expect(new Set(await results('acme/configured/invoke/config-text'))).to.deep.equal(new Set([CONFIG_FILE]));
      expect(new Set(await results('acme/configured/invoke/inits'))).to.deep.equal(new Set([1]));
    });

    it('serves TOML keys flattened through wasi:config/store', async () => {
      expect((await invoke(rt, 'acme/configured/invoke/setting', { key: 'db.host' })).body).to.deep.equal({ result: 'db.local' });
      expect((await invoke(rt, 'acme/configured/invoke/setting', { key: 'db.port' })).body).to.deep.equal({ result: '5432' });
      expect((await invoke(rt, 'acme/configured/invoke/setting', { key: 'db.user' })).body).to.deep.equal({ result: null });
      const all = (await invoke(rt, 'acme/configured/invoke/settings')).body.result as [string, string][];
      expect(all).to.have.deep.members([['greeting', 'from the file'], ['db.host', 'db.local'], ['db.port', '5432']]);
    });

    it('does not offer init as a method', async () => {
      const res = await invoke(rt, 'acme/configured/invoke/init', { config: [] });
      expect(res.status).to.equal(404);
      const listing = (await call(`${rt.url}/api/services`, { method: 'GET' })).body.services as { service: string; methods: { name: string }[]; config: unknown }[];
      const configured = listing.find((s) => s.service === 'configured')!;
      expect(configured.methods.map((m) => m.name)).not.to.include('init');
      expect(configured.config).to.deep.equal({ origin: join(repo, 'configured.config.toml'), content_type: 'application/toml', bytes: CONFIG_FILE.length });
    });

    it('reports a component whose init traps as failed to load, and serves the rest', async () => {
      const listing = (await call(`${rt.url}/api/services`, { method: 'GET' })).body as { services: { service: string }[]; failed: { source: string; error: string }[] };
      expect(listing.services.map((s) => s.service)).not.to.include('trapping-init');
      const failure = listing.failed.find((f) => f.source.endsWith('trapping-init.wasm'));
      expect(failure?.error).to.match(/failed to instantiate: init trapped: .*unreachable/);
    });
  });

  it('reports a configuration file that is missing, ambiguous or does not parse, and a sidecar that contradicts itself', async () => {
    const failed = (await call(`${rt.url}/api/services`, { method: 'GET' })).body.failed as { source: string; error: string }[];
    const errorOf = (name: string) => failed.find((f) => f.source === join(repo, name))?.error;
    expect(errorOf('missing-config.wasm')).to.equal(`cannot read the configuration file ${join(repo, 'nowhere.toml')}: ENOENT`);
    expect(errorOf('two-configs.wasm')).to.equal(
      'several configuration files for two-configs.wasm: two-configs.config.json, two-configs.config.toml; name one with the sidecar\'s "config" key',
    );
    expect(errorOf('bad-json.wasm')).to.match(/^the configuration is not valid JSON: /);
    expect(errorOf('conflict.wasm')).to.equal(`${join(repo, 'conflict.toml')}: instance_per_call = true means max_invocations = 1, not 5`);
  });

  describe('restart', () => {
    it('restarts with the body as the new configuration on every worker, and a JSON body feeds wasi:config/store', async () => {
      const res = await restart('acme/configured', JSON.stringify({ db: { host: 'other', ports: [1, 2] } }), 'application/json');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'restarted', service: 'acme.configured' });
      expect(new Set(await results('acme/configured/invoke/config-text'))).to.deep.equal(new Set(['{"db":{"host":"other","ports":[1,2]}}']));
      expect(new Set(await results('acme/configured/invoke/setting', { key: 'db.ports.1' }))).to.deep.equal(new Set(['2']));
    });

    it('keeps the old instances serving when init refuses the new configuration (500 restart failed)', async () => {
      const res = await restart('acme/configured', 'please fail', 'text/plain');
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.equal({
        error: 'restart failed',
        code: 'RT_ERR_RESTART_FAILED',
        details: 'init returned an error: refused: please fail',
        service: 'acme.configured',
        status: 'restart failed',
      });
      expect(new Set(await results('acme/configured/invoke/config-text'))).to.deep.equal(new Set(['{"db":{"host":"other","ports":[1,2]}}']));
    });

    it('answers 400 for a JSON or TOML body that does not parse, and keeps serving', async () => {
      const json = await restart('acme/configured', '{"db": ', 'application/json');
      expect(json.status).to.equal(400);
      expect(json.body.error).to.equal('invalid configuration');
      expect(json.body.details).to.match(/^the configuration is not valid JSON: /);
      const toml = await restart('acme/configured', 'a = = 1', 'application/toml');
      expect(toml.status).to.equal(400);
      expect(toml.body.details).to.match(/^the configuration is not valid TOML: /);
      expect((await invoke(rt, 'acme/configured/invoke/setting', { key: 'db.host' })).body).to.deep.equal({ result: 'other' });
    });

    it('lets a call in progress finish on the instances it started on', async () => {
      const { answer: held } = await heldCall();
      let finishedFirst = false;
      void held.then(() => (finishedFirst = true));
      const restarted = await restart('acme/held');
      expect(restarted.status, restarted.text).to.equal(200);
      // The restart did not wait for the call: the new instances serve while the old one holds it.
      expect(finishedFirst).to.equal(false);
      expect(new Set((await results('acme/held/invoke/preopens')).map((r) => JSON.stringify(r)))).to.deep.equal(new Set(['[]']));
      upstream.release();
      const finished = await held;
      expect(finished.status, finished.text).to.equal(200);
      expect(finished.body).to.deep.equal({ result: '200 released' });
    });

    it('answers 413 for a body over http.max_body_bytes, and keeps serving', async () => {
      const res = await restart('acme/configured', JSON.stringify({ pad: 'x'.repeat(MAX_BODY_BYTES) }), 'application/json');
      expect(res.status).to.equal(413);
      expect(res.body).to.deep.include({ error: 'request body too large', code: 'RT_ERR_BODY_TOO_LARGE', service: 'acme.configured' });
      expect((await invoke(rt, 'acme/configured/invoke/setting', { key: 'db.host' })).body).to.deep.equal({ result: 'other' });
    });

    it('answers 404 for an unknown service', async () => {
      const res = await restart('acme/nothing');
      expect(res.status).to.equal(404);
      expect(res.body).to.include({ error: 'unknown service', code: 'RT_ERR_UNKNOWN_SERVICE', service: 'acme.nothing' });
    });

    it('keeps a restart body across a host restart, until a restart without body goes back to the file', async function () {
      this.timeout(180_000);
      expect((await restart('acme/configured', 'kept = true', 'application/toml')).status).to.equal(200);
      await rt.stop();
      await start();
      expect(new Set(await results('acme/configured/invoke/config-text'))).to.deep.equal(new Set(['kept = true']));
      expect((await call(`${rt.url}/api/services/acme/configured`, { method: 'GET' })).body.config).to.deep.include({ origin: 'restart body', content_type: 'application/toml' });

      expect((await restart('acme/configured')).status).to.equal(200);
      expect(new Set(await results('acme/configured/invoke/setting', { key: 'greeting' }))).to.deep.equal(new Set(['from the file']));
      await rt.stop();
      await start();
      expect(new Set(await results('acme/configured/invoke/setting', { key: 'greeting' }))).to.deep.equal(new Set(['from the file']));
    });
  });

  describe('quiesce', () => {
    it('waits for a call in progress, then answers 503 until a restart', async () => {
      const { answer: held } = await heldCall();
      let releasedAt = Infinity;
      // The call ends a second after the quiesce begins.
      const quiesce = call(`${rt.url}/api/services/acme/held/quiesce`, { method: 'PUT' });
      setTimeout(() => {
        releasedAt = performance.now();
        upstream.release();
      }, 1000);
      const quiesced = await quiesce;
      const quiescedAt = performance.now();
      const finished = await held;
      expect(finished.status, finished.text).to.equal(200);
      expect(finished.body).to.deep.equal({ result: '200 released' });
      expect(quiesced.status).to.equal(200);
      expect(quiesced.body).to.deep.equal({ status: 'quiesced', service: 'acme.held' });
      // It answered once the call had ended.
      expect(quiescedAt).to.be.greaterThan(releasedAt);

      const refused = await invoke(rt, 'acme/held/invoke/preopens', {});
      expect(refused.status).to.equal(503);
      expect(refused.body).to.deep.include({ error: 'service quiesced', code: 'RT_ERR_SERVICE_QUIESCED', service: 'acme.held', method: 'preopens' });
      const again = await call(`${rt.url}/api/services/acme/held/quiesce`, { method: 'PUT' });
      expect(again.status).to.equal(200);
      const listed = (await call(`${rt.url}/api/services/acme/held`, { method: 'GET' })).body;
      expect(listed).to.deep.include({ state: 'quiesced' });
      expect(listed.instances).to.deep.include({ live: 0 });

      // Stays quiesced through a reload.
      expect((await reload()).status).to.equal(200);
      expect((await invoke(rt, 'acme/held/invoke/preopens', {})).status).to.equal(503);

      expect((await restart('acme/held')).status).to.equal(200);
      expect(new Set((await results('acme/held/invoke/preopens')).map((r) => JSON.stringify(r)))).to.deep.equal(new Set(['[]']));
      expect((await call(`${rt.url}/api/services/acme/held`, { method: 'GET' })).body).to.deep.include({ state: 'active' });
    });

    it('answers 404 for an unknown service', async () => {
      const res = await call(`${rt.url}/api/services/acme/nothing/quiesce`, { method: 'PUT' });
      expect(res.status).to.equal(404);
    });
  });

  describe('metrics', () => {
    const scrape = async () => {
      const res = await fetch(`${rt.url}/api/metrics`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
      return res.text();
    };
    const value = (text: string, series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? 0 : Number(line.slice(series.length + 1));
    };

    it('sums every worker\'s counts, and adds the primary\'s', async () => {
      const series = 'rt_http_requests_total{service="acme.configured",method="inits",status="200"}';
      const before = value(await scrape(), series);
      const counted = (await results('acme/configured/invoke/inits')).length;
      const text = await scrape();
      // The calls landed on both workers: only the sum of both counts them all.
      expect(value(text, series) - before).to.equal(counted);
      expect(value(text, 'rt_instances{service="acme.configured"}')).to.equal(2);
      expect(value(text, 'rt_workers')).to.equal(2);
      expect(value(text, 'rt_control_operations_total{operation="restart",status="200"}')).to.be.greaterThan(0);
      expect(text).to.match(/^rt_http_request_duration_seconds_bucket\{le="0\.005",service="acme\.configured",method="inits"\} \d+$/m);
      expect(text).to.match(/^rt_worker_process_cpu_seconds_total \d/m);
    });
  });

  describe('reload', () => {
    it('adds, updates and removes components, and every worker serves the new set', async () => {
      await writeFile(join(repo, 'versioned.wasm'), await buildComponent(versioned(2)));
      await writeFile(join(repo, 'added.wasm'), await buildComponent(versioned(7, 'added')));
      await rm(join(repo, 'slow.wasm'));
      const res = await reload();
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ status: 'reloaded', added: ['acme.added'], updated: ['acme.versioned'], removed: ['acme.slow'] });
      expect(new Set(await results('acme/versioned/invoke/version'))).to.deep.equal(new Set([2]));
      expect(new Set(await results('acme/added/invoke/version'))).to.deep.equal(new Set([7]));
      expect((await invoke(rt, 'acme/slow/invoke/spin', { n: 1 })).status).to.equal(404);
      const openapi = (await call(`${rt.url}/api/openapi.json`, { method: 'GET' })).body as { paths: Record<string, unknown> };
      expect(openapi.paths).to.have.property('/api/services/acme/added/invoke/version');
      expect(Object.keys(openapi.paths).some((p) => p.startsWith('/api/services/acme/slow/'))).to.equal(false);
      // Unchanged services keep their instances (init ran once on each).
      expect(new Set(await results('acme/configured/invoke/inits'))).to.deep.equal(new Set([1]));
    });

    it('replaces the instances of a service whose sidecar changed, though its component did not', async () => {
      await writeFile(join(repo, 'added.toml'), 'pool_size = 2\n');
      const res = await reload();
      expect(res.body).to.deep.include({ added: [], updated: ['acme.added'], removed: [] });
      const described = (await call(`${rt.url}/api/services/acme/added`, { method: 'GET' })).body;
      expect(described.instances).to.deep.include({ pool_size: 2, live: 2 });
    });

    it('lists a broken component in failed and keeps serving the version it replaced', async () => {
      await writeFile(join(repo, 'versioned.wasm'), 'not a component');
      await mkdir(join(repo, 'more'), { recursive: true });
      await writeFile(join(repo, 'more', 'junk.wasm'), new Uint8Array([0, 97, 115, 109]));
      const res = await reload();
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ added: [], updated: [], removed: [] });
      const failed = (res.body.failed as { source: string; error: string }[]).map((f) => f.source);
      expect(failed).to.include.members([join(repo, 'versioned.wasm'), join(repo, 'more', 'junk.wasm')]);
      expect(new Set(await results('acme/versioned/invoke/version'))).to.deep.equal(new Set([2]));
    });

    it('keeps the serving version on every worker when the new one compiles but cannot be instantiated', async () => {
      await writeFile(join(repo, 'versioned.wasm'), await buildComponent(versioned(99, 'versioned', true)));
      const res = await reload();
      expect(res.body).to.deep.include({ added: [], updated: [], removed: [] });
      const failure = (res.body.failed as { source: string; error: string }[]).find((f) => f.source === join(repo, 'versioned.wasm'));
      expect(failure?.error).to.match(/^failed to instantiate: .*unreachable/);
      expect(new Set(await results('acme/versioned/invoke/version'))).to.deep.equal(new Set([2]));
    });

    it('coalesces concurrent reloads', async () => {
      // Bytes never compiled before: the first reload takes long enough for the others to arrive during it.
      await markLog('before-reloads');
      await writeFile(join(repo, 'versioned.wasm'), await buildComponent(versioned(3, 'versioned', false, Date.now() % 1_000_000_007)));
      const answers = await Promise.all(Array.from({ length: 5 }, () => reload()));
      for (const a of answers) expect(a.status, a.text).to.equal(200);
      expect(answers.filter((a) => (a.body.updated as string[]).includes('acme.versioned')).length).to.be.greaterThan(0);
      await markLog('after-reloads');
      const reloaded = rt.logLines().filter((l) => l.msg === 'reloaded');
      const at = (mark: string) => reloaded.findIndex((l) => (l.added as string[]).includes(`acme.${mark}`));
      expect(at('after-reloads') - at('before-reloads') - 1).to.be.within(1, 2);
      expect(new Set(await results('acme/versioned/invoke/version'))).to.deep.equal(new Set([3]));
    });

    /**
     * Adds a service named `mark` with a reload of its own, and waits for its
     * `reloaded` line: the primary prints its lines in order, so the lines of
     * the reloads before it are in the output too.
     */
    async function markLog(mark: string): Promise<void> {
      await writeFile(join(repo, `${mark}.wasm`), await buildComponent(versioned(1, mark)));
      const res = await reload();
      expect(res.body, res.text).to.deep.include({ added: [`acme.${mark}`] });
      expect(await rt.logged((l) => l.msg === 'reloaded' && (l.added as string[]).includes(`acme.${mark}`))).to.equal(true);
    }
  });

  describe('with a data directory that cannot be written', () => {
    let broken: RtProcess;

    after(async () => {
      await broken?.stop();
    });

    it('refuses a restart body it could not keep, and the previous instances keep serving', async () => {
      broken = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]`, env: { RT_DATA_DIR: '/dev/null/rt' } });
      await broken.ready();
      const res = await call(`${broken.url}/api/services/acme/configured/restart`, { body: '{"kept": false}', contentType: 'application/json' });
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.include({ error: 'restart failed', code: 'RT_ERR_RESTART_FAILED', status: 'restart failed', service: 'acme.configured' });
      expect(res.body.details).to.match(/^cannot keep the configuration in \/dev\/null\/rt\/restart-configs: ENOTDIR/);
      expect((await invoke(broken, 'acme/configured/invoke/config-text')).body).to.deep.equal({ result: CONFIG_FILE });
      // Nothing kept, nothing to forget: a restart without a body works.
      expect((await call(`${broken.url}/api/services/acme/configured/restart`)).status).to.equal(200);
    });
  });
});
