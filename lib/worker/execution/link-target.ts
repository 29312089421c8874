// What a call across a link (docs/api.md §5.9) needs of the service it
// reaches, and how a worker finds that service when the call is made: the
// registry's HostedService is one; handler-link.ts and link-calls.ts see no
// more of it than this.

import type { ServiceDescriptor, ServiceId } from '../../service.js';
import type { HandlerRequest, MainEnd } from '../wasi-host/index.js';
import type { CallResult } from './invocation.js';

export interface LinkTarget {
  readonly descriptor: ServiceDescriptor;
  /** A request to its HTTP handler (a middleware's downstream one). */
  serveHttp(request: HandlerRequest, channel: MainEnd, deadline: number, signal?: AbortSignal): Promise<CallResult>;
  /** A call of function `fn` of its exported interface `iface`, with jco-shaped arguments. */
  callExport(iface: string, fn: string, args: unknown[], deadline: number): Promise<CallResult>;
}

/** The service a link names, as the worker serves it at the time of the call (a reload or restart is seen by the next call). */
export type LinkedServices = (id: ServiceId) => LinkTarget | undefined;
