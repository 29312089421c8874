// The control plane (docs/api.md §5.2–5.4): restart, quiesce and reload, carried
// out by the primary on every worker before the HTTP answer goes back. It
// owns the catalog, the set of services every worker is told to serve.
//
// Operations run one at a time, in arrival order: each one reads the catalog
// and leaves a new one, and interleaving two would let one undo the other.
// Reloads asked for while one runs are coalesced into the next one. A
// quiesce takes its turn only to mark its service and tell the workers; its
// drain (as long as a stream's deadline) is waited for outside of the others.

import { realpath } from 'node:fs/promises';
import type { Config } from '../config/index.js';
import { outcomeStatus, type ControlOutcome, type ControlRequest } from '../control.js';
import type { ErrorCode } from '../errors.js';
import type { MetricsSnapshot, ReplyTo, UnsentRequest, WorkerRequest } from '../ipc.js';
import type { Logger } from '../log.js';
import { serviceKey, serviceName, serviceRevision, type LoadFailure, type ServiceConfig, type ServiceDescriptor, type ServiceId } from '../service.js';
import { buildCatalog, type Catalog } from './catalog.js';
import { PrimaryMetrics } from './metrics.js';
import { MetricsHistoryRing } from './metrics-history-ring.js';
import type { PersistedConfigs } from './persisted-configs.js';
import { repositoryReading } from './repositories.js';
import type { RepositoryChange } from './repository-watch.js';
import { readConfigFile, serviceConfig, ServiceConfigError } from './service-config.js';

/**
 * The workers, as the control plane reaches them (the supervisor). A worker
 * is an opaque handle `W` to it: what a worker is, and how a request reaches
 * it, is the fleet's business (a test's fake fleet answers itself).
 */
export interface Fleet<W> {
  /** The workers now running (or starting). */
  workers(): W[];
  /**
   * Sends `request` to `worker` (once it listens; a function makes the request
   * then) and waits for its reply: undefined when the worker dies first (its
   * replacement loads the catalog as it is then) or `timeoutMs` passes.
   * Without `timeoutMs` it waits as long as the worker is alive: a worker
   * bounds its own work (instantiation by the request timeout, a drain by
   * its calls' deadlines), and one that stops sending heartbeats is replaced.
   */
  ask<T extends WorkerRequest['type']>(worker: W, request: UnsentRequest<T> | (() => UnsentRequest<T>), timeoutMs?: number): Promise<ReplyTo<T> | undefined>;
}

export interface ControlPlaneOptions<W> {
  config: Config;
  cwd: string;
  log: Logger;
  fleet: Fleet<W>;
  persisted: PersistedConfigs;
  /** How long a metrics scrape waits for a worker's snapshot before leaving it out (default 10 s). */
  metricsTimeoutMs?: number;
  /** How often the history of rates and latencies is sampled (default: metrics-history-ring.ts). */
  historyIntervalMs?: number;
}

/** A metrics scrape does not wait longer for a worker's snapshot (it is left out). */
const METRICS_TIMEOUT_MS = 10_000;

export class ControlPlane<W> {
  readonly #opts: ControlPlaneOptions<W>;
  readonly #log: Logger;
  #catalog: Catalog = { services: [], failures: [] };
  /** The operation running now (or the initial scan); the next one starts after it. */
  #serial: Promise<unknown> = Promise.resolve();
  #reloadRunning: Promise<ControlOutcome> | undefined;
  #reloadNext: Promise<ControlOutcome> | undefined;
  /**
   * Versions the canary could not instantiate, by service key: out of the
   * catalog and not tried again until their revision changes (a start
   * function that loops would hold every reload for the instantiation bound).
   */
  #unstartable = new Map<string, { revision: string; failure: LoadFailure }>();
  readonly #metrics: PrimaryMetrics;
  readonly #history: MetricsHistoryRing<W>;

