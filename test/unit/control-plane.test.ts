// The control plane (lib/primary/control-plane.ts) against a fake fleet: no
// CLI, no worker processes. The fleet's workers are plain names; each request
// they get is recorded, and a test decides when and what they answer. The
// catalog comes from a real repository scan (a WAT component, transpiled into
// the shared test cache).

import { expect } from 'chai';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig, type Config } from '../../lib/config/index.js';
import type { ControlOutcome } from '../../lib/control.js';
import type { ReplyTo, UnsentRequest, WorkerRequest } from '../../lib/ipc.js';
import { createLogger } from '../../lib/log.js';
import { ControlPlane, type Fleet } from '../../lib/primary/control-plane.js';
import { PersistedConfigs } from '../../lib/primary/persisted-configs.js';
import type { ServiceDescriptor } from '../../lib/service.js';
import { eventually, letTimePass } from '../support/eventually.js';
import { repository, versioned } from '../support/fixtures.js';
import { tempDir } from '../support/rt-process.js';

type Kind = WorkerRequest['type'];
type Sent = UnsentRequest<Kind>;

/** Workers that answer as the test says: by default at once, with success. */
class FakeFleet implements Fleet<string> {
  readonly asked: { worker: string; request: Sent; timeoutMs: number | undefined }[] = [];
  /** Replaces a worker's default answer; undefined is a worker that died (or let its bound pass). */
  respond: (worker: string, request: Sent, timeoutMs: number | undefined) => Promise<ReplyTo<Kind> | undefined> = async (_w, r) => success(r);

  constructor(readonly handles: string[]) {}

  workers(): string[] {
    return this.handles;
  }

  async ask<T extends Kind>(worker: string, request: UnsentRequest<T> | (() => UnsentRequest<T>), timeoutMs?: number): Promise<ReplyTo<T> | undefined> {
    const sent = typeof request === 'function' ? request() : request;
    this.asked.push({ worker, request: sent, timeoutMs });
    return (await this.respond(worker, sent, timeoutMs)) as ReplyTo<T> | undefined;
  }

  /** The requests of `type`, in order, as [worker, request]. */
  sent<T extends Kind>(type: T): [string, UnsentRequest<T>][] {
    return this.asked.filter((a) => a.request.type === type).map((a) => [a.worker, a.request as UnsentRequest<T>]);
  }
}

function success(request: Sent): ReplyTo<Kind> {
  switch (request.type) {
    case 'load':
      return { type: 'loaded', id: 0, failures: [] };
    case 'stage':
      return { type: 'staged', id: 0 };
    case 'collect-metrics':
      return { type: 'metrics', id: 0, snapshot: [] };
    default:
      return { type: 'done', id: 0 };
  }
}

