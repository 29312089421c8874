// HTTP handler components (docs/api.md §5.8): requests per second of one
// wasi:http/types handler (componentize-js) served by rt (1 worker) and by
// `jco serve` (jco's own host for such components: one instance for every
// request, in one thread), beside the lean Koa route every HTTP section is
// measured against; and MiB/s of a 64 MiB response the handler streams,
// against bare node:http writing the same bytes in the same 64 KiB pieces.
// Interleaved rounds after a soak, medians; one connection at a time for the
// streamed response.
//
// By default rt makes a fresh instance for each request (a componentize-js
// fetch-event instance answers one: docs/design/http-handlers.md); `jco
// serve` keeps one, which is why it cannot serve a fetch-event handler twice.
// The same handler is measured both ways in rt: as it comes, and with its
// instance reused (sidecar `max_invocations`), which is what jco serve does.

import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildComponent } from '../examples/builder.js';
import { freePort, tempDir } from '../test/support/rt-process.js';
import { TYPES_HANDLER } from '../test/support/http-handler-fixtures.js';
import { roundOrder } from './order.js';
import { loadRounds, printRounds, reqPerSec } from './rounds.js';
import { Cleanup, pollUntilOk, startAll, startBaseline, startRt, stopRt } from './servers.js';
import { settings } from './settings.js';
import { soak } from './soak.js';
import { median, ratio } from './stats.js';
import { printTable } from './table.js';

const STREAMED_BYTES = settings.streamMiB * 1024 * 1024;
const STREAMED_RUNS = settings.streamRounds;

/** The whole answer to one request on a fresh connection: its size and how long it took (ms). */
function download(url: string, method: string, body?: string): Promise<{ bytes: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.once('end', () => (res.statusCode === 200 ? resolve({ bytes, ms: performance.now() - started }) : reject(new Error(`${url}: ${res.statusCode}`))));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end(body);
  });
}

/** `jco serve` on `wasm` at a free port, once it answers. */
async function startJcoServe(wasm: string, probePath: string) {
  const port = await freePort();
  // Its CLI script, from dist/bench/ (the package's exports do not name it).
  const jco = fileURLToPath(new URL('../../node_modules/@bytecodealliance/jco/src/jco.js', import.meta.url));
  // In a process group of its own: the server is a child of the CLI, which the bench's cleanup would leave behind.
  const child = spawn(process.execPath, [jco, 'serve', wasm, '--port', String(port), '--host', '127.0.0.1'], { stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  const url = `http://127.0.0.1:${port}`;
  await pollUntilOk(`${url}${probePath}`, child, 100);
  return { url, child };
}

export async function httpHandlers(): Promise<void> {
  const cleanup = new Cleanup();
  try {
    const dir = await tempDir('rt-bench-handler-');
    const wasm = join(dir, 'hello.wasm');
    await writeFile(wasm, await buildComponent(TYPES_HANDLER));
    await writeFile(join(dir, 'hello.toml'), 'service = "hello"\n');
    // The same handler, its instance reused (it is written against wasi:http/types and serves many requests).
    await writeFile(join(dir, 'reused.wasm'), await readFile(wasm));
    await writeFile(join(dir, 'reused.toml'), 'service = "reused"\nmax_invocations = 1000000\n');
    const [rt, jco, koa, floor] = await startAll(cleanup, [
      startRt({ configToml: `repo_urls = ["file://${dir}"]\n[log]\nlevel = "warn"\n`, workers: 1, quiet: true }),
      startJcoServe(wasm, '/echo'),
      startBaseline('koa-lean-baseline.js', 1),
      startBaseline('stream-baseline.js', 1),
    ] as const);
    cleanup.add(() => {
      try {
        process.kill(-jco.child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
      return Promise.resolve();
    });
    const server = (s: { child: ReturnType<typeof spawn> }) => ({ child: s.child });
    const targets = [
      { key: 'rt handler (1 worker)', url: `${rt.url}/api/services/default/hello/http/echo`, body: '{}', server: server(rt) },
      { key: 'rt handler, reused instance', url: `${rt.url}/api/services/default/reused/http/echo`, body: '{}', server: server(rt) },
      { key: 'jco serve', url: `${jco.url}/echo`, body: '{}', server: server(jco) },
      { key: 'Koa route (lean)', url: `${koa.url}/add`, body: '{"a":20,"b":22}', server: server(koa) },
    ];
    await soak('http-handlers', targets, Math.min(settings.soakSeconds, 20));
    const results = await loadRounds('http-handlers', targets);
    const rate = (key: string) => reqPerSec(results, key);
    console.log(`\nhttp-handlers: a wasi:http/types handler (componentize-js), ${settings.connections} connections, ${settings.rounds} interleaved rounds of ${settings.seconds} s, medians`);
    printRounds(targets, results);
    printTable({
      'rt / jco serve': { ratio: ratio(rate(targets[0].key), rate(targets[2].key)) },
      'rt reused / jco serve': { ratio: ratio(rate(targets[1].key), rate(targets[2].key)) },
      'rt reused / Koa route': { ratio: ratio(rate(targets[1].key), rate(targets[3].key)) },
    });
    await stopRt(rt);

    // The streamed response, on a fresh rt (nothing else left on its threads), one request at a time.
    const streaming = await startRt({ configToml: `repo_urls = ["file://${dir}"]\n[log]\nlevel = "warn"\n[http]\nrequest_timeout_seconds = 120\n`, workers: 1, quiet: true });
    cleanup.add(() => stopRt(streaming));
    const streamed = [
      { key: `rt handler, ${settings.streamMiB} MiB`, run: () => download(`${streaming.url}/api/services/default/reused/http/big?${STREAMED_BYTES}`, 'GET') },
      { key: `node:http, ${settings.streamMiB} MiB`, run: () => download(`${floor.url}/bytes`, 'POST', JSON.stringify({ total: STREAMED_BYTES, chunk: 65_536 })) },
    ];
    for (const s of streamed) await s.run(); // warm-up
    const mibPerSec = new Map<string, number[]>(streamed.map((s) => [s.key, []]));
    for (let round = 0; round < STREAMED_RUNS; round++) {
      for (const s of roundOrder(streamed, round)) {
        const { bytes, ms } = await s.run();
        if (bytes !== STREAMED_BYTES) throw new Error(`${s.key}: ${bytes} bytes, not ${STREAMED_BYTES}`);
        mibPerSec.get(s.key)!.push(bytes / 1_048_576 / (ms / 1000));
      }
    }
    console.log(`\nhttp-handlers: a ${settings.streamMiB} MiB response written in 64 KiB pieces, one request at a time, ${STREAMED_RUNS} interleaved runs, medians`);
    printTable(Object.fromEntries(streamed.map((s) => [s.key, { 'MiB/s': Math.round(median(mibPerSec.get(s.key)!)), 'MiB/s per run': mibPerSec.get(s.key)!.map(Math.round).join(' / ') }])));
    printTable({ 'rt / node:http': { ratio: ratio(median(mibPerSec.get(streamed[0].key)!), median(mibPerSec.get(streamed[1].key)!)) } });
  } finally {
    await cleanup.run();
  }
}
