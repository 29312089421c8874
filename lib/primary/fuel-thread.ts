// Fuel instrumentation off the primary's event loop: binaryen works
// synchronously (~3.7 s and ~390 MB for an 11 MB componentize-js core), and
// the primary must keep answering its workers (control relays, metrics)
// meanwhile. One thread does the work, started when a component needs it and
// ended once idle, so binaryen's memory goes with it.

import { parentPort, Worker, workerData } from 'node:worker_threads';
import type { FuelOutcome } from './fuel.js';

type Request = [id: number, core: Uint8Array];
type Answer = [id: number, outcome: FuelOutcome];

/** Marks the thread this module starts (it is its own entry point). */
const ROLE = 'rt:fuel-instrumentation';
/** How long the thread waits for more work before it ends. */
export const IDLE_MS = 5_000;

let thread: Worker | undefined;
let idle: NodeJS.Timeout | undefined;
let nextId = 0;
const waiting = new Map<number, { resolve: (outcome: FuelOutcome) => void }>();

/** instrumentFuel(core), run on the instrumentation thread. */
export function instrumentFuelOffThread(core: Uint8Array): Promise<FuelOutcome> {
  clearTimeout(idle);
  thread ??= start();
  thread.ref();
  const id = ++nextId;
  return new Promise((resolve) => {
    waiting.set(id, { resolve });
    thread!.postMessage([id, core] satisfies Request);
  });
}

function start(): Worker {
  const worker = new Worker(new URL(import.meta.url), { workerData: ROLE });
  worker.on('message', ([id, outcome]: Answer) => {
    waiting.get(id)?.resolve(outcome);
    waiting.delete(id);
    if (waiting.size > 0) return;
    // Idle: it keeps no process alive, and ends (freeing binaryen's memory) unless more work comes.
    // Work that comes while it ends goes to a new thread.
    worker.unref();
    idle = setTimeout(() => {
      thread = undefined;
      void worker.terminate();
    }, IDLE_MS).unref();
  });
  const fail = (reason: string) => {
    // A thread ended for being idle had nothing waiting: what waits now is another thread's.
    if (thread !== worker) return;
    thread = undefined;
    for (const { resolve } of waiting.values()) resolve({ ok: false, reason: `the instrumentation thread ${reason}` });
    waiting.clear();
  };
  worker.on('error', (e) => fail(`failed: ${e.message}`));
  worker.on('exit', (code) => fail(`exited (${code})`));
  return worker;
}

// On the thread: binaryen is loaded here only, never into the primary itself.
if (workerData === ROLE && parentPort) {
  const port = parentPort;
  const { instrumentFuel } = await import('./fuel.js');
  port.on('message', ([id, core]: Request) => port.postMessage([id, instrumentFuel(core)] satisfies Answer));
}
