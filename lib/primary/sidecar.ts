// A component's sidecar: `<stem>.toml` beside the .wasm file (docs/api.md §4).
// It overrides the service address; an invalid sidecar makes the component
// fail to load with a message naming the file and key.

import { readFile, realpath, stat } from 'node:fs/promises';
import { dirname, posix, resolve } from 'node:path';
import TOML from '@ltd/j-toml';
import { HOST_PATTERN_SHAPE, parseHostPattern } from '../outbound-hosts.js';
import type { PathGrant } from '../service.js';

export interface Sidecar {
  domain?: string;
  service?: string;
  /** Method name → the media type of its list<u8> result (`render = "image/png"`). */
  media_types?: Record<string, string>;
  /** Instances per worker (default 1). */
  pool_size?: number;
  /** Recycle an instance after this many calls (default: never). */
  max_invocations?: number;
  /** A fresh instance for every call: full isolation between calls. */
  instance_per_call?: boolean;
  /** Calls that may wait for an instance thread, per worker (default 64); beyond it 503 with Retry-After. */
  max_queue?: number;
  /** Environment variables granted to the component. */
  env?: Record<string, string>;
  /** The service's configuration file, relative to the sidecar (default: `<stem>.config.*` beside it). */
  config?: string;
  /** Host directories the component sees as preopens; host paths resolved (absolute, symlinks followed). */
  allowed_paths?: PathGrant[];
  /** Where the component may send HTTP requests: `[http:// | https://]host[:port]` entries. */
  allowed_outbound_hosts?: string[];
}

export class SidecarError extends Error {}

// Address parts travel in URL paths: keep them to WIT identifier characters.
const ADDRESS_PART = /^[a-z0-9][a-z0-9-]*$/i;
const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/;
const KNOWN_KEYS = 'domain, service, config, media_types, pool_size, max_invocations, instance_per_call, max_queue, env, allowed_paths, allowed_outbound_hosts';
const PATH_KEYS = ['host', 'guest', 'writable'];
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Waiting calls are held in memory: bound what one sidecar can ask for. */
const MAX_QUEUE = 100_000;

export function sidecarPath(wasmPath: string): string {
  return wasmPath.replace(/\.wasm$/, '.toml');
}

/** The sidecar of `wasmPath`, or an empty one when it has none. */
export async function readSidecar(wasmPath: string): Promise<Sidecar> {
  const path = sidecarPath(wasmPath);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return {};
  }
  let table: Record<string, unknown>;
  try {
    table = TOML.parse(text, { joiner: '\n', bigint: false });
  } catch (e) {
    throw new SidecarError(`${path}: invalid TOML: ${(e as Error).message.split('\n')[0]}`);
  }
  const sidecar: Sidecar = {};
  for (const [key, value] of Object.entries(table)) {
    switch (key) {
      case 'domain':
      case 'service':
        if (typeof value !== 'string' || !ADDRESS_PART.test(value)) {
          throw new SidecarError(`${path}: ${key}: expected a name of letters, digits and dashes, got ${JSON.stringify(value)}`);
        }
        sidecar[key] = value;
        break;
      case 'media_types':
        sidecar.media_types = mediaTypes(path, value);
        break;
      case 'pool_size':
        sidecar.pool_size = integer(path, key, value, 1, 64);
        break;
      case 'max_invocations':
        sidecar.max_invocations = integer(path, key, value, 1, Number.MAX_SAFE_INTEGER);
        break;
      case 'max_queue':
        sidecar.max_queue = integer(path, key, value, 0, MAX_QUEUE);
        break;
      case 'instance_per_call':
        sidecar.instance_per_call = boolean(`${path}: ${key}`, value);
        break;
      case 'env':
        sidecar.env = environment(path, value);
        break;
      case 'config':
        if (typeof value !== 'string' || value === '') throw new SidecarError(`${path}: config: expected the path of the configuration file, got ${JSON.stringify(value)}`);
        sidecar.config = value;
        break;
      case 'allowed_paths':
        sidecar.allowed_paths = await allowedPaths(path, value);
        break;
      case 'allowed_outbound_hosts':
        sidecar.allowed_outbound_hosts = outboundHosts(path, value);
        break;
      default:
        throw new SidecarError(`${path}: unknown key "${key}" (known: ${KNOWN_KEYS})`);
    }
  }
  return sidecar;
}

