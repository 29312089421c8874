// rt's own operations in the OpenAPI document (docs/api.md §5): the control
// operations (restart, quiesce, reload: §5.2–§5.4), the listing and describe,
// the document itself, liveness, readiness and metrics. What each answers is
// what lib/worker/http/operations.ts and the control plane answer.

import { BODY_FAILURES, busyResponse, errorResponse, guarded, jsonResponse, schemaRef, type Access, type Responses } from './components.js';

const TAG = { control: 'control', services: 'services', operations: 'operations' } as const;

/** The tags of rt's own operations, with what they hold. */
export const API_TAGS = [
  { name: TAG.control, description: 'Change what runs: restart, quiesce, reload (docs/api.md §5.2–§5.4). When http.control.token is set, only with it.' },
  { name: TAG.services, description: 'What rt serves: the listing, one service described, this document' },
  { name: TAG.operations, description: 'For operators and orchestrators: liveness, readiness, metrics' },
];

const SERVICE_PARAMETERS = ['domain', 'service'].map((name) => ({ name, in: 'path', required: true, description: `The service's ${name} (docs/api.md §4)`, schema: { type: 'string' } }));

/** What any request may meet, whatever it asks: a request rt cannot take; more connections open than a worker takes, or than the client's share (docs/api.md §5.10). */
const ANY_REQUEST: Responses = {
  '4XX': errorResponse('A request rt cannot take: malformed, its header fields too large (431), or a method the path does not have (405)'),
  '503': busyResponse("More connections open than http.max_connections, or than this client's share (with Retry-After)"),
};

const UNKNOWN_SERVICE = { '404': errorResponse('Unknown service') };
const CONTROL_FAILED = { '500': errorResponse('The control operation failed on a worker') };

interface Operation {
  path: string;
  method: 'get' | 'post' | 'put';
  operationId: string;
  tag: keyof typeof TAG;
  summary: string;
  description?: string;
  access?: Access;
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Responses;
}

const OPERATIONS: Operation[] = [
  {
    path: '/api/reload',
    method: 'post',
    operationId: 'reload',
    tag: 'control',
    summary: 'Reload all components',
    description: 'Rescans every repository: loads new and changed components, drops removed ones, keeps unchanged ones, rolling across workers so that no request fails meanwhile. Concurrent reloads are coalesced.',
    access: 'control',
    responses: { '200': jsonResponse('Reloaded: what changed, and what failed to load', schemaRef('Reloaded')), ...CONTROL_FAILED },
  },
  {
    path: '/api/services/{domain}/{service}/restart',
    method: 'post',
    operationId: 'restartService',
    tag: 'control',
    summary: 'Restart a service',
    description:
      'Re-instantiates the service on every worker (it does not re-read the .wasm: reload does). A body is its new configuration, sent as it is with the Content-Type of its format, and persisted until a restart without a body goes back to its configuration file.',
    access: 'control',
    parameters: SERVICE_PARAMETERS,
    requestBody: { required: false, description: "The service's configuration, in any format", content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
    responses: {
      '200': jsonResponse('Restarted', schemaRef('Restarted')),
      '400': errorResponse('The configuration is not valid'),
      ...UNKNOWN_SERVICE,
      ...BODY_FAILURES,
      '500': {
        description: "The restart failed (e.g. the component's init returned an error): the previous instance serves on",
        content: { 'application/json': { schema: { allOf: [schemaRef('Error'), { type: 'object', properties: { status: { const: 'restart failed' } } }] } } },
      },
    },
  },
  {
    path: '/api/services/{domain}/{service}/quiesce',
    method: 'put',
    operationId: 'quiesceService',
    tag: 'control',
    summary: 'Quiesce a service',
    description: 'New calls get 503; calls in progress finish, then its instances are dropped. Answers once drained. Idempotent; it stays quiesced, through reloads, until restarted.',
    access: 'control',
    parameters: SERVICE_PARAMETERS,
    responses: { '200': jsonResponse('Quiesced and drained', schemaRef('Quiesced')), ...UNKNOWN_SERVICE, ...CONTROL_FAILED },
  },
  {
    path: '/api/services',
    method: 'get',
    operationId: 'listServices',
    tag: 'services',
    summary: 'List services',
    responses: { '200': jsonResponse('The services, and the components that failed to load', schemaRef('Services')) },
  },
  {
    path: '/api/services/{domain}/{service}',
    method: 'get',
    operationId: 'describeService',
    tag: 'services',
    summary: 'Describe a service',
    description: 'Its listing entry, its WIT, and the JSON Schemas of its methods and resources.',
    parameters: SERVICE_PARAMETERS,
    responses: { '200': jsonResponse('The service', schemaRef('Service')), ...UNKNOWN_SERVICE },
  },
  {
    path: '/api/openapi.json',
    method: 'get',
    operationId: 'openApiDocument',
    tag: 'services',
    summary: 'This document',
    responses: { '200': jsonResponse('The OpenAPI 3.1 document of the whole API', { type: 'object' }) },
  },
  {
    path: '/api/health',
    method: 'get',
    operationId: 'health',
    tag: 'operations',
    summary: 'Liveness',
    responses: { '200': jsonResponse('The worker that answered runs', schemaRef('Alive')) },
  },
  {
    path: '/api/ready',
    method: 'get',
    operationId: 'ready',
    tag: 'operations',
    summary: 'Readiness',
    responses: { '200': jsonResponse('Every worker has loaded the components', schemaRef('Ready')), '503': busyResponse('The workers are still loading the components; or, with Retry-After, more connections open than a worker takes') },
  },
  {
    path: '/api/metrics',
    method: 'get',
    operationId: 'metrics',
    tag: 'operations',
    summary: 'Metrics, summed over every worker',
    responses: {
      '200': { description: 'Prometheus text exposition (docs/api.md §7)', content: { 'text/plain': { schema: { type: 'string' } } } },
      ...CONTROL_FAILED,
    },
  },
  {
    path: '/api/metrics/history',
    method: 'get',
    operationId: 'metricsHistory',
    tag: 'operations',
    summary: 'The last 10 minutes of request rate, 5xx share and approximate p50/p99, every 5 s, for all of rt and by service',
    responses: { '200': jsonResponse('Samples, oldest first (docs/api.md §7)', schemaRef('MetricsHistory')), ...CONTROL_FAILED },
  },
];

/** rt's own path items; `token`: whether http.control.token is set. */
export function apiPaths(token: boolean): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { path, method, tag, access = 'open', responses, ...operation } of OPERATIONS) {
    const { security, responses: refusals } = guarded(access, token);
    paths[path] = { ...paths[path], [method]: { ...operation, tags: [TAG[tag]], security, responses: { ...ANY_REQUEST, ...refusals, ...responses } } };
  }
  return paths;
}
