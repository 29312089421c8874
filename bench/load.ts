// One autocannon run, reduced to the numbers the tables show.

import { Agent, request } from 'node:http';
import autocannon from 'autocannon';

export interface LoadResult {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  total: number;
}

export interface LoadOptions {
  url: string;
  /** POST unless said otherwise; a GET sends no body. */
  method?: 'GET' | 'POST';
  body: string | Buffer;
  seconds: number;
  connections: number;
}

/** POSTs `body` as JSON to `url` (or GETs it) from `connections` connections for `seconds`. */
export async function load({ url, method = 'POST', body, seconds, connections }: LoadOptions): Promise<LoadResult> {
  if (!url.startsWith('http://127.0.0.1:')) throw new Error(`load goes to 127.0.0.1 only, not ${url}`);
  const r = await autocannon({ url, method, connections, duration: seconds, ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body } : {}) });
  return {
    reqPerSec: r.requests.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    total: r.requests.total,
  };
}

/** One JSON POST through node:http: on `agent`'s connections, or on a connection of its own (`false`). */
export function post(url: string, body: string, agent: Agent | false = false): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end(body);
  });
}

/** Sequential POSTs over one kept-alive connection (node:http, one socket). */
export class OneConnection {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });

  post(url: string, body: string): Promise<{ status: number; text: string }> {
    return post(url, body, this.#agent);
  }

  close(): void {
    this.#agent.destroy();
  }
}
