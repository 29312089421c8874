// The primary process: forks the workers, tells them what to serve, replaces
// the ones that die, and shuts everything down on SIGTERM/SIGINT.

import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/index.js';
import { Correlator, isWorkerMessage, WORKER_BOOTSTRAP_ENV, type PrimaryMessage, type WorkerBootstrap, type WorkerMessage } from '../ipc.js';
import type { Logger } from '../log.js';
import { buildCatalog, type Catalog } from './catalog.js';
import { repositoryOptions } from './repositories.js';
import { tlsFiles, type TlsFiles } from './tls.js';

type LoadedReply = Extract<WorkerMessage, { type: 'loaded' }>;

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

export class Supervisor {
  readonly #opts: PrimaryOptions;
  readonly #log: Logger;
  readonly #loads = new Correlator<LoadedReply>();
  #catalog: Catalog | undefined;
  #tls: TlsFiles | undefined;
  /** Settles on a worker's first message (`started`): only then is it listening. */
  readonly #started = new WeakMap<Worker, Promise<unknown>>();
  #ready = false;
  #stopping = false;
  #quickCrashes = 0;

  constructor(opts: PrimaryOptions) {
    this.#opts = opts;
    this.#log = opts.log;
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
    process.on('SIGTERM', () => void this.stop(0, 'SIGTERM'));
    process.on('SIGINT', () => void this.stop(0, 'SIGINT'));

    const { config } = this.#opts;
    this.#tls = await tlsFiles(config, this.#log);
    // Fork first: workers answer /api/health while the components compile.
    const workers = Array.from({ length: config.workers }, () => this.#fork());
    this.#catalog = await buildCatalog(config.repo_urls, this.#opts.cwd, repositoryOptions(config.repositories), this.#log);
    await Promise.all(workers.map((w) => this.#load(w)));
    if (this.#stopping) return; // a signal came while loading
    this.#ready = true;
    this.#broadcast({ type: 'cluster-ready', ready: true });
    const { services, failures } = this.#catalog;
    this.#log.info(
      { services: services.length, failed: failures.length, workers: config.workers },
      `ready: ${services.length} service(s) on http://${config.http.host}:${config.http.port}${this.#tls ? ` and https://${config.http.host}:${config.http.tls_port}` : ''}`,
    );
  }

  #fork(): Worker {
    const bootstrap: WorkerBootstrap = { version: this.#opts.version, config: this.#opts.config, verbose: this.#opts.verbose };
    if (this.#tls) bootstrap.tls = this.#tls;
    const worker = cluster.fork({ [WORKER_BOOTSTRAP_ENV]: JSON.stringify(bootstrap) });
    const forkedAt = Date.now();
    this.#started.set(worker, new Promise((resolve) => worker.once('message', resolve)));
    worker.on('message', (m: unknown) => {
      if (isWorkerMessage(m)) this.#onMessage(worker, m);
    });
    worker.on('exit', (code, signal) => this.#onExit(worker, forkedAt, code, signal));
    return worker;
  }

  #onMessage(worker: Worker, m: WorkerMessage): void {
    switch (m.type) {
      case 'started':
        break;
      case 'loaded':
        this.#loads.settle(m);
        break;
      case 'fatal':
        this.#log.fatal({ worker: worker.id }, m.error);
        void this.stop(1, 'a worker cannot serve');
        break;
    }
  }

  /** Sends the current service set to one worker and waits until it has instantiated it. */
  async #load(worker: Worker): Promise<void> {
    const catalog = this.#catalog!;
    const { id, reply } = this.#loads.request(120_000, `worker ${worker.id} loading components`);
    const died = new Promise<never>((_, reject) => worker.once('exit', () => reject(new Error(`worker ${worker.id} exited while loading`))));
    // Whichever loses the races below must not surface as an unhandled rejection.
    died.catch(() => {});
    reply.catch(() => {});
    try {
      // `reply` rejects on timeout, so a worker that never starts is not waited on forever.
      await Promise.race([this.#started.get(worker), reply, died]);
      this.#send(worker, { type: 'load', id, services: catalog.services, failures: catalog.failures });
      const { failures } = await Promise.race([reply, died]);
      for (const f of failures) this.#log.error({ worker: worker.id, source: f.source }, `worker could not load: ${f.error}`);
    } catch (e) {
      // A worker that cannot load in time is replaced rather than waited on.
      this.#log.error({ worker: worker.id }, (e as Error).message);
      worker.kill();
    }
  }

  #onExit(worker: Worker, forkedAt: number, code: number | null, signal: string | null): void {
    if (this.#stopping) return;
    this.#log.error({ worker: worker.id, code, signal }, 'worker died; starting a replacement');
    this.#quickCrashes = Date.now() - forkedAt < CRASH_WINDOW_MS ? this.#quickCrashes + 1 : 0;
    if (this.#quickCrashes >= MAX_QUICK_CRASHES) {
      this.#log.fatal(`workers keep dying at start-up (${MAX_QUICK_CRASHES} in a row); stopping`);
      void this.stop(1, 'crash loop');
      return;
    }
    const replacement = this.#fork();
    if (this.#catalog) {
      void this.#load(replacement).then(() => {
        if (this.#ready) this.#send(replacement, { type: 'cluster-ready', ready: true });
      });
    }
  }

  /** Asks every worker to drain and exit, then exits with `code`. Workers that overstay are killed. */
  async stop(code: number, reason: string): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#log.info(`stopping (${reason}): draining in-flight requests`);
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const exited = workers.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))));
    // A worker still starting up would miss the message: it gets it once it listens.
    for (const w of workers) void this.#started.get(w)?.then(() => this.#send(w, { type: 'shutdown' }));
    const graceMs = (this.#opts.config.http.request_timeout_seconds + 5) * 1000;
    const deadline = setTimeout(() => {
      this.#log.warn('workers did not finish in time; killing them');
      for (const w of workers) w.process.kill('SIGKILL');
    }, graceMs);
    await Promise.all(exited);
    clearTimeout(deadline);
    this.#loads.failAll(new Error('stopping'));
    this.#log.info('stopped');
    // Let the logger flush before the process goes.
    setImmediate(() => process.exit(code));
  }

  #broadcast(message: PrimaryMessage): void {
    for (const worker of Object.values(cluster.workers ?? {})) if (worker) this.#send(worker, message);
  }

  #send(worker: Worker, message: PrimaryMessage): void {
    if (worker.isConnected()) worker.send(message);
  }
}
