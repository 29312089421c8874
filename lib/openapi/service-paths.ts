// The operations of the services rt serves, in the OpenAPI document: one per
// invocable method (async and streaming ones among them: docs/api.md §5.1.1,
// §5.9), with the request and response schemas of its WIT types; per service
// with resources (docs/api.md §5.1.2) their constructors, the methods called
// through handles, dropping and listing handles; and the routes of HTTP
// handlers (docs/api.md §5.8).

import { handlerRoutes } from '../http-mounts.js';
import { serviceKey, serviceName, type MethodDescriptor, type ResourceDescriptor, type ServiceDescriptor } from '../service.js';
import { createdHandleSchema, errorValueSchema, handleMethodRequestSchema, namedArgumentsSchema, requestSchema, responseSchema, typeSchema, type JsonSchema } from '../wit/json-schema.js';
import { asInvoked, bodyStreamItems } from '../wit/async-abi.js';
import type { WitFunction } from '../wit/types.js';
import { printMemberSignature, printSignature, printType } from '../wit/print.js';
import { SSE_MEDIA_TYPE, streamMediaType } from '../wit/streaming.js';
import { BODY_FAILURES, busyResponse, ERROR_SCHEMA, errorResponse, guarded, jsonResponse, schemaRef, type Responses } from './components.js';

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

/** A method's 500: a trap, or for a function returning result<T, E> the err case with E in `value`. */
function failedAnswer(errValue: JsonSchema | undefined): Record<string, unknown> {
  return errValue
    ? {
        description: 'A trap, or the err case of the result (its value in `value`)',
        content: { 'application/json': { schema: { allOf: [ERROR_SCHEMA, { properties: { value: errValue } }] } } },
      }
    : errorResponse('The component trapped');
}

/** Path items by path. */
type Paths = Record<string, Record<string, unknown>>;

/** A path segment: a name with `/` (an interface's full name) escaped, as the routes take it. */
const segment = (name: string) => name.replaceAll('/', '%2F');

const HANDLE_PARAMETER = { name: 'handle', in: 'path', required: true, description: 'A handle\'s id, as its constructor or a {"$handle"} result gave it', schema: { type: 'string' } };

/** The failures of any call: invoke's, a constructor's, a handle method's. */
function callAnswers(errValue: JsonSchema | undefined, notFound: string): Responses {
  return {
    '400': errorResponse('The body does not fit the signature'),
    '404': errorResponse(notFound),
    ...BODY_FAILURES,
    '415': errorResponse('Unsupported content type'),
    '500': failedAnswer(errValue),
    '503': busyResponse('Service quiesced, restarting or not ready; or (with Retry-After) overloaded, its client over its share, or holding max_handles live handles already'),
    '504': errorResponse('Cut off at http.request_timeout_seconds'),
  };
}

/**
 * The schema of a body that is one of several resources' (`whose`: the names
 * of the resources each is of): the one, when they are all equal; else
 * `anyOf` them, each titled by its resources. Not `oneOf`: two resources'
 * bodies may overlap (`{"result": 5}` is both an s64's and a u32's), and a
 * body that fits both must not fail for it.
 */
function eitherOf(schemas: { schema: JsonSchema; whose: string }[]): JsonSchema {
  const distinct = new Map<string, { schema: JsonSchema; whose: string[] }>();
  for (const { schema, whose } of schemas) {
    const key = JSON.stringify(schema);
    const seen = distinct.get(key);
    if (seen) seen.whose.push(whose);
    else distinct.set(key, { schema, whose: [whose] });
  }
  const cases = [...distinct.values()];
  return cases.length === 1 ? cases[0].schema : { anyOf: cases.map(({ schema, whose }) => ({ title: whose.join(', '), ...schema })) };
}

