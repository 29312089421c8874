// Building the catalog (lib/primary/catalog.ts), its components described
// several at once: services and failures come out in the repository's order
// as a one-by-one build gave them, a file that is no component fails alone,
// a component found twice compiles once, and each compile says in the log
// where it is.

import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { buildCatalog } from '../../lib/primary/catalog.js';
import { repository, versioned } from '../support/fixtures.js';
import { tempDir } from '../support/rt-process.js';

describe('catalog', function () {
  this.timeout(120_000);
  const saved = process.env.RT_CACHE_DIR;
  let cache: string;

  beforeEach(async () => {
    // A cache of the test's own: every component compiles.
    cache = await tempDir('rt-catalog-cache-');
    process.env.RT_CACHE_DIR = cache;
  });

  afterEach(async () => {
    if (saved === undefined) delete process.env.RT_CACHE_DIR;
    else process.env.RT_CACHE_DIR = saved;
    await rm(cache, { recursive: true, force: true });
  });

  it("keeps the repository's order, fails a broken file alone, compiles a component found twice once, and logs each compile", async () => {
    const repo = await repository({
      a: versioned(1, 'alpha'),
      b: { raw: 'not a component' },
      c: versioned(2, 'gamma'),
      d: versioned(3, 'delta'),
      e: versioned(1, 'alpha'),
    });
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push((JSON.parse(line) as { msg: string }).msg) });
    const { services, failures } = await buildCatalog([pathToFileURL(repo).href], repo, { timeoutMs: 10_000, maxBytes: 1 << 20, cacheRoot: join(cache, 'repositories') }, [], log);

    expect(services.map((s) => basename(s.source))).to.deep.equal(['a.wasm', 'c.wasm', 'd.wasm']);
    expect(failures.map((f) => basename(f.source))).to.deep.equal(['b.wasm', 'e.wasm']);
    expect(failures[1].error).to.match(/^shadowed: .*\/a\.wasm serves /);

    const transpiled = lines.filter((l) => l.startsWith('transpiling '));
    expect(transpiled).to.have.length(3);
    for (const stem of ['c', 'd']) {
      expect(lines).to.include(`transpiling ${stem} (first load of this version)...`);
      expect(lines).to.include(`instrumenting ${stem} for inline calls...`);
      expect(lines.some((l) => new RegExp(`^${stem} compiled in \\d+\\.\\d s \\([1-5]/5\\)$`).test(l)), `"${stem} compiled in ..." in ${JSON.stringify(lines)}`).to.equal(true);
    }
    expect(lines.filter((l) => / compiled in /.test(l))).to.have.length(3);
  });
});