/** A table of string values, each checked by `check` (which returns why it is wrong, or nothing). */
function stringTable(
  path: string,
  key: string,
  value: unknown,
  shape: string,
  check: (name: string, item: unknown) => string | undefined,
): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SidecarError(`${path}: ${key}: expected a table of ${shape}, got ${JSON.stringify(value)}`);
  }
  const out: Record<string, string> = {};
  for (const [name, item] of Object.entries(value)) {
    const problem = check(name, item);
    if (problem) throw new SidecarError(`${path}: ${problem}`);
    out[name] = item as string;
  }
  return out;
}

function mediaTypes(path: string, value: unknown): Record<string, string> {
  return stringTable(path, 'media_types', value, 'method = "media/type"', (method, type) =>
    typeof type !== 'string' || !MEDIA_TYPE.test(type)
      ? `media_types.${method}: expected a media type such as "image/png", got ${JSON.stringify(type)}`
      : undefined,
  );
}

function environment(path: string, value: unknown): Record<string, string> {
  return stringTable(path, 'env', value, 'NAME = "value"', (name, text) => {
    if (!ENV_NAME.test(name)) return `env: ${JSON.stringify(name)} is not a variable name`;
    if (typeof text !== 'string') return `env.${name}: expected a string, got ${JSON.stringify(text)}`;
    return undefined;
  });
}

function boolean(where: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new SidecarError(`${where}: expected true or false, got ${JSON.stringify(value)}`);
  return value;
}

function integer(path: string, key: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new SidecarError(`${path}: ${key}: expected an integer between ${min} and ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * `[[allowed_paths]]` entries: `host` (relative to the sidecar's directory)
 * must be a directory; `guest` is the absolute name the component sees it by;
 * `writable` defaults to false.
 */
async function allowedPaths(path: string, value: unknown): Promise<PathGrant[]> {
  if (!Array.isArray(value)) {
    throw new SidecarError(`${path}: allowed_paths: expected an array of tables ([[allowed_paths]] with host, guest and optional writable), got ${JSON.stringify(value)}`);
  }
  const grants: PathGrant[] = [];
  for (const [i, entry] of value.entries()) {
    const where = `${path}: allowed_paths[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new SidecarError(`${where}: expected a table with host, guest and optional writable, got ${JSON.stringify(entry)}`);
    }
    const table = entry as Record<string, unknown>;
    const unknown = Object.keys(table).find((k) => !PATH_KEYS.includes(k));
    if (unknown !== undefined) throw new SidecarError(`${where}: unknown key "${unknown}" (known: ${PATH_KEYS.join(', ')})`);
    const { host, guest, writable = false } = table;
    if (typeof host !== 'string' || host === '') throw new SidecarError(`${where}.host: expected a directory path, got ${JSON.stringify(host)}`);
    if (typeof guest !== 'string' || !guest.startsWith('/') || posix.normalize(guest) !== guest || guest.includes('\\')) {
      throw new SidecarError(`${where}.guest: expected an absolute path such as "/data" (no "." or ".." segments), got ${JSON.stringify(guest)}`);
    }
    const isWritable = boolean(`${where}.writable`, writable);
    const normalisedGuest = guest.length > 1 && guest.endsWith('/') ? guest.slice(0, -1) : guest;
    if (grants.some((g) => g.guest === normalisedGuest)) throw new SidecarError(`${where}.guest: ${JSON.stringify(guest)} is granted twice`);
    grants.push({ host: await directory(`${where}.host`, resolve(dirname(path), host), host), guest: normalisedGuest, writable: isWritable });
  }
  return grants;
}

/** `absolute` with its symlinks resolved, when it is a directory. */
async function directory(where: string, absolute: string, written: string): Promise<string> {
  const named = written === absolute ? JSON.stringify(written) : `${JSON.stringify(written)} (${absolute})`;
  try {
    if (!(await stat(absolute)).isDirectory()) throw new SidecarError(`${where}: ${named} is not a directory`);
    return await realpath(absolute);
  } catch (e) {
    if (e instanceof SidecarError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new SidecarError(`${where}: ${named} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? (e as Error).message})`}`);
  }
}

function outboundHosts(path: string, value: unknown): string[] {
  if (!Array.isArray(value)) {
    throw new SidecarError(`${path}: allowed_outbound_hosts: expected a list of ${HOST_PATTERN_SHAPE}; got ${JSON.stringify(value)}`);
  }
  value.forEach((entry, i) => {
    if (typeof entry !== 'string' || !parseHostPattern(entry)) {
      throw new SidecarError(`${path}: allowed_outbound_hosts[${i}]: expected ${HOST_PATTERN_SHAPE}; got ${JSON.stringify(entry)}`);
    }
  });
  return value as string[];
}
