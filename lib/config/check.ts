// Checks one raw value (from a parsed file, or coerced from a variable)
// against its key's declared shape and bounds (lib/shape.ts). Integers arrive
// as bigint, as j-toml parses them, so a float such as `80.0` is never taken
// for an integer.

import { check, type Source } from '../shape.js';
import { ConfigError } from './errors.js';
import type { KeySpec, Value } from './schema.js';

export function checkValue(spec: KeySpec, raw: unknown, layer: string, source: Source): Value {
  const checked = check(spec.type, raw, source);
  if (checked.ok) return checked.value;
  // A list's bad item is named by itself: "expected each item to be a non-empty string, got """.
  if ('problem' in checked) throw ConfigError.layer(layer, `${spec.path}: ${checked.problem}`);
  const expected = checked.at === '' ? checked.expected : `each item to be ${checked.expected}`;
  throw ConfigError.expected(layer, spec.path, expected, checked.got);
}
