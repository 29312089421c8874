// Messages between a worker's main thread and an instance thread
// (`instance-thread.ts`). Calls and answers are arrays, not objects: they
// cross the thread boundary on every invocation, and arrays clone faster.

import type { ExportLocation } from '../service.js';
import type { ImportedItem } from '../wit/types.js';
import type { TrapKind } from './component-instance.js';
import type { Grants } from './host.js';

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
  /** Replace the instance after this many calls; 0 = never (contract: instances are reused). */
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

/** Main → thread: call method `index` with jco-shaped `args`. */
export type CallRequest = [id: number, method: number, args: unknown[]];

export const OK = 0;
export const COMPONENT_ERROR = 1;
export const TRAP = 2;

/** Thread → main, one per call, in call order. */
export type CallAnswer =
  | [id: number, status: typeof OK, value: unknown]
  /** The err case of a top-level result<T, E>: the payload E. */
  | [id: number, status: typeof COMPONENT_ERROR, payload: unknown]
  | [id: number, status: typeof TRAP, kind: TrapKind | 'instance lost', message: string];

/** Thread → main, besides answers. */
export type ThreadEvent =
  | { type: 'ready' }
  /** The instance could not be created (at start, or when replacing a trapped or recycled one). */
  | { type: 'failed'; error: string }
  /** What the component wrote to stdout/stderr, capped per call. */
  | { type: 'output'; stream: 'stdout' | 'stderr'; text: string; dropped: number };

export type ThreadMessage = CallAnswer | ThreadEvent;
