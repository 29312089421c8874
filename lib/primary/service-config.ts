// A service's configuration data (docs/api.md §5.2): where its file is, what
// format it has, and the flattened keys wasi:config/store serves from it.

import { readdir, readFile, realpath } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import TOML from '@ltd/j-toml';
import type { ServiceConfig } from '../service.js';

/** A service's configuration (its file, or a restart body) cannot be used: answered 400 to a restart, a load failure from a repository. */
export class ServiceConfigError extends Error {}

const MEDIA_TYPES: Record<string, string> = {
  '.toml': 'application/toml',
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
};

/**
 * The configuration file of the component at `wasmPath`: the sidecar's
 * `config` (relative to the sidecar), else the one `<stem>.config.*` beside
 * it; with its symlinks resolved, and inside `root`, the folder of its
 * repository (docs/api.md §8): a repository configures its components with
 * its own files, never the host's.
 */
export async function findConfigFile(wasmPath: string, sidecarConfig: string | undefined, root: string): Promise<string | null> {
  const dir = dirname(wasmPath);
  if (sidecarConfig !== undefined) {
    const where = `${wasmPath.replace(/\.wasm$/, '.toml')}: config: ${JSON.stringify(sidecarConfig)}`;
    if (isAbsolute(sidecarConfig)) throw new ServiceConfigError(`${where} is an absolute path; name a file of the repository, relative to the sidecar`);
    const path = resolve(dir, sidecarConfig);
    if (!inside(root, path)) throw new ServiceConfigError(`${where} leaves the repository (${root})`);
    return containedFile(root, path);
  }
  const prefix = `${basename(wasmPath, '.wasm')}.config.`;
  const candidates = (await readdir(dir)).filter((name) => name.startsWith(prefix)).sort();
  if (candidates.length > 1) throw new ServiceConfigError(`several configuration files for ${basename(wasmPath)}: ${candidates.join(', ')}; name one with the sidecar's "config" key`);
  return candidates.length === 1 ? containedFile(root, join(dir, candidates[0])) : null;
}

/** `path` with its symlinks resolved, which must stay inside `root`; a file that does not exist is the reader's to report. */
async function containedFile(root: string, path: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    return path;
  }
  if (!inside(await realpath(root), real)) throw new ServiceConfigError(`the configuration file ${path} resolves to ${real}, outside the repository (${root})`);
  return real;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** Reads a configuration file; its extension gives its media type. */
export async function readConfigFile(path: string): Promise<ServiceConfig> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (e) {
    throw new ServiceConfigError(`cannot read the configuration file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return serviceConfig(bytes, MEDIA_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream', path);
}

/** Configuration data of media type `contentType`; TOML and JSON must parse, and their keys are flattened for wasi:config/store. */
export function serviceConfig(bytes: Uint8Array, contentType: string, origin: string): ServiceConfig {
  const type = contentType.split(';')[0].trim().toLowerCase();
  let entries: [string, string][] = [];
  if (type === 'application/json' || type.endsWith('+json')) {
    entries = flatten(parse('JSON', () => JSON.parse(text(bytes)) as unknown));
  } else if (type === 'application/toml' || type === 'text/toml' || type === 'text/x-toml') {
    entries = flatten(parse('TOML', () => TOML.parse(text(bytes), { joiner: '\n', bigint: false })));
  }
  return { bytes, contentType, origin, entries };
}

function text(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

function parse(format: string, parser: () => unknown): unknown {
  try {
    return parser();
  } catch (e) {
    throw new ServiceConfigError(`the configuration is not valid ${format}: ${(e as Error).message.split('\n')[0]}`);
  }
}

/**
 * `{"db": {"host": "x", "ports": [1, 2]}}` → `db.host = x`, `db.ports.0 = 1`,
 * `db.ports.1 = 2`: the dotted keys Spin and wasmCloud serve through
 * wasi:config/store. Leaves are their text (strings as they are, the rest as JSON).
 */
export function flatten(value: unknown, prefix = ''): [string, string][] {
  if (value !== null && typeof value === 'object') {
    const children = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    return children.flatMap(([key, child]) => flatten(child, prefix ? `${prefix}.${key}` : key));
  }
  if (prefix === '') return [];
  return [[prefix, typeof value === 'string' ? value : JSON.stringify(value)]];
}
