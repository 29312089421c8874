// End to end: faults around what rt loads, injected on purpose. A damaged
// transpile cache entry, a repository that disappears, a component whose start
// function never ends, components that export only standard wasi: packages.

import { readdir, readFile, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildComponent } from '../../examples/builder.js';
import { ENDLESS_START, repository, versioned } from '../support/fixtures.js';
import { call, invoke, RtProcess, tempDir } from '../support/rt-process.js';

/** Every file below `dir`. */
async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

const reload = (rt: RtProcess) => call(`${rt.url}/api/reload`);

/** A component exporting only the standard wasi:cli/run. */
const CLI_TOOL = {
  kind: 'wat',
  world: 'tool',
  wit: `package wasi:cli@0.2.0;
interface run { run: func() -> result; }
world tool { export run; }`,
  wat: `(module (func (export "wasi:cli/run@0.2.0#run") (result i32) (i32.const 0)) (memory (export "memory") 1))`,
} as const;

interface Listing {
  services: { domain: string; service: string }[];
  failed: { source: string; error: string }[];
}

describe('repository faults (e2e)', function () {
  this.timeout(120_000);
  const cleanup: string[] = [];
  let rt: RtProcess | undefined;

  afterEach(async () => {
    await rt?.stop();
    rt = undefined;
  });

  after(async () => {
    for (const dir of cleanup) await rm(dir, { recursive: true, force: true });
  });

  async function temp(prefix: string): Promise<string> {
    const dir = await tempDir(prefix);
    cleanup.push(dir);
    return dir;
  }

  describe('a damaged transpile cache entry', () => {
    let repo: string;
    let cache: string;

    before(async () => {
      repo = await repository({ cached: versioned(1, 'cached') });
      cleanup.push(repo);
      // A cache of its own: the shared test cache must not be damaged.
      cache = await temp('rt-cache-');
    });

    const start = async () => {
      rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]`, env: { RT_CACHE_DIR: cache } });
      await rt.ready();
    };
    const rebuilt = (file: string) => (l: Record<string, unknown>) => l.level === 40 && String(l.msg).includes('transpile cache entry') && String(l.msg).includes(file);

    it('is built anew at start when its core module was truncated, with a warning naming it', async () => {
      await start();
      expect((await invoke(rt!, 'acme/cached/invoke/version')).body).to.deep.equal({ result: 1 });
      await rt!.stop();
      const core = (await files(cache)).find((f) => f.endsWith('component.core.wasm'))!;
      await truncate(core, 100);

      await start();
      const res = await invoke(rt!, 'acme/cached/invoke/version');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ result: 1 });
      expect(await rt!.logged(rebuilt('component.core.wasm')), rt!.output).to.equal(true);
      const line = rt!.logLines().find(rebuilt('component.core.wasm'))!;
      expect(String(line.entry)).to.equal(join(core, '..'));
    });

    it('is built anew by a reload when its glue was cut, so a worker started later loads it', async () => {
      await start();
      const glue = (await files(cache)).find((f) => /glue\/[0-9a-f]{64}\.js$/.test(f))!;
      const text = await readFile(glue, 'utf8');
      await writeFile(glue, text.slice(0, text.length / 2));
      const res = await reload(rt!);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ added: [], updated: [], removed: [], failed: [] });
      expect(await rt!.logged(rebuilt('glue/')), rt!.output).to.equal(true);
      // A new worker imports the glue from the cache.
      const [worker] = rt!.workerPids();
      process.kill(worker, 'SIGKILL');
      await rt!.logged((l) => l.msg === 'worker died; starting a replacement');
      await rt!.ready();
      const after = await invoke(rt!, 'acme/cached/invoke/version');
      expect(after.status, after.text).to.equal(200);
      expect(after.body).to.deep.equal({ result: 1 });
    });
  });

  describe('a file repository that disappears', () => {
    it('keeps serving its services (quiesced ones quiesced), reports it failed, and serves it again when it is back', async () => {
      const gone = await repository({ alpha: versioned(1, 'alpha'), beta: versioned(2, 'beta') });
      const emptied = await repository({ gamma: versioned(3, 'gamma') });
      cleanup.push(gone, `${gone}.gone`, emptied);
      rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${gone}", "file://${emptied}"]` });
      await rt.ready();
      expect((await call(`${rt.url}/api/services/acme/beta/quiesce`, { method: 'PUT' })).status).to.equal(200);

      await rename(gone, `${gone}.gone`);
      // A directory that exists but is empty is a real removal.
      await rm(join(emptied, 'gamma.wasm'));
      const res = await reload(rt);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ added: [], updated: [], removed: ['acme.gamma'] });
      expect(res.body.failed).to.deep.equal([{ source: `file://${gone}`, error: `file://${gone}: ${gone} does not exist` }]);
      expect(await rt.logged((l) => l.level === 40 && l.source === `file://${gone}`)).to.equal(true);
      expect((await invoke(rt, 'acme/alpha/invoke/version')).body).to.deep.equal({ result: 1 });
      expect((await invoke(rt, 'acme/beta/invoke/version')).status).to.equal(503);
      expect((await invoke(rt, 'acme/gamma/invoke/version')).status).to.equal(404);

      await rename(`${gone}.gone`, gone);
      const back = await reload(rt);
      expect(back.body).to.deep.include({ added: [], updated: [], removed: [], failed: [] });
      expect((await invoke(rt, 'acme/alpha/invoke/version')).body).to.deep.equal({ result: 1 });
      expect((await invoke(rt, 'acme/beta/invoke/version')).status).to.equal(503);
    });
  });

  describe('a component whose start function never ends', () => {
    const TIMEOUT_S = 4;
    let repo: string;
    const metric = async (name: string) => {
      const text = (await call(`${rt!.url}/api/metrics`, { method: 'GET' })).text;
      return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    };
    const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
      const started = performance.now();
      const out = await f();
      return [out, (performance.now() - started) / 1000];
    };

    it('is tried once per version: reloads do not wait for it again, and it is not counted as served', async () => {
      repo = await repository({ 'endless-start': ENDLESS_START, ok: versioned(1, 'ok') });
      cleanup.push(repo);
      rt = await RtProcess.start({ workers: 2, configToml: `repo_urls = ["file://${repo}"]`, env: { RT__HTTP__REQUEST_TIMEOUT_SECONDS: String(TIMEOUT_S) } });
      const [, startS] = await timed(() => rt!.ready());
      expect(startS, 'start-up waits for the first attempt').to.be.greaterThan(TIMEOUT_S);
      const error = `failed to instantiate: the instance was not ready within ${TIMEOUT_S} s (http.request_timeout_seconds): its start function or init ran too long`;
      const failure = { source: join(repo, 'endless-start.wasm'), error };
      expect(await metric('rt_services')).to.equal(1);
      for (let i = 0; i < 4; i++) {
        const listing = (await call(`${rt.url}/api/services`, { method: 'GET' })).body as unknown as Listing;
        expect(listing.services.map((s) => s.service)).to.deep.equal(['ok']);
        expect(listing.failed).to.deep.equal([failure]);
      }

      for (let i = 0; i < 2; i++) {
        // Bound generously below the instantiation bound the first attempt took.
        const [res, seconds] = await timed(() => reload(rt!));
        expect(res.status, res.text).to.equal(200);
        expect(seconds, 'a reload that does not try it again').to.be.lessThan(3);
        expect(res.body).to.deep.include({ added: [], updated: [], removed: [], failed: [failure] });
      }
      expect(await metric('rt_services')).to.equal(1);


      // A new version is tried.
      await writeFile(join(repo, 'endless-start.wasm'), await buildComponent(versioned(7, 'endless-start')));
      const fixed = await reload(rt);
      expect(fixed.body).to.deep.include({ added: ['acme.endless-start'], updated: [], removed: [], failed: [] });
      expect((await invoke(rt, 'acme/endless-start/invoke/version')).body).to.deep.equal({ result: 7 });
      expect(await metric('rt_services')).to.equal(2);
    });
  });

  describe('components exporting only standard wasi: packages', () => {
    it('are addressed default/<stem>, each its own service', async () => {
      const repo = await repository({ 'tool-a': CLI_TOOL, 'tool-b': CLI_TOOL, 'tool-c': CLI_TOOL, 'tool-c.toml': { raw: 'domain = "ops"\n' } });
      cleanup.push(repo);
      rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]` });
      await rt.ready();
      const listing = (await call(`${rt.url}/api/services`, { method: 'GET' })).body as unknown as Listing;
      expect(listing.services.map((s) => `${s.domain}/${s.service}`).sort()).to.deep.equal(['default/tool-a', 'default/tool-b', 'ops/tool-c']);
      expect(listing.failed).to.deep.equal([]);
    });
  });
});
