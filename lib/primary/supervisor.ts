// The primary process: forks the workers, tells them what to serve, replaces
// the ones that die, and shuts everything down on SIGTERM/SIGINT.

import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import type { ControlOutcome } from '../control.js';
import {
  HEARTBEAT_INTERVAL_MS,
  isWorkerMessage,
  peerSocketPath,
  WORKER_BOOTSTRAP_ENV,
  type PrimaryMessage,
  type ReplyTo,
  type UnsentRequest,
  type WorkerBootstrap,
  type WorkerMessage,
  type WorkerRequest,
} from '../ipc.js';
import { exitAfterLogs, type Logger } from '../log.js';
import type { Placement, PlacementTable } from '../service.js';
import { dataDir } from '../paths.js';
import { platformNote } from '../platform.js';
import { ControlPlane, type Fleet } from './control-plane.js';
import { PersistedConfigs } from './persisted-configs.js';
import { repositoryReading } from './repositories.js';
import { RepositoryWatch } from './repository-watch.js';
import { tlsFiles, type TlsFiles } from './tls.js';
import { WorkerLink } from './worker-link.js';

// A worker that dies this soon after starting, this many times in a row, is
// not going to get better by being forked again.
const CRASH_WINDOW_MS = 5_000;
const MAX_QUICK_CRASHES = 5;

export interface PrimaryOptions {
  version: string;
  config: Config;
  cwd: string;
  verbose: boolean;
  log: Logger;
}

/**
 * A worker that has not started yet is given longer to say so: loading
 * Node, Koa and the jco runtime on a busy machine takes a while.
 */
const STARTUP_HEARTBEAT_FACTOR = 6;

export class Supervisor implements Fleet<Worker> {
  readonly #opts: PrimaryOptions;
  /** Made once per run: handles issued by a worker of this run verify in every other, replacements included. */
  readonly #handleKey = randomBytes(32).toString('hex');
  /** Where workers listen for each other (worker/http/peers.ts): made for this run, 0700, removed with it. */
  readonly #peerDir = mkdtempSync(join(tmpdir(), 'rt-peers-'));
  readonly #log: Logger;
  readonly #control: ControlPlane<Worker>;
  #loaded = false;
  #tls: TlsFiles | undefined;
  /** `repositories.watch`: started once every worker serves the first scan, stopped on shutdown. */
  #watch: RepositoryWatch | undefined;
  /** How each worker is sent messages and asked requests (worker-link.ts). */
  readonly #links = new WeakMap<Worker, WorkerLink>();
  /** When each worker was last heard from (any message counts). */
  readonly #heard = new WeakMap<Worker, number>();
  /** Workers that have sent `started`, and so send heartbeats. */
  readonly #beating = new WeakSet<Worker>();
  /**
   * The worker in each of `workers` slots: a replacement takes the slot of
   * the one it replaces, so the slot a scope's handles live in
   * (worker/execution/handle-homes.ts) keeps its place while workers come
   * and go.
   */
  readonly #slots: (Worker | undefined)[] = [];
  /** Where each live worker runs its services, as it last said. */
  readonly #placements = new Map<Worker, Record<string, Placement>>();
  #lastCheck = performance.now();
  #ready = false;
  #stopping = false;
  #quickCrashes = 0;

