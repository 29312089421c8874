// A worker process: serves HTTP on the shared port and hosts the component
// instances the primary tells it to.

import cluster from 'node:cluster';
import { readFileSync, rmdirSync, rmSync } from 'node:fs';
import { assembleWorker } from './assembly.js';
import { HandleHomes } from './execution/handle-homes.js';
import type { Server } from 'node:http';
import {
  Correlator,
  HEARTBEAT_INTERVAL_MS,
  isPrimaryMessage,
  peerSocketPath,
  WORKER_BOOTSTRAP_ENV,
  type PrimaryMessage,
  type WorkerBootstrap,
  type WorkerMessage,
} from '../ipc.js';
import type { ControlOutcome, ControlRequest } from '../control.js';
import { createLogger, exitAfterLogs, type Logger } from '../log.js';
import { Peers } from './http/peers.js';
import { createHttpsServer, createServer } from './http/server.js';
import { traceSettings as readTraceSettings } from '../tracing/settings.js';
import { startTraces } from '../tracing/start.js';
import type { SpanFate } from '../tracing/traces.js';

function send(message: WorkerMessage): void {
  if (process.connected) process.send?.(message);
}

/**
 * Control operations (restart, quiesce, reload) are carried out by the
 * primary on every worker; this one asks and relays the answer. The primary
 * bounds what it waits for on each worker, so this timeout only guards
 * against a primary that is gone.
 */
const CONTROL_TIMEOUT_MS = 600_000;
/** How long a stopping worker waits for its last spans to be exported: a collector that is gone must not hold up a shutdown. */
const SPANS_FLUSH_MS = 5_000;
const SEQUENTIAL = new Set<PrimaryMessage['type']>(['load', 'stage', 'commit', 'discard', 'quiesce']);
const controlAnswers = new Correlator<{ id: number; outcome: ControlOutcome }>();

function askPrimary(request: ControlRequest): Promise<ControlOutcome> {
  const { id, reply } = controlAnswers.request(CONTROL_TIMEOUT_MS, `the primary did not answer "${request.op}"`);
  send({ type: 'control', id, request });
  return reply.then((r) => r.outcome);
}

