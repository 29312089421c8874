// Reading one configuration file into a document: TOML, or JSON when the
// name ends in `.json` (so that `rt config --format json` output is a valid
// `--config` file). Both give integers as bigint, floats as number.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from '@ltd/j-toml';
import { ConfigError } from './errors.js';

export type Document = Record<string, unknown>;

/**
 * The parsed file, or undefined when it does not exist and is not `required`
 * (rt/config.toml and the user file are optional; a --config file is not).
 * Messages name the file by `path` as the user gave it, not as resolved.
 */
export function readDocument(path: string, cwd: string, required: boolean): Document | undefined {
  let text: string;
  try {
    text = readFileSync(resolve(cwd, path), 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // ENOTDIR: `rt` in the working directory is a file (a binary named rt, say), so there is no rt/config.toml.
    if (!required && (code === 'ENOENT' || code === 'ENOTDIR')) return undefined;
    throw ConfigError.layer(path, `cannot read the file: ${READ_ERRORS[code ?? ''] ?? (e as Error).message}`);
  }
  // Editors on Windows may start the file with a byte order mark; j-toml refuses it.
  text = text.replace(/^\uFEFF/, '');
  return path.toLowerCase().endsWith('.json') ? parseJson(text, path) : parseToml(text, path);
}

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  ENOTDIR: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
};

function parseToml(text: string, label: string): Document {
  try {
    return parse(text, { joiner: '\n', bigint: true });
  } catch (e) {
    // j-toml: "<reason> at line <n>: <source line>".
    const message = (e as Error).message;
    const m = /^(.*?)(?:, which is found)? at line (\d+): (.*)$/s.exec(message);
    const where = m ? ` at line ${m[2]}: ${m[1]} (${m[3].trim()})` : `: ${message}`;
    throw ConfigError.layer(label, `invalid TOML${where}`);
  }
}

function parseJson(text: string, label: string): Document {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (_, value: unknown) => (typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : value));
  } catch (e) {
    // V8: "<reason> in JSON at position <n>"; the line is what a user can find.
    const message = (e as Error).message;
    const m = /^(.*?) in JSON at position (\d+)/.exec(message);
    const where = m ? ` at line ${lineOf(text, Number(m[2]))}: ${m[1]}` : `: ${message}`;
    throw ConfigError.layer(label, `invalid JSON${where}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw ConfigError.layer(label, 'expected a JSON object at the top level');
  }
  return parsed as Document;
}

function lineOf(text: string, position: number): number {
  return text.slice(0, position).split('\n').length;
}
