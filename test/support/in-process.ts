// rt in the test process: one worker as a worker is made (lib/worker/
// assembly.ts: the invoke lane, the Koa app, the registry), served on a
// loopback socket of its own, and the primary's control plane
// (lib/primary/control-plane.ts) with that worker as its whole fleet, joined
// by direct calls where the CLI has IPC. The same configuration layers
// (rt/config.toml, RT__ variables), the same catalog, restart, quiesce,
// reload and metrics. For the HTTP behaviours that need no processes
// (statuses, error bodies, CORS, content types, limits, handles in one
// worker); what needs the cluster, several workers, signals or a crash is
// tested on the real CLI (rt-process.ts).

import { mkdir, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../lib/config/index.js';
import type { ControlRequest } from '../../lib/control.js';
import type { ReplyTo, UnsentRequest, WorkerRequest } from '../../lib/ipc.js';
import { ControlPlane, type Fleet } from '../../lib/primary/control-plane.js';
import { PersistedConfigs } from '../../lib/primary/persisted-configs.js';
import { assembleWorker, type Worker } from '../../lib/worker/assembly.js';
import { HandleHomes } from '../../lib/worker/execution/handle-homes.js';
import { Peers } from '../../lib/worker/http/peers.js';
import { createServer } from '../../lib/worker/http/server.js';
import { eventually } from './eventually.js';
import { isolatedEnv, tempDir } from './rt-process.js';

export interface InProcessOptions {
  /** TOML written to <cwd>/rt/config.toml. */
  configToml?: string;
  /** RT__ variables, read as `rt start` reads them. */
  env?: Record<string, string>;
}

const WORKER_ID = 1;

/** The one worker, as the control plane reaches it: its requests answered by direct calls, each with an id as over IPC. */
function fleetOf(worker: Worker): Fleet<Worker> {
  let nextId = 1;
  return {
    workers: () => [worker],
    async ask<T extends WorkerRequest['type']>(w: Worker, request: UnsentRequest<T> | (() => UnsentRequest<T>)): Promise<ReplyTo<T>> {
      const unsent = typeof request === 'function' ? request() : request;
      return (await w.answer({ ...unsent, id: nextId++ })) as ReplyTo<T>;
    },
  };
}

export class InProcessRt {
  readonly #lines: Record<string, unknown>[];

  private constructor(
    readonly config: Config,
    readonly worker: Worker,
    readonly server: Server,
    lines: Record<string, unknown>[],
  ) {
    this.#lines = lines;
  }

  static async start(opts: InProcessOptions = {}): Promise<InProcessRt> {
    const cwd = await tempDir('rt-in-process-');
    await mkdir(join(cwd, 'rt'), { recursive: true });
    await writeFile(join(cwd, 'rt', 'config.toml'), opts.configToml ?? '');
    const env = { ...isolatedEnv(join(cwd, 'user-config')), ...opts.env };
    const config = loadConfig({ cwd, env, userConfigFile: join(cwd, 'user-config', 'config.toml') });
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const log = pino({ level: config.log.level, base: { worker: WORKER_ID } }, sink);
    const peerDir = await tempDir('rt-in-process-peers-');
    // The worker asks the control plane, which is made with the worker as its fleet.
    const primary: { control?: ControlPlane<Worker> } = {};
    const worker = assembleWorker({
      version: 'in-process',
      config,
      log,
      workerId: WORKER_ID,
      handleKey: Buffer.alloc(32, 7),
      homes: new HandleHomes([WORKER_ID]),
      peers: new Peers(peerDir, WORKER_ID, log),
      control: (request: ControlRequest) => primary.control!.handle(request),
      placementsChanged: () => {},
    });
    primary.control = new ControlPlane({ config, cwd, log, fleet: fleetOf(worker), persisted: new PersistedConfigs(join(cwd, 'data', 'restart-configs')) });
    await primary.control.start();
    worker.state.clusterReady = true;
    const server = createServer(config.http, worker.listener, worker.shares);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new InProcessRt(config, worker, server, lines);
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The log lines so far, as JSON objects (written synchronously: nothing is on its way). */
  logLines(): Record<string, unknown>[] {
    return [...this.#lines];
  }

  /** What rt logged so far, a JSON line each, as the CLI prints it. */
  get output(): string {
    return this.#lines.map((line) => `${JSON.stringify(line)}\n`).join('');
  }

  /** As RtProcess's: here every line is in as soon as it is written. */
  workerLogsFlushed(): Promise<void> {
    return Promise.resolve();
  }

  /** Waits (up to `timeoutMs`) for a log line matching `match`. */
  async logged(match: (line: Record<string, unknown>) => boolean, timeoutMs = 5_000): Promise<boolean> {
    return eventually(() => this.#lines.some(match), { what: 'a log line', timeoutMs }).then(
      () => true,
      () => false,
    );
  }

  /** Closes the socket (in-flight requests finish) and ends every instance. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    await closed;
    await this.worker.registry.close();
  }
}
