// The configuration reference of docs/api.md §2, generated from the schema so
// the documentation cannot drift from what `rt` accepts (test/unit/docs.test.ts
// compares them; the other documents link to that table instead of copying it).

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
