// Building components from source (examples/builder.ts) writes only to
// the build cache: nothing left in the temp dir, nothing in the account's
// own caches. A build process (examples/componentize-process.ts) builds
// what it is given one after another, and a failed build fails alone.

import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildComponent, type JsSource } from '../../examples/builder.js';
import { ComponentizeProcess } from '../../examples/componentize-process.js';
import { tempDir } from '../support/rt-process.js';

describe('building components', () => {
  it("leaves nothing in the temp dir or in the account's wasmtime cache after a componentize-js build", async function () {
    this.timeout(180_000);
    // Wizer finds its cache through the password database, whatever HOME says.
    const wasmtimeCache = join(userInfo().homedir, '.cache', 'wasmtime');
    const before = new Set(filesUnder(wasmtimeCache));
    const saved = { TMPDIR: process.env.TMPDIR, RT_CACHE_DIR: process.env.RT_CACHE_DIR };
    const tmp = await tempDir('rt-build-tmp-');
    process.env.TMPDIR = tmp;
    process.env.RT_CACHE_DIR = await tempDir('rt-build-cache-');
    try {
      // A world no build compiled before: wizer compiles an engine with bindings of its own.
      const world = `w${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      const bytes = await buildComponent({
        kind: 'js',
        world,
        wit: `package acme:${world}@1.0.0;\ninterface api { hello: func() -> string; }\nworld ${world} { export api; }`,
        js: `export const api = { hello() { return 'hello'; } };`,
      });
      expect(bytes.length).to.be.above(0);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    expect(readdirSync(tmp)).to.deep.equal([]);
    expect(filesUnder(wasmtimeCache).filter((f) => !before.has(f))).to.deep.equal([]);
  });

  it('builds in a process of its own, one source after another, a failed build failing alone', async function () {
    this.timeout(240_000);
    const saved = { TMPDIR: process.env.TMPDIR, RT_CACHE_DIR: process.env.RT_CACHE_DIR };
    // componentize-js leaves its work directory behind when it cannot parse the source: in a temp dir of the test's own, which goes with the run.
    process.env.TMPDIR = await tempDir('rt-build-tmp-');
    process.env.RT_CACHE_DIR = await tempDir('rt-build-cache-');
    const builder = new ComponentizeProcess();
    try {
      const outcomes = await Promise.allSettled([freshSource(), freshSource('export const api = {'), freshSource()].map((s) => buildComponent(s, undefined, 'component', builder)));
      expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
      expect((outcomes[1] as PromiseRejectedResult).reason).to.be.instanceOf(Error).with.property('message').that.matches(/parse JS source/);
    } finally {
      builder.close();
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

/** A world no build compiled before: wizer compiles an engine with bindings of its own. */
function freshSource(js = `export const api = { hello() { return 'hello'; } };`): JsSource {
  const world = `w${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  return { kind: 'js', world, wit: `package acme:${world}@1.0.0;\ninterface api { hello: func() -> string; }\nworld ${world} { export api; }`, js };
}

function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
}
