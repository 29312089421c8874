// Where a service's calls run (inline on a worker's main thread, or on
// instance threads), as rt's listing shows it. The listing's `placement` is
// what the worker that answered knows of itself today; it is being changed
// to show every worker's, so it is read tolerantly: wherever a `placement`
// (or `placements`) key sits in the answer, whatever its value's shape, and
// from as many workers as answer. The value is kept as the listing has it,
// for printing.

import { get } from 'node:http';
import { sleep } from './stats.js';

/** What each worker (by its X-Rt-Worker header) said about the service's placement. */
export type PlacementSample = Map<string, unknown>;

/** The value of the first `placement`/`placements` key, breadth first (today: `instances.placement`). */
function findPlacement(body: unknown): unknown {
  const queue: unknown[] = [body];
  while (queue.length) {
    const value = queue.shift();
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'placement' || key === 'placements') return inner;
      queue.push(inner);
    }
  }
  return undefined;
}

/** The strings in a placement value, however nested ("inline", or one per worker). */
function words(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value !== 'object' || value === null) return [];
  return Object.values(value).flatMap(words);
}

/** Whether a sample shows the service inline, on threads, or neither (no placement in the listing). */
export function placementState(sample: PlacementSample): 'inline' | 'threads' | 'unknown' {
  const all = [...sample.values()].flatMap(words);
  if (all.some((w) => /thread/i.test(w))) return 'threads';
  return all.includes('inline') ? 'inline' : 'unknown';
}

/** The sample's entries by worker id: the workers answer in whatever order the primary hands them connections. */
function byWorker(sample: PlacementSample): [string, unknown][] {
  return [...sample].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }));
}

/** The sample in one line: each worker's value as JSON. */
export function describePlacement(sample: PlacementSample): string {
  if (sample.size === 0) return 'no answer';
  return byWorker(sample)
    .map(([worker, value]) => `worker ${worker}: ${value === undefined ? '(no placement)' : JSON.stringify(value)}`)
    .join('; ');
}

/** The sample in a few characters, for a column: "1:inline 2:threads" (a value that is not a string as JSON). */
export function compactPlacement(sample: PlacementSample): string {
  return byWorker(sample)
    .map(([worker, value]) => `${worker}:${typeof value === 'string' ? value : (JSON.stringify(value) ?? 'none')}`)
    .join(' ');
}

/** One GET on a connection of its own: rt's primary hands new connections to its workers in turn. */
function getJson(url: string): Promise<{ worker: string; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(new Error(`${url} answered ${res.statusCode} ${text}`));
        resolve({ worker: String(res.headers['x-rt-worker'] ?? '?'), body: JSON.parse(text) as unknown });
      });
      res.once('error', reject);
    });
    req.once('error', reject);
  });
}

/**
 * Asks `url` (a service's listing) on fresh connections until `workers`
 * different workers answered, or after a few tries: right after a load the
 * primary may hand several connections in a row to the same worker (the
 * other one has not yet taken the last it was given), hence the pauses.
 */
export async function samplePlacement(url: string, workers: number): Promise<PlacementSample> {
  const sample: PlacementSample = new Map();
  for (let i = 0; i < 10 * workers && sample.size < workers; i++) {
    const { worker, body } = await getJson(url);
    if (sample.has(worker)) await sleep(20);
    else sample.set(worker, findPlacement(body));
  }
  return sample;
}

/** The service moves rt counted (`rt_placement_changes_total`, summed over the workers), as "to/reason ×n" per service. */
export async function placementMoves(baseUrl: string): Promise<string> {
  const text = await (await fetch(`${baseUrl}/api/metrics`)).text();
  const moves = text
    .split('\n')
    .filter((line) => line.startsWith('rt_placement_changes_total{'))
    .map((line) => {
      const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      return `${labels.service} ${labels.to}/${labels.reason} ×${line.slice(line.lastIndexOf(' ') + 1)}`;
    });
  return moves.length > 0 ? moves.join(', ') : 'none';
}