/** The operations of a service's resources and handles (docs/api.md §5.1.2); `token`: whether http.control.token is set (it shows handle ids whole). */
function resourcePaths(service: ServiceDescriptor, paths: Paths, token: boolean): void {
  const base = `/api/services/${serviceKey(service.id)}`;
  const tag = serviceName(service.id);
  for (const resource of service.resources) {
    const ctor = resource.constructorMethod === null ? undefined : service.methods[resource.constructorMethod];
    if (!ctor?.invocable) continue;
    const fn = ctor.function;
    paths[`${base}/resources/${segment(resource.name)}`] = {
      post: {
        operationId: `${tag}#resources/${resource.name}`,
        tags: [tag],
        security: [],
        summary: `${resource.name}: ${printMemberSignature(fn)}`,
        description: `Makes a ${resource.name} and answers its handle, which lives until dropped, unused for handle_idle_seconds (${service.instances.handleIdleSeconds}), or its instance ends.`,
        parameters: [
          {
            name: 'RT-Handle-Scope',
            in: 'header',
            required: service.instances.handleScope === 'required',
            description: "The handle scope (docs/api.md §5.1.2): the client's own value of at least 128 random bits. Handles of one scope live in one instance of their own and can be passed together; without it, the handle joins the service's default scope.",
            schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{22,128}$' },
          },
        ],
        requestBody: { required: fn.params.length > 0, content: { 'application/json': { schema: requestSchema(fn) } } },
        responses: {
          '201': {
            description: 'The new handle',
            headers: { Location: { description: 'The handle: /api/services/{domain}/{service}/handles/{handle}', schema: { type: 'string' } } },
            content: { 'application/json': { schema: createdHandleSchema(resource.name) } },
          },
          '409': errorResponse('The service keeps no instance between calls (instance_per_call): it makes no handles'),
          ...callAnswers(errorValueSchema(fn), 'Unknown service or resource'),
        },
      },
    };
  }
  if (service.resources.length === 0) return;
  // Method names may repeat across resources: one operation per name, its bodies those of any resource that has it (the handle's resource decides).
  const byName = new Map<string, { resource: ResourceDescriptor; method: MethodDescriptor }[]>();
  for (const resource of service.resources) {
    for (const method of resource.methods.map((i) => service.methods[i]).filter((m) => m.invocable)) {
      byName.set(method.name, [...(byName.get(method.name) ?? []), { resource, method }]);
    }
  }
  for (const [name, members] of byName) {
    const either = (schema: (fn: MethodDescriptor['function']) => JsonSchema | undefined) =>
      eitherOf(members.flatMap(({ resource, method }) => {
        const one = schema(method.function);
        return one ? [{ schema: one, whose: `${resource.name}.${name}` }] : [];
      }));
    const fallible = members.some(({ method }) => errorValueSchema(method.function));
    paths[`${base}/handles/{handle}/invoke/${segment(name)}`] = {
      parameters: [HANDLE_PARAMETER],
      post: {
        operationId: `${tag}#handles/invoke/${name}`,
        tags: [tag],
        security: [],
        summary: `${name} of a handle: ${members.map(({ resource, method }) => `${resource.name}.${name}: ${printMemberSignature(method.function)}`).join('; ')}`,
        description: `Calls ${name} with the handle as self, on a handle to ${members.map(({ resource }) => resource.name).join(' or ')}${members.length > 1 ? ': the body and result are those of the handle\'s resource' : ''}.`,
        requestBody: {
          required: members.some(({ method }) => method.function.params.length > 1),
          content: { 'application/json': { schema: either(handleMethodRequestSchema) } },
        },
        responses: {
          '200': jsonResponse('The result', either(responseSchema)),
          '410': errorResponse('The handle is gone (dropped, expired, moved into a call, or its instance ended): the reason in `details`'),
          ...callAnswers(fallible ? either(errorValueSchema) : undefined, 'Unknown service or handle, or no such method of its resource'),
        },
      },
    };
  }
  paths[`${base}/handles/{handle}`] = {
    parameters: [HANDLE_PARAMETER],
    delete: {
      operationId: `${tag}#handles/drop`,
      tags: [tag],
      security: [],
      summary: "Drop a handle: its resource's destructor runs",
      responses: {
        '204': { description: 'Dropped' },
        '404': errorResponse('Unknown service or handle'),
        '410': errorResponse('The handle is gone already: the reason in `details`'),
      },
    },
  };
  const { security, responses: refusals } = guarded('token-shows-more', token);
  paths[`${base}/handles`] = {
    get: {
      operationId: `${tag}#handles/list`,
      tags: [tag],
      security,
      summary: 'The live handles',
      description: 'For operators: ids shortened (their first characters, as the logs show them), whole only to a request with the control token.',
      responses: { '200': jsonResponse('The live handles', schemaRef('Handles')), '404': errorResponse('Unknown service'), ...refusals },
    },
  };
}

/** The methods a handler's path item lists: any method reaches it; these are the ones OpenAPI has fields for (less OPTIONS, TRACE). */
const HANDLER_METHODS = ['get', 'put', 'post', 'delete', 'head', 'patch'] as const;

/**
 * An HTTP handler's paths (docs/api.md §5.8): its API path and its mount,
 * each as itself and with the rest of the path below it. What it answers is
 * the component's own; rt's answers are the failures.
 */
