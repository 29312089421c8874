// traces.ts's spans made with the OpenTelemetry SDK: a tracer provider with
// the sampler and batch processor the OTEL_* variables ask for
// (settings.ts), spans exported over OTLP/HTTP. Contexts are passed
// by hand from the request to its calls and their outgoing requests, not
// through a context manager: rt knows which request each call serves, and
// AsyncLocalStorage on every request would cost what tracing is meant not to.

import type { IncomingMessage } from 'node:http';
import { createNoopMeter, defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Meter, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler, type SpanExporter } from '@opentelemetry/sdk-trace';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { SamplerSetting, TraceSettings } from './settings.js';
import type { CallTrace, OutgoingTrace, RequestTrace, SpanFate, Traces } from './traces.js';

/** The batch processor's count of spans it is done with (exported, or not, and why), as the SDK's self-observability names it. */
const PROCESSED_SPANS = 'otel.sdk.processor.span.processed';

const propagator = new W3CTraceContextPropagator();

export class OtelTraces implements Traces {
  readonly #provider: TracerProvider;
  readonly #tracer: Tracer;

  constructor(settings: TraceSettings, version: string, counted: (fate: SpanFate, spans: number) => void) {
    const exporter: SpanExporter = settings.protocol === 'http/json' ? new JsonExporter({ url: settings.endpoint }) : new ProtobufExporter({ url: settings.endpoint });
    const processor = new BatchSpanProcessor({ exporter, ...settings.batch, selfObsMeterProvider: { getMeter: () => fateMeter(counted) } });
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) over rt's own.
    const resource = resourceFromAttributes({ 'service.name': 'rt', 'service.version': version, 'process.pid': process.pid }).merge(detectResources({ detectors: [envDetector] }));
    this.#provider = new TracerProvider({ resource, sampler: samplerOf(settings.sampler), spanProcessors: [processor] });
    this.#tracer = this.#provider.getTracer('rt', version);
  }

  request(req: IncomingMessage, requestId: string, client: string): RequestTrace {
    // Each attribute is encoded into every span exported, on the worker's thread: the HTTP conventions'
    // required ones and those an operator reads (the client, the request id), not every recommended one.
    const parent = req.headers.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const attributes: Attributes = {
      'http.request.method': req.method ?? 'GET',
      'url.path': query === -1 ? url : url.slice(0, query),
      'url.scheme': 'encrypted' in req.socket ? 'https' : 'http',
      'server.port': req.socket.localPort ?? 0,
      'client.address': client,
      'rt.request_id': requestId,
    };
    const agent = req.headers['user-agent'];
    if (agent !== undefined) attributes['user_agent.original'] = agent;
    const span = this.#tracer.startSpan(req.method ?? 'GET', { kind: SpanKind.SERVER, attributes }, parent);
    return new OtelRequestTrace(this.#tracer, span, req.method ?? 'GET');
  }

  outgoing(method: string, url: string): OutgoingTrace {
    return outgoingTrace(this.#tracer, ROOT_CONTEXT, method, url);
  }

  async shutdown(): Promise<void> {
    await this.#provider.shutdown();
  }
}

class OtelRequestTrace implements RequestTrace {
  readonly traceId: string;
  /** Its span as a parent: made at its first call (a request that calls no component needs none). */
  #context: Context | undefined;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    private readonly method: string,
  ) {
    this.traceId = span.spanContext().traceId;
  }

  route(template: string): void {
    // HTTP semantic conventions: a server span is named by its method and route template.
    this.span.setAttribute('http.route', template);
    this.span.updateName(`${this.method} ${template}`);
  }

  call(service: string, method: string): CallTrace {
    this.#context ??= trace.setSpan(ROOT_CONTEXT, this.span);
    const span = this.tracer.startSpan(`call ${service} ${method}`, { kind: SpanKind.INTERNAL, attributes: { 'rt.service': service, 'rt.method': method } }, this.#context);
    return new OtelCallTrace(this.tracer, span);
  }

  end(status: number): void {
    this.span.setAttribute('http.response.status_code', status);
    if (status >= 500) this.span.setAttributes({ 'error.type': String(status) }).setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }
}

class OtelCallTrace implements CallTrace {
  #ended = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
  ) {}

  end(outcome: string, placement: string | undefined): void {
    // A stream's call ends once: at its end, or when its client leaves, whichever comes first.
    if (this.#ended) return;
    this.#ended = true;
    this.span.setAttribute('rt.outcome', outcome);
    if (placement !== undefined) this.span.setAttribute('rt.placement', placement);
    if (outcome !== 'ok') this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    this.span.end();
  }

  outgoing(method: string, url: string): OutgoingTrace {
    return outgoingTrace(this.tracer, trace.setSpan(ROOT_CONTEXT, this.span), method, url);
  }
}

function outgoingTrace(tracer: Tracer, parent: Context, method: string, url: string): OutgoingTrace {
  const target = new URL(url);
  const attributes: Attributes = { 'http.request.method': method, 'url.full': `${target.origin}${target.pathname}`, 'server.address': target.hostname };
  if (target.port !== '') attributes['server.port'] = Number(target.port);
  const span = tracer.startSpan(method, { kind: SpanKind.CLIENT, attributes }, parent);
  const headers: Record<string, string> = {};
  propagator.inject(trace.setSpan(parent, span), headers, defaultTextMapSetter);
  let ended = false;
  return {
    traceparent: headers.traceparent,
    tracestate: headers.tracestate,
    answered(status) {
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setAttribute('error.type', String(status)).setStatus({ code: SpanStatusCode.ERROR });
    },
    end(error) {
      if (ended) return;
      ended = true;
      if (error !== undefined) span.setAttribute('error.type', error).setStatus({ code: SpanStatusCode.ERROR, message: error });
      span.end();
    },
  };
}

function samplerOf(setting: SamplerSetting): Sampler {
  switch (setting.kind) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(setting.ratio);
    case 'parentbased':
      return new ParentBasedSampler({ root: samplerOf(setting.root) });
  }
}

/**
 * A meter that hears only the batch processor's processed-spans counter, as
 * span fates: its only report of spans it drops when its queue is full.
 */
function fateMeter(counted: (fate: SpanFate, spans: number) => void): Meter {
  const noop = createNoopMeter();
  const meter = Object.create(noop) as Meter;
  const processed = { add: (spans: number, attributes?: Attributes) => counted(fateOf(attributes?.['error.type']), spans) };
  meter.createCounter = (name: string) => (name === PROCESSED_SPANS ? processed : noop.createCounter(name));
  return meter;
}

function fateOf(error: unknown): SpanFate {
  if (error === undefined) return 'exported';
  return error === 'queue_full' ? 'dropped' : 'failed';
}
