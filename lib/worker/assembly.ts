// What a worker is made of, wired together: the service registry, its state
// as the API reports it, the metrics, the request exchange's settings, the
// one request listener its sockets (and its peers' forwards) are served by,
// and what it does for each request of the primary's (ipc.ts). main.ts adds
// the process around it (IPC, the sockets, the lifecycle); the in-process
// tests (test/support/in-process.ts) join it to the primary's control plane
// without IPC and serve the listener on a loopback socket of their own.

import type { ControlOutcome, ControlRequest } from '../control.js';
import type { WorkerReply, WorkerRequest } from '../ipc.js';
import { TrustedProxies } from '../client-address.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import { EndedHandles } from './execution/handle-directory.js';
import type { HandleHomes } from './execution/handle-homes.js';
import { ServiceRegistry } from './execution/registry.js';
import { createApp } from './http/app.js';
import { bodyLimits } from './http/body.js';
import { FairShares } from './http/fair-shares.js';
import type { ExchangeSettings } from './http/exchange.js';
import { invokeLane } from './http/invoke-lane.js';
import { apiOperations, type Operations } from './http/operations.js';
import { controlPolicy } from './http/control-guard.js';
import type { Peers } from './http/peers.js';
import type { RequestListener } from './http/server.js';
import type { WorkerState } from './http/worker-state.js';
import { WorkerMetrics } from './metrics.js';
import type { Traces } from '../tracing/traces.js';

export interface WorkerParts {
  version: string;
  config: Config;
  log: Logger;
  workerId: number;
  /** The run's handle key, shared by every worker (execution/handle-ids.ts). */
  handleKey: Buffer;
  homes: HandleHomes;
  peers: Peers;
  /** Has the primary carry out a control operation on every worker. */
  control: (request: ControlRequest) => Promise<ControlOutcome>;
  /** Where this worker runs its services changed (for the primary's listing). */
  placementsChanged: () => void;
  /** Where spans go, when traces are on (docs/api.md §7). */
  traces?: Traces | undefined;
}

export interface Worker {
  registry: ServiceRegistry;
  state: WorkerState;
  metrics: WorkerMetrics;
  /** Answers every request: invokes without a browser's Origin in the invoke lane, everything else in the Koa app (both run the same operations). */
  listener: RequestListener;
  /** What each client address holds (http/fair-shares.ts): the servers refuse connections past a client's share. */
  shares: FairShares;
  /** The API's operations (http/operations.ts), as both transports serve them. */
  operations: Operations;
  /**
   * Carries out a request of the primary's and makes its reply. A quiesce's
   * reply comes once its service has drained; the service refuses calls as
   * soon as the request is taken.
   */
  answer(request: WorkerRequest): Promise<WorkerReply>;
}

export function assembleWorker({ version, config, log, workerId, handleKey, homes, peers, control, placementsChanged, traces }: WorkerParts): Worker {
  const registry: ServiceRegistry = new ServiceRegistry({
    timeoutMs: config.http.request_timeout_seconds * 1000,
    memoryCapBytes: config.runtime.max_memory_mb * 1_048_576,
    threadHeapMb: config.runtime.max_thread_heap_mb,
    streamTimeoutMs: config.http.stream_timeout_seconds * 1000,
    traces,
    log,
    issuer: { workerId, key: handleKey },
    homes,
    endedHandles: new EndedHandles(),
    handlesChanged: (hosted, change, count) => metrics.handlesChanged(hosted.name, change, count),
    moved: (hosted, move) => {
      metrics.placementChanged(hosted.name, move);
      placementsChanged();
    },
  });
  const state: WorkerState = { loaded: false, clusterReady: false, workerId, placements: {} };
  const metrics = new WorkerMetrics(registry);
  const exchange: ExchangeSettings = {
    // A line costs only when written: pino's info() is a no-op below its level.
    requestLog: config.log.requests && log.isLevelEnabled('info') ? log : undefined,
    log,
    requests: metrics.requests,
    workerId: String(workerId),
    timeoutMs: config.http.request_timeout_seconds * 1000,
    proxies: new TrustedProxies(config.http.trusted_proxies),
    traces,
  };
  const shares = new FairShares(config.http.client_share_percent, log, (share, service) => metrics.shareRefused(share, service));
  const bodies = bodyLimits(config.http, shares);
  const deps = { version, config, registry, state, log, requests: metrics.requests, control, exchange, peers, bodies, shares, proxies: exchange.proxies };

  async function answer(m: WorkerRequest): Promise<WorkerReply> {
    switch (m.type) {
      case 'load': {
        const failures = await registry.load(m.services, m.failures);
        state.loaded = true;
        log.debug({ services: m.services.length - failures.length }, 'components loaded');
        placementsChanged();
        return { type: 'loaded', id: m.id, failures };
      }
      case 'stage':
        return { type: 'staged', id: m.id, error: await registry.stage(m.service) };
      case 'commit':
        registry.commit(m.service);
        placementsChanged();
        return { type: 'done', id: m.id };
      case 'discard':
        await registry.discard(m.service);
        return { type: 'done', id: m.id };
      case 'quiesce':
        await registry.quiesce(m.service);
        placementsChanged();
        return { type: 'done', id: m.id };
      case 'collect-metrics':
        return { type: 'metrics', id: m.id, snapshot: await metrics.snapshot() };
    }
  }

  const policy = controlPolicy(config.http.control);
  const operations = apiOperations(deps, policy);
  const app = createApp({ ...deps, operations, policy });
  return { registry, state, metrics, shares, operations, listener: invokeLane({ operations, exchange, cors: config.http.cors.enabled }, app.callback()), answer };
}
