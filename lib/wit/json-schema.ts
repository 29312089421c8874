// JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it) for the JSON the codec
// accepts and produces (docs/api.md §6). Requests and responses differ where the
// codec is lenient on input: a u64 may be sent as a number or a string, a
// list<u8> as base64 or an array of bytes.

import { asInvoked } from './async-abi.js';
import { BIG_RANGES, SMALL_RANGES, type SmallIntName } from './json-numbers.js';
import { printType } from './print.js';
import type { WitFunction, WitType } from './types.js';

export type JsonSchema = Record<string, unknown>;

type Direction = 'request' | 'response';

const NON_FINITE = { type: 'string', enum: ['NaN', 'Infinity', '-Infinity'] };

/** The schema of a value of type `t`, travelling in `direction`. */
export function typeSchema(t: WitType, direction: Direction): JsonSchema {
  const schema = structure(t, direction);
  // Named types carry their WIT name, so generated clients and docs can show it.
  return t.origin ? { title: t.origin.name, ...schema } : schema;
}

function structure(t: WitType, direction: Direction): JsonSchema {
  switch (t.kind) {
    case 'primitive':
      return primitive(t.name, direction);
    case 'list':
      if (t.element.kind === 'primitive' && t.element.name === 'u8' && !t.element.origin) return bytes(direction);
      return { type: 'array', items: typeSchema(t.element, direction) };
    case 'fixed-list':
      return { type: 'array', items: typeSchema(t.element, direction), minItems: t.length, maxItems: t.length };
    case 'tuple':
      return {
        type: 'array',
        prefixItems: t.elements.map((e) => typeSchema(e, direction)),
        items: false,
        minItems: t.elements.length,
        maxItems: t.elements.length,
      };
    case 'record':
      return {
        type: 'object',
        properties: Object.fromEntries(t.fields.map((f) => [f.name, typeSchema(f.type, direction)])),
        required: t.fields.map((f) => f.name),
        additionalProperties: false,
      };
    case 'option': {
      // option<option<T>> wraps the inner some in {"some": ...} so none and some(none) differ.
      const inner = t.inner.kind === 'option' ? wrapper('some', typeSchema(t.inner, direction)) : typeSchema(t.inner, direction);
      return { anyOf: [{ type: 'null' }, inner] };
    }
    case 'result':
      return {
        oneOf: [wrapper('ok', t.ok ? typeSchema(t.ok, direction) : { type: 'null' }), wrapper('err', t.err ? typeSchema(t.err, direction) : { type: 'null' })],
      };
    case 'variant':
      return {
        oneOf: t.cases.map((c) => ({
          type: 'object',
          properties: { tag: { const: c.name }, ...(c.type ? { val: typeSchema(c.type, direction) } : {}) },
          required: c.type ? ['tag', 'val'] : ['tag'],
          additionalProperties: false,
        })),
      };
    case 'enum':
      return { type: 'string', enum: [...t.cases] };
    case 'flags':
      return { type: 'array', items: { type: 'string', enum: [...t.flags] }, uniqueItems: true };
    case 'own':
    case 'borrow':
      return handleSchema(t.resource);
    case 'stream':
    case 'future':
      return { not: {}, description: `${printType(t)} cannot be carried in JSON` };
  }
}

/** A handle's JSON form (docs/api.md §5.1.2): `{"$handle": "<id>"}`. */
export function handleSchema(resource: string): JsonSchema {
  return {
    type: 'object',
    description: `a handle to a ${resource}`,
    properties: { $handle: { type: 'string', description: `the id of a live ${resource}` } },
    required: ['$handle'],
    additionalProperties: false,
  };
}

