// The environment layer: RT__ + table and key names upper-cased, joined by
// `__` (RT__HTTP__PORT). Variables are strings, so each is coerced to its
// key's type before the same checks a file value gets.

import { checkValue } from './check.js';
import { closest, ConfigError } from './errors.js';
import { describe } from '../shape.js';
import { KEYS, type KeySpec, type Value } from './schema.js';

const PREFIX = 'RT__';

export function variableName(path: string): string {
  return PREFIX + path.toUpperCase().replaceAll('.', '__');
}

const BY_VARIABLE: ReadonlyMap<string, KeySpec> = new Map(KEYS.map((k) => [variableName(k.path), k]));

/** Key path → value for every RT__ variable; other variables (RT_CACHE_DIR, PATH, ...) are not configuration. */
export function envLayer(env: Record<string, string | undefined>): Map<string, Value> {
  const values = new Map<string, Value>();
  // Sorted, so that with several bad variables the same one is reported each time.
  for (const name of Object.keys(env).sort()) {
    const raw = env[name];
    if (!name.startsWith(PREFIX) || raw === undefined) continue;
    const spec = BY_VARIABLE.get(name);
    if (!spec) throw ConfigError.unknownKey(name, name.slice(PREFIX.length).toLowerCase().replaceAll('__', '.'), closest(name, BY_VARIABLE.keys()));
    values.set(spec.path, checkValue(spec, coerce(spec, raw, name), name, 'env'));
  }
  return values;
}

function coerce(spec: KeySpec, raw: string, name: string): unknown {
  const text = raw.trim();
  switch (spec.type.kind) {
    case 'integer':
      // Strict decimal: Number() would take "", "0x10", "1e3" and parseInt "12abc".
      if (!/^[+-]?\d+$/.test(text)) throw ConfigError.expected(name, spec.path, describe(spec.type, 'env'), raw);
      return BigInt(text);
    case 'boolean': {
      const word = text.toLowerCase();
      if (word === 'true' || word === '1') return true;
      if (word === 'false' || word === '0') return false;
      throw ConfigError.expected(name, spec.path, describe(spec.type, 'env'), raw);
    }
    case 'string':
      return text;
    case 'enum':
      // RT__LOG__LEVEL=DEBUG is how such variables are often written.
      return spec.type.values.find((v) => v.toLowerCase() === text.toLowerCase()) ?? raw;
    case 'string-list':
      return items(raw, /[\s,]+/);
    case 'url-list':
      // Commas are legal inside URLs, so only whitespace separates them.
      return items(raw, /\s+/);
  }
}

function items(raw: string, separator: RegExp): string[] {
  return raw.split(separator).filter((item) => item !== '');
}
