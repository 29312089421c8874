// Whether rt exports traces, and how, from the standard OTEL_* environment
// variables (docs/api.md §7): the only place rt reads them. Read by `rt start`
// (a wrong value is a configuration error: exit 2, before anything starts)
// and again by each worker, which inherits the same environment. The
// exporter reads the variables it owns itself (OTEL_EXPORTER_OTLP_HEADERS,
// _TIMEOUT, _COMPRESSION, their _TRACES_ forms).

import { ConfigError } from '../config/errors.js';

/** How spans reach the collector: OTLP over HTTP, as protobuf or as JSON. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Which traces are recorded (OTEL_TRACES_SAMPLER): a root's own decision, or its parent's when the request carried one. */
export type SamplerSetting =
  | { kind: 'always_on' | 'always_off' }
  | { kind: 'traceidratio'; ratio: number }
  | { kind: 'parentbased'; root: { kind: 'always_on' | 'always_off' } | { kind: 'traceidratio'; ratio: number } };

export interface TraceSettings {
  /** Where spans are posted (the full URL, `/v1/traces` included). */
  endpoint: string;
  protocol: OtlpProtocol;
  /** `service.name` of every span's resource (OTEL_SERVICE_NAME, default `rt`). */
  serviceName: string;
  sampler: SamplerSetting;
  /** The batch span processor's (OTEL_BSP_*): beyond `maxQueueSize` spans waiting, new ones are dropped (and counted). */
  batch: { scheduledDelayMillis: number; exportTimeoutMillis: number; maxQueueSize: number; maxExportBatchSize: number };
}

const PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json'];

/**
 * The trace settings `env` asks for, or undefined when tracing is off: no
 * endpoint, `OTEL_SDK_DISABLED=true`, or `OTEL_TRACES_EXPORTER=none`.
 * Throws a ConfigError naming the variable for a value rt cannot honour.
 */
export function traceSettings(env: NodeJS.ProcessEnv): TraceSettings | undefined {
  const read = (name: string) => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
  if (read('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const exporter = read('OTEL_TRACES_EXPORTER')?.toLowerCase();
  if (exporter === 'none') return undefined;
  if (exporter !== undefined && exporter !== 'otlp') throw expected('OTEL_TRACES_EXPORTER', 'otlp or none (rt exports traces over OTLP only)', exporter);
  const endpoint = endpointOf(read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'), read('OTEL_EXPORTER_OTLP_ENDPOINT'));
  if (endpoint === undefined) return undefined;
  const protocolName = read('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = read(protocolName) ?? 'http/protobuf';
  if (!PROTOCOLS.includes(protocol as OtlpProtocol)) throw expected(protocolName, `${PROTOCOLS.join(' or ')} (rt exports over OTLP/HTTP; grpc is not built in)`, protocol);
  const count = (name: string, fallback: number) => {
    const value = read(name);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < 1) throw expected(name, 'a whole number of at least 1', value);
    return Number(value);
  };
  const batch = {
    scheduledDelayMillis: count('OTEL_BSP_SCHEDULE_DELAY', 5_000),
    exportTimeoutMillis: count('OTEL_BSP_EXPORT_TIMEOUT', 30_000),
    maxQueueSize: count('OTEL_BSP_MAX_QUEUE_SIZE', 2_048),
    maxExportBatchSize: count('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
  };
  if (batch.maxExportBatchSize > batch.maxQueueSize) throw expected('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', `at most OTEL_BSP_MAX_QUEUE_SIZE (${batch.maxQueueSize})`, String(batch.maxExportBatchSize));
  return {
    endpoint: endpoint.url,
    protocol: protocol as OtlpProtocol,
    serviceName: read('OTEL_SERVICE_NAME') ?? 'rt',
    sampler: samplerOf(read('OTEL_TRACES_SAMPLER'), read('OTEL_TRACES_SAMPLER_ARG')),
    batch,
  };
}

/** The traces URL: the signal's own variable as given, or the general one with `/v1/traces` after it (as the OTLP exporter specification says). */
function endpointOf(traces: string | undefined, general: string | undefined): { url: string } | undefined {
  const [name, given] = traces !== undefined ? ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces] : ['OTEL_EXPORTER_OTLP_ENDPOINT', general];
  if (given === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw expected(name, 'an http: or https: URL', given);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw expected(name, 'an http: or https: URL', given);
  if (traces !== undefined) return { url: url.href };
  return { url: `${given.replace(/\/+$/, '')}/v1/traces` };
}

const ROOTS = new Set(['always_on', 'always_off', 'traceidratio']);

function samplerOf(name: string | undefined, arg: string | undefined): SamplerSetting {
  const kind = name?.toLowerCase() ?? 'parentbased_always_on';
  const parentBased = kind.startsWith('parentbased_');
  const root = parentBased ? kind.slice('parentbased_'.length) : kind;
  if (!ROOTS.has(root)) throw expected('OTEL_TRACES_SAMPLER', 'always_on, always_off, traceidratio, or one of them after parentbased_', name);
  let decided: SamplerSetting & { kind: 'always_on' | 'always_off' | 'traceidratio' };
  if (root === 'traceidratio') {
    const ratio = arg === undefined ? 1 : Number(arg);
    if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw expected('OTEL_TRACES_SAMPLER_ARG', 'a ratio from 0 to 1', arg);
    decided = { kind: 'traceidratio', ratio };
  } else decided = { kind: root as 'always_on' | 'always_off' };
  return parentBased ? { kind: 'parentbased', root: decided } : decided;
}

function expected(name: string, expectation: string, got: string | undefined): ConfigError {
  return new ConfigError(name, undefined, `${name}: expected ${expectation}, got ${JSON.stringify(got)}`);
}
