// What the OpenAPI document's operations share (docs/api.md §5): the error
// body every failure answers with (§5.5), as one schema they all refer to;
// the bodies of rt's own answers (the listing, describe, reload, handles);
// the responses and headers several operations give; and who may call what
// (§5.6): the bearer scheme of `http.control.token`.

import { ERRORS } from '../errors.js';
import type { JsonSchema } from '../wit/json-schema.js';

/** An operation's responses, by status (or `default`). */
export type Responses = Record<string, Record<string, unknown>>;

/** A reference to one of SCHEMAS. */
export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export const ERROR_SCHEMA = schemaRef('Error');

/** The error body (docs/api.md §5.5): `service` and `method` whenever the path names them; some failures add fields of their own. */
const ERROR_BODY: JsonSchema = {
  type: 'object',
  properties: {
    error: { type: 'string', description: 'A general description: one per code' },
    code: { type: 'string', enum: Object.keys(ERRORS), description: 'What failed, for clients to branch on (docs/api.md §5.5: the catalogue)' },
    details: { type: 'string', description: 'The cause, for this request' },
    service: { type: 'string', description: '<domain>.<service>' },
    method: { type: 'string' },
    value: { description: 'For a method returning result<T, E> that returned err: E as JSON' },
  },
  required: ['error', 'code', 'details'],
};

export function errorResponse(description: string, headers?: Record<string, unknown>): Record<string, unknown> {
  return { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema: ERROR_SCHEMA } } };
}

/** An answer in JSON of `schema`. */
export function jsonResponse(description: string, schema: JsonSchema): Record<string, unknown> {
  return { description, content: { 'application/json': { schema } } };
}

export const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } } };

/** A refusal that says when to come back: a service or client over a limit (docs/api.md §5.1, §5.10). */
export const busyResponse = (description: string) => errorResponse(description, RETRY_AFTER);

/** What any request with a body may meet while rt reads it. */
export const BODY_FAILURES: Responses = {
  '408': errorResponse('The body arrived slower than http.min_body_bytes_per_second, or not by the deadline'),
  '413': errorResponse('The body is over http.max_body_bytes'),
};

/** The name of the bearer scheme `http.control.token` is, in `components.securitySchemes`. */
export const CONTROL_TOKEN = 'controlToken';

/**
 * Who may call an operation (docs/api.md §5.6): anyone; only with the
 * control token when one is set (restart, quiesce, reload); or anyone, the
 * token showing more (the listing of handles: whole ids). The control
 * routes and the listing of handles refuse foreign web pages whatever the
 * token.
 */
export type Access = 'open' | 'control' | 'token-shows-more';

/**
 * An operation's `security` and the refusals that go with it. Without a
 * token, every operation is `security: []`: a linter's `security-defined`
 * wants it said, and nothing is asked.
 */
export function guarded(access: Access, token: boolean): { security: Record<string, string[]>[]; responses: Responses } {
  const forbidden: Responses = access === 'open' ? {} : { '403': errorResponse("From a web page of a foreign origin: neither rt's own nor listed in http.control.allowed_origins") };
  if (!token || access === 'open') return { security: [], responses: forbidden };
  const unauthorized = {
    '401': errorResponse(access === 'control' ? 'Without the bearer token of http.control.token, or with another' : 'With a bearer token other than http.control.token', {
      'WWW-Authenticate': { description: 'Bearer realm="rt"', schema: { type: 'string' } },
    }),
  };
  // `{}` first: the listing answers without a token too (ids shortened).
  return { security: access === 'control' ? [{ [CONTROL_TOKEN]: [] }] : [{}, { [CONTROL_TOKEN]: [] }], responses: { ...unauthorized, ...forbidden } };
}

const instant = (what: string) => ({ type: 'string', format: 'date-time', description: `${what} (ISO 8601)` });

/** GET .../handles (docs/api.md §5.1.2). */
const HANDLES_BODY: JsonSchema = {
  type: 'object',
  properties: {
    handles: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          handle: { type: 'string', description: 'Its id: shortened, unless the request carried the control token' },
          resource: { type: 'string', description: 'The resource it is a handle to' },
          worker: { type: ['integer', 'string'], description: 'The worker whose instance holds it (as X-Rt-Worker names workers)' },
          created: instant('When it was made'),
          last_used: instant('When a call last used it'),
          expires: instant('When it is dropped unless used before (last use + handle_idle_seconds)'),
        },
        required: ['handle', 'resource', 'worker', 'created', 'last_used', 'expires'],
      },
    },
  },
  required: ['handles'],
};

const LOAD_FAILURE: JsonSchema = {
  type: 'object',
  properties: { source: { type: 'string', description: 'The component (its URL or path)' }, error: { type: 'string', description: 'Why it did not load' } },
  required: ['source', 'error'],
};

const names = (what: string) => ({ type: 'array', items: { type: 'string', description: '<domain>.<service>' }, description: what });

/** POST /api/reload (docs/api.md §5.4). */
const RELOADED: JsonSchema = {
  type: 'object',
  properties: {
    status: { const: 'reloaded' },
    added: names('Services that were not served before'),
    updated: names('Services whose component changed'),
    removed: names('Services no longer in any repository'),
    failed: { type: 'array', items: LOAD_FAILURE, description: 'Components that failed to load (the version serving before, if any, serves on)' },
  },
  required: ['status', 'added', 'updated', 'removed', 'failed'],
};

