// Runs the real `rt` CLI as a child process for end-to-end tests: its own
// working directory (with an rt/config.toml), an empty user config, a free
// port, and a way to stop it and read what it printed.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, StopWaiting } from './eventually.js';
import { runDir, TEST_CACHE_DIR } from './run-dir.js';

export const RT_BIN = fileURLToPath(new URL('../../../bin/rt.js', import.meta.url));

export { TEST_CACHE_DIR };

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A fresh directory in the run's own directory, removed with it when the run ends: callers need not clean up. */
export async function tempDir(prefix = 'rt-test-'): Promise<string> {
  return mkdtemp(join(runDir(), prefix));
}

/** Environment for an isolated rt: no user config, the shared test cache, no stray RT__ variables, and no OTEL_* (traces) but a test's own. */
export function isolatedEnv(configDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('RT_') && !k.startsWith('OTEL_')) env[k] = v;
  return { ...env, RT_CONFIG_DIR: configDir, RT_CACHE_DIR: TEST_CACHE_DIR, RT_DATA_DIR: join(configDir, 'data'), ...extra };
}

/** Runs `rt <args>` to completion (for `rt config`, `--help`, bad configs); `nodeArgs` go to node before rt's script. */
export function runRt(args: string[], opts: { cwd: string; env: Record<string, string>; nodeArgs?: string[] }) {
  const result = spawnSync(process.execPath, [...(opts.nodeArgs ?? []), RT_BIN, ...args], { cwd: opts.cwd, env: opts.env, encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export interface StartOptions {
  /** TOML written to <cwd>/rt/config.toml. */
  configToml?: string;
  /** Extra environment (RT__ variables). */
  env?: Record<string, string>;
  workers?: number;
  args?: string[];
  /** Discard what rt prints (benchmarks: one log line per request adds up). */
  quiet?: boolean;
  /** Let rt print its logo (tests pass --logo-off otherwise). */
  logo?: boolean;
  /** The rt to run: this checkout's bin/rt.js unless another's (the benchmark of two builds: bench/versions.ts). */
  bin?: string;
}

export class RtProcess {
  /** Processes started and not yet exited: the root hooks stop (and report) any a test left running. */
  static readonly running = new Set<RtProcess>();

  output = '';
  readonly exited: Promise<number | null>;
  /** Resolves once the process has exited and everything it (and its workers) printed is in `output`. */
  readonly closed: Promise<void>;

  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
    readonly cwd: string,
  ) {
    child.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
    RtProcess.running.add(this);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        RtProcess.running.delete(this);
        resolve(code);
      }),
    );
    this.closed = new Promise((resolve) => child.once('close', () => resolve()));
  }

  static async start(opts: StartOptions = {}): Promise<RtProcess> {
    const cwd = await tempDir();
    await mkdir(join(cwd, 'rt'), { recursive: true });
    await writeFile(join(cwd, 'rt', 'config.toml'), opts.configToml ?? '');
    const port = await freePort();
    const env = {
      ...isolatedEnv(join(cwd, 'user-config'), {
        RT__HTTP__PORT: String(port),
        RT__HTTP__HOST: '127.0.0.1',
        RT__WORKERS: String(opts.workers ?? 2),
      }),
      ...opts.env,
    };
    const args = ['start', ...(opts.logo ? [] : ['--logo-off']), ...(opts.args ?? [])];
    const child = spawn(process.execPath, [opts.bin ?? RT_BIN, ...args], {
      cwd,
      env,
      stdio: ['ignore', opts.quiet ? 'ignore' : 'pipe', 'pipe'],
    });
    return new RtProcess(child, port, cwd);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * Resolves once /api/ready answers 200; rejects with the process output if it exits or takes too long.
   * With a cold cache rt transpiles every componentize-js component first (~20 s each on a busy 2-core machine).
   */
  async ready(timeoutMs = 240_000): Promise<void> {
    let exited = false;
    void this.exited.then(() => (exited = true));
    await eventually(
      async () => {
        if (exited) throw new StopWaiting('it exited');
        const res = await fetch(`${this.url}/api/ready`).catch(() => undefined); // not listening yet
        return res?.status === 200;
      },
      { what: 'rt to become ready', timeoutMs, intervalMs: 100, context: () => `output:\n${this.output}` },
    );
  }

  /** SIGTERM, then the exit code, once all it printed is in `output`. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
    const code = await this.exited;
    await this.closed;
    return code;
  }

  /** PIDs of the worker processes (children of the primary). */
  workerPids(): number[] {
    const ps = spawnSync('ps', ['-o', 'pid=', '--ppid', String(this.child.pid)], { encoding: 'utf8' });
    return ps.stdout
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
  }

  /** Resident memory and thread count of a process (Linux /proc), e.g. of a worker. */
  static async status(pid: number): Promise<{ rssMiB: number; threads: number }> {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)![1]);
    return { rssMiB: Math.round(field('VmRSS') / 1024), threads: field('Threads') };
  }

  /** Waits (up to `timeoutMs`) for a log line matching `match`: lines are buffered for up to 100 ms. */
  async logged(match: (line: Record<string, unknown>) => boolean, timeoutMs = 5_000): Promise<boolean> {
    return eventually(() => this.logLines().some(match), { what: 'a log line', timeoutMs }).then(
      () => true,
      () => false,
    );
  }

  /**
   * Resolves once every line a worker logged before this call is in `output`.
   * A worker prints its lines in order (buffered, up to 100 ms): a request it
   * answers now is logged after them, so once each worker's line for such a
   * request is here, so are the lines before it. Needs request lines (log.requests).
   */
  async workerLogsFlushed(timeoutMs = 10_000): Promise<void> {
    const workers = this.workerPids().length;
    const marks = new Map<string, string>();
    // New connections: the primary hands them to the workers in turn.
    for (let i = 0; marks.size < workers && i < 50 * workers; i++) {
      const path = `/api/health?log-mark=${randomUUID()}`;
      const worker = await new Promise<string>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: this.port, path, agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.headers['x-rt-worker'])));
        });
        req.on('error', reject);
        req.end();
      });
      if (!marks.has(worker)) marks.set(worker, path);
    }
    if (marks.size < workers) throw new Error(`only ${marks.size} of ${workers} workers answered`);
    const paths = new Set(marks.values());
    await eventually(() => this.logLines().filter((l) => paths.has(String((l.req as { url?: unknown } | undefined)?.url))).length >= paths.size, {
      what: "the workers' request lines (log.requests off?)",
      timeoutMs,
      context: () => `output:\n${this.output}`,
    });
  }

  /** The log lines rt printed as JSON objects. */
  logLines(): Record<string, unknown>[] {
    // Up to the last newline: the rest of a line may still be on its way.
    return this.output
      .slice(0, this.output.lastIndexOf('\n') + 1)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

/** POSTs `body` as JSON (or raw with the given content type) and parses the JSON answer. */
export async function call(url: string, init: { method?: string; body?: string | Uint8Array; contentType?: string; headers?: Record<string, string> } = {}): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.contentType) headers['content-type'] = init.contentType;
  const res = await fetch(url, { method: init.method ?? 'POST', body: init.body as BodyInit | undefined, headers });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON; the test looks at `text`
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** A POST whose body stays open after its `first` piece: the request (to write the rest to), and the response once it has begun. */
export async function openDuplex(url: string, contentType: string, first: string): Promise<{ req: ClientRequest; res: IncomingMessage }> {
  const req = request(url, { method: 'POST', headers: { 'content-type': contentType } });
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    req.on('response', resolve);
    req.on('error', reject);
  });
  req.write(first);
  return { req, res: await answered };
}

/**
 * A full-duplex exchange: POSTs `first` and, the body still open, waits
 * (up to 5 s, failing with `what` otherwise) until the answer so far is
 * `firstAnswer`; then sends `rest` and ends the body. The response, and
 * its whole text.
 */
export async function duplexExchange(url: string, contentType: string, [first, firstAnswer]: [string, string], rest: string, what: string): Promise<{ res: IncomingMessage; text: string }> {
  const { req, res } = await openDuplex(url, contentType, first);
  const pieces: Buffer[] = [];
  res.on('data', (d: Buffer) => pieces.push(d));
  await eventually(() => Buffer.concat(pieces).toString() === firstAnswer, { what, timeoutMs: 5_000, intervalMs: 10 });
  const ended = new Promise((resolve) => res.on('end', resolve));
  req.end(rest);
  await ended;
  return { res, text: Buffer.concat(pieces).toString() };
}

export function invoke(rt: { url: string }, path: string, json?: unknown): Promise<JsonResponse> {
  return call(`${rt.url}/api/services/${path}`, json === undefined ? {} : { body: JSON.stringify(json), contentType: 'application/json' });
}
