// A component's sidecar: `<stem>.toml` beside the .wasm file (docs/api.md §4).
// It overrides the service address; an invalid sidecar makes the component
// fail to load with a message naming the file and key, and so does a grant
// its repository may not make (repository-trust.ts).

import { readFile, realpath, stat } from 'node:fs/promises';
import { dirname, posix, resolve } from 'node:path';
import TOML from '@ltd/j-toml';
import { isMountPath, MOUNT_PATH_SHAPE, normalPath, reservedBy } from '../http-mounts.js';
import { HOST_PATTERN_SHAPE, parseHostPattern } from '../outbound-hosts.js';
import { boolean, check, integer, list, misfitLine, oneOf, record, string, table, type Static } from '../shape.js';
import type { PathGrant } from '../service.js';
import { parseInterfaceName } from '../wit/types.js';
import { ADDRESS_PART_SHAPE, isAddressPart } from './addressing.js';

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
  /** Calls of async functions one instance serves at once (default 16; WASI 0.3). */
  max_concurrency?: number;
  /** Instances per worker at most: pool_size kept, the rest started while calls need them (default pool_size + 4). */
  max_instances?: number;
  /** A handle unused this long (seconds) is dropped (default 300; docs/api.md §5.1.2). */
  handle_idle_seconds?: number;
  /** Live handles per handle scope at most (default 1000); beyond it 503 with Retry-After. */
  max_handles?: number;
  /** `required`: a constructor must name its handle scope (`RT-Handle-Scope`); `optional` (default): without one it joins the default scope. */
  handle_scope?: string;
  /** Named handle scopes alive at most in each worker (default 64), each an instance of its own. */
  max_scopes?: number;
  /** Environment variables granted to the component. */
  env?: Record<string, string>;
  /** The service's configuration file, relative to the sidecar (default: `<stem>.config.*` beside it). */
  config?: string;
  /** Host directories the component sees as preopens; host paths resolved (absolute, symlinks followed). */
  allowed_paths?: PathGrant[];
  /** Where the component may send HTTP requests: `[http:// | https://]host[:port]` entries. */
  allowed_outbound_hosts?: string[];
  /** An HTTP handler's mount outside /api (docs/api.md §5.8): it serves this path and everything below it. */
  http_route?: string;
  /** Imported interface → the service (`domain/service`) that serves it (docs/api.md §5.9, links). */
  imports?: Record<string, string>;
}

export class SidecarError extends Error {}

/** The repository a sidecar comes from, and whether it may grant host access (repository-trust.ts). */
export interface SidecarOrigin {
  repository: string;
  mayGrant: boolean;
}

/** The keys that grant what only the operator gives (docs/api.md §8): host access, and a mount in rt's own paths. */
const GRANTS = ['allowed_paths', 'env', 'allowed_outbound_hosts', 'http_route', 'imports'] as const;
const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Waiting calls are held in memory: bound what one sidecar can ask for. */
const MAX_QUEUE = 100_000;
/** Calls one instance serves at once at most: each holds a suspended task and its JS side in the thread. */
const MAX_CONCURRENCY = 10_000;
/** Each instance is a thread with its own heap: bound what one sidecar can ask for (pool_size's 64, and as many more). */
const MAX_INSTANCES = 128;
/** Each live handle holds guest memory: bound what one sidecar can ask for, as for waiting calls. */
const MAX_HANDLES = 100_000;
/** Each named scope is an instance of its own: thousands would be thousands of instances. */
const MAX_SCOPES = 4096;

/** A day: a handle is a session's state, not storage. */
const MAX_HANDLE_IDLE_SECONDS = 86_400;

const address = string({ test: isAddressPart, expected: ADDRESS_PART_SHAPE });
const trueOrFalse = boolean('true or false');

