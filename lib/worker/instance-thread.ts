// An instance thread: hosts one component instance and runs its calls, one at
// a time, in the order they arrive. A service runs its instances on threads
// when it cannot run inline on the worker's main thread (see execution.ts):
// a runaway call then blocks only its thread, and the main thread cuts it off
// by terminating the thread. Modules here are not fuel-instrumented, so
// compute-heavy code runs at full speed.

import { parentPort, workerData } from 'node:worker_threads';
import { ComponentInstance, errorText, type CallOutcome } from './component-instance.js';
import { hostImports } from './host.js';
import { captureAll, OutputCapture } from './output-capture.js';
import { COMPONENT_ERROR, OK, TRAP, type CallAnswer, type CallRequest, type ThreadEvent, type ThreadSpec } from './thread-protocol.js';

const port = parentPort!;
const spec = workerData as ThreadSpec;
const output = new OutputCapture();
captureAll(output);

function post(message: CallAnswer | ThreadEvent): void {
  port.postMessage(message);
}

function flushOutput(): void {
  for (const { stream, text, dropped } of output.take()) post({ type: 'output', stream, text, dropped });
}

const instanceSpec = {
  entry: spec.entry,
  modules: new Map(spec.modules),
  imports: hostImports(spec.importSpecifiers, spec.imports, spec.grants),
  methods: spec.methods,
  init: spec.init,
  config: spec.config,
  memoryCapBytes: spec.memoryCapBytes,
};
const queue: CallRequest[] = [];
let instance: ComponentInstance | undefined;
let callsOnInstance = 0;

/** A fresh instance after a trap or at the recycle count; calls wait in the queue meanwhile. */
function replaceInstance(): void {
  instance = undefined;
  ComponentInstance.create(instanceSpec).then(
    (fresh) => {
      instance = fresh;
      callsOnInstance = 0;
      flushOutput();
      drain();
    },
    (e: unknown) => {
      flushOutput();
      post({ type: 'failed', error: errorText(e) });
    },
  );
}

function answer(id: number, outcome: CallOutcome): CallAnswer {
  switch (outcome.status) {
    case 'ok':
      return [id, OK, outcome.value];
    case 'component-error':
      return [id, COMPONENT_ERROR, outcome.payload];
    case 'trap':
      return [id, TRAP, outcome.kind, outcome.message];
    default:
      return [id, TRAP, 'component trapped', `unexpected outcome ${outcome.status}`];
  }
}

function drain(): void {
  while (instance && queue.length > 0) {
    const [id, method, args] = queue.shift()!;
    const outcome = instance.call(method, args);
    flushOutput();
    post(answer(id, outcome));
    if (outcome.status === 'trap' || (spec.recycleAfter > 0 && ++callsOnInstance >= spec.recycleAfter)) {
      replaceInstance();
      return;
    }
  }
}

port.on('message', (request: CallRequest) => {
  queue.push(request);
  drain();
});

try {
  instance = await ComponentInstance.create(instanceSpec);
  flushOutput();
  post({ type: 'ready' });
  drain();
} catch (e) {
  flushOutput();
  post({ type: 'failed', error: errorText(e) });
}
