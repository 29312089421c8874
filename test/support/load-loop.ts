// A bounded load of real requests on loopback, for what shows the figures
// rt keeps of them (the metrics history, the console's plots): `count`
// POSTs to the given invoke paths in turn, a few at a time.

/** How many answers came back with each status. */
export type Statuses = Map<number, number>;

/**
 * Sends `count` requests to `${base}${paths[i % paths.length]}` (empty JSON
 * bodies), `concurrency` at a time; resolves once all are answered.
 */
export async function loadLoop(base: string, paths: readonly string[], { count, concurrency = 4 }: { count: number; concurrency?: number }): Promise<Statuses> {
  const statuses: Statuses = new Map();
  let next = 0;
  const client = async () => {
    for (let i = next++; i < count; i = next++) {
      const res = await fetch(`${base}${paths[i % paths.length]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return statuses;
}
