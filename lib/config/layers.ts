// The layers of the configuration, later overriding earlier (docs/api.md §2):
// built-in defaults, rt/config.toml in the working directory, the user config
// file, --config FILE, RT__ variables. Each layer is flat (key path → value),
// so tables merge key by key and an array replaces the whole array below it.

import { join } from 'node:path';
import { configDir } from '../paths.js';
import { isTable } from '../shape.js';
import { checkValue } from './check.js';
import { envLayer } from './env.js';
import { closest, ConfigError } from './errors.js';
import { readDocument, type Document } from './files.js';
import { KEYS, KEYS_BY_PATH, TABLES, type Value } from './schema.js';

export type Layer = ReadonlyMap<string, Value>;

export interface LoadOptions {
  /** The working directory: where rt/config.toml is, and what --config is relative to. */
  cwd: string;
  env: Record<string, string | undefined>;
  /** `--config FILE`: must exist. */
  configFile?: string;
  /** Default: `<user config directory>/config.toml` (RT_CONFIG_DIR overrides the directory). */
  userConfigFile?: string;
}

const PROJECT_CONFIG_FILE = join('rt', 'config.toml');

function defaultUserConfigFile(): string {
  return join(configDir(), 'config.toml');
}

export function layers(opts: LoadOptions): Layer[] {
  return [
    defaultsLayer(),
    fileLayer(PROJECT_CONFIG_FILE, opts.cwd, false),
    fileLayer(opts.userConfigFile ?? defaultUserConfigFile(), opts.cwd, false),
    opts.configFile === undefined ? new Map() : fileLayer(opts.configFile, opts.cwd, true),
    envLayer(opts.env),
  ];
}

export function merge(layers: readonly Layer[]): Map<string, Value> {
  const merged = new Map<string, Value>();
  for (const layer of layers) for (const [path, value] of layer) merged.set(path, value);
  return merged;
}

function defaultsLayer(): Layer {
  return new Map(KEYS.flatMap((k) => (k.default === undefined ? [] : [[k.path, k.default] as const])));
}

function fileLayer(path: string, cwd: string, required: boolean): Layer {
  const document = readDocument(path, cwd, required);
  const values = new Map<string, Value>();
  if (document) collect(document, '', path, values);
  return values;
}

/** Checks every entry of a parsed file against the schema, into `out`. */
function collect(table: Document, prefix: string, layer: string, out: Map<string, Value>): void {
  for (const [name, value] of Object.entries(table)) {
    // A quoted key such as "http.port" is one TOML key, not the table http: shown quoted, it matches nothing.
    const plain = !name.includes('.');
    const path = prefix + (plain ? name : JSON.stringify(name));
    if (plain && TABLES.has(path)) {
      if (!isTable(value)) throw ConfigError.expected(layer, path, 'a table', value);
      collect(value, `${path}.`, layer, out);
      continue;
    }
    const spec = plain ? KEYS_BY_PATH.get(path) : undefined;
    if (!spec) throw unknown(layer, path, value);
    out.set(path, checkValue(spec, value, layer, 'file'));
  }
}

/** Names the first key under an unknown table (`[htp]` with `port`: "htp.port"), which is what was mistyped around. */
function unknown(layer: string, path: string, value: unknown): ConfigError {
  let shown = path;
  let node = value;
  while (isTable(node)) {
    const first = Object.keys(node)[0];
    if (first === undefined) break;
    shown += `.${first}`;
    node = node[first];
  }
  const suggestion = closest(shown, [...KEYS_BY_PATH.keys()]);
  return ConfigError.unknownKey(layer, shown, suggestion && `"${suggestion}"`);
}

