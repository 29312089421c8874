// The transpile cache verifies an entry before use and builds a damaged one
// anew: a real component, compiled into a cache of the test's own.

import { expect } from 'chai';
import { readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { buildComponent } from '../../examples/builder.js';
import { transpileComponent, type TranspileEvents } from '../../lib/primary/transpiler.js';
import { tempDir } from '../support/rt-process.js';
import { versioned } from '../support/fixtures.js';

describe('transpile cache', function () {
  this.timeout(60_000);
  let bytes: Uint8Array;
  let dir: string;
  const saved = process.env.RT_CACHE_DIR;

  before(async () => {
    bytes = await buildComponent(versioned(1, 'cached'));
  });

  beforeEach(async () => {
    dir = await tempDir('rt-compile-cache-');
    process.env.RT_CACHE_DIR = dir;
  });

  afterEach(async () => {
    if (saved === undefined) delete process.env.RT_CACHE_DIR;
    else process.env.RT_CACHE_DIR = saved;
    await rm(dir, { recursive: true, force: true });
  });

  /** Compiles, recording what it reported. */
  async function compile(): Promise<{ events: string[]; artifact: Awaited<ReturnType<typeof transpileComponent>>['artifact'] }> {
    const events: string[] = [];
    const handlers: TranspileEvents = {
      transpiling: () => events.push('transpiling'),
      rebuilding: (entry, problem) => events.push(`rebuilding ${entry}: ${problem}`),
    };
    const { artifact } = await transpileComponent(bytes, handlers);
    return { events, artifact };
  }

  it('keeps entries apart by the installed jco-transpile and binaryen versions: another toolchain never reads this one’s', async () => {
    const installed = async (name: string) => (JSON.parse(await readFile(new URL(`../../../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as { version: string }).version;
    const { artifact } = await compile();
    expect(relative(dir, artifact.dir).split(sep)).to.deep.equal([
      'components',
      `jco-transpile-${await installed('@bytecodealliance/jco-transpile')}-binaryen-${await installed('binaryen')}-18`,
      artifact.hash,
    ]);
  });

  it('uses a sound entry as it is', async () => {
    expect((await compile()).events).to.deep.equal(['transpiling']);
    expect((await compile()).events).to.deep.equal([]);
  });

  it('builds an entry whose core module was truncated anew, naming the entry and the file', async () => {
    const { artifact } = await compile();
    const core = join(artifact.dir, artifact.coreModules[0]);
    const good = await readFile(core);
    await truncate(core, 10);
    const { events } = await compile();
    expect(events).to.deep.equal([`rebuilding ${artifact.dir}: ${artifact.coreModules[0]}: its content is not what was written`, 'transpiling']);
    expect(await readFile(core)).to.deep.equal(good);
    expect((await compile()).events).to.deep.equal([]);
  });

  it('builds an entry anew when its glue was cut', async () => {
    const { artifact } = await compile();
    const good = await readFile(artifact.entry, 'utf8');
    await writeFile(artifact.entry, good.slice(0, good.length / 2));
    const { events } = await compile();
    expect(events[0]).to.match(/^rebuilding .*: glue\/[0-9a-f]{64}\.js: its content is not what was written$/);
    expect(await readFile(artifact.entry, 'utf8')).to.equal(good);
  });

  it('builds an entry anew when a file or its record is missing', async () => {
    const { artifact } = await compile();
    await rm(join(artifact.dir, artifact.fuelModules![0]));
    expect((await compile()).events[0]).to.equal(`rebuilding ${artifact.dir}: ${artifact.fuelModules![0]}: ENOENT`);
    await rm(join(artifact.dir, 'meta.json'));
    expect((await compile()).events).to.deep.equal([`rebuilding ${artifact.dir}: meta.json: ENOENT`, 'transpiling']);
    expect((await compile()).events).to.deep.equal([]);
  });

  it('builds an entry anew when its record is JSON of another shape, naming what does not fit', async () => {
    const { artifact } = await compile();
    const meta = join(artifact.dir, 'meta.json');
    const good = JSON.parse(await readFile(meta, 'utf8')) as Record<string, unknown>;
    await writeFile(meta, JSON.stringify({ ...good, files: undefined }));
    expect((await compile()).events).to.deep.equal([`rebuilding ${artifact.dir}: meta.json: files: expected sha256 by file name`, 'transpiling']);
    await writeFile(meta, '[]');
    expect((await compile()).events).to.deep.equal([`rebuilding ${artifact.dir}: meta.json: the file: expected an entry description`, 'transpiling']);
    expect((await compile()).events).to.deep.equal([]);
  });
});
