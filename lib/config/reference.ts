// The configuration reference for the README, generated from the schema so
// the documentation cannot drift from what `rt` accepts.

import { variableName } from './env.js';
import { describe } from '../shape.js';
import { KEYS, type KeySpec } from './schema.js';

/** A Markdown table: key, type, default, environment variable, description. */
export function referenceTable(): string {
  const rows = KEYS.map((k) => `| \`${k.path}\` | ${describe(k.type, 'file')} | ${defaultText(k)} | \`${variableName(k.path)}\` | ${k.description} |`);
  return ['| Key | Type | Default | Variable | Description |', '|---|---|---|---|---|', ...rows, ''].join('\n');
}

function defaultText(k: KeySpec): string {
  if (k.defaultText !== undefined) return k.defaultText;
  return k.default === undefined ? 'none' : `\`${JSON.stringify(k.default)}\``;
}
