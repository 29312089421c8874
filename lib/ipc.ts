// The messages the primary and the workers exchange over cluster IPC, and the
// correlation of requests with their replies. Every message is a tagged union
// member; requests carry an `id` that their reply echoes.

import type { Config } from './config/index.js';
import type { LoadFailure, ServiceDescriptor } from './service.js';

/** Primary → worker. */
export type PrimaryMessage =
  /** Host exactly this set of services (replacing what the worker has). Answered by `loaded`. */
  | { type: 'load'; id: number; services: ServiceDescriptor[]; failures: LoadFailure[] }
  /** Whether every worker has loaded the current set: drives `/api/ready`. */
  | { type: 'cluster-ready'; ready: boolean }
  /** Stop accepting, finish in-flight requests, exit 0. */
  | { type: 'shutdown' };

/** Worker → primary. */
export type WorkerMessage =
  /** The worker listens for messages now: anything sent before this could be lost. */
  | { type: 'started' }
  /** Reply to `load`: the services this worker could not instantiate. */
  | { type: 'loaded'; id: number; failures: LoadFailure[] }
  /** The worker cannot serve at all (e.g. the port is taken); the primary stops instead of respawning it forever. */
  | { type: 'fatal'; error: string };

/** What a worker needs at start-up; passed in its environment since it precedes any IPC. */
export interface WorkerBootstrap {
  version: string;
  config: Config;
  verbose: boolean;
  /** PEM files to serve HTTPS with on http.tls_port, when http.tls_enable. */
  tls?: { cert: string; key: string };
}

export const WORKER_BOOTSTRAP_ENV = 'RT_WORKER_BOOTSTRAP';

export function isPrimaryMessage(m: unknown): m is PrimaryMessage {
  return typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string';
}

export function isWorkerMessage(m: unknown): m is WorkerMessage {
  return typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string';
}

/**
 * Matches replies to requests by id. A request that gets no reply within its
 * timeout rejects, so a silent peer is never waited on forever.
 */
export class Correlator<Reply extends { id: number }> {
  #next = 1;
  readonly #pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();

  /** Allocates an id and returns it with a promise of the reply. */
  request(timeoutMs: number, describe: string): { id: number; reply: Promise<Reply> } {
    const id = this.#next++;
    const reply = new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
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
