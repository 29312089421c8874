// Messages between a worker's main thread and an instance thread
// (`instance-thread.ts`). Calls and answers are arrays, not objects: they
// cross the thread boundary on every invocation, and arrays clone faster.

import type { ErrorCode } from '../../errors.js';
import type { ExportLocation } from '../../service.js';
import type { StreamSignature } from '../../wit/streaming.js';
import type { ImportedItem, WitFunction } from '../../wit/types.js';
import type { TrapCode } from './component-instance.js';
import type { Grants } from '../sandbox/wasi-imports.js';

/** What an instance thread is started with (its `workerData`). */
export interface ThreadSpec {
  /** `<domain>.<service>`, for messages. */
  service: string;
  /** The jco glue module (file path). */
  entry: string;
  /** Compiled core modules by the name the glue asks for; compiled once per worker and shared by its threads. */
  modules: [name: string, module: WebAssembly.Module][];
  importSpecifiers: string[];
  imports: ImportedItem[];
  /** Where each method lives in jco's exports, in method order. */
  methods: ExportLocation[];
  /** What each method streams, in method order; null for a method that does not. */
  streams: (StreamSignature | null)[];
  /** Each invocable method's parameters (null for the others), in method order: large JSON bodies are decoded in the thread (large-body.ts). */
  signatures: (Pick<WitFunction, 'name' | 'params'> | null)[];
  /** Replace the instance after this many calls; 0 = never (instances are reused: docs/api.md §4). */
  recycleAfter: number;
  /** The memory cap the core modules were compiled with, for the trap message. */
  memoryCapBytes: number;
  /** The `init` export, called with `config` on every new instance before its first call. */
  init: ExportLocation | null;
  /** The configuration data (empty when the service has none). */
  config: Uint8Array;
  /** What the sidecar grants (environment, directories, outbound hosts) and the configuration's flattened keys. */
  grants: Grants;
}

/**
 * How a stream's items are written: `raw` (list<u8> items as they are,
 * strings as UTF-8), `ndjson` (one JSON value per line) or `sse`
 * (`data: <json>` events). The thread frames them, so the main thread only
 * writes bytes.
 */
export type Framing = 'raw' | 'ndjson' | 'sse';

/**
 * Main → thread: call method `index` with jco-shaped `args`, or with the
 * arguments a large JSON body holds (its bytes, moved: the thread parses and
 * decodes them, and answers BAD_ARGUMENTS when they do not fit). With a framing,
 * the method returns a stream: the thread keeps its resource, answers OK
 * (value null) and then calls `next` while it has `credit` (bytes), sending
 * each framed item as a CHUNK, until END or FAILED.
 */
export type CallRequest =
  | [id: number, method: number, args: unknown[] | Uint8Array<ArrayBuffer>]
  | [id: number, method: number, args: unknown[] | Uint8Array<ArrayBuffer>, framing: Framing, credit: number];

/** Main → thread, for an open stream: more credit (bytes the main thread has written out), or the end of it (dropping the resource). */
export type StreamControl = { type: 'credit'; id: number; bytes: number } | { type: 'cancel'; id: number };

export const OK = 0;
export const COMPONENT_ERROR = 1;
export const TRAP = 2;
/** A stream's next framed item. */
export const CHUNK = 3;
/** A stream's next returned none, or it was cancelled; its resource is dropped. */
export const END = 4;
/** The JSON body the thread was given does not decode: the call was not made. */
export const BAD_ARGUMENTS = 5;

/**
 * Thread → main: one answer per call, in call order; then, for a stream, its
 * chunks and its end (END, or COMPONENT_ERROR/TRAP from `next`). A call's
 * answer carries `ranMs`, how long the call ran on the thread: the main
 * thread's own clock would add the time its answer waited behind other
 * requests there, tens of ms under load (execution.ts judges a move by it).
 */
export type CallAnswer =
  | [id: number, status: typeof OK, value: unknown, ranMs?: number]
  /** The err case of a top-level result<T, E>: the payload E. */
  | [id: number, status: typeof COMPONENT_ERROR, payload: unknown, ranMs?: number]
  | [id: number, status: typeof TRAP, code: TrapCode, message: string, ranMs?: number]
  | [id: number, status: typeof CHUNK, bytes: Uint8Array]
  | [id: number, status: typeof END]
  | [id: number, status: typeof BAD_ARGUMENTS, code: ErrorCode, details: string];

/** Thread → main, besides answers. */
export type ThreadEvent =
  | { type: 'ready' }
  /** The instance could not be created (at start, or when replacing a trapped or recycled one). */
  | { type: 'failed'; error: string }
  /** What the component wrote to stdout/stderr, capped per call. */
  | { type: 'output'; stream: 'stdout' | 'stderr'; text: string; dropped: number };

export type ThreadMessage = CallAnswer | ThreadEvent;

/** How long the answered call ran on its thread; undefined for answers that are not a call's. */
export function ranMs(answer: CallAnswer): number | undefined {
  switch (answer[1]) {
    case OK:
    case COMPONENT_ERROR:
      return answer[3];
    case TRAP:
      return answer[4];
    default:
      return undefined;
  }
}
