// The OpenAPI 3.1 document of everything rt serves: one operation per
// invocable method, with the request and response schemas of its WIT types.

import { serviceName, type ServiceDescriptor } from './service.js';
import { errorValueSchema, requestSchema, responseSchema, type JsonSchema } from './wit/json-schema.js';
import { printSignature } from './wit/print.js';

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

export function openApiDocument(services: ServiceDescriptor[], version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const service of services) {
    for (const method of service.methods.filter((m) => m.invocable)) {
      const fn = method.function;
      const errValue = errorValueSchema(fn);
      const path = `/api/services/${service.id.domain}/${service.id.service}/invoke/${method.name.replaceAll('/', '%2F')}`;
      paths[path] = {
        post: {
          operationId: `${service.id.domain}.${service.id.service}.${method.name}`,
          tags: [serviceName(service.id)],
          summary: `${method.name}: ${printSignature(fn)}`,
          requestBody: {
            required: fn.params.length > 0,
            content: { 'application/json': { schema: requestSchema(fn) } },
          },
          responses: {
            '200': { description: 'The result', content: { 'application/json': { schema: responseSchema(fn) } } },
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
