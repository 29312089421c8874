// Connections to a chosen worker of an rt with several: node:cluster lets
// the workers accept connections as they come, so a test (or the bench)
// that needs a request to reach a given worker opens kept-alive connections
// until enough have landed there (each answer names its worker in
// X-Rt-Worker), and sends on those.

import { Agent, request } from 'node:http';

export interface WorkerAnswer {
  status: number;
  /** X-Rt-Worker: the worker that accepted the connection and answered. */
  worker: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request on `agent` (one kept-alive connection), a JSON body when `body` is given, with `headers` besides. */
export function sendOn(agent: Agent, url: string, method: string, body?: string, headers: Record<string, string> = {}): Promise<WorkerAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, worker: String(res.headers['x-rt-worker']), headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * `count` kept-alive connections to each of `workers` workers of the rt at
 * `base`, by worker id; throws when connections keep landing elsewhere.
 * The caller destroys them (closeConnections).
 */
export async function connectionsByWorker(base: string, count: number, workers = 2): Promise<Map<string, Agent[]>> {
  const byWorker = new Map<string, Agent[]>();
  const enough = () => [...byWorker.values()].filter((agents) => agents.length >= count).length >= workers;
  for (let tries = 0; tries < 50 * count * workers && !enough(); tries++) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const { worker } = await sendOn(agent, `${base}/api/health`, 'GET');
    const agents = byWorker.get(worker) ?? [];
    if (agents.length < count) byWorker.set(worker, [...agents, agent]);
    else agent.destroy();
  }
  if (!enough()) {
    closeConnections(byWorker);
    throw new Error(`could not open ${count} connection(s) to each of ${workers} workers`);
  }
  return byWorker;
}

export function closeConnections(byWorker: Map<string, Agent[]>): void {
  for (const agents of byWorker.values()) for (const agent of agents) agent.destroy();
}