/** What a sidecar may say (docs/api.md §4); what a key's value means is in `Sidecar`. */
const SIDECAR = record(
  {
    domain: address,
    service: address,
    config: string({ expected: 'the path of the configuration file' }),
    media_types: table(string({ test: (s) => MEDIA_TYPE.test(s), expected: 'a media type such as "image/png"' }), 'a table of method = "media/type"'),
    pool_size: integer(1, 64),
    max_invocations: integer(1),
    instance_per_call: trueOrFalse,
    max_queue: integer(0, MAX_QUEUE),
    max_concurrency: integer(1, MAX_CONCURRENCY),
    max_instances: integer(1, MAX_INSTANCES),
    handle_idle_seconds: integer(1, MAX_HANDLE_IDLE_SECONDS),
    max_handles: integer(1, MAX_HANDLES),
    handle_scope: oneOf(['optional', 'required']),
    max_scopes: integer(1, MAX_SCOPES),
    env: table(string({ empty: true, expected: 'a string' }), 'a table of NAME = "value"', {
      test: (name) => ENV_NAME.test(name),
      problem: (name) => `${JSON.stringify(name)} is not a variable name`,
    }),
    allowed_paths: list(
      record(
        {
          host: string({ expected: 'a directory path' }),
          guest: string({ test: isGuestPath, expected: 'an absolute path such as "/data" (no "." or ".." segments)' }),
          writable: trueOrFalse,
        },
        'a table with host, guest and optional writable',
        ['host', 'guest'],
      ),
      'an array of tables ([[allowed_paths]] with host, guest and optional writable)',
    ),
    allowed_outbound_hosts: list(string({ test: (s) => parseHostPattern(s) !== undefined, expected: HOST_PATTERN_SHAPE }), `a list of ${HOST_PATTERN_SHAPE}`),
    http_route: string({ test: isMountPath, expected: MOUNT_PATH_SHAPE }),
    imports: table(string({ test: isServicePath, expected: `a service as "domain/service" (each ${ADDRESS_PART_SHAPE})` }), 'a table of "namespace:package/interface" = "domain/service"', {
      test: (name) => parseInterfaceName(name) !== undefined,
      problem: (name) => `${JSON.stringify(name)} is not an interface name such as "wasi:http/handler"`,
    }),
  },
  'a table',
);

export function sidecarPath(wasmPath: string): string {
  return wasmPath.replace(/\.wasm$/, '.toml');
}

/** The sidecar of `wasmPath`, or an empty one when it has none. */
export async function readSidecar(wasmPath: string, origin: SidecarOrigin): Promise<Sidecar> {
  const path = sidecarPath(wasmPath);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return {};
  }
  let parsed: unknown;
  try {
    parsed = TOML.parse(text, { joiner: '\n', bigint: false });
  } catch (e) {
    throw new SidecarError(`${path}: invalid TOML: ${(e as Error).message.split('\n')[0]}`);
  }
  const checked = check(SIDECAR, parsed, 'data');
  if (!checked.ok) throw new SidecarError(`${path}: ${misfitLine(checked, { show: (got) => String(JSON.stringify(got)) })}`);
  // Before any host path it names is looked at.
  const grant = origin.mayGrant ? undefined : GRANTS.find((key) => checked.value[key] !== undefined);
  if (grant) throw new SidecarError(`${path}: ${grant}: a sidecar from ${origin.repository} may not grant ${grant}; list the repository in repositories.trusted to allow its grants`);
  const route = checked.value.http_route;
  const reserved = route === undefined ? undefined : reservedBy(route);
  if (reserved) throw new SidecarError(`${path}: http_route: ${JSON.stringify(route)} lies in ${reserved.owner} (${reserved.path}); mount the handler elsewhere`);
  // Claimed as requests are matched: one route however it is spelled.
  if (route !== undefined) checked.value.http_route = normalPath(route);
  const { allowed_paths, ...rest } = checked.value;
  return allowed_paths ? { ...rest, allowed_paths: await pathGrants(path, allowed_paths) } : rest;
}

function isServicePath(path: string): boolean {
  const parts = path.split('/');
  return parts.length === 2 && parts.every(isAddressPart);
}

function isGuestPath(guest: string): boolean {
  return guest.startsWith('/') && posix.normalize(guest) === guest && !guest.includes('\\');
}

/**
 * `[[allowed_paths]]` entries as grants: `host` (relative to the sidecar's
 * directory) must be a directory, resolved; `guest` is the absolute name the
 * component sees it by, granted once; `writable` defaults to false.
 */
async function pathGrants(path: string, entries: Static<typeof SIDECAR>['allowed_paths'] & object): Promise<PathGrant[]> {
  const grants: PathGrant[] = [];
  for (const [i, { host, guest, writable = false }] of entries.entries()) {
    const where = `${path}: allowed_paths[${i}]`;
    const normalisedGuest = guest.length > 1 && guest.endsWith('/') ? guest.slice(0, -1) : guest;
    if (grants.some((g) => g.guest === normalisedGuest)) throw new SidecarError(`${where}.guest: ${JSON.stringify(guest)} is granted twice`);
    grants.push({ host: await directory(`${where}.host`, resolve(dirname(path), host), host), guest: normalisedGuest, writable });
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
