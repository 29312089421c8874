// rt's hand-written HTTPS client (`get` in lib/primary/https-repository.ts,
// on the Agent a scan builds) next to undici (bench/https-client-undici.ts:
// the same features on one undici Agent) on what an `https:` repository scan
// asks of it: many small files (index.json, sidecars), component-sized files,
// and a revalidation of all of them with their ETags (304s). Two more rows
// take rt's client apart: as it was before (a connection per request, the CA
// list parsed for each), and with its one TLS context but a connection per
// request (what keep-alive buys). The repository is a server process of its
// own (https-client-server.ts) on loopback HTTPS, with a certificate from the
// bench's own CA, trusted beside the system CAs as `repositories.ca_file` is.
//
// Every measurement is a fresh process (https-client-run.ts), as a scan at
// start-up is, making the workload's requests one at a time twice: the first
// pass is the start-up scan, the second a reload's. Rounds run every
// (variant, workload) pair in a different order (order.ts), after one
// warm-up round (not counted) that warms the server; the tables show medians.
// The CA file is written to a temporary folder, removed at the end.

import { fork } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { certificates } from '../test/support/https-server.js';
import type { ServerSetup } from './https-client-server.js';
import { VARIANTS, WORKLOADS, type RunResult, type RunSetup, type Variant, type Workload } from './https-client-run.js';
import { roundOrder } from './order.js';
import { Cleanup, stopChild } from './servers.js';
import { settings } from './settings.js';
import { fixed, median, ratio } from './stats.js';
import { printTable } from './table.js';

const KiB = 1 << 10;
const MiB = 1 << 20;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** Forks `script` with an IPC channel, sends it `message` and resolves with its first answer. */
function exchange<T>(script: string, message: unknown, onChild: (child: ReturnType<typeof fork>) => void = () => {}): Promise<T> {
  const child = fork(here(script), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  onChild(child);
  return new Promise<T>((resolve, reject) => {
    child.once('message', (answer) => resolve(answer as T));
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`${script} exited (${code ?? signal}) without an answer`)));
    child.send(message as object);
  });
}

export async function httpsClient(): Promise<void> {
  const { httpsRounds: rounds, httpsSmall: small, httpsBig: big } = settings;
  const smallBytes = 2 * KiB;
  const bigBytes = 4 * MiB;
  // rt's defaults: repositories.download_timeout_seconds and max_download_bytes.
  const timeoutMs = 30_000;
  const maxBytes = 104_857_600;
  const passes = 2;
  const cleanup = new Cleanup();
  try {
    const pems = await certificates();
    const dir = await mkdtemp(join(tmpdir(), 'rt-bench-https-'));
    cleanup.add(() => rm(dir, { recursive: true, force: true }));
    const caFile = join(dir, 'ca.pem');
    await writeFile(caFile, pems.ca);
    const setup: ServerSetup = { key: pems.key, cert: pems.cert, small, smallBytes, big, bigBytes };
    const { port } = await exchange<{ port: number }>('./https-client-server.js', setup, (child) => cleanup.add(() => stopChild(child)));
    const base = `https://127.0.0.1:${port}`;

    const tasks = WORKLOADS.flatMap((workload) => VARIANTS.map((variant) => ({ workload, variant })));
    const run = (variant: Variant, workload: Workload) =>
      exchange<RunResult>('./https-client-run.js', { variant, workload, base, ca: pems.ca, caFile, timeoutMs, maxBytes, small, smallBytes, big, bigBytes, passes } satisfies RunSetup);

    process.stderr.write(`https-client: warm-up round (${tasks.length} runs)\n`);
    for (const t of tasks) await run(t.variant, t.workload);
    const results = new Map<string, RunResult[]>(tasks.map((t) => [`${t.workload} ${t.variant}`, []]));
    const started = performance.now();
    for (let round = 0; round < rounds; round++) {
      process.stderr.write(`https-client: round ${round + 1}/${rounds}\n`);
      for (const t of roundOrder(tasks, round)) results.get(`${t.workload} ${t.variant}`)!.push(await run(t.variant, t.workload));
    }
    const seconds = (performance.now() - started) / 1000;

    const of = (workload: Workload, variant: Variant) => results.get(`${workload} ${variant}`)!;
    const passMs = (w: Workload, v: Variant, p: number) => median(of(w, v).map((r) => r.passes[p].ms));
    const passCpu = (w: Workload, v: Variant, p: number) => median(of(w, v).map((r) => r.passes[p].cpuMs));
    const rssDelta = (w: Workload, v: Variant) => median(of(w, v).map((r) => r.peakRssMiB - r.rssBeforeMiB));
    const labels: Record<Workload, string> = {
      small: `(a) ${small} files of ${smallBytes / KiB} KiB`,
      big: `(b) ${big} files of ${bigBytes / MiB} MiB`,
      revalidate: `(c) the ${small + big} files again with their ETags: 304`,
    };

    console.log(
      `\nhttps-client: one request at a time over loopback HTTPS (TLS 1.3, P-256 certificate from the bench CA), a fresh process per run, ` +
        `2 passes per run (1st: a start-up scan, 2nd: a reload), medians of ${rounds} interleaved rounds (BENCH_HTTPS_ROUNDS)`,
    );
    console.log(
      '  rt: node:https on the keep-alive Agent with one TLS context a scan builds; rt before: a connection per request, the CA list parsed for each ' +
        '(as before one Agent per scan); rt, a connection per request: one TLS context, no keep-alive; undici: one undici Agent',
    );
    for (const w of WORKLOADS) {
      console.log(`\n  ${labels[w]}`);
      printTable(
        Object.fromEntries(
          VARIANTS.map((v) => [
            v,
            {
              '1st pass ms': fixed(passMs(w, v, 0), 1),
              '2nd pass ms': fixed(passMs(w, v, 1), 1),
              '1st CPU ms': fixed(passCpu(w, v, 0), 0),
              '2nd CPU ms': fixed(passCpu(w, v, 1), 0),
              'peak RSS Δ MiB': fixed(rssDelta(w, v), 1),
              '1st pass ms per round': of(w, v).map((r) => fixed(r.passes[0].ms, 0)).join(' / '),
            },
          ]),
        ),
        '    ',
      );
    }

    console.log('\nhttps-client: ratios (medians; undici / rt below 1: undici is faster or cheaper)');
    printTable(
      Object.fromEntries(
        WORKLOADS.flatMap((w) =>
          [0, 1].map((p) => [
            `${labels[w]}, ${p === 0 ? '1st' : '2nd'} pass`,
            {
              'undici / rt, time': ratio(passMs(w, 'undici', p), passMs(w, 'rt', p)),
              'undici / rt, CPU': ratio(passCpu(w, 'undici', p), passCpu(w, 'rt', p)),
              'rt before / rt, time': ratio(passMs(w, 'rt before', p), passMs(w, 'rt', p)),
              'rt before / rt, CPU': ratio(passCpu(w, 'rt before', p), passCpu(w, 'rt', p)),
            },
          ]),
        ),
      ),
    );
    const importMs = (v: Variant) => median(WORKLOADS.flatMap((w) => of(w, v).map((r) => r.importMs)));
    console.log(`  import of the HTTP library in a fresh process (medians): node:https ${fixed(importMs('rt'), 1)} ms, undici ${fixed(importMs('undici'), 1)} ms`);
    console.log(`  (measured rounds took ${fixed(seconds, 1)} s)`);
  } finally {
    await cleanup.run();
  }
}
