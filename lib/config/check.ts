// Checks one raw value (from a parsed file, or coerced from a variable)
// against its key's declared type and bounds. Integers arrive as bigint, as
// j-toml parses them, so a float such as `80.0` is never taken for an integer.

import { ConfigError } from './errors.js';
import { describeItem, describeType, type KeySpec, type Source, type StringListType, type UrlListType, type Value } from './schema.js';

export function checkValue(spec: KeySpec, raw: unknown, layer: string, source: Source): Value {
  const { type } = spec;
  const fail = (): never => {
    throw ConfigError.expected(layer, spec.path, describeType(type, source), raw);
  };
  switch (type.kind) {
    case 'integer':
      return typeof raw === 'bigint' && raw >= type.min && raw <= type.max ? Number(raw) : fail();
    case 'boolean':
      return typeof raw === 'boolean' ? raw : fail();
    case 'string':
      return typeof raw === 'string' && raw !== '' ? raw : fail();
    case 'enum':
      return typeof raw === 'string' && type.values.includes(raw) ? raw : fail();
    case 'string-list':
    case 'url-list': {
      if (!isStringArray(raw)) return fail();
      const bad = raw.find((item) => !itemFits(type, item));
      if (bad !== undefined) throw ConfigError.expected(layer, spec.path, `each item to be ${describeItem(type)}`, bad);
      return [...raw];
    }
  }
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function itemFits(type: StringListType | UrlListType, item: string): boolean {
  if (type.kind === 'string-list') return type.values ? type.values.includes(item) : item !== '';
  try {
    return type.schemes.includes(new URL(item).protocol);
  } catch {
    return false;
  }
}