  constructor(opts: PrimaryOptions) {
    this.#opts = opts;
    this.#log = opts.log;
    this.#control = new ControlPlane({
      config: opts.config,
      cwd: opts.cwd,
      log: opts.log,
      fleet: this,
      persisted: new PersistedConfigs(join(dataDir(), 'restart-configs')),
    });
  }

  async start(): Promise<void> {
    // Workers accept from the shared socket themselves. With round-robin the
    // primary hands each new connection to a worker over IPC, and one handed to
    // a worker that has just died is lost with the client left hanging.
    cluster.schedulingPolicy = cluster.SCHED_NONE;
    cluster.setupPrimary({
      exec: fileURLToPath(new URL('../worker/main.js', import.meta.url)),
      // Structured clone keeps service descriptors intact without a JSON round trip.
      serialization: 'advanced',
    });
    process.on('exit', () => rmSync(this.#peerDir, { recursive: true, force: true }));
    process.on('SIGTERM', () => void this.stop(0, 'SIGTERM'));
    process.on('SIGINT', () => void this.stop(0, 'SIGINT'));

    const { config } = this.#opts;
    // How long this event loop was held up while starting (compiling
    // components is the compiler threads' work, not its own): at most tens of
    // ms, or heartbeats, control relays and /api/ready wait. In the ready line.
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    setInterval(() => this.#checkHeartbeats(), HEARTBEAT_INTERVAL_MS).unref();
    const note = platformNote();
    if (note) this.#log.info(note);
    this.#tls = await tlsFiles(config, this.#log);
    // Fork first: workers answer /api/health while the components compile.
    for (let slot = 0; slot < config.workers; slot++) this.#fork(slot);
    if (config.repositories.watch) this.#watch = await this.#prepareWatch();
    await this.#control.start();
    this.#loaded = true;
    // The workers now running: one that died during the scan has a replacement, which is not loaded yet either.
    await Promise.all(this.workers().map((w) => this.#load(w)));
    delay.disable();
    if (this.#stopping) return; // a signal came while loading
    this.#ready = true;
    this.#broadcast({ type: 'cluster-ready', ready: true });
    // Not before: a reload would race the first catalog to the workers.
    this.#watch?.start();
    this.#control.startSampling();
    const { services, failures } = this.#control.catalog;
    this.#log.info(
      { services: services.length, failed: failures.length, workers: config.workers, event_loop_delay_max_ms: Math.round(delay.max / 1e6) },
      `ready: ${services.length} service(s) on http://${config.http.host}:${config.http.port}${this.#tls ? ` and https://${config.http.host}:${config.http.tls_port}` : ''}`,
    );
  }

  /** Prepared before the first scan, so that what changes while it runs is reloaded once the watch starts. */
  #prepareWatch(): Promise<RepositoryWatch> {
    const { config, cwd, log } = this.#opts;
    const { settle_ms, poll_seconds } = config.repositories;
    log.info({ settle_ms, poll_seconds }, `watching ${config.repo_urls.length} repositories (repositories.watch)`);
    return RepositoryWatch.prepare({
      repoUrls: config.repo_urls,
      cwd,
      settleMs: settle_ms,
      pollMs: poll_seconds * 1000,
      download: repositoryReading(config.repositories).download,
      log,
      changed: (change) => void this.#control.watched(change),
    });
  }

  #fork(slot: number): Worker {
    // The worker puts itself in its slot (cluster gives it its id as it forks it); the others learn of it from the broadcast below.
    const bootstrap: WorkerBootstrap = { version: this.#opts.version, config: this.#opts.config, verbose: this.#opts.verbose, handleKey: this.#handleKey, peerDir: this.#peerDir, slot, homes: this.#homes() };
    if (this.#tls) bootstrap.tls = this.#tls;
    const worker = cluster.fork({ [WORKER_BOOTSTRAP_ENV]: JSON.stringify(bootstrap) });
    this.#slots[slot] = worker;
    this.#broadcast({ type: 'homes', workers: this.#homes() });
    const forkedAt = Date.now();
    this.#heard.set(worker, performance.now());
    const link = new WorkerLink(String(worker.id), (m) => this.#send(worker, m));
    this.#links.set(worker, link);
    worker.on('message', (m: unknown) => {
      this.#heard.set(worker, performance.now());
      if (isWorkerMessage(m)) this.#onMessage(worker, link, m);
    });
    worker.on('exit', (code, signal) => {
      link.exited();
      // A socket left by a worker killed outright would refuse connections; none at all says as much, sooner.
      rmSync(peerSocketPath(this.#peerDir, worker.id), { force: true });
      this.#onExit(worker, forkedAt, code, signal);
    });
    return worker;
  }

  #onMessage(worker: Worker, link: WorkerLink, m: WorkerMessage): void {
    switch (m.type) {
      case 'started':
        this.#beating.add(worker);
        link.started();
        // Broadcasts sent while it was starting may have come before it listened.
        this.#send(worker, { type: 'homes', workers: this.#homes() });
        break;
      case 'heartbeat':
        break;
      case 'placements':
        this.#placements.set(worker, m.services);
        this.#sharePlacements();
        break;
      case 'loaded':
      case 'staged':
      case 'done':
      case 'metrics':
        link.settle(m);
        break;
      case 'control':
        void this.#control
          .handle(m.request)
          .catch((e: unknown): ControlOutcome => {
            this.#log.error({ err: e }, `${m.request.op} failed`);
            return { kind: 'failed', code: 'RT_ERR_CONTROL_FAILED', details: e instanceof Error ? e.message : String(e), context: { operation: m.request.op } };
          })
          .then((outcome) => this.#send(worker, { type: 'control-answer', id: m.id, outcome }));
        break;
      case 'fatal':
        this.#log.fatal({ worker: worker.id }, m.error);
        void this.stop(1, 'a worker cannot serve');
        break;
    }
  }

  /** Sends the current service set to one worker and waits until it has instantiated it. */
  async #load(worker: Worker): Promise<void> {
    // The catalog as it is when the worker is ready for it: a control operation may change it meanwhile.
    const reply = await this.ask(worker, () => ({ type: 'load', ...this.#control.catalog }));
    if (reply?.type !== 'loaded') return;
    for (const f of reply.failures) this.#log.error({ worker: worker.id, source: f.source }, `worker could not load: ${f.error}`);
  }

  workers(): Worker[] {
    return Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
  }

  async ask<T extends WorkerRequest['type']>(worker: Worker, request: UnsentRequest<T> | (() => UnsentRequest<T>), timeoutMs?: number): Promise<ReplyTo<T> | undefined> {
    try {
      return await this.#links.get(worker)!.ask(request, timeoutMs);
    } catch (e) {
      // Gone (its replacement loads the catalog as it is now), or slow to
      // answer a request that has a bound: left out, not killed. Whether a
      // worker is stuck is for its heartbeats to tell.
      if (!worker.isDead() && !this.#stopping) this.#log.warn({ worker: worker.id }, (e as Error).message);
      return undefined;
    }
  }

  /**
   * Kills a worker whose heartbeats stopped (SIGSTOP, a blocked event loop):
   * its keep-alive connections would hang, and control operations wait on it.
   * Its exit starts a replacement.
   */
  #checkHeartbeats(): void {
    const now = performance.now();
    const late = now - this.#lastCheck > 2 * HEARTBEAT_INTERVAL_MS;
    this.#lastCheck = now;
    for (const worker of this.workers()) {
      // This process's own event loop was held up (a long GC, a machine too
      // busy to run it): the heartbeats sent meanwhile are still queued
      // behind this timer, so nobody is judged on that stretch.
      if (late) this.#heard.set(worker, now);
      const silentMs = now - (this.#heard.get(worker) ?? now);
      // runtime.heartbeat_timeout_seconds (5 s by default): well above anything a worker's main thread does in one go (inline calls are cut off at tens of ms).
      const timeoutMs = this.#opts.config.runtime.heartbeat_timeout_seconds * 1000;
      if (silentMs <= (this.#beating.has(worker) ? timeoutMs : STARTUP_HEARTBEAT_FACTOR * timeoutMs)) continue;
      this.#log.error({ worker: worker.id, silent_ms: Math.round(silentMs) }, `worker ${worker.id} sent no heartbeat for ${(silentMs / 1000).toFixed(1)} s; replacing it`);
      this.#heard.delete(worker);
      worker.process.kill('SIGKILL');
    }
  }

  #onExit(worker: Worker, forkedAt: number, code: number | null, signal: string | null): void {
    if (this.#stopping) return;
    if (this.#placements.delete(worker)) this.#sharePlacements();
    this.#log.error({ worker: worker.id, code, signal }, 'worker died; starting a replacement');
    this.#quickCrashes = Date.now() - forkedAt < CRASH_WINDOW_MS ? this.#quickCrashes + 1 : 0;
    if (this.#quickCrashes >= MAX_QUICK_CRASHES) {
      this.#log.fatal(`workers keep dying at start-up (${MAX_QUICK_CRASHES} in a row); stopping`);
      void this.stop(1, 'crash loop');
      return;
    }
    const replacement = this.#fork(this.#slots.indexOf(worker));
    if (this.#loaded) {
      void this.#load(replacement).then(() => {
        if (this.#ready) this.#send(replacement, { type: 'cluster-ready', ready: true });
      });
    }
  }

  /** Asks every worker to drain and exit, then exits with `code`. Workers that overstay are killed. */
  async stop(code: number, reason: string): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#watch?.stop();
    this.#control.stopSampling();
    this.#log.info(`stopping (${reason}): draining in-flight requests`);
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const exited = workers.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))));
    // A worker still starting up would miss the message: it gets it once it listens.
    for (const w of workers) this.#links.get(w)?.post({ type: 'shutdown' });
    const graceMs = (this.#opts.config.http.request_timeout_seconds + 5) * 1000;
    const deadline = setTimeout(() => {
      this.#log.warn('workers did not finish in time; killing them');
      for (const w of workers) w.process.kill('SIGKILL');
    }, graceMs);
    await Promise.all(exited);
    clearTimeout(deadline);
    this.#log.info('stopped');
    await exitAfterLogs(code);
  }

  /** Every worker's placements to every worker: each answers the listing with all of them. */
  #sharePlacements(): void {
    const table: PlacementTable = {};
    for (const [worker, services] of this.#placements) {
      for (const [key, placement] of Object.entries(services)) (table[key] ??= {})[String(worker.id)] = placement;
    }
    this.#broadcast({ type: 'placements', table });
  }

  /** The worker in each slot, by cluster id (0 for a slot not forked yet). */
  #homes(): number[] {
    return Array.from({ length: this.#opts.config.workers }, (_, slot) => this.#slots[slot]?.id ?? 0);
  }

  #broadcast(message: PrimaryMessage): void {
    for (const worker of Object.values(cluster.workers ?? {})) if (worker) this.#send(worker, message);
  }

  #send(worker: Worker, message: PrimaryMessage): void {
    if (worker.isConnected()) worker.send(message);
  }
}
