// What a request's middleware and routes tell each other (Koa's ctx.state),
// typed once for all of them.

import type { ParameterizedContext } from 'koa';
import type { Series, StreamOutcome } from './request-stats.js';
import type { RequestTrace } from '../../tracing/traces.js';

export interface RequestState {
  /** When the request arrived (performance.now()): its deadline counts from here (docs/api.md §5.1). */
  arrived: number;
  /** `arrived` + `http.request_timeout_seconds`: when the request's body must be in and its call done. */
  deadline: number;
  /** The request's id (docs/api.md §5.7): its answer's `X-Request-Id`, and `reqId` in its log lines. */
  requestId: string;
  /**
   * The headers every answer to the request carries (a flat list of names and
   * values: its id, the worker, and those of the transport that reached it),
   * given with the answer by whatever writes it (api-call.ts: writeReply).
   */
  answerHeaders: readonly string[];
  /** The client's address (docs/api.md §5.10; client-address.ts): what its fair shares are counted by. */
  client: string;
  /** `<domain>.<service>` and the method, once the route found them: for the log line and error bodies. */
  service?: string;
  method?: string;
  /** For a request to an HTTP handler: the route that reached it (its mount, or `/api/services/{d}/{s}/http`), for the log line and metrics. */
  route?: string;
  /** Where the request is counted, once resolved (exchange.ts: seriesOf). */
  series?: Series;
  /** A streamed answer, once it has ended: what it carried and how it ended (for the log line). */
  stream?: { items: number; bytes: number; outcome: StreamOutcome };
  /** The error code of a failed answer (exchange.ts: errorAnswer), for the log line: a 500 says which. */
  code?: string;
  /** The worker the request was forwarded to, holding the handles it names (peers.ts). */
  forwardedTo?: number;
  /** Its server span, when traces are on (tracing/traces.ts): its calls' spans are its children. */
  trace?: RequestTrace;
}

export type RtContext = ParameterizedContext<RequestState>;
