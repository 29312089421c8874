// A worker's service registry and what it hosts (lib/worker/registry.ts,
// hosted-service.ts, instance-pool.ts), in this process: real components,
// scanned and transpiled as the primary does (lib/primary/catalog.ts), loaded,
// called, replaced, staged, quiesced. No CLI, no HTTP.

import { expect } from 'chai';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ApiError } from '../../lib/errors.js';
import type { LoadFailure, ServiceDescriptor } from '../../lib/service.js';
import { createLogger } from '../../lib/log.js';
import { buildCatalog } from '../../lib/primary/catalog.js';
import { ServiceRegistry } from '../../lib/worker/registry.js';
import type { HostedService } from '../../lib/worker/hosted-service.js';
import { repository, RUNAWAY, SLOW, TRAPPING_INIT } from '../support/fixtures.js';
import { tempDir } from '../support/rt-process.js';

const log = createLogger('silent', {});
const TIMEOUT_MS = 1_000;

async function catalog(entries: Parameters<typeof repository>[0]): Promise<{ services: ServiceDescriptor[]; failures: LoadFailure[] }> {
  const repo = await repository(entries);
  const cache = await tempDir('rt-registry-cache-');
  return buildCatalog([pathToFileURL(repo).href], repo, { timeoutMs: 10_000, maxBytes: 1 << 20, cacheRoot: join(cache, 'repositories') }, log);
}

async function call(hosted: HostedService, name: string, body: unknown = {}): Promise<unknown> {
  const method = hosted.method(name);
  if (!method) throw new Error(`no method ${name}`);
  const result = await hosted.invoke(method, body, { rawBytes: false, deadline: performance.now() + TIMEOUT_MS });
  return result.kind === 'json' ? result.value : result.bytes;
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (e) {
    expect(e).to.be.instanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('expected the call to be refused');
}

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
  });

  describe('a pool of instance threads (pool_size 2)', () => {
    let runaway: HostedService;

    beforeEach(async () => {
      const { services } = await catalog({ runaway: RUNAWAY, 'runaway.toml': { raw: 'pool_size = 2\n' } });
      await registry.load(services, []);
      runaway = registry.get('acme', 'runaway')!;
    });

    it('runs on threads, one instance per thread, each keeping its own state', async () => {
      expect(runaway.placement).to.equal('threads');
      expect(runaway.liveInstances()).to.equal(2);
      // Two overlapping calls land on different instances: each counts its first call.
      const counts = await Promise.all([call(runaway, 'busy-count', { spins: 20_000_000 }), call(runaway, 'busy-count', { spins: 20_000_000 })]);
      expect(counts).to.deep.equal([1, 1]);
    });

    it('cuts a runaway call off at its deadline (RT_ERR_CALL_TIMEOUT) and serves the next call from a fresh instance', async () => {
      const started = performance.now();
      const cut = await refusal(call(runaway, 'forever'));
      expect([cut.status, cut.code]).to.deep.equal([504, 'RT_ERR_CALL_TIMEOUT']);
      expect(performance.now() - started).to.be.within(TIMEOUT_MS - 50, TIMEOUT_MS + 5_000);
      expect(await call(runaway, 'count')).to.be.a('number');
    });

    it('answers a call whose memory bomb hits the cap as a trap, and keeps serving', async () => {
      const trapped = await refusal(call(runaway, 'bomb'));
      expect([trapped.status, trapped.code]).to.deep.equal([500, 'RT_ERR_COMPONENT_TRAPPED']);
      expect(await call(runaway, 'count')).to.be.a('number');
    });
  });
});
