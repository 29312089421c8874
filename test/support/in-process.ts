// rt's worker served in the test process: the same listener a worker serves
// (lib/worker/assembly.ts: the invoke lane, the Koa app, the registry), the
// same configuration layers (rt/config.toml, RT__ variables), the services
// from the same catalog the primary builds, on a loopback socket of its own.
// For the HTTP behaviours that need no processes (statuses, error bodies,
// CORS, content types, limits, handles in one worker); what needs the cluster,
// IPC, signals or a crash is tested on the real CLI (rt-process.ts). Control
// operations (restart, quiesce, reload, metrics) are the primary's: here they
// answer 503, saying so.

import { mkdir, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../lib/config/index.js';
import type { ControlOutcome } from '../../lib/control.js';
import { buildCatalog } from '../../lib/primary/catalog.js';
import { repositoryOptions } from '../../lib/primary/repositories.js';
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
const NOT_HERE: ControlOutcome = { kind: 'failed', code: 'RT_ERR_NOT_READY', details: 'control operations are the primary’s, and this worker runs in a test process without one', context: {} };

export class InProcessRt {
  readonly #lines: Record<string, unknown>[] = [];

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
    const worker = assembleWorker({
      version: 'in-process',
      config,
      log,
      workerId: WORKER_ID,
      handleKey: Buffer.alloc(32, 7),
      homes: new HandleHomes([WORKER_ID]),
      peers: new Peers(peerDir, WORKER_ID, config.http.max_body_bytes, log),
      control: () => Promise.resolve(NOT_HERE),
      placementsChanged: () => {},
    });
    const { services, failures } = await buildCatalog(config.repo_urls, cwd, repositoryOptions(config.repositories), config.repositories.trusted, log);
    await worker.registry.load(services, failures);
    worker.state.loaded = true;
    worker.state.clusterReady = true;
    const server = createServer(config.http, worker.listener);
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
