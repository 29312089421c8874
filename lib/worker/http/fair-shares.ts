// Fair shares (docs/api.md §5.10): what a client can hold for long, no
// client address holds more than its share of, so that a few slow or greedy
// connections never make everyone else wait for their deadline. Counted per
// worker, by the request's client address (exchange.ts, behind trusted
// proxies):
// - a service's instance threads held by open streams and by HTTP handler
//   requests whose bodies are still arriving (a thread waits on them; a
//   WASI 0.3 handler's requests hold a place in an instance it shares);
// - a worker's connections (server.ts counts them; refused here, through
//   the app, so the refusal is logged and counted like any answer).
// A short call is not counted: it holds its thread for what it computes,
// not for as long as its client likes, and one client's load test must keep
// the whole pool. A share is `http.client_share_percent` of the whole, at
// least one; past it, 503 with Retry-After (at 100 %, none: the whole is the
// queue's and the cap's to bound). Refusals are counted
// (`rt_fair_share_refusals_total`) and logged at warn, at most one line per
// share and service every LOG_EVERY_MS, so an attacker cannot multiply the log.

import type { Logger } from 'pino';
import { ApiError } from '../../errors.js';
import type { HostedService } from '../execution/hosted-service.js';

/** What a share is of: `connections` of a worker, a service's threads held by `streams` or by `request_bodies`, or a body refused for its pace (`body_rate`). */
export type ShareKind = 'connections' | 'streams' | 'request_bodies' | 'body_rate';

const LOG_EVERY_MS = 10_000;
const RETRY_AFTER = { 'Retry-After': '1' };

/** A client's share of `whole`: `percent` of it, at least one. */
export function shareOf(whole: number, percent: number): number {
  return Math.max(1, Math.floor((whole * percent) / 100));
}

export class FairShares {
  /** Threads each client holds, by service (a replaced service's holds end with it). */
  readonly #held = new WeakMap<HostedService, Map<string, number>>();
  /** Refusals not yet logged, and when the last line went, by share and service. */
  readonly #unlogged = new Map<string, { count: number; client: string; loggedAt: number }>();

  constructor(
    private readonly percent: number,
    private readonly log: Logger,
    /** Counts a refusal (the metric). */
    private readonly counted: (share: ShareKind, service: string) => void,
  ) {}

  /**
   * One of `hosted`'s threads for `client`, for a stream or a request whose
   * body is arriving; throws RT_ERR_OVER_SHARE (503) when the client holds
   * its share already. `release` gives it back, once.
   */
  take(hosted: HostedService, client: string, kind: 'streams' | 'request_bodies'): () => void {
    let byClient = this.#held.get(hosted);
    if (!byClient) this.#held.set(hosted, (byClient = new Map<string, number>()));
    const held = byClient.get(client) ?? 0;
    const { whole, what } = hosted.holdable(kind);
    const share = shareOf(whole, this.percent);
    // A share of the whole (100 %) is the queue's to bound (max_queue), as a connection's is the cap's (server.ts): a client alone waits for a thread as before shares.
    if (held >= share && share < whole) {
      const details = `this client holds ${held} of ${hosted.name}'s ${whole} ${what} in this worker (open streams, requests whose bodies are arriving): its share is ${share} (http.client_share_percent: ${this.percent}); retry later`;
      throw this.refusal(kind, hosted.name, client, details);
    }
    byClient.set(client, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = byClient.get(client)! - 1;
      if (now === 0) byClient.delete(client);
      else byClient.set(client, now);
    };
  }

  /** The error that refuses `client` for `share`, counted and (at most every LOG_EVERY_MS) logged. */
  refusal(share: ShareKind, service: string, client: string, details: string): ApiError {
    this.#noted(share, service, client);
    const context = service ? { service } : {};
    if (share === 'body_rate') return new ApiError('RT_ERR_REQUEST_TIMEOUT', details, context, { Connection: 'close' });
    // A refused connection, or a request whose body is still arriving, is not read on: its connection closes.
    return new ApiError('RT_ERR_OVER_SHARE', details, context, share === 'streams' ? RETRY_AFTER : { ...RETRY_AFTER, Connection: 'close' });
  }

  /** Counts a refusal, and logs what was refused since the last line of its share and service. */
  #noted(share: ShareKind, service: string, client: string): void {
    this.counted(share, service);
    const key = `${share}\n${service}`;
    const now = performance.now();
    const entry = this.#unlogged.get(key) ?? { count: 0, client, loggedAt: -Infinity };
    entry.count++;
    entry.client = client;
    if (now - entry.loggedAt >= LOG_EVERY_MS) {
      this.log.warn({ share, ...(service ? { service } : {}), client, refused: entry.count }, 'client over its fair share');
      entry.count = 0;
      entry.loggedAt = now;
    }
    this.#unlogged.set(key, entry);
  }
}
