// A worker's service registry and what it hosts (lib/worker/execution/registry.ts,
// hosted-service.ts; the instance threads in instance-pool.test.ts), in this process: real components,
// scanned and transpiled as the primary does (lib/primary/catalog.ts), loaded,
// called, replaced, staged, quiesced. No CLI, no HTTP.

import { expect } from 'chai';
import { ServiceRegistry } from '../../lib/worker/execution/registry.js';
import type { HostedService } from '../../lib/worker/execution/hosted-service.js';
import { SLOW, TRAPPING_INIT } from '../support/fixtures.js';
import { catalog, invoke, invokeJson, refusal, silentLog } from '../support/hosting.js';

const log = silentLog;
const TIMEOUT_MS = 1_000;

const call = (hosted: HostedService, name: string, body: unknown = {}): Promise<unknown> => invoke(hosted, name, body, TIMEOUT_MS);

describe('service registry (in process)', function () {
  this.timeout(120_000);
  let registry: ServiceRegistry;

  beforeEach(() => {
    registry = new ServiceRegistry({ timeoutMs: TIMEOUT_MS, memoryCapBytes: 16 << 20, threadHeapMb: 128, log });
  });

  afterEach(async () => {
    await registry.load([], []);
  });

  it('hosts what instantiates, reports what does not, and finds services by address and methods by name', async () => {
    const { services, failures } = await catalog({ slow: SLOW, broken: TRAPPING_INIT });
    expect(failures).to.deep.equal([]);
    const lost = await registry.load(services, []);
    expect(lost.map((f) => f.source)).to.have.length(1);
    expect(lost[0].source).to.match(/broken\.wasm$/);
    expect(registry.list().map((s) => s.name)).to.deep.equal(['acme.slow']);
    expect(registry.failures()).to.deep.equal(lost);
    const slow = registry.get('acme', 'slow')!;
    expect(registry.get('acme', 'nothing')).to.equal(undefined);
    expect(await call(slow, 'spin', { n: 1000 })).to.equal(1000);
    expect(await call(slow, 'api.spin', [7])).to.equal(7);
  });

  it('keeps a service whose revision did not change, and replaces one that did', async () => {
    const { services } = await catalog({ slow: SLOW });
    await registry.load(services, []);
    const first = registry.get('acme', 'slow');
    const generation = registry.generation;
    await registry.load(services, []);
    expect(registry.get('acme', 'slow')).to.equal(first);
    await registry.load([{ ...services[0], revision: `${services[0].revision}-changed` }], []);
    expect(registry.get('acme', 'slow')).to.not.equal(first);
    expect(registry.generation).to.be.above(generation);
    await registry.load([], []);
    expect(registry.list()).to.deep.equal([]);
  });

  it('stages new instances beside the serving ones: commit swaps them in, discard drops them', async () => {
    const { services } = await catalog({ slow: SLOW });
    await registry.load(services, []);
    const serving = registry.get('acme', 'slow');
    const next = { ...services[0], revision: `${services[0].revision}-next` };
    expect(await registry.stage(next)).to.equal(undefined);
    await registry.discard(next.id);
    expect(registry.get('acme', 'slow')).to.equal(serving);
    expect(await registry.stage(next)).to.equal(undefined);
    registry.commit(next.id);
    const committed = registry.get('acme', 'slow')!;
    expect(committed).to.not.equal(serving);
    expect(committed.descriptor.revision).to.equal(next.revision);
    expect(await call(committed, 'spin', { n: 3 })).to.equal(3);
  });

  it('staging a version that cannot start answers why, and leaves the serving one', async () => {
    const { services } = await catalog({ slow: SLOW, broken: TRAPPING_INIT });
    const [slow, broken] = [services.find((s) => s.id.service === 'slow')!, services.find((s) => s.id.service !== 'slow')!];
    await registry.load([slow], []);
    const error = await registry.stage({ ...broken, id: slow.id });
    expect(error).to.be.a('string').and.not.equal('');
    expect(registry.get('acme', 'slow')!.descriptor).to.equal(slow);
  });

  it('quiesces: new calls are refused with RT_ERR_SERVICE_QUIESCED once the running ones are done', async () => {
    const { services } = await catalog({ slow: SLOW });
    await registry.load(services, []);
    const slow = registry.get('acme', 'slow')!;
    await registry.quiesce(slow.descriptor.id);
    expect(slow.quiesced).to.equal(true);
    expect(slow.liveInstances()).to.equal(0);
    const refused = await refusal(call(slow, 'spin', { n: 1 }));
    expect([refused.status, refused.code]).to.deep.equal([503, 'RT_ERR_SERVICE_QUIESCED']);
    // Refused before its body is decoded (docs/decisions.md): a body that is not JSON gets the same answer.
    const notJson = await refusal(invokeJson(slow, 'spin', '{"n":', TIMEOUT_MS));
    expect([notJson.status, notJson.code]).to.deep.equal([503, 'RT_ERR_SERVICE_QUIESCED']);
  });
});
