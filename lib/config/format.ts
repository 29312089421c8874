// `rt config` output: the merged configuration as a file `rt` reads back
// (as rt/config.toml, the user file or --config) to the same configuration.

// Named imports: j-toml's typings leave `basic` out of the default export.
import { basic, inline, Section, stringify } from '@ltd/j-toml';
import type { Value } from './schema.js';
import { flatten, nest, type Tree } from './tree.js';

export type Format = 'toml' | 'json';

/** Keys in schema order; unset optional keys (http.tls_cert) are left out, TOML having no null. */
export function formatTree(config: object, format: Format): string {
  const tree = nest(flatten(config));
  if (format === 'json') return `${JSON.stringify(tree, null, 2)}\n`;
  // Integers up to 2^53-1 as TOML integers (j-toml writes other numbers as floats: 9481.0).
  return stringify(tomlTables(tree), { newline: '\n', newlineAround: 'section', integer: Number.MAX_SAFE_INTEGER }).trimStart();
}

type TomlValue = ReturnType<typeof basic> | number | boolean | TomlTable | TomlValue[];
type TomlTable = { [name: string]: TomlValue };

/** Tables as [sections], arrays inline, strings in double quotes (as in most TOML documentation). */
function tomlTables(tree: Tree): TomlTable {
  const out: TomlTable = {};
  for (const [name, value] of Object.entries(tree)) out[name] = tomlValue(value);
  return out;
}

function tomlValue(value: Value | Tree): TomlValue {
  if (typeof value === 'string') return basic(value);
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) return inline(value.map((item: string) => basic(item)));
  return Section(tomlTables(value as Tree));
}
