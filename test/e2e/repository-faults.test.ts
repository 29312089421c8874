// End to end: faults around what rt loads, injected on purpose. A damaged
// compile cache entry, a repository that disappears, a component whose start
// function never ends, components that export only standard wasi: packages.

import { readdir, readFile, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { repository, versioned } from '../support/fixtures.js';
import { call, invoke, RtProcess, tempDir } from '../support/rt-process.js';

/** Every file below `dir`. */
async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

const reload = (rt: RtProcess) => call(`${rt.url}/api/reload`);

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

  describe('a damaged compile cache entry', () => {
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
    const rebuilt = (file: string) => (l: Record<string, unknown>) => l.level === 40 && String(l.msg).includes('compile cache entry') && String(l.msg).includes(file);

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
      process.kill(worker!, 'SIGKILL');
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
});
