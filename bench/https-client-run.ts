// One measurement of bench/https-client.ts, in a fresh process (as rt's
// scans run in a primary that has not fetched anything yet): one client, one
// workload, `passes` times in a row, one request at a time as a scan makes
// them. Reports each pass's wall and CPU time, the import of the HTTP
// library, and the process's peak RSS above its RSS before the first pass.

import { createSecureContext, rootCertificates } from 'node:tls';

export const VARIANTS = ['rt', 'rt before', 'rt, a connection per request', 'undici'] as const;
export type Variant = (typeof VARIANTS)[number];
export const WORKLOADS = ['small', 'big', 'revalidate'] as const;
export type Workload = (typeof WORKLOADS)[number];

export interface RunSetup {
  variant: Variant;
  workload: Workload;
  /** https://127.0.0.1:<port> */
  base: string;
  /** The bench CA's PEM, trusted beside the system CAs as `repositories.ca_file` is. */
  ca: string;
  /** The same in a file (in the bench's temporary folder): rt's `ca_file`. */
  caFile: string;
  timeoutMs: number;
  maxBytes: number;
  small: number;
  smallBytes: number;
  big: number;
  bigBytes: number;
  passes: number;
}

export interface Pass {
  ms: number;
  cpuMs: number;
}

export interface RunResult {
  importMs: number;
  passes: Pass[];
  rssBeforeMiB: number;
  peakRssMiB: number;
}

interface Fetch {
  url: string;
  etag?: string;
  status: number;
  bytes: number;
}

type Get = (url: string, etag?: string) => Promise<{ status: number; body: Buffer }>;

function requests(s: RunSetup): Fetch[] {
  const small = Array.from({ length: s.small }, (_, i) => ({ url: `${s.base}/small/${i}.json`, etag: `"small-${i}"`, status: 200, bytes: s.smallBytes }));
  const big = Array.from({ length: s.big }, (_, i) => ({ url: `${s.base}/big/${i}.wasm`, etag: `"big-${i}"`, status: 200, bytes: s.bigBytes }));
  switch (s.workload) {
    case 'small':
      return small.map(({ etag: _, ...f }) => f);
    case 'big':
      return big.map(({ etag: _, ...f }) => f);
    case 'revalidate':
      return [...small, ...big].map((f) => ({ ...f, status: 304, bytes: 0 }));
  }
}

/** The variant's `get`, and what closes its pool. */
async function client(s: RunSetup): Promise<{ get: Get; close: () => Promise<void>; importMs: number }> {
  const ca = [...rootCertificates, s.ca];
  const started = performance.now();
  if (s.variant === 'undici') {
    await import('undici');
    const importMs = performance.now() - started;
    const { undiciGet, undiciHttp } = await import('./https-client-undici.js');
    const http = undiciHttp(ca, s.timeoutMs, s.maxBytes);
    return { get: (url, etag) => undiciGet(url, http, etag), close: () => http.dispatcher.close(), importMs };
  }
  const { Agent } = await import('node:https');
  const importMs = performance.now() - started;
  const { get, httpOptions } = await import('../lib/primary/https-repository.js');
  // rt: what a scan uses (one keep-alive Agent, one TLS context).
  const http = await httpOptions(s.base, { caFile: s.caFile, timeoutMs: s.timeoutMs, maxBytes: s.maxBytes, cacheRoot: '' });
  if (s.variant === 'rt before') {
    // The client before one Agent per scan: agent: false and `ca` on each request, so a
    // connection per request, without TLS session reuse, with the CA list parsed for each.
    http.agent.destroy();
    http.agent = new Agent({ ca, maxCachedSessions: 0 });
  } else if (s.variant === 'rt, a connection per request') {
    // One TLS context, but no keep-alive (nor TLS session reuse): what the Agent's connection reuse buys.
    http.agent.destroy();
    http.agent = new Agent({ secureContext: createSecureContext({ ca }), maxCachedSessions: 0 });
  }
  return { get: (url, etag) => get(url, http, etag), close: async () => http.agent.destroy(), importMs };
}

// Whatever happens to the bench, this process does not outlive it.
process.once('disconnect', () => process.exit(0));

process.once('message', (setup: RunSetup) => {
  void (async () => {
    const { get, close, importMs } = await client(setup);
    const list = requests(setup);
    const rssBeforeMiB = process.memoryUsage.rss() / 2 ** 20;
    const passes: Pass[] = [];
    for (let p = 0; p < setup.passes; p++) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (const f of list) {
        const res = await get(f.url, f.etag);
        if (res.status !== f.status || res.body.length !== f.bytes) throw new Error(`${setup.variant}: ${f.url} answered ${res.status} with ${res.body.length} bytes, expected ${f.status} with ${f.bytes}`);
      }
      const ms = performance.now() - started;
      const used = process.cpuUsage(cpu);
      passes.push({ ms, cpuMs: (used.user + used.system) / 1000 });
    }
    const peakRssMiB = process.resourceUsage().maxRSS / 1024;
    await close();
    const result: RunResult = { importMs, passes, rssBeforeMiB, peakRssMiB };
    process.send!(result, () => process.exit(0));
  })().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
});
