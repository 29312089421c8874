// A worker's traces (docs/api.md §7), in rt's own terms: a request's server
// span, a child span per component call, a client span per outgoing request
// a component makes. Only this interface is seen by the HTTP and execution
// layers; what records and exports the spans (recorded-traces.ts) is loaded
// only when tracing is on (start.ts), so with it off each site costs one
// check of an undefined field.

import type { IncomingMessage } from 'node:http';

/** What came of a component call, as its span says: `ok`, or the kind of failure (execution/invocation.ts). */
export type CallOutcome = string;

/** Spans ended and what became of them: sent to the collector, or lost (its queue was full; the export failed). */
export type SpanFate = 'exported' | 'dropped' | 'failed';

export interface Traces {
  /** The server span of `req`: the `traceparent` (and `tracestate`) it carries continued, else a new trace. */
  request(req: IncomingMessage, requestId: string, client: string): RequestTrace;
  /** A client span of an outgoing request no call can be named for (several share its instance): a trace of its own. */
  outgoing(method: string, url: string): OutgoingTrace;
  /** Exports what is batched and stops (the worker is stopping). */
  shutdown(): Promise<void>;
}

export interface RequestTrace {
  /** Its trace's id (32 hex digits), for the request's log line. */
  readonly traceId: string;
  /** The route template that took the request (`/api/services/{domain}/{service}/invoke/{method}`, a handler's mount). */
  route(template: string): void;
  /** A child span for a call of `method` of `service` made for this request. */
  call(service: string, method: string): CallTrace;
  /** The request is answered with `status` (499: its client left). */
  end(status: number): void;
}

export interface CallTrace {
  /** The call is over: how, and where it ran (inline, threads). */
  end(outcome: CallOutcome, placement: string | undefined): void;
  /** A client span, child of this call, for an outgoing request the component makes. */
  outgoing(method: string, url: string): OutgoingTrace;
}

export interface OutgoingTrace {
  /** The W3C headers the request carries: its span as the parent of whatever serves it. */
  readonly traceparent: string;
  readonly tracestate: string | undefined;
  /** The response's status, once its head came. */
  answered(status: number): void;
  /** The request is over: its response complete, or `error` (an error-code's tag) why not. */
  end(error?: string): void;
}
