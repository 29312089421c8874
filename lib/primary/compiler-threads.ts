// Compiling components (compile-job.ts: jco's transpile, then binaryen's fuel
// instrumentation) off the primary's event loop, several at once on a
// multi-core machine. On an 11 MB componentize-js component the transpile is
// ~0.3 s (of its hollow twin, hollow-component.ts; ~5 s whole) and the
// instrumentation ~6.5 s and ~360 MB (measured on this project's 2-core
// machines with jco 1.12), synchronous both, and the
// primary must keep answering its workers meanwhile (heartbeats, control
// relays, metrics, /api/ready). A pool of up to THREADS threads, one
// component at a time each, work waiting in order for the next free one: a
// thread starts when work comes and none is free, and ends once idle for
// IDLE_MS, so jco's and binaryen's memory go with it.

import { availableParallelism } from 'node:os';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import type { Compiled, CompileOptions, CompileStage } from './compile-job.js';

type Request = { bytes: Uint8Array; options: CompileOptions };
type Answer = { kind: 'stage'; stage: CompileStage } | { kind: 'done'; compiled: Compiled } | { kind: 'failed'; error: string };

/** Marks the threads this module starts (it is their entry point too). */
const ROLE = 'rt:compiler';
/** How long a thread waits for more work before it ends. */
export const IDLE_MS = 5_000;
/**
 * One thread per core, at most 4: each holds up to ~400 MB while it
 * instruments, and at start-up the workers want the cores too.
 */
export const THREADS = Math.max(1, Math.min(availableParallelism(), 4));

interface Job {
  bytes: Uint8Array;
  options: CompileOptions;
  stage: (stage: CompileStage) => void;
  resolve: (compiled: Compiled) => void;
  reject: (e: Error) => void;
}

interface Thread {
  worker: Worker;
  /** What it is compiling; none while idle. */
  job?: Job;
  idle?: NodeJS.Timeout;
}

const threads = new Set<Thread>();
const queue: Job[] = [];

/** compile(bytes, options), run on a compiler thread; `stage` hears where it is (not while it waits for a thread). */
export function compileOffThread(bytes: Uint8Array, stage: (stage: CompileStage) => void = () => {}, options: CompileOptions = {}): Promise<Compiled> {
  return new Promise((resolve, reject) => {
    queue.push({ bytes, options, stage, resolve, reject });
    dispatch();
  });
}

/** Threads alive now, at work or idle. */
export function compilerThreads(): number {
  return threads.size;
}

/** Gives waiting work to idle threads, starting threads up to THREADS. */
function dispatch(): void {
  while (queue.length > 0) {
    const thread = [...threads].find((t) => !t.job) ?? (threads.size < THREADS ? start() : undefined);
    if (!thread) return;
    run(thread, queue.shift()!);
  }
}

function run(thread: Thread, job: Job): void {
  clearTimeout(thread.idle);
  thread.job = job;
  thread.worker.ref();
  // Copied, not transferred: the caller keeps its bytes.
  thread.worker.postMessage({ bytes: job.bytes, options: job.options } satisfies Request);
}

function start(): Thread {
  const worker = new Worker(new URL(import.meta.url), { workerData: ROLE });
  const thread: Thread = { worker };
  threads.add(thread);
  worker.on('message', (answer: Answer) => {
    const job = thread.job;
    if (!job) return;
    if (answer.kind === 'stage') return job.stage(answer.stage);
    thread.job = undefined;
    if (answer.kind === 'done') job.resolve(answer.compiled);
    else job.reject(new Error(answer.error));
    const next = queue.shift();
    if (next) return run(thread, next);
    // Idle: it keeps no process alive, and ends (freeing jco's and binaryen's
    // memory) unless more work comes first. Out of the pool before it ends:
    // work that comes meanwhile goes to another thread.
    worker.unref();
    thread.idle = setTimeout(() => {
      threads.delete(thread);
      void worker.terminate();
    }, IDLE_MS).unref();
  });
  const fail = (reason: string) => {
    // A thread ended for being idle is out of the pool already, with nothing to answer.
    if (!threads.delete(thread)) return;
    clearTimeout(thread.idle);
    thread.job?.reject(new Error(`the compiler thread ${reason}`));
    thread.job = undefined;
    dispatch();
  };
  worker.on('error', (e) => fail(`failed: ${e.message}`));
  worker.on('exit', (code) => fail(`exited (${code})`));
  return thread;
}

/** The buffers the answer can hand over instead of copying: those its arrays have to themselves. */
function transferable(compiled: Compiled): ArrayBuffer[] {
  const own = (bytes: Uint8Array) => bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const arrays = [compiled.glue, ...compiled.files.map((f) => f.bytes)];
  return arrays.filter(own).map((bytes) => bytes.buffer as ArrayBuffer);
}

// On a thread: jco and binaryen are loaded here only, never into the primary itself.
if (workerData === ROLE && parentPort) {
  const port = parentPort;
  const { compile } = await import('./compile-job.js');
  port.on('message', ({ bytes, options }: Request) => {
    compile(bytes, (stage) => port.postMessage({ kind: 'stage', stage } satisfies Answer), options).then(
      (compiled) => port.postMessage({ kind: 'done', compiled } satisfies Answer, transferable(compiled)),
      (e: unknown) => port.postMessage({ kind: 'failed', error: e instanceof Error ? e.message : String(e) } satisfies Answer),
    );
  });
}
