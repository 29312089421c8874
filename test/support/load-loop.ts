// A bounded load of real requests on loopback, for what shows the figures
// rt keeps of them (the metrics history, the console's plots).

/** One request of the load: a POST of `body` (JSON; `{}` by default) to `path`. */
export interface LoadCall {
  path: string;
  body?: unknown;
}

/** How many answers came back with each status. */
export type Statuses = Map<number, number>;

/**
 * Sends `count` requests to `base`, the calls in turn, `concurrency` at a
 * time, and stops early once `signal` aborts; resolves once all sent are
 * answered.
 */
export async function loadLoop(base: string, calls: readonly LoadCall[], opts: { count: number; concurrency?: number; signal?: AbortSignal }): Promise<Statuses> {
  const { count, concurrency = 4, signal } = opts;
  const statuses: Statuses = new Map();
  let next = 0;
  const client = async () => {
    for (let i = next++; i < count && !signal?.aborted; i = next++) {
      const { path, body = {} } = calls[i % calls.length];
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return statuses;
}
