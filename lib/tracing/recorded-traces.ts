// traces.ts's spans as rt records them (span-record.ts): ids, W3C context
// and sampling of its own (trace-context.ts, sampler.ts), ended spans
// batched (span-batcher.ts) and exported over OTLP/HTTP (otlp-exporter.ts).
// Contexts are passed by hand from the request to its calls and their
// outgoing requests, not through a context manager: rt knows which request
// each call serves, and AsyncLocalStorage on every request would cost what
// tracing is meant not to.

import type { IncomingMessage } from 'node:http';
import { sampled } from './sampler.js';
import type { SamplerSetting } from './settings.js';
import type { SpanBatcher } from './span-batcher.js';
import { newSpanId, newTraceId, SpanKind, SpanRecord } from './span-record.js';
import { remoteParent, traceparentOf } from './trace-context.js';
import type { CallTrace, OutgoingTrace, RequestTrace, Traces } from './traces.js';

export class RecordedTraces implements Traces {
  constructor(
    private readonly sampler: SamplerSetting,
    private readonly batcher: SpanBatcher,
    private readonly stopped: () => Promise<void>,
  ) {}

  request(req: IncomingMessage, requestId: string, client: string): RequestTrace {
    const parent = remoteParent(req.headers.traceparent, req.headers.tracestate);
    const traceId = parent?.traceId ?? newTraceId();
    const method = req.method ?? 'GET';
    const span = new SpanRecord(traceId, newSpanId(), parent?.spanId, parent !== undefined, parent?.traceState, method, SpanKind.server, sampled(this.sampler, traceId, parent));
    if (span.sampled) {
      // Each attribute is encoded into every span exported, on the worker's thread: the HTTP conventions'
      // required ones and those an operator reads (the client, the request id), not every recommended one.
      const url = req.url ?? '/';
      const query = url.indexOf('?');
      span.set('http.request.method', method);
      span.set('url.path', query === -1 ? url : url.slice(0, query));
      span.set('url.scheme', 'encrypted' in req.socket ? 'https' : 'http');
      span.set('server.port', req.socket.localPort ?? 0);
      span.set('client.address', client);
      span.set('rt.request_id', requestId);
      const agent = req.headers['user-agent'];
      if (agent !== undefined) span.set('user_agent.original', agent);
    }
    return new RequestSpan(this.batcher, span, method);
  }

  outgoing(method: string, url: string): OutgoingTrace {
    const traceId = newTraceId();
    return outgoingSpan(this.batcher, traceId, undefined, undefined, sampled(this.sampler, traceId, undefined), method, url);
  }

  async shutdown(): Promise<void> {
    await this.batcher.flush();
    await this.stopped();
  }
}

/** An HTTP span's response status; a 5xx makes it an error (HTTP semantic conventions). */
function answered(span: SpanRecord, status: number): void {
  span.set('http.response.status_code', status);
  if (status >= 500) {
    span.set('error.type', String(status));
    span.error = '';
  }
}

function finish(batcher: SpanBatcher, span: SpanRecord): void {
  span.endedAt = performance.now();
  if (span.sampled) batcher.add(span);
}

class RequestSpan implements RequestTrace {
  readonly traceId: string;

  constructor(
    private readonly batcher: SpanBatcher,
    private readonly span: SpanRecord,
    private readonly method: string,
  ) {
    this.traceId = span.traceId;
  }

  route(template: string): void {
    // HTTP semantic conventions: a server span is named by its method and route template.
    this.span.set('http.route', template);
    this.span.name = `${this.method} ${template}`;
  }

  call(service: string, method: string): CallTrace {
    const { traceId, spanId, traceState, sampled } = this.span;
    const span = new SpanRecord(traceId, newSpanId(), spanId, false, traceState, `call ${service} ${method}`, SpanKind.internal, sampled);
    span.set('rt.service', service);
    span.set('rt.method', method);
    return new CallSpan(this.batcher, span);
  }

  end(status: number): void {
    answered(this.span, status);
    finish(this.batcher, this.span);
  }
}

class CallSpan implements CallTrace {
  #ended = false;

  constructor(
    private readonly batcher: SpanBatcher,
    private readonly span: SpanRecord,
  ) {}

  end(outcome: string, placement: string | undefined): void {
    // A stream's call ends once: at its end, or when its client leaves, whichever comes first.
    if (this.#ended) return;
    this.#ended = true;
    this.span.set('rt.outcome', outcome);
    if (placement !== undefined) this.span.set('rt.placement', placement);
    if (outcome !== 'ok') this.span.error = outcome;
    finish(this.batcher, this.span);
  }

  outgoing(method: string, url: string): OutgoingTrace {
    const { traceId, spanId, traceState, sampled } = this.span;
    return outgoingSpan(this.batcher, traceId, spanId, traceState, sampled, method, url);
  }
}

function outgoingSpan(batcher: SpanBatcher, traceId: string, parentSpanId: string | undefined, traceState: string | undefined, isSampled: boolean, method: string, url: string): OutgoingTrace {
  const span = new SpanRecord(traceId, newSpanId(), parentSpanId, false, traceState, method, SpanKind.client, isSampled);
  if (span.sampled) {
    const target = new URL(url);
    span.set('http.request.method', method);
    span.set('url.full', `${target.origin}${target.pathname}`);
    span.set('server.address', target.hostname);
    if (target.port !== '') span.set('server.port', Number(target.port));
  }
  let ended = false;
  return {
    traceparent: traceparentOf(traceId, span.spanId, isSampled),
    tracestate: traceState,
    answered(status) {
      answered(span, status);
    },
    end(error) {
      if (ended) return;
      ended = true;
      if (error !== undefined) {
        span.set('error.type', error);
        span.error = error;
      }
      finish(batcher, span);
    },
  };
}