/** What restart and quiesce answer (docs/api.md §5.2, §5.3). */
const controlled = (status: string): JsonSchema => ({
  type: 'object',
  properties: { status: { const: status }, service: { type: 'string', description: '<domain>.<service>' } },
  required: ['status', 'service'],
});

const state = (value: string): JsonSchema => ({ type: 'object', properties: { status: { const: value } }, required: ['status'] });

/** A method as the listing shows it. */
const LISTED_METHOD: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    signature: { type: 'string', description: 'Its WIT signature' },
    invocable: { type: 'boolean' },
    reason: { type: 'string', description: 'Why it is not invocable' },
    streaming: { const: true, description: 'It answers a stream (docs/api.md §5.1.1)' },
    media_types: { type: 'array', items: { type: 'string' }, description: "A streaming method's media types" },
  },
  required: ['name', 'signature', 'invocable'],
};

/** A service as the listing shows it (docs/api.md §5: the listing entry); describe adds its WIT and JSON Schemas. */
const SERVICE_SUMMARY: JsonSchema = {
  type: 'object',
  properties: {
    domain: { type: 'string' },
    service: { type: 'string' },
    version: { type: ['string', 'null'] },
    source: { type: 'string', description: 'Where its component came from' },
    state: { enum: ['active', 'quiesced'] },
    kind: { enum: ['methods', 'http'], description: '`http`: an HTTP handler (docs/api.md §5.8), served at `routes`' },
    routes: { type: 'array', items: { type: 'string' } },
    config: { type: ['object', 'null'], description: 'Where the configuration its instances got came from' },
    methods: { type: 'array', items: LISTED_METHOD },
    resources: { type: 'array', items: { type: 'object' }, description: 'Exported resources: constructor, methods, statics (docs/api.md §5.1.2)' },
    unsatisfied_imports: { type: 'array', items: { type: 'string' } },
    links: { type: 'object', additionalProperties: { type: 'string' } },
    instances: { type: 'object', description: 'Its instances and limits, in the worker that answered' },
  },
  required: ['domain', 'service', 'version', 'source', 'state', 'kind', 'methods', 'resources'],
};

const SERVICES: JsonSchema = {
  type: 'object',
  properties: { services: { type: 'array', items: schemaRef('ServiceSummary') }, failed: { type: 'array', items: LOAD_FAILURE } },
  required: ['services', 'failed'],
};

const SERVICE: JsonSchema = {
  allOf: [
    schemaRef('ServiceSummary'),
    {
      type: 'object',
      properties: {
        wit: { type: 'string', description: 'Its WIT, printed from the component' },
        methods: { type: 'array', items: { type: 'object', description: 'As listed, with aliases, interface and JSON Schemas (request_schema, response_schema, error_schema; item_schema when streaming)' } },
      },
      required: ['wit'],
    },
  ],
};

/** One interval's requests (lib/metrics-history.ts: RequestFigures). */
const REQUEST_FIGURES: JsonSchema = {
  type: 'object',
  properties: {
    requests: { type: 'integer', minimum: 0 },
    requests_per_second: { type: 'number', minimum: 0 },
    errors: { type: 'integer', minimum: 0, description: 'Answers with a 5xx status (not 499)' },
    error_rate: { type: ['number', 'null'], description: 'errors / requests; null without requests' },
    p50_seconds: { type: ['number', 'null'], description: 'Approximate, from the histogram buckets; null without requests' },
    p99_seconds: { type: ['number', 'null'], description: 'Approximate, from the histogram buckets; null without requests' },
  },
  required: ['requests', 'requests_per_second', 'errors', 'error_rate', 'p50_seconds', 'p99_seconds'],
};

/** GET /api/metrics/history (lib/metrics-history.ts: MetricsHistory). */
const METRICS_HISTORY: JsonSchema = {
  type: 'object',
  properties: {
    interval_seconds: { type: 'number' },
    max_samples: { type: 'integer' },
    buckets: { type: 'array', items: { type: 'number' }, description: "Upper bounds (s) of the duration histogram's buckets" },
    samples: {
      type: 'array',
      description: 'Oldest first',
      items: {
        type: 'object',
        properties: {
          at: instant('When the interval ended'),
          seconds: { type: 'number' },
          all: schemaRef('RequestFigures'),
          services: { type: 'object', additionalProperties: schemaRef('RequestFigures'), description: 'By domain.service: those that answered requests in the interval' },
        },
        required: ['at', 'seconds', 'all', 'services'],
      },
    },
  },
  required: ['interval_seconds', 'max_samples', 'buckets', 'samples'],
};

/** The named schemas the operations refer to. */
export const SCHEMAS: Record<string, JsonSchema> = {
  Error: ERROR_BODY,
  Handles: HANDLES_BODY,
  Reloaded: RELOADED,
  Restarted: controlled('restarted'),
  Quiesced: controlled('quiesced'),
  ServiceSummary: SERVICE_SUMMARY,
  Services: SERVICES,
  Service: SERVICE,
  RequestFigures: REQUEST_FIGURES,
  MetricsHistory: METRICS_HISTORY,
  Alive: state('ok'),
  Ready: state('ready'),
};

/** `components.securitySchemes`, when a token is set. */
export const SECURITY_SCHEMES = {
  [CONTROL_TOKEN]: { type: 'http', scheme: 'bearer', description: 'http.control.token: `Authorization: Bearer <token>` (docs/api.md §5.6)' },
};