function handlerPaths(service: ServiceDescriptor, paths: Paths): void {
  if (!service.http) return;
  const name = serviceName(service.id);
  const rest = { name: 'path', in: 'path', required: true, description: 'The rest of the path, as the handler sees it (it may hold more segments)', schema: { type: 'string' } };
  for (const base of handlerRoutes(service.id, service.http.route)) {
    for (const [path, parameters] of [[base, []], [`${base}/{path}`, [rest]]] as const) {
      const operation = (method: string) => ({
        operationId: `${name}.http.${method}${path === base ? '' : '.below'}${base === service.http?.route ? '.mount' : ''}`,
        tags: [name],
        security: [],
        summary: `${service.http!.interface}: the handler answers`,
        ...(parameters.length > 0 ? { parameters } : {}),
        ...(method === 'get' || method === 'head' ? {} : { requestBody: { required: false, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } } }),
        responses: {
          default: { description: "The handler's own answer, streamed as it writes it (its status, headers, body and trailers)" },
          ...BODY_FAILURES,
          '500': errorResponse('The handler trapped, set no response, or answered with an error code'),
          '502': errorResponse('The handler set a malformed response (its status or a header)'),
          '503': busyResponse('Service quiesced, restarting or not ready; or (with Retry-After) overloaded, or its client over its share'),
          '504': errorResponse('No response by http.request_timeout_seconds (after the headers: the body is cut short instead)'),
        },
      });
      paths[path] = Object.fromEntries(HANDLER_METHODS.map((m) => [m, operation(m)]));
    }
  }
}

/** What an invoke of `fn` sends: a JSON body of its arguments; or, for one that takes a stream<T>, that stream as the body and the others in the query string, each a JSON value or a string's text (docs/api.md §5.9). */
function invokeRequest(fn: WitFunction): Record<string, unknown> {
  const body = bodyStreamItems(fn);
  if (!body) return { requestBody: { required: fn.params.length > 0, content: { 'application/json': { schema: requestSchema(fn) } } } };
  const query = namedArgumentsSchema(fn) as { properties: Record<string, JsonSchema> };
  return {
    parameters: asInvoked(fn).params.map((p) => {
      const schema = query.properties[p.name];
      const text = p.type.kind === 'primitive' && p.type.name === 'string';
      return { name: p.name, in: 'query', required: true, ...(text ? { schema } : { content: { 'application/json': { schema } } }) };
    }),
    // OpenAPI 3.1 has no item schemas: an NDJSON body's entry gives one item's, as a streamed answer's does.
    requestBody:
      body.kind === 'bytes'
        ? { required: false, description: `The stream<u8> parameter "${fn.params[body.at].name}", read as it arrives`, content: { [body.mediaType]: { schema: { type: 'string', format: 'binary' } } } }
        : { required: false, description: `The ${printType(fn.params[body.at].type)} parameter "${fn.params[body.at].name}", read as it arrives: one JSON value per line (NDJSON), each an item`, content: { [body.mediaType]: { schema: typeSchema(body.element, 'request') } } },
  };
}

/** The path items of `services`, and a tag for each (its operations'). */
export function servicePaths(services: readonly ServiceDescriptor[], token: boolean): { paths: Paths; tags: { name: string; description: string }[] } {
  const paths: Paths = {};
  for (const service of services) {
    const tag = serviceName(service.id);
    // What the invoke path reaches: functions and statics (a resource's constructor and methods answer to no method name).
    for (const method of service.methods.filter((m) => m.invocable && m.aliases.length > 0)) {
      const fn = method.function;
      paths[`/api/services/${serviceKey(service.id)}/invoke/${segment(method.name)}`] = {
        post: {
          operationId: `${tag}.${method.name}`,
          tags: [tag],
          security: [],
          summary: `${method.name}: ${printSignature(fn)}`,
          ...(method.stream ? { 'x-rt-streaming': true } : {}),
          ...invokeRequest(fn),
          responses: {
            '200': method.stream ? streamedAnswer(method) : jsonResponse('The result', responseSchema(fn)),
            ...callAnswers(errorValueSchema(fn), 'Unknown service or method'),
          },
        },
      };
    }
    resourcePaths(service, paths, token);
    handlerPaths(service, paths);
  }
  const tags = services.map((s) => ({ name: serviceName(s.id), description: `${s.http ? 'An HTTP handler' : 'A service'}${s.version ? ` of version ${s.version}` : ''}, from ${s.source}` }));
  return { paths, tags };
}