  constructor(opts: ControlPlaneOptions<W>) {
    this.#opts = opts;
    this.#log = opts.log;
    this.#metrics = new PrimaryMetrics({ services: () => this.#catalog.services.length, workers: () => opts.fleet.workers().length });
    this.#history = new MetricsHistoryRing({ snapshots: (timeoutMs) => this.#snapshots(timeoutMs), ...(opts.historyIntervalMs ? { intervalMs: opts.historyIntervalMs } : {}) });
  }

  /** Samples the history of rates and latencies (`/api/metrics/history`) from now on. */
  startSampling(): void {
    this.#history.start();
  }

  /** Shutting down: the workers are asked for nothing more. */
  stopSampling(): void {
    this.#history.stop();
  }

  /** What every worker serves (a new worker is sent this). */
  get catalog(): Catalog {
    return this.#catalog;
  }

  /**
   * The first scan, at start-up, tried on the canary: the other workers get
   * the catalog once it settles, without what the canary could not
   * instantiate. Control requests wait for it.
   */
  start(): Promise<void> {
    return this.#exclusive(async () => {
      await this.#tightenKeptConfigs();
      this.#catalog = await this.#scan(undefined);
      const [canary] = this.#opts.fleet.workers();
      if (canary) await this.#tryOnCanary(canary, { services: [], failures: [] });
    });
  }

  /** Restart bodies an older rt kept readable by every user become rt's user's alone; rt runs on without them if it cannot. */
  async #tightenKeptConfigs(): Promise<void> {
    const { persisted } = this.#opts;
    try {
      const files = await persisted.tighten();
      if (files > 0) this.#log.debug({ dir: persisted.dir, files }, 'kept restart configurations readable by their owner only');
    } catch (e) {
      this.#log.warn({ dir: persisted.dir, err: e }, 'cannot make the kept restart configurations readable by their owner only');
    }
  }

  handle(request: ControlRequest): Promise<ControlOutcome> {
    if (request.op === 'metrics') return this.#collectMetrics();
    if (request.op === 'metrics-history') return Promise.resolve({ kind: 'metrics-history', history: this.#history.view() });
    const answer = (() => {
      switch (request.op) {
        case 'restart':
          return this.#exclusive(() => this.#restart(request.service, request.config));
        case 'quiesce':
          return this.#quiesce(request.service);
        case 'reload':
          return this.#reload();
      }
    })();
    return answer.then(
      (a) => {
        this.#metrics.operation(request.op, outcomeStatus(a));
        return a;
      },
      (e: unknown) => {
        this.#metrics.operation(request.op, 500);
        throw e;
      },
    );
  }

  /**
   * What a watched repository's change means (docs/api.md §5.4): when the
   * files that changed are all configuration files of services, those
   * services restart with them, as a restart without a body would (one
   * whose configuration came in a restart body keeps it: only a restart
   * without a body gives it up); any other change, and one a poll saw
   * (which does not say which files), is a reload. Either is the endpoint's
   * own operation, coalesced, logged and counted like it.
   */
  async watched(change: RepositoryChange): Promise<void> {
    const log = this.#log.child({ repository: change.repository, trigger: 'watch' });
    const configured = await this.#configuredBy(change.paths);
    if (configured === undefined) {
      log.info({ files: change.paths.length }, 'the repository changed: reloading');
      await this.#watchedOperation({ op: 'reload' }, log);
      return;
    }
    for (const service of configured) {
      const name = serviceName(service.id);
      if (await this.#opts.persisted.load(service.id, () => {})) {
        log.info({ service: name }, 'its configuration file changed, but the configuration of a restart body is in force: a restart without a body goes back to the file');
        continue;
      }
      log.info({ service: name }, 'its configuration file changed: restarting');
      await this.#watchedOperation({ op: 'restart', service: service.id }, log);
    }
  }

  /** The services whose configuration files are all of `paths`; undefined when any path is something else. */
  async #configuredBy(paths: string[]): Promise<ServiceDescriptor[] | undefined> {
    if (paths.length === 0) return undefined;
    // Configuration files are known with their symlinks resolved (service-config.ts); a file gone has nothing to resolve.
    const real = await Promise.all(paths.map((p) => realpath(p).catch(() => p)));
    const services = this.#catalog.services.filter((s) => s.configFile !== null && real.includes(s.configFile));
    const configFiles = new Set(services.map((s) => s.configFile));
    return real.every((p) => configFiles.has(p)) ? services : undefined;
  }

  async #watchedOperation(request: ControlRequest & { op: 'reload' | 'restart' }, log: Logger): Promise<void> {
    this.#metrics.watched(request.op);
    try {
      const outcome = await this.handle(request);
      if (outcome.kind === 'failed') log.warn({ code: outcome.code }, `the ${request.op} watch started failed: ${outcome.details}`);
    } catch (e) {
      log.error({ err: e }, `the ${request.op} watch started failed`);
    }
  }

  /** Not an operation: it runs beside them, and a worker that does not send its snapshot in time is left out. */
  async #collectMetrics(): Promise<ControlOutcome> {
    const snapshots = await this.#snapshots(this.#opts.metricsTimeoutMs ?? METRICS_TIMEOUT_MS);
    return { kind: 'metrics', text: await this.#metrics.text([...snapshots.values()].filter((s) => s !== undefined)), contentType: this.#metrics.contentType };
  }

  /** Each worker's metrics snapshot: undefined for one that did not send it within `timeoutMs`. */
  async #snapshots(timeoutMs: number): Promise<Map<W, MetricsSnapshot | undefined>> {
    const { fleet } = this.#opts;
    const workers = fleet.workers();
    const replies = await Promise.all(workers.map((w) => fleet.ask(w, { type: 'collect-metrics' }, timeoutMs)));
    return new Map(workers.map((w, i) => [w, replies[i]?.snapshot]));
  }

  #exclusive<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.#serial.then(operation);
    this.#serial = result.catch(() => {});
    return result;
  }

  /**
   * A reload asked for while one runs cannot join it (the repositories may
   * have changed after it scanned them), so it waits for the next one, which
   * every request arriving meanwhile shares.
   */
  #reload(): Promise<ControlOutcome> {
    if (!this.#reloadRunning) {
      this.#reloadRunning = this.#exclusive(() => this.#reloadOnce()).finally(() => (this.#reloadRunning = undefined));
      return this.#reloadRunning;
    }
    this.#reloadNext ??= this.#reloadRunning
      .catch(() => {})
      .then(() => {
        this.#reloadNext = undefined;
        return this.#reload();
      });
    return this.#reloadNext;
  }

  /** Scans the repositories; `previous` carries quiesced states and the versions kept when their update fails. */
  async #scan(previous: Catalog | undefined): Promise<Catalog> {
    const { config, cwd, log, persisted } = this.#opts;
    const scanned = await buildCatalog(config.repo_urls, cwd, repositoryReading(config.repositories), log);
    const services: ServiceDescriptor[] = [];
    const unstartable = new Map<string, { revision: string; failure: LoadFailure }>();
    for (const found of scanned.services) {
      const stored = await persisted.load(found.id, (message) => log.warn({ service: serviceName(found.id) }, `ignoring the saved restart configuration: ${message}`));
      const before = previous?.services.find((s) => serviceKey(s.id) === serviceKey(found.id));
      const revised = revise(found, { config: stored ?? found.config, quiesced: before?.quiesced ?? false });
      const known = this.#unstartable.get(serviceKey(found.id));
      if (known?.revision === revised.revision) {
        unstartable.set(serviceKey(found.id), known);
        scanned.failures.push(known.failure);
      } else {
        services.push(revised);
      }
    }
    this.#unstartable = unstartable;
    // A component that fails to load never takes down the version that was
    // serving, nor does a repository that cannot be read (a missing file:
    // root), quiesced or not, while one that lists nothing removes its services.
    const failed = new Set(scanned.failures.map((f) => f.source));
    const unreadable = new Set(scanned.unreadable);
    for (const serving of previous?.services ?? []) {
      if (!failed.has(serving.source) && !unreadable.has(serving.repository)) continue;
      if (!services.some((s) => serviceKey(s.id) === serviceKey(serving.id))) services.push(serving);
    }
    return { services, failures: scanned.failures };
  }

  async #reloadOnce(): Promise<ControlOutcome> {
    const previous = this.#catalog;
    this.#catalog = await this.#scan(previous);
    // One worker at a time, each swapping services only once their new
    // instances exist: the others serve meanwhile, so no request is refused.
    const [canary, ...others] = this.#opts.fleet.workers();
    if (canary) await this.#tryOnCanary(canary, previous);
    for (const worker of others) await this.#load(worker);
    const { added, updated, removed } = diff(previous.services, this.#catalog.services);
    this.#log.info({ added, updated, removed, failed: this.#catalog.failures.length }, 'reloaded');
    return { kind: 'reloaded', added, updated, removed, failed: this.#catalog.failures };
  }

  /**
   * Loads the catalog on the first worker, the canary: a service it cannot
   * instantiate goes back to its `previous` version (or out, when new), so
   * the others are not asked to try it, and that version is set aside.
   */
  async #tryOnCanary(canary: W, previous: Catalog): Promise<void> {
    const reply = await this.#load(canary);
    if (!reply || reply.failures.length === 0) return;
    for (const failure of reply.failures) {
      const tried = this.#catalog.services.find((s) => s.source === failure.source);
      if (!tried) continue;
      const serving = previous.services.find((s) => serviceKey(s.id) === serviceKey(tried.id));
      // A version that was serving and failed on this worker alone (a new one) stays, and is tried again.
      if (serving?.revision !== tried.revision) this.#unstartable.set(serviceKey(tried.id), { revision: tried.revision, failure });
    }
    this.#catalog = keepPrevious(this.#catalog, previous, reply.failures);
  }

  #load(worker: W): Promise<ReplyTo<'load'> | undefined> {
    return this.#opts.fleet.ask(worker, { type: 'load', services: this.#catalog.services, failures: this.#catalog.failures });
  }

  /** Builds the new instances on every worker, then switches all of them; if any cannot be built, none switches. */
  async #restart(id: ServiceId, body: { bytes: Uint8Array; contentType: string } | undefined): Promise<ControlOutcome> {
    const current = this.#find(id);
    if (!current) return unknownService(id);
    let config: ServiceConfig | null;
    try {
      config = body ? serviceConfig(body.bytes, body.contentType, 'restart body') : current.configFile ? await readConfigFile(current.configFile) : null;
    } catch (e) {
      if (e instanceof ServiceConfigError) return failure('RT_ERR_INVALID_CONFIGURATION', e.message, id);
      throw e;
    }
    const next = revise(current, { config, quiesced: false });
    const workers = this.#opts.fleet.workers();
    const staged = await Promise.all(workers.map((w) => this.#opts.fleet.ask(w, { type: 'stage', service: next })));
    let error = staged.map((reply) => reply?.error).find((e) => e !== undefined);
    // Kept before any worker switches: a configuration that would not survive a host restart is refused.
    if (error === undefined) error = await this.#persist(id, body ? config : null);
    if (error !== undefined) {
      await Promise.all(workers.map((w) => this.#opts.fleet.ask(w, { type: 'discard', service: id })));
      this.#log.warn({ service: serviceName(id) }, `restart failed, the previous instances keep serving: ${error}`);
      return failure('RT_ERR_RESTART_FAILED', error, id, { status: 'restart failed' });
    }
    // In the catalog before any worker switches: a worker started meanwhile loads the new version.
    this.#replace(next);
    await Promise.all(workers.map((w) => this.#opts.fleet.ask(w, { type: 'commit', service: id })));
    this.#log.info({ service: serviceName(id), config: config?.origin ?? null }, 'restarted');
    return { kind: 'restarted', service: serviceName(id) };
  }

  /** Keeps a restart body's configuration (or forgets it: `null`); the error, if that fails. */
  async #persist(id: ServiceId, config: ServiceConfig | null): Promise<string | undefined> {
    try {
      if (config) await this.#opts.persisted.save(id, config);
      else await this.#opts.persisted.remove(id);
      return undefined;
    } catch (e) {
      return `cannot keep the configuration in ${this.#opts.persisted.dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
    }
  }

  /**
   * Answers once every worker has drained the service's calls and dropped its
   * instances. Only marking it and telling the workers takes a turn among the
   * operations: waiting for the drain there would hold every control
   * operation on every other service until the service's last stream ended
   * (docs/api.md §5.3).
   */
  async #quiesce(id: ServiceId): Promise<ControlOutcome> {
    const asked = await this.#exclusive(async () => {
      const current = this.#find(id);
      if (!current) return undefined;
      // First in the catalog, so a worker started meanwhile comes up quiesced too.
      this.#replace({ ...current, quiesced: true });
      // Sent now, in order with the operations before and after this one; each worker answers once drained.
      return { drained: Promise.all(this.#opts.fleet.workers().map((w) => this.#opts.fleet.ask(w, { type: 'quiesce', service: id }))) };
    });
    if (!asked) return unknownService(id);
    // No bound of ours: each call (or stream) ends by its own deadline, and
    // however many are queued, a worker that drains is alive and left to it.
    await asked.drained;
    this.#log.info({ service: serviceName(id) }, 'quiesced');
    return { kind: 'quiesced', service: serviceName(id) };
  }

  #find(id: ServiceId): ServiceDescriptor | undefined {
    return this.#catalog.services.find((s) => serviceKey(s.id) === serviceKey(id));
  }

  #replace(descriptor: ServiceDescriptor): void {
    const key = serviceKey(descriptor.id);
    this.#catalog = { ...this.#catalog, services: this.#catalog.services.map((s) => (serviceKey(s.id) === key ? descriptor : s)) };
  }
}

function revise(descriptor: ServiceDescriptor, changes: Pick<ServiceDescriptor, 'config' | 'quiesced'>): ServiceDescriptor {
  const revised = { ...descriptor, ...changes };
  return { ...revised, revision: serviceRevision(revised) };
}

/** `catalog` with the services that failed to instantiate back at their `previous` version (or gone, when new). */
function keepPrevious(catalog: Catalog, previous: Catalog, failures: LoadFailure[]): Catalog {
  const failed = new Set(failures.map((f) => f.source));
  const services = catalog.services.flatMap((s) => {
    if (!failed.has(s.source)) return [s];
    const before = previous.services.find((p) => serviceKey(p.id) === serviceKey(s.id));
    return before ? [before] : [];
  });
  return { services, failures: [...catalog.failures, ...failures] };
}

function diff(before: ServiceDescriptor[], after: ServiceDescriptor[]): Record<'added' | 'updated' | 'removed', string[]> {
  const old = new Map(before.map((s) => [serviceKey(s.id), s]));
  const now = new Map(after.map((s) => [serviceKey(s.id), s]));
  const names = (list: ServiceDescriptor[]) => list.map((s) => serviceName(s.id)).sort();
  return {
    added: names(after.filter((s) => !old.has(serviceKey(s.id)))),
    updated: names(after.filter((s) => old.has(serviceKey(s.id)) && old.get(serviceKey(s.id))!.revision !== s.revision)),
    removed: names(before.filter((s) => !now.has(serviceKey(s.id)))),
  };
}

/** A failed operation on service `id`, with any operation-specific fields for its error body (docs/api.md §5.5). */
function failure(code: ErrorCode, details: string, id: ServiceId, extra: Record<string, unknown> = {}): ControlOutcome {
  return { kind: 'failed', code, details, context: { service: serviceName(id), ...extra } };
}

function unknownService(id: ServiceId): ControlOutcome {
  return failure('RT_ERR_UNKNOWN_SERVICE', `no service ${serviceName(id)} is loaded`, id);
}
