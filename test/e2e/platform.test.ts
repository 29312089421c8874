// End to end: what rt does with the Node.js it runs on (lib/platform.ts). A
// WASI 0.3 component needs JSPI: on a Node without it (22) it is listed as
// failed with the Node line it needs, and the start-up log says once what is
// unavailable; on a Node with it (24, 26) neither happens. Every other
// component loads either way. CI runs this file on Node 26 and on Node 22.

import { expect } from 'chai';
import { join } from 'node:path';
import { hasJspi } from '../../lib/platform.js';
import { asyncAnswer } from '../support/async-components.js';
import { FAULTY, repository } from '../support/fixtures.js';
import { call, invoke, RtProcess } from '../support/rt-process.js';

interface Listing {
  services: { domain: string; service: string }[];
  failed: { source: string; error: string }[];
}

describe(`rt on this Node.js (${process.versions.node}, JSPI ${hasJspi ? 'present' : 'absent'}) (e2e)`, function () {
  this.timeout(120_000);
  let rt: RtProcess | undefined;
  let repo: string;

  before(async () => {
    repo = await repository({ faulty: FAULTY, 'p3.wasm': { raw: await asyncAnswer() } });
    rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]` });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('serves the components that need nothing the Node lacks', async () => {
    const res = await invoke(rt!, 'acme/faulty/invoke/ok');
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ result: 7 });
  });

  it(hasJspi ? 'loads a WASI 0.3 component without a JSPI failure, and says nothing of JSPI at start-up' : 'lists a WASI 0.3 component as failed, naming the Node line it needs, and says once at start-up what is unavailable', async () => {
    const listing = (await call(`${rt!.url}/api/services`, { method: 'GET' })).body as unknown as Listing;
    const failure = listing.failed.find((f) => f.source === join(repo, 'p3.wasm'));
    const notes = rt!.logLines().filter((l) => String(l.msg).includes('has no JSPI'));
    if (hasJspi) {
      expect(failure?.error ?? '').not.to.include('JSPI');
      expect(notes).to.deep.equal([]);
    } else {
      expect(failure).to.deep.equal({
        source: join(repo, 'p3.wasm'),
        error: `the component uses WASI 0.3 (component-model async: its export \`answer\` is an async function), which needs JSPI (WebAssembly.Suspending): Node.js 24 or later; this is Node.js ${process.versions.node}`,
      });
      expect(notes.map((l) => l.msg)).to.deep.equal([
        `Node.js ${process.versions.node} has no JSPI (WebAssembly.Suspending): WASI 0.3 components (async functions, streams, futures) will not load; Node.js 24 or later runs them`,
      ]);
    }
  });
});