async function main(): Promise<void> {
  const bootstrap = JSON.parse(process.env[WORKER_BOOTSTRAP_ENV] ?? 'null') as WorkerBootstrap | null;
  if (!bootstrap || !cluster.isWorker) throw new Error('lib/worker/main.js is started by `rt start`, not directly');
  const { config, verbose } = bootstrap;
  const workerId = cluster.worker!.id;
  const log = createLogger(verbose ? 'debug' : config.log.level, { worker: workerId });
  // This worker is in its slot already; the primary's broadcasts say when another slot's worker changes.
  const homes = new HandleHomes(bootstrap.homes.map((worker, slot) => (slot === bootstrap.slot ? workerId : worker)));
  const peers = new Peers(bootstrap.peerDir, workerId, log);
  /** Tells the primary where this worker runs its services, for every worker's listing. */
  const reportPlacements = () => send({ type: 'placements', services: registry.placements() });
  // Inherited from the primary, which refused what it could not use (cli.ts): settings here are valid.
  const traceSettings = readTraceSettings(process.env);
  // The metrics that count the spans' fates are made with the rest of the worker, after the traces it is given.
  const spanFates: { count?: (fate: SpanFate, spans: number) => void } = {};
  const traces = traceSettings && (await startTraces(traceSettings, bootstrap.version, (fate, spans) => spanFates.count?.(fate, spans)));
  const { registry, state, listener: handler, answer, shares, metrics } = assembleWorker({
    version: bootstrap.version,
    config,
    log,
    workerId,
    handleKey: Buffer.from(bootstrap.handleKey, 'hex'),
    homes,
    peers,
    control: askPrimary,
    placementsChanged: () => reportPlacements(),
    traces,
  });
  spanFates.count = (fate, spans) => metrics.spansDone(fate, spans);
  const servers = [listen(createServer(config.http, handler, shares), config.http.port)];
  // Other workers forward requests for this worker's handles here.
  servers.push(listenForPeers(peers.listen(createServer(config.http, handler, shares))));
  if (bootstrap.tls) {
    const [cert, key] = [readFileSync(bootstrap.tls.cert), readFileSync(bootstrap.tls.key)];
    servers.push(listen(createHttpsServer(config.http, { cert, key }, handler, shares), config.http.tls_port));
  }

  function listen(server: Server, port: number): Server {
    server.on('error', (e: NodeJS.ErrnoException) => {
      const reason = e.code === 'EADDRINUSE' ? `port ${port} is already in use` : e.message;
      send({ type: 'fatal', error: `cannot listen on ${config.http.host}:${port}: ${reason}` });
      setTimeout(() => void exitAfterLogs(1), 100);
    });
    return server.listen(port, config.http.host, () => log.debug(`listening on ${config.http.host}:${port}`));
  }

  function listenForPeers(server: Server): Server {
    server.on('error', (e: NodeJS.ErrnoException) => {
      send({ type: 'fatal', error: `cannot listen for the other workers on ${peerSocketPath(bootstrap!.peerDir, workerId)}: ${e.message}` });
      setTimeout(() => void exitAfterLogs(1), 100);
    });
    return server;
  }

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    const graceMs = config.http.request_timeout_seconds * 1000;
    void Promise.all(servers.map((server) => drain(server, graceMs, log))).then(() => {
      // The primary removes the run's peer directory as it stops; a primary killed outright cannot, so the last worker out does.
      rmSync(peerSocketPath(bootstrap.peerDir, workerId), { force: true });
      try {
        rmdirSync(bootstrap.peerDir);
      } catch {
        // other workers' sockets are still there, or it is gone already
      }
      // The spans of the last requests go out before the worker does, within the batch processor's export timeout.
      const giveUp = new Promise<void>((resolve) => setTimeout(resolve, SPANS_FLUSH_MS).unref());
      void Promise.race([traces?.shutdown(), giveUp])
        .catch((e: unknown) => log.warn({ err: e }, 'the last spans could not be exported'))
        .finally(() => void exitAfterLogs(0));
    });
  };

  // Requests that change the services are handled in the order sent, one at
  // a time: a `load` still running when a `commit` arrives must not undo it.
  // A quiesce's turn ends once its service refuses calls, not once drained.
  let queue: Promise<void> = Promise.resolve();
  process.on('message', (m: unknown) => {
    if (!isPrimaryMessage(m)) return;
    if (SEQUENTIAL.has(m.type)) queue = queue.then(() => onMessage(m)).catch((e: unknown) => log.error({ err: e }, `handling "${m.type}" failed`));
    else void onMessage(m);
  });
  // The primary coordinates shutdown; a signal sent to the whole process group
  // (Ctrl-C in a terminal) must not cut in-flight requests short.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => {});
  // The primary is gone (killed, crashed): finish what is in flight, bounded
  // by its deadlines, and exit; nobody is left to coordinate anything else.
  // Node's cluster exits a worker at once on an unexpected disconnect unless
  // it counts as one the worker chose, which this listener (run before that
  // check) makes it.
  cluster.worker!.on('disconnect', () => {
    cluster.worker!.exitedAfterDisconnect = true;
    log.warn('the primary is gone: finishing in-flight requests, then exiting');
    controlAnswers.failAll(new Error('the primary is gone'));
    stop();
  });
  // Sent from the event loop itself, so they stop when it does (SIGSTOP, a blocked thread).
  setInterval(() => send({ type: 'heartbeat' }), HEARTBEAT_INTERVAL_MS).unref();
  send({ type: 'started' });

  async function onMessage(m: PrimaryMessage): Promise<void> {
    switch (m.type) {
      case 'quiesce':
        // The drain lasts as long as the service's last stream: the changes after this one do not wait for it (docs/api.md §5.3).
        void answer(m)
          .then(send)
          .catch((e: unknown) => log.error({ err: e }, 'quiescing failed'));
        break;
      case 'load':
      case 'stage':
      case 'commit':
      case 'discard':
      case 'collect-metrics':
        send(await answer(m));
        break;
      case 'control-answer':
        controlAnswers.settle(m);
        break;
      case 'cluster-ready':
        state.clusterReady = m.ready;
        break;
      case 'placements':
        state.placements = m.table;
        break;
      case 'homes':
        homes.update(m.workers);
        break;
      case 'shutdown':
        stop();
        break;
    }
  }
}

/** Stops accepting connections and waits for in-flight requests, at most `graceMs`. */
function drain(server: Server, graceMs: number, log: Logger): Promise<void> {
  return new Promise((resolve) => {
    // A keep-alive connection goes idle when its request is answered; close it
    // then rather than at the client's leisure.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => {
      log.warn('in-flight requests did not finish in time; closing their connections');
      server.closeAllConnections();
    }, graceMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  void exitAfterLogs(1);
});
