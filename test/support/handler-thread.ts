// A test's instance thread for wasi:http handlers: loads a transpiled
// handler's glue, and for each request it is sent makes a fresh instance (a
// fetch-event build answers one request per instance), imports from
// lib/worker/wasi-host (plus preview2-shim for the rest), and runs `handle`
// with the request's body and response crossing threads through the host's
// port channel. It answers each request with what `handle` left behind.
// Given an outgoing port, the guest has outgoing HTTP through it (the main
// side's OutgoingClient, handler-host.ts).

import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import * as preview2 from '@bytecodealliance/preview2-shim';
import { WASI_0_2 } from '../../lib/wasi-lines.js';
import { unversioned } from '../../lib/wit/interface-key.js';
import { OutputCapture, type CapturedText } from '../../lib/worker/sandbox/output-capture.js';
import { OutgoingChannel, p2, PortBodySource, PortResponseSink, threadWaker, type HandleOutcome, type HandlerRequest } from '../../lib/worker/wasi-host/index.js';

export interface HandlerThreadData {
  /** A folder with the glue (`component.js`) and its core modules. */
  dir: string;
  specifiers: string[];
  shared: SharedArrayBuffer;
  /** The thread's end of its outgoing HTTP channel (transferred), if it has outgoing HTTP. */
  outgoing?: MessagePort;
}

export interface HandleRequestMessage {
  request: HandlerRequest;
  /** The request's channel (wasi-host/core/channel.ts): its body in, its response's head and end out. */
  port: MessagePort;
  /** Its response body's ring (byte-ring.ts). */
  ring: SharedArrayBuffer;
}

export interface HandledMessage {
  outcome?: HandleOutcome;
  /** What `handle` threw (a trap), if it did. */
  threw?: string;
  output: CapturedText[];
  /** When `handle` returned, as performance.timeOrigin + performance.now(). */
  returnedAt: number;
}

type Instantiate = (getCoreModule: (name: string) => WebAssembly.Module, imports: Record<string, unknown>) => Promise<Record<string, unknown>>;
type Handler = { handle(request: unknown, responseOut: unknown): void };

const port = parentPort!;
const { dir, specifiers, shared, outgoing: outgoingPort } = workerData as HandlerThreadData;
p2.usePollWaker(threadWaker(shared));
const output = new OutputCapture();
const outgoing = outgoingPort ? new OutgoingChannel(outgoingPort, shared) : undefined;

const shim = preview2 as unknown as Record<string, Record<string, object>>;
const ours = p2.handlerImports(output, outgoing);
const imports: Record<string, unknown> = {};
for (const specifier of specifiers) {
  // jco names imports without versions; the fixtures are WASI 0.2 components.
  const key = unversioned(specifier);
  const m = /^wasi:([^/]+)\/(.+)$/.exec(key);
  imports[specifier] = ours[`${key}@${WASI_0_2}`] ?? (m ? shim[m[1]]?.[m[2].replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] : undefined) ?? {};
}

const { instantiate } = (await import(pathToFileURL(join(dir, 'component.js')).href)) as { instantiate: Instantiate };
const modules = new Map<string, WebAssembly.Module>();
for (const file of (await import('node:fs')).readdirSync(dir)) if (file.endsWith('.wasm')) modules.set(file, await WebAssembly.compile(await readFile(join(dir, file))));

port.on('message', ({ request, port: channel, ring }: HandleRequestMessage) => {
  serve(request, channel, ring).catch((e: unknown) => port.postMessage({ threw: `instantiating: ${String(e)}`, output: output.take(), returnedAt: 0 } satisfies HandledMessage));
});

async function serve(request: HandlerRequest, channel: MessagePort, ring: SharedArrayBuffer): Promise<void> {
  {
    const exports = await instantiate((name) => modules.get(name)!, imports);
    const key = Object.keys(exports).find((k) => k.startsWith('wasi:http/incoming-handler@')) ?? 'incomingHandler';
    const handler = exports[key] as Handler;
    const sink = new PortResponseSink(channel, ring);
    const exchange = p2.handlerExchange(request, new PortBodySource(channel), sink);
    let threw: string | undefined;
    try {
      handler.handle(exchange.request, exchange.responseOut);
    } catch (e) {
      threw = e instanceof Error ? e.message : String(e);
    }
    const returnedAt = performance.timeOrigin + performance.now();
    const outcome = exchange.settle();
    // Nothing of this guest runs again: what it left in flight is stopped.
    outgoing?.abandon();
    sink.settled({ outcome });
    channel.close();
    port.postMessage({ outcome, threw, output: output.take(), returnedAt } satisfies HandledMessage);
  }
}
port.postMessage('ready');
