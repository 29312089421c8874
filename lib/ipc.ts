// The messages the primary and the workers exchange over cluster IPC, and the
// correlation of requests with their replies. Every message is a tagged union
// member; requests carry an `id` that their reply echoes.

import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { Config } from './config/index.js';
import type { ControlOutcome, ControlRequest } from './control.js';
import type { LoadFailure, Placement, PlacementTable, ServiceDescriptor, ServiceId } from './service.js';

/** One worker's metrics as plain data: what crosses IPC to the primary. */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** Primary → worker. */
export type PrimaryMessage =
  /** Host exactly this set of services (replacing what the worker has). Answered by `loaded`. */
  | { type: 'load'; id: number; services: ServiceDescriptor[]; failures: LoadFailure[] }
  /** Start instances for `service` aside, without serving them yet (first half of a restart). Answered by `staged`. */
  | { type: 'stage'; id: number; service: ServiceDescriptor }
  /** Serve the staged instances of `service` (`commit`) or drop them (`discard`). Answered by `done`. */
  | { type: 'commit'; id: number; service: ServiceId }
  | { type: 'discard'; id: number; service: ServiceId }
  /** Refuse new calls to `service`, let the running ones finish, drop its instances. Answered by `done` once drained. */
  | { type: 'quiesce'; id: number; service: ServiceId }
  /** Send a snapshot of your metrics. Answered by `metrics`. */
  | { type: 'collect-metrics'; id: number }
  /** The answer to the worker's `control` request. */
  | { type: 'control-answer'; id: number; outcome: ControlOutcome }
  /** Whether every worker has loaded the current set: drives `/api/ready`. */
  | { type: 'cluster-ready'; ready: boolean }
  /** Where every worker runs each service now, for the listing (sent whenever a worker's changes). */
  | { type: 'placements'; table: PlacementTable }
  /** The worker in each slot (HandleHomes), sent whenever one is forked. */
  | { type: 'homes'; workers: number[] }
  /** Stop accepting, finish in-flight requests, exit 0. */
  | { type: 'shutdown' };

/** Primary → worker messages that the worker answers with a `WorkerReply`. */
export type WorkerRequest = Exclude<Extract<PrimaryMessage, { id: number }>, { type: 'control-answer' }>;

/** A request before the correlator gives it its id. */
export type Unsent<M> = M extends unknown ? Omit<M, 'id'> : never;

/** Worker → primary: replies to the primary's requests, matched by `id`. */
export type WorkerReply =
  /** Reply to `load`: the services this worker could not instantiate (it keeps serving their previous version). */
  | { type: 'loaded'; id: number; failures: LoadFailure[] }
  /** Reply to `stage`: `error` when the instances could not be created (init failed, trap). */
  | { type: 'staged'; id: number; error?: string }
  | { type: 'done'; id: number }
  | { type: 'metrics'; id: number; snapshot: MetricsSnapshot };

/** The reply each kind of request gets. */
export type ReplyTo<T extends WorkerRequest['type']> = Extract<WorkerReply, { type: ReplyType[T] }>;
type ReplyType = { load: 'loaded'; stage: 'staged'; commit: 'done'; discard: 'done'; quiesce: 'done'; 'collect-metrics': 'metrics' };

/** A request of kind `T` before the correlator gives it its id (`type` apart, so that callers' literals infer `T`). */
export type UnsentRequest<T extends WorkerRequest['type']> = Unsent<Extract<WorkerRequest, { type: T }>> & { type: T };

/** Worker → primary. */
export type WorkerMessage =
  | WorkerReply
  /** The worker listens for messages now: anything sent before this could be lost. */
  | { type: 'started' }
  /** Sent every HEARTBEAT_INTERVAL_MS while the worker's event loop turns, busy or not: how the primary tells a slow worker from a stuck one. */
  | { type: 'heartbeat' }
  /** A control operation (docs/api.md §5.2–5.4), asked for by the worker that received the HTTP call; the primary carries it out on every worker and answers `control-answer` with the same id. */
  | { type: 'control'; id: number; request: ControlRequest }
  /** Where this worker runs each of its services (by service key), sent whenever that changes: the primary tells every worker (`placements`). */
  | { type: 'placements'; services: Record<string, Placement> }
  /** The worker cannot serve at all (e.g. the port is taken); the primary stops instead of respawning it forever. */
  | { type: 'fatal'; error: string };

/** What a worker needs at start-up; passed in its environment since it precedes any IPC. */
export interface WorkerBootstrap {
  version: string;
  config: Config;
  verbose: boolean;
  /** PEM files to serve HTTPS with on http.tls_port, when http.tls_enable. */
  tls?: { cert: string; key: string };
  /** The run's handle key (hex), shared by every worker: any of them can tell an id rt issued (execution/handle-ids.ts). */
  handleKey: string;
  /** The run's directory of worker sockets (0700), where workers forward requests for each other's handles (worker/http/peers.ts). */
  peerDir: string;
  /** This worker's slot, and the worker in each slot when it was forked (worker/execution/handle-homes.ts). */
  slot: number;
  homes: number[];
}

export const WORKER_BOOTSTRAP_ENV = 'RT_WORKER_BOOTSTRAP';

/** The socket worker `workerId` listens on for other workers' forwards, in the run's `peerDir`. */
export function peerSocketPath(peerDir: string, workerId: number): string {
  return join(peerDir, `${workerId}.sock`);
}

/** How often a worker says it is alive. */
export const HEARTBEAT_INTERVAL_MS = 500;

export function isPrimaryMessage(m: unknown): m is PrimaryMessage {
  return typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string';
}

export function isWorkerMessage(m: unknown): m is WorkerMessage {
  return typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string';
}

/**
 * Matches replies to requests by id. A request that gets no reply within its
 * timeout rejects; one without a timeout waits until it is settled or
 * `failAll` gives up on the peer.
 */
export class Correlator<Reply extends { id: number }> {
  #next = 1;
  readonly #pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void; timer: NodeJS.Timeout | undefined }>();

  /** Allocates an id and returns it with a promise of the reply. */
  request(timeoutMs: number | undefined, describe: string): { id: number; reply: Promise<Reply> } {
    const id = this.#next++;
    const reply = new Promise<Reply>((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.#pending.delete(id);
              reject(new Error(`${describe}: no answer within ${timeoutMs} ms`));
            }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
    });
    return { id, reply };
  }

  /** Settles the request `reply.id`; false when nobody waits for it any more. */
  settle(reply: Reply): boolean {
    const pending = this.#pending.get(reply.id);
    if (!pending) return false;
    this.#pending.delete(reply.id);
    clearTimeout(pending.timer);
    pending.resolve(reply);
    return true;
  }

  /** Rejects every pending request (the peer is gone). */
  failAll(error: Error): void {
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
      this.#pending.delete(id);
    }
  }
}
