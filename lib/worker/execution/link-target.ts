// What a call across a link (docs/api.md §5.9) needs of the service it
// reaches, and how a worker finds that service when the call is made: the
// registry's HostedService is one; handler-link.ts and link-calls.ts see no
// more of it than this.

import type { ServiceDescriptor, ServiceId } from '../../service.js';
import type { BodyChannel, HandlerRequest, MainEnd } from '../wasi-host/index.js';
import type { CallResult, StreamOpening, StreamOptions } from './invocation.js';

export interface LinkTarget {
  readonly descriptor: ServiceDescriptor;
  /** A request to its HTTP handler (a middleware's downstream one). */
  serveHttp(request: HandlerRequest, channel: MainEnd, deadline: number, signal?: AbortSignal): Promise<CallResult>;
  /** A call of function `fn` of its exported interface `iface`, with jco-shaped arguments; `body`: its stream<T> parameter's bytes as they come (raw, or NDJSON items). */
  callExport(iface: string, fn: string, args: unknown[], deadline: number, body?: BodyChannel): Promise<CallResult>;
  /** The same of a function that returns a stream<T>: once it has, its items go to `stream.sink`, framed as `stream.framing` says. */
  openExportStream(iface: string, fn: string, args: unknown[], deadline: number, stream: StreamOptions, body?: BodyChannel): Promise<StreamOpening>;
}

/** The service a link names, as the worker serves it at the time of the call (a reload or restart is seen by the next call). */
export type LinkedServices = (id: ServiceId) => LinkTarget | undefined;
