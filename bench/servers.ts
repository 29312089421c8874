// Starting and stopping the servers the benchmarks measure: the baselines
// (forked node:cluster scripts in this folder) and rt (the real CLI, through
// the test suite's RtProcess). Every child is tracked, so that whatever
// happens (a failed section, Ctrl-C) none outlives the benchmark.

import { fork, type ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { freePort, RtProcess, type StartOptions } from '../test/support/rt-process.js';
import { sleep } from './stats.js';

const live = new Set<ChildProcess>();

function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

function killAll(): void {
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
}

// Last resort: the sections stop their servers in `finally`; this catches what an abrupt exit leaves.
process.once('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

/** SIGTERM, then SIGKILL if the process has not exited within `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Throws when a server a section measures has exited: its runs from then on
 * would only count refused connections, and a table of zeros would hide why.
 * `output` is what the server printed (rt's stderr even when quiet).
 */
export function assertRunning(name: string, server: { child: ChildProcess; output?: string }): void {
  const { exitCode, signalCode, pid } = server.child;
  if (exitCode === null && signalCode === null) return;
  const printed = server.output?.trim() ? `; the end of what it printed:\n${server.output.trim().slice(-2000)}` : '';
  throw new Error(`${name}: its server (pid ${pid}) exited (${exitCode ?? signalCode}) while the section ran${printed}`);
}

/** Runs `fn` for each stopper in reverse order, collecting failures: for `finally` blocks. */
export class Cleanup {
  #steps: (() => Promise<unknown>)[] = [];
  add(step: () => Promise<unknown>): void {
    this.#steps.push(step);
  }
  async run(): Promise<void> {
    const errors: unknown[] = [];
    for (const step of this.#steps.reverse()) {
      try {
        await step();
      } catch (e) {
        errors.push(e);
      }
    }
    this.#steps = [];
    if (errors.length) console.error('cleanup failed:', ...errors);
  }
}

export interface Baseline {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Forks `script` (a sibling of this file: a node:cluster server) and waits for
 * its "ready" message. `env` adds to its environment (e.g.
 * NODE_CLUSTER_SCHED_POLICY=none: its workers accept connections themselves,
 * as rt's do, instead of the primary handing them out in turn).
 */
export async function startBaseline(script: 'koa-baseline.js' | 'koa-lean-baseline.js' | 'raw-baseline.js' | 'stream-baseline.js' | 'waiting-baseline.js' | 'otlp-sink.js', workers: number, env: Record<string, string> = {}): Promise<Baseline> {
  const port = await freePort();
  const child = fork(fileURLToPath(new URL(`./${script}`, import.meta.url)), [], {
    env: { ...process.env, ...env, PORT: String(port), WORKERS: String(workers) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  track(child);
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code, signal) => reject(new Error(`${script} exited (${code ?? signal}) before it was ready`)));
  }).catch(async (e) => {
    await stopChild(child);
    throw e;
  });
  return { url: `http://127.0.0.1:${port}`, child, stop: () => stopChild(child) };
}

/** Starts rt (tracked) without waiting for it to be ready. */
export async function spawnRt(opts: StartOptions): Promise<RtProcess> {
  const rt = await RtProcess.start(opts);
  track(rt.child);
  return rt;
}

/** Starts rt and waits until /api/ready answers 200. */
export async function startRt(opts: StartOptions): Promise<RtProcess> {
  const rt = await spawnRt(opts);
  try {
    await rt.ready();
  } catch (e) {
    await stopChild(rt.child);
    throw e;
  }
  return rt;
}

export function stopRt(rt: RtProcess): Promise<void> {
  return stopChild(rt.child);
}

/** The status of one GET on a fresh connection, or 0 when it could not connect. */
function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', () => resolve(0));
  });
}

/** Polls `url` every `intervalMs` until it answers 200; rejects if `child` exits or after `timeoutMs`. */
export async function pollUntilOk(url: string, child: ChildProcess, intervalMs = 20, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${url}: the process exited before it answered 200`);
    if ((await status(url)) === 200) return;
    await sleep(intervalMs);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

/**
 * Starts servers side by side. Each one that started is handed to `cleanup`
 * (stopped in its `finally`), also when another one failed to start.
 */
export async function startAll<T extends readonly Promise<{ child: ChildProcess }>[]>(cleanup: Cleanup, starts: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(starts);
  for (const s of settled) if (s.status === 'fulfilled') cleanup.add(() => stopChild(s.value.child));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}