/** A promise and the function that settles it: holds a worker's answer until the test lets it go. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('control plane (fake fleet)', function () {
  this.timeout(120_000);
  let config: Config;
  let cwd: string;
  let fleet: FakeFleet;
  const log = createLogger('silent', {});

  async function plane(components: Parameters<typeof repository>[0], options: { metricsTimeoutMs?: number } = {}): Promise<ControlPlane<string>> {
    const repo = await repository(components);
    cwd = await tempDir('rt-control-plane-');
    config = { ...loadConfig({ cwd, env: {}, userConfigFile: join(cwd, 'none.toml') }), repo_urls: [pathToFileURL(repo).href] };
    fleet = new FakeFleet(['w1', 'w2']);
    return new ControlPlane({ config, cwd, log, fleet, persisted: new PersistedConfigs(join(cwd, 'restart-configs')), ...options });
  }

  const names = (services: ServiceDescriptor[]) => services.map((s) => `${s.id.domain}.${s.id.service}`);

  it('tries the first scan on the canary alone; what it cannot instantiate is out of the catalog and set aside', async () => {
    const control = await plane({ one: versioned(1, 'one'), two: versioned(2, 'two') });
    fleet.respond = async (_w, r) => {
      if (r.type !== 'load') return success(r);
      const two = r.services.find((s) => s.id.service === 'two')!;
      return { type: 'loaded', id: 0, failures: [{ source: two.source, error: 'start function trapped' }] };
    };
    await control.start();
    expect(fleet.sent('load').map(([w]) => w)).to.deep.equal(['w1']);
    expect(names(control.catalog.services)).to.deep.equal(['acme.one']);
    expect(control.catalog.failures.map((f) => f.error)).to.deep.equal(['start function trapped']);

    // The same version is not tried again by a reload: no worker is asked to load it.
    fleet.respond = async (_w, r) => success(r);
    const outcome = await control.handle({ op: 'reload' });
    for (const [, load] of fleet.sent('load').slice(1)) expect(names(load.services)).to.deep.equal(['acme.one']);
    expect(fleet.sent('load').slice(1).map(([w]) => w)).to.deep.equal(['w1', 'w2']);
    expect(outcome).to.deep.include({ kind: 'reloaded', added: [], updated: [], removed: [] });
    expect((outcome as Extract<ControlOutcome, { kind: 'reloaded' }>).failed.map((f) => f.error)).to.deep.equal(['start function trapped']);
  });

  it("makes a watched change of configuration files alone a restart of their services, anything else a reload, and keeps a restart body's configuration (docs/api.md §5.4)", async () => {
    const control = await plane({ one: versioned(1, 'one'), 'one.config.toml': { raw: 'a = 1\n' }, two: versioned(2, 'two') });
    await control.start();
    const one = control.catalog.services.find((s) => s.id.service === 'one')!;
    const repository = config.repo_urls[0];
    const asked = () => fleet.asked.map((a) => a.request.type);
    const changed = async (paths: string[]) => {
      fleet.asked.length = 0;
      await control.watched({ repository, paths });
      return asked();
    };
    expect(await changed([one.configFile!])).to.deep.equal(['stage', 'stage', 'commit', 'commit']);
    expect(await changed([one.configFile!, one.source])).to.deep.equal(['load', 'load']);
    expect(await changed([])).to.deep.equal(['load', 'load'], 'a poll, which does not say which files');
    expect(await control.handle({ op: 'restart', service: one.id, config: { bytes: Buffer.from('{}'), contentType: 'application/json' } })).to.include({ kind: 'restarted' });
    expect(await changed([one.configFile!])).to.deep.equal([]);
  });

  it('coalesces the reloads asked for while one runs into one more, whose outcome they share', async () => {
    const control = await plane({ one: versioned(1, 'one') });
    await control.start();
    const held = gate();
    fleet.respond = async (w, r) => {
      if (r.type === 'load' && w === 'w1' && fleet.sent('load').length === 2) await held.opened;
      return success(r);
    };
    const first = control.handle({ op: 'reload' });
    await eventually(() => fleet.sent('load').length === 2, { what: 'the reload to be sent to both workers', timeoutMs: 10_000, intervalMs: 5 });
    const second = control.handle({ op: 'reload' });
    const third = control.handle({ op: 'reload' });
    held.open();
    const [a, b, c] = await Promise.all([first, second, third]);
    expect(b).to.equal(c);
    expect(a).to.not.equal(b);
    // start (canary) + the first reload (w1, w2) + one more for both waiting ones (w1, w2).
    expect(fleet.sent('load').map(([w]) => w)).to.deep.equal(['w1', 'w1', 'w2', 'w1', 'w2']);
  });

  it('reloads past a worker that dies during it (its replacement loads the catalog as it is then)', async () => {
    const control = await plane({ one: versioned(1, 'one') });
    await control.start();
    fleet.respond = async (w, r) => (w === 'w2' ? undefined : success(r));
    expect(await control.handle({ op: 'reload' })).to.include({ kind: 'reloaded' });
  });

  it('answers restart and quiesce of a service it does not have with RT_ERR_UNKNOWN_SERVICE, asking no worker', async () => {
    const control = await plane({ one: versioned(1, 'one') });
    await control.start();
    const before = fleet.asked.length;
    for (const op of ['restart', 'quiesce'] as const) {
      expect(await control.handle({ op, service: { domain: 'acme', service: 'nothing' } })).to.deep.equal({
        kind: 'failed',
        code: 'RT_ERR_UNKNOWN_SERVICE',
        details: 'no service acme.nothing is loaded',
        context: { service: 'acme.nothing' },
      });
    }
    expect(fleet.asked.length).to.equal(before);
  });

  it('quiesces in the catalog first, then waits for every worker to drain', async () => {
    const control = await plane({ one: versioned(1, 'one') });
    await control.start();
    const held = gate();
    fleet.respond = async (w, r) => {
      if (r.type === 'quiesce' && w === 'w2') await held.opened;
      return success(r);
    };
    let done = false;
    const quiesced = control.handle({ op: 'quiesce', service: { domain: 'acme', service: 'one' } }).then((o) => ((done = true), o));
    await eventually(() => fleet.sent('quiesce').length === 2, { what: 'the quiesce to be sent to both workers', timeoutMs: 10_000, intervalMs: 5 });
    expect(control.catalog.services[0].quiesced).to.equal(true);
    await new Promise((r) => setImmediate(r));
    expect(done).to.equal(false);
    held.open();
    expect(await quiesced).to.deep.equal({ kind: 'quiesced', service: 'acme.one' });
  });

  it('carries out a restart and a reload while a quiesce waits for its drain, each sent after the quiesce (docs/api.md §5.3)', async () => {
    const control = await plane({ one: versioned(1, 'one'), two: versioned(2, 'two') });
    await control.start();
    const held = gate();
    fleet.respond = async (_w, r) => {
      if (r.type === 'quiesce') await held.opened;
      return success(r);
    };
    let done = false;
    const quiesced = control.handle({ op: 'quiesce', service: { domain: 'acme', service: 'one' } }).then((o) => ((done = true), o));
    expect(await control.handle({ op: 'restart', service: { domain: 'acme', service: 'two' } })).to.deep.equal({ kind: 'restarted', service: 'acme.two' });
    expect(await control.handle({ op: 'reload' })).to.deep.include({ kind: 'reloaded' });
    // The quiesced state survives both: a reload keeps it, a restart of another service does not touch it.
    expect(control.catalog.services.find((s) => s.id.service === 'one')?.quiesced).to.equal(true);
    const order = fleet.asked.map((a) => a.request.type);
    expect(order.indexOf('quiesce')).to.be.below(order.indexOf('stage'));
    expect(done).to.equal(false);
    held.open();
    expect(await quiesced).to.deep.equal({ kind: 'quiesced', service: 'acme.one' });
  });

  it('restarts on every worker or none: a stage error discards everywhere and keeps the catalog', async () => {
    const control = await plane({ one: versioned(1, 'one') });
    await control.start();
    const before = control.catalog.services[0];
    fleet.respond = async (w, r) => (r.type === 'stage' && w === 'w2' ? { type: 'staged', id: 0, error: 'init refused' } : success(r));
    const body = { bytes: new Uint8Array(Buffer.from('{"a":1}')), contentType: 'application/json' };
    const outcome = await control.handle({ op: 'restart', service: before.id, config: body });
    expect(outcome).to.deep.equal({ kind: 'failed', code: 'RT_ERR_RESTART_FAILED', details: 'init refused', context: { service: 'acme.one', status: 'restart failed' } });
    expect(fleet.sent('discard').map(([w]) => w)).to.deep.equal(['w1', 'w2']);
    expect(fleet.sent('commit')).to.deep.equal([]);
    expect(control.catalog.services[0]).to.equal(before);

    fleet.respond = async (_w, r) => success(r);
    expect(await control.handle({ op: 'restart', service: before.id, config: body })).to.deep.equal({ kind: 'restarted', service: 'acme.one' });
    expect(fleet.sent('commit').map(([w]) => w)).to.deep.equal(['w1', 'w2']);
    expect(control.catalog.services[0].config?.origin).to.equal('restart body');
  });

  it('refuses a restart body that is not a configuration with RT_ERR_INVALID_CONFIGURATION, before asking any worker', async () => {
    const control = await plane({ one: versioned(1, 'one') });
    await control.start();
    const outcome = await control.handle({ op: 'restart', service: { domain: 'acme', service: 'one' }, config: { bytes: new Uint8Array(Buffer.from('{')), contentType: 'application/json' } });
    expect(outcome).to.include({ kind: 'failed', code: 'RT_ERR_INVALID_CONFIGURATION' });
    expect(fleet.sent('stage')).to.deep.equal([]);
  });

  it('sums the metrics of the workers that answer within its bound, leaving a slow one out', async () => {
    const control = await plane({}, { metricsTimeoutMs: 50 });
    const snapshot = [{ name: 'rt_test_total', help: 'test', type: 'counter', aggregator: 'sum', values: [{ value: 3, labels: {} }] }];
    fleet.respond = async (w, r, timeoutMs) => {
      if (r.type !== 'collect-metrics') return success(r);
      if (w === 'w2') return letTimePass(timeoutMs ?? 0, 'w2 does not answer within the bound').then(() => undefined);
      return { type: 'metrics', id: 0, snapshot } as unknown as ReplyTo<'collect-metrics'>;
    };
    const outcome = await control.handle({ op: 'metrics' });
    expect(fleet.sent('collect-metrics').length).to.equal(2);
    expect(fleet.asked.every((a) => a.timeoutMs === 50)).to.equal(true);
    expect(outcome.kind).to.equal('metrics');
    const text = (outcome as Extract<ControlOutcome, { kind: 'metrics' }>).text;
    expect(text).to.match(/^rt_test_total 3$/m);
    expect(text).to.match(/^rt_workers 2$/m);
  });
});
