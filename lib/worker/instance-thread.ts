// An instance thread: hosts one component instance and runs its calls, one at
// a time, in the order they arrive. Instances live on their own threads so
// that a runaway call blocks only its thread: the main thread keeps serving
// HTTP, and cuts the call off by terminating the thread (see
// docs/architecture.md, "Cutting off a runaway call").

import { parentPort, workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import type { ExportLocation } from '../service.js';
import { ComponentExit, hostImports, UnsatisfiedImportError } from './host.js';
import { COMPONENT_ERROR, OK, TRAP, type CallAnswer, type CallRequest, type ThreadEvent, type ThreadSpec, type TrapKind } from './thread-protocol.js';

type Bound = (...args: unknown[]) => unknown;
type Instantiate = (
  getCoreModule: (name: string) => WebAssembly.Module,
  imports: Record<string, unknown>,
  instantiateCore: (module: WebAssembly.Module, imports?: WebAssembly.Imports) => Promise<WebAssembly.Instance>,
) => Promise<Record<string, unknown>>;

/** Output kept per stream and call: enough to debug with, too little to flood the log. */
const OUTPUT_LIMIT = 16 * 1024;

const port = parentPort!;
const spec = workerData as ThreadSpec;
const modules = new Map(spec.modules);

function post(message: CallAnswer | ThreadEvent): void {
  port.postMessage(message);
}

/** stdout/stderr of the component, captured (preview2-shim writes to this thread's process streams) and sent to the log. */
class Output {
  #text = '';
  #dropped = 0;
  constructor(readonly stream: 'stdout' | 'stderr') {
    process[stream].write = (chunk: string | Uint8Array) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      const room = OUTPUT_LIMIT - this.#text.length;
      if (room > 0) this.#text += text.slice(0, room);
      this.#dropped += Math.max(0, text.length - Math.max(room, 0));
      return true;
    };
  }

  flush(): void {
    if (!this.#text && !this.#dropped) return;
    post({ type: 'output', stream: this.stream, text: this.#text, dropped: this.#dropped });
    this.#text = '';
    this.#dropped = 0;
  }
}

const outputs = [new Output('stdout'), new Output('stderr')];
const flushOutput = () => outputs.forEach((o) => o.flush());

const glue = (await import(pathToFileURL(spec.entry).href)) as { instantiate: Instantiate };
const imports = hostImports(spec.importSpecifiers, spec.imports, { env: spec.env, config: spec.configEntries, paths: spec.paths, outboundHosts: spec.outboundHosts });
const queue: CallRequest[] = [];
let functions: (Bound | undefined)[] | undefined;
let memories: WebAssembly.Memory[] = [];
let callsOnInstance = 0;

async function instantiate(): Promise<void> {
  functions = undefined;
  memories = [];
  const exports = await glue.instantiate(
    (name) => {
      const module = modules.get(name);
      if (!module) throw new Error(`the glue asked for an unknown core module ${name}`);
      return module;
    },
    imports,
    async (module, moduleImports) => {
      const instance = await WebAssembly.instantiate(module, moduleImports);
      for (const value of Object.values(instance.exports)) if (value instanceof WebAssembly.Memory) memories.push(value);
      return instance;
    },
  );
  const find = (m: ExportLocation): Bound | undefined => {
    const container = m.exportKey === null ? exports : (exports[m.exportKey] as Record<string, unknown> | undefined);
    const fn = container?.[m.jsName];
    return typeof fn === 'function' ? (fn as Bound) : undefined;
  };
  if (spec.init) runInit(find(spec.init));
  functions = spec.methods.map(find);
  callsOnInstance = 0;
}

/** The component's `init(config)`: an instance whose init fails or traps is never served. */
function runInit(init: Bound | undefined): void {
  if (!init) throw new Error('the component does not export init where its type says');
  try {
    init(spec.config);
  } catch (e) {
    if (isComponentError(e)) throw new Error(`init returned an error: ${typeof e.payload === 'string' ? e.payload : JSON.stringify(e.payload)}`);
    throw new Error(`init trapped: ${errorText(e)}`);
  }
}

/** A fresh instance after a trap or at the recycle count; calls wait in the queue meanwhile. */
function replaceInstance(): void {
  instantiate().then(
    () => {
      flushOutput();
      drain();
    },
    (e: unknown) => {
      flushOutput();
      post({ type: 'failed', error: errorText(e) });
    },
  );
}

function drain(): void {
  while (functions && queue.length > 0) {
    const [id, method, args] = queue.shift()!;
    const fn = functions[method];
    let answer: CallAnswer;
    let fresh = false;
    try {
      if (!fn) throw new Error('the component does not export this method where its type says');
      answer = [id, OK, fn(...args)];
    } catch (e) {
      if (isComponentError(e)) {
        answer = [id, COMPONENT_ERROR, e.payload];
      } else {
        answer = [id, TRAP, trapKind(e), trapMessage(e)];
        fresh = true;
      }
    }
    flushOutput();
    post(answer);
    if (fresh || (spec.recycleAfter > 0 && ++callsOnInstance >= spec.recycleAfter)) {
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
  await instantiate();
  flushOutput();
  post({ type: 'ready' });
  drain();
} catch (e) {
  flushOutput();
  post({ type: 'failed', error: errorText(e) });
}

/** jco throws a ComponentError carrying `payload` for the err case of a top-level result<T, E>. */
function isComponentError(e: unknown): e is { payload: unknown } {
  return e instanceof Error && e.constructor.name === 'ComponentError' && 'payload' in e;
}

function trapKind(e: unknown): TrapKind {
  if (e instanceof UnsatisfiedImportError) return 'unsatisfied import';
  if (e instanceof ComponentExit) return 'component exited';
  return 'component trapped';
}

/** The trap's own message, and the memory figures when the instance ran into the cap (its allocator usually traps without saying why). */
function trapMessage(e: unknown): string {
  const message = errorText(e);
  const largest = Math.max(0, ...memories.map((m) => m.buffer.byteLength));
  if (largest < spec.memoryCapBytes * 0.9) return message;
  const mib = (n: number) => Math.round(n / 1_048_576);
  return `${message} (the instance's memory reached ${mib(largest)} MiB; runtime.max_memory_mb is ${mib(spec.memoryCapBytes)})`;
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}
