// End to end: reload is rolling and zero-downtime (docs/api.md §5.4). Under a
// bounded autocannon load on the very service being replaced, a run of
// reloads must not fail or refuse a single request; and over many reloads
// the workers must not pile up old instances (threads, memory).

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { expect } from 'chai';
import { buildComponent } from '../../examples/builder.js';
import { eventually, letTimePass } from '../support/eventually.js';
import { repository, versioned } from '../support/fixtures.js';
import { call, invoke, RtProcess } from '../support/rt-process.js';

const LOAD_SECONDS = 10;
/** Reloads at least, each to a new version of the service. */
const RELOADS = 6;

describe('reload under load (e2e)', function () {
  this.timeout(180_000);
  let repo: string;
  let rt: RtProcess;
  let version = 1;

  /** Replaces versioned.wasm with the next version and reloads; returns the version now served. */
  const nextVersion = async (): Promise<number> => {
    version++;
    await writeFile(join(repo, 'versioned.wasm'), await buildComponent(versioned(version)));
    const res = await call(`${rt.url}/api/reload`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.updated).to.deep.equal(['acme.versioned']);
    return version;
  };

  before(async function () {
    this.timeout(300_000);
    repo = await repository({ versioned: versioned(1) });
    // Quiet: one log line per request adds up under load.
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${repo}"]`, quiet: true });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it(`answers every request while the service is reloaded, ${RELOADS} times and for ${LOAD_SECONDS} s at least (50 connections)`, async () => {
    // Stopped once the reloads are done, however long a busy machine makes them take.
    const load = autocannon({
      url: `${rt.url}/api/services/acme/versioned/invoke/version`,
      method: 'POST',
      connections: 50,
      duration: 120,
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    let reloads = 0;
    const until = Date.now() + LOAD_SECONDS * 1000;
    try {
      while (reloads < RELOADS || Date.now() < until) {
        await nextVersion();
        reloads++;
        await letTimePass(300, 'the load meets each version for a while before the next reload');
      }
    } finally {
      load.stop();
    }
    const result = await load;
    console.log(`      ${result.requests.total} requests, ${reloads} reloads, p99 ${result.latency.p99} ms`);
    expect(result.requests.total).to.be.greaterThan(1000);
    expect({ non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts }).to.deep.equal({ non2xx: 0, errors: 0, timeouts: 0 });
    for (let i = 0; i < 16; i++) expect((await invoke(rt, 'acme/versioned/invoke/version', {})).body).to.deep.equal({ result: version });
  });

  it('keeps the workers from piling up old versions over many reloads', async function () {
    this.timeout(300_000);
    const workers = rt.workerPids();
    expect(workers).to.have.length(2);
    const sample = async () => Promise.all(workers.map((pid) => RtProcess.status(pid)));
    // Warm up: the first reloads fill caches that stay.
    for (let i = 0; i < 10; i++) await nextVersion();
    const before = await sample();
    for (let i = 0; i < 40; i++) await nextVersion();
    // Replaced instances end once drained, asynchronously.
    let after = before;
    try {
      await eventually(
        async () => {
          after = await sample();
          for (const [i, s] of after.entries()) {
            // Each instance is a thread: 40 versions left behind would be 40 more.
            expect(s.threads, 'threads').to.be.at.most(before[i].threads + 2);
            // A leaked instance costs ~10 MiB (its thread's heap); 40 of them could not hide in this margin.
            expect(s.rssMiB, 'RSS').to.be.below(before[i].rssMiB + 100);
          }
        },
        { what: 'the replaced instances to end', timeoutMs: 10_000, intervalMs: 250 },
      );
    } finally {
      console.log(`      worker RSS MiB ${before.map((s) => s.rssMiB).join('/')} → ${after.map((s) => s.rssMiB).join('/')}, threads ${before.map((s) => s.threads).join('/')} → ${after.map((s) => s.threads).join('/')}`);
    }
    expect(rt.workerPids()).to.deep.equal(workers);
  });
});