function primitive(name: string, direction: Direction): JsonSchema {
  switch (name) {
    case 'bool':
      return { type: 'boolean' };
    case 'u64':
    case 's64': {
      const [min, max] = BIG_RANGES[name];
      const decimal = { type: 'string', pattern: name === 'u64' ? '^[0-9]+$' : '^-?[0-9]+$', description: `${name} as a decimal string (${min}..${max})` };
      const safe = { type: 'integer', minimum: name === 'u64' ? 0 : -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
      // Responses use a string only beyond ±2^53−1; requests may use one anywhere.
      return { oneOf: [safe, decimal], ...(direction === 'response' ? { description: `${name}: a number, or a decimal string beyond ±2^53−1` } : {}) };
    }
    case 'f32':
    case 'f64':
      return { oneOf: [{ type: 'number' }, NON_FINITE] };
    case 'char':
      return { type: 'string', minLength: 1, maxLength: 1, description: 'one Unicode scalar value' };
    case 'string':
      return { type: 'string' };
    case 'error-context':
      return { not: {}, description: 'error-context cannot be carried in JSON' };
    default: {
      const [minimum, maximum] = SMALL_RANGES[name as SmallIntName];
      return { type: 'integer', minimum, maximum };
    }
  }
}

function bytes(direction: Direction): JsonSchema {
  const base64 = { type: 'string', contentEncoding: 'base64' };
  if (direction === 'response') return base64;
  return { oneOf: [base64, { type: 'array', items: { type: 'integer', minimum: 0, maximum: 255 } }] };
}

function wrapper(key: string, value: JsonSchema): JsonSchema {
  return { type: 'object', properties: { [key]: value }, required: [key], additionalProperties: false };
}

/** The request body of an invoke: an object keyed by parameter name, or the arguments in order. */
export function requestSchema(fn: WitFunction): JsonSchema {
  const params = asInvoked(fn).params.map((p) => [p.name, typeSchema(p.type, 'request')] as const);
  const byName = namedArgumentsSchema(fn);
  // Draft 2020-12 wants a prefixItems of one item at least: no parameters, no prefixItems.
  const inOrder = {
    type: 'array',
    ...(params.length > 0 ? { prefixItems: params.map(([, schema]) => schema) } : {}),
    items: false,
    minItems: params.length,
    maxItems: params.length,
  };
  return { oneOf: [byName, inOrder] };
}

/**
 * The arguments keyed by parameter name: an invoke's body, or the query
 * string of a method whose stream<T> parameter is the body (docs/api.md
 * §5.9; that parameter is not among them).
 */
export function namedArgumentsSchema(fn: WitFunction): JsonSchema {
  const params = asInvoked(fn).params.map((p) => [p.name, typeSchema(p.type, 'request')] as const);
  return { type: 'object', properties: Object.fromEntries(params), required: params.map(([name]) => name), additionalProperties: false };
}

/** The 200 body of an invoke: `{"result": ...}` (for result<T, E>, T; E comes as an error). */
export function responseSchema(fn: WitFunction): JsonSchema {
  const top = asInvoked(fn).result;
  let result: JsonSchema;
  if (top === null) result = { type: 'null' };
  else if (top.kind === 'result') result = top.ok ? typeSchema(top.ok, 'response') : { type: 'null' };
  else result = typeSchema(top, 'response');
  return { type: 'object', properties: { result }, required: ['result'], additionalProperties: false };
}

/** For a function returning result<T, E>: the schema of E, as the error body's `value`. */
export function errorValueSchema(fn: WitFunction): JsonSchema | undefined {
  const top = asInvoked(fn).result;
  if (top?.kind !== 'result') return undefined;
  return top.err ? typeSchema(top.err, 'response') : { type: 'null' };
}

/** The request body of a resource's method called through a handle (docs/api.md §5.1.2): its parameters but `self`, which the handle is. */
export function handleMethodRequestSchema(fn: WitFunction): JsonSchema {
  return requestSchema({ ...fn, params: fn.params.slice(1) });
}

/** A constructor's 201 body: the new handle's id (docs/api.md §5.1.2). */
export function createdHandleSchema(resource: string): JsonSchema {
  return {
    type: 'object',
    properties: { handle: { type: 'string', description: `the id of the new ${resource}` } },
    required: ['handle'],
    additionalProperties: false,
  };
}
