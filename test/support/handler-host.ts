// The main thread's side of a test's handler instance thread
// (handler-thread.ts): transpiles a handler component, starts the thread, and
// sends it requests, feeding request bodies and taking responses through the
// host's port channel as rt's worker will; optionally with an OutgoingClient
// for the guest's outgoing HTTP.

import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { transpileBytes as transpile } from '@bytecodealliance/jco-transpile';
import { TRANSPILE_OPTIONS } from '../../lib/primary/compile-job.js';
import { MainEnd, OutgoingClient, threadCells, type FieldEntry, type HandlerRequest, type ResponseHead } from '../../lib/worker/wasi-host/index.js';
import { within } from './eventually.js';
import type { HandledMessage, HandleRequestMessage, HandlerThreadData } from './handler-thread.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const clock = (): number => performance.timeOrigin + performance.now();

export interface Exchanged {
  head?: ResponseHead;
  malformed?: string;
  refused?: unknown;
  chunks: { at: number; text: string }[];
  finished?: FieldEntry[] | 'no trailers';
  /** The most bytes received and not yet granted back at any time. */
  maxOutstanding: number;
  aborted?: string;
  handled: HandledMessage;
  body: string;
}

export interface Feed {
  /** Body pieces, each sent `delayMs` after the previous one; then the end. */
  pieces?: [delayMs: number, text: string][];
  trailers?: FieldEntry[];
  /** Response credit to start with (default 64 KiB), granted back as each chunk arrives. */
  window?: number;
  /** Grant each chunk's bytes back this long after it arrived (a slow reader); default at once. */
  grantAfterMs?: number;
}

export interface HandlerThreadOptions {
  /** Give the thread outgoing HTTP: an OutgoingClient on this side, allowed these hosts. */
  outgoing?: { allowedHosts: string[]; responseWindow?: number };
}

/** A handler component on an instance thread of its own. */
export class HandlerThread {
  readonly shared = threadCells();
  /** The main thread's end of the thread's outgoing HTTP, when it has it. */
  outgoing: OutgoingClient | undefined;
  #worker!: Worker;
  #dir!: string;

  async start(bytes: Uint8Array, options: HandlerThreadOptions = {}): Promise<this> {
    const { files, imports } = await transpile(bytes, { ...TRANSPILE_OPTIONS });
    this.#dir = await mkdtemp(join(tmpdir(), 'rt-wasi-host-'));
    await writeFile(join(this.#dir, 'package.json'), '{"type":"module"}\n');
    for (const [file, content] of Object.entries(files)) {
      await mkdir(dirname(join(this.#dir, file)), { recursive: true });
      await writeFile(join(this.#dir, file), content);
    }
    const data: HandlerThreadData = { dir: this.#dir, specifiers: imports, shared: this.shared };
    const transfer: MessagePort[] = [];
    if (options.outgoing) {
      const channel = new MessageChannel();
      this.outgoing = new OutgoingClient(channel.port1, this.shared, options.outgoing.allowedHosts, { responseWindow: options.outgoing.responseWindow });
      data.outgoing = channel.port2;
      transfer.push(channel.port2);
    }
    this.#worker = new Worker(new URL('./handler-thread.js', import.meta.url), { workerData: data, transferList: transfer });
    await within(new Promise((resolve, reject) => this.#worker.once('message', resolve).once('error', reject)), 20_000, 'the handler thread to load');
    return this;
  }

  /** Sends one request; resolves once `handle` returned and the response's messages are in. */
  async handle(request: Partial<HandlerRequest> & { pathWithQuery: string }, feed: Feed = {}): Promise<Exchanged> {
    const full: HandlerRequest = { method: 'GET', scheme: 'http', authority: 'localhost:8080', headers: [], ...request };
    const chunks: Exchanged['chunks'] = [];
    const got: Omit<Exchanged, 'handled' | 'body'> = { chunks, maxOutstanding: 0 };
    let outstanding = 0;
    let resolve!: () => void;
    const responseDone = new Promise<void>((r) => (resolve = r));
    // A slow reader's grants are timers that act later (they are no wait).
    const end: MainEnd = new MainEnd(
      {
        head: (head) => void (got.head = head),
        malformed: (problem) => (got.malformed = problem),
        refused: (code) => (got.refused = code),
        chunk: (bytes) => {
          chunks.push({ at: clock(), text: dec.decode(bytes) });
          outstanding += bytes.length;
          got.maxOutstanding = Math.max(got.maxOutstanding, outstanding);
          const grant = (): void => {
            outstanding -= bytes.length;
            end.grant(bytes.length);
          };
          if (feed.grantAfterMs === undefined) grant();
          else setTimeout(grant, feed.grantAfterMs);
        },
        finish: (trailers) => (got.finished = trailers ?? 'no trailers'),
        abort: (reason) => (got.aborted = reason),
        settled: () => resolve(),
      },
      feed.window ?? 64 * 1024,
    );
    end.bind(this.shared);
    const handled = new Promise<HandledMessage>((resolve) => this.#worker.once('message', resolve));
    this.#worker.postMessage({ request: full, port: end.threadPort, ring: end.ring } satisfies HandleRequestMessage, [end.threadPort]);
    let at = 0;
    for (const [delay, text] of feed.pieces ?? []) {
      at += delay;
      setTimeout(() => end.push(enc.encode(text)), at);
    }
    setTimeout(() => end.end(feed.trailers), at);
    const message = await within(handled, 10_000, `handle(${full.pathWithQuery}) to return`);
    await within(responseDone, 2_000, 'the response messages');
    end.dispose();
    return { ...got, handled: message, body: chunks.map((c) => c.text).join('') };
  }

  async stop(): Promise<void> {
    await this.#worker?.terminate();
    this.outgoing?.close();
    if (this.#dir) await rm(this.#dir, { recursive: true, force: true });
  }
}
