// The OpenAPI 3.1 document of everything rt serves: one operation per
// invocable method, with the request and response schemas of its WIT types.

import { serviceKey, serviceName, type MethodDescriptor, type ServiceDescriptor } from './service.js';
import { errorValueSchema, requestSchema, responseSchema, typeSchema, type JsonSchema } from './wit/json-schema.js';
import { printSignature } from './wit/print.js';
import { SSE_MEDIA_TYPE, streamMediaType } from './wit/streaming.js';

const ERROR_BODY: JsonSchema = {
  type: 'object',
  properties: {
    error: { type: 'string', description: 'A general description' },
    details: { type: 'string', description: 'The cause' },
    service: { type: 'string', description: '<domain>.<service>' },
    method: { type: 'string' },
    value: { description: 'For a method returning result<T, E> that returned err: E as JSON' },
  },
  required: ['error', 'details'],
};

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/**
 * A streaming method's 200 (docs/api.md §5.1.1): chunked, one entry per media
 * type it may have. OpenAPI 3.1 has no item schemas, so the NDJSON and SSE
 * entries give one item's schema, and the description says how items are framed.
 */
function streamedAnswer(method: MethodDescriptor): Record<string, unknown> {
  const stream = method.stream!;
  const item = typeSchema(stream.item, 'response');
  const own = streamMediaType(stream.encoding, method.mediaType);
  const [schema, framing] =
    stream.encoding === 'ndjson'
      ? [item, 'one JSON value per line (NDJSON)']
      : stream.encoding === 'text'
        ? [{ type: 'string' }, 'the strings as UTF-8 text, one after another']
        : [{ type: 'string', format: 'binary' }, 'the bytes, one item after another'];
  return {
    description:
      `A stream of items written as they come (chunked): ${own}, ${framing}; or, with Accept: text/event-stream, ` +
      'one `data: <JSON item>` event per item. A failure after the headers cuts the body short (SSE: `event: error` first).',
    headers: { 'Cache-Control': { schema: { type: 'string', const: 'no-cache' } } },
    content: { [own]: { schema }, [SSE_MEDIA_TYPE]: { schema: item } },
  };
}

export function openApiDocument(services: ServiceDescriptor[], version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const service of services) {
    for (const method of service.methods.filter((m) => m.invocable)) {
      const fn = method.function;
      const errValue = errorValueSchema(fn);
      const path = `/api/services/${serviceKey(service.id)}/invoke/${method.name.replaceAll('/', '%2F')}`;
      paths[path] = {
        post: {
          operationId: `${serviceName(service.id)}.${method.name}`,
          tags: [serviceName(service.id)],
          summary: `${method.name}: ${printSignature(fn)}`,
          ...(method.stream ? { 'x-rt-streaming': true } : {}),
          requestBody: {
            required: fn.params.length > 0,
            content: { 'application/json': { schema: requestSchema(fn) } },
          },
          responses: {
            '200': method.stream ? streamedAnswer(method) : { description: 'The result', content: { 'application/json': { schema: responseSchema(fn) } } },
            '400': errorResponse('The body does not fit the signature'),
            '404': errorResponse('Unknown service or method'),
            '413': errorResponse('The body is over http.max_body_bytes'),
            '415': errorResponse('Unsupported content type'),
            '500': errValue
              ? {
                  description: 'A trap, or the err case of the result (its value in `value`)',
                  content: { 'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { value: errValue } }] } } },
                }
              : errorResponse('The component trapped'),
            '503': errorResponse('Service quiesced, restarting or not ready'),
            '504': errorResponse('Cut off at http.request_timeout_seconds'),
          },
        },
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'rt services', version, description: 'WebAssembly components served by rt' },
    paths,
    components: { schemas: { Error: ERROR_BODY } },
  };
}
