// Every configuration key, declared once. Loading, validation, environment
// variables, `rt config` output and docs/api.md §2's table are all driven by
// this list: adding a key is one line here (plus its field in `Config`, which
// the compiler checks against this list).

import { availableParallelism } from 'node:os';
import { isAddressOrRange } from '../client-address.js';
import { isOrigin } from '../origin.js';
import { boolean, integer, oneOf, string, strings, stringsThat, urls, type BooleanShape, type EnumShape, type IntegerShape, type StringListShape, type StringShape, type UrlListShape } from '../shape.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE'] as const;

/** The shapes a configuration value may have (lib/shape.ts). */
type KeyType = IntegerShape | BooleanShape | StringShape | EnumShape | StringListShape | UrlListShape;

/** A checked value, as it is stored in a layer and in `Config`. */
export type Value = number | boolean | string | readonly string[];

interface Spec<T extends KeyType, V extends Value> {
  /** Dotted path, e.g. `http.cors.allowed_origins`: the TOML table and key, and the RT__ variable. */
  path: string;
  type: T;
  /** Absent for optional keys (`http.tls_cert`): unset, they are left out of `Config` and of the output. */
  default?: V;
  /** The default in words, for the reference, where the value depends on the machine or is absent. */
  defaultText?: string;
  description: string;
}

/** Pairs each type with the JS type of its default, so a mistyped default does not compile. */
export type KeySpec =
  | Spec<IntegerShape, number>
  | Spec<BooleanShape, boolean>
  | Spec<StringShape | EnumShape, string>
  | Spec<StringListShape | UrlListShape, readonly string[]>;

const int = integer;
const bool = boolean();
const str = string();
const port = int(1, 65535);
/** Browser origins: `*`, or a scheme, host and port (`https://app.example`), which is all a browser's Origin header holds. */
const origins = stringsThat(isOrigin, '`*` or an http(s) origin: scheme, host and port only (https://app.example)', 'an array of `*` or http(s) origins (https://app.example)');

const DECLARED = [
  { path: 'repo_urls', type: urls('file:', 'https:'), default: [], description: 'Component repositories: `file:` directories or `.wasm` files, `https:` locations' },
  { path: 'workers', type: int(1, 1024), default: availableParallelism(), defaultText: 'available parallelism', description: 'Worker processes serving HTTP' },
  { path: 'http.host', type: str, default: '0.0.0.0', description: 'Address to listen on' },
  { path: 'http.port', type: port, default: 9481, description: 'HTTP port' },
  { path: 'http.tls_enable', type: bool, default: false, description: 'Also serve HTTPS, on `http.tls_port`' },
  { path: 'http.tls_port', type: port, default: 9443, description: 'HTTPS port' },
  { path: 'http.tls_cert', type: str, defaultText: 'none: a self-signed pair is generated, with a warning', description: 'TLS certificate file (PEM)' },
  { path: 'http.tls_key', type: str, defaultText: 'none: a self-signed pair is generated, with a warning', description: 'TLS private key file (PEM)' },
  { path: 'http.request_timeout_seconds', type: int(1, 86_400), default: 30, description: 'A call running longer is cut off with 504; also bounds the drain on shutdown and quiesce' },
  { path: 'http.stream_timeout_seconds', type: int(1, 86_400), default: 300, description: 'A streamed answer (docs/api.md §5.1.1) lasting longer is ended; each `next` call is bounded by `http.request_timeout_seconds`' },
  { path: 'http.max_body_bytes', type: int(1), default: 10_485_760, description: 'Largest request body accepted; larger ones get 413' },
  { path: 'http.max_connections', type: int(1, 1_000_000), default: 1000, description: 'Open connections per worker; a request on a connection past them gets 503 (with `Retry-After`) and the connection closes; past twice as many, new connections are closed unanswered' },
  {
    path: 'http.client_share_percent',
    type: int(1, 100),
    default: 50,
    description: "The share one client address may hold, per worker, of `http.max_connections` and of each service's instance threads held by open streams and by requests still waiting for their bodies; past it, 503 with `Retry-After` (docs/api.md §5.10); 100: no shares (the whole is `http.max_connections`' and the queue's to bound)",
  },
  {
    path: 'http.min_body_bytes_per_second',
    type: int(0, 1_073_741_824),
    default: 1024,
    description: 'A request body arriving slower than this while rt waits for it (after a first 2 s), before any of the answer has gone out, is answered 408 (docs/api.md §5.10); 0: no minimum',
  },
  { path: 'http.cors.enabled', type: bool, default: true, description: 'Answer CORS requests' },
  { path: 'http.cors.allowed_origins', type: origins, default: ['*'], description: 'Origins allowed by CORS (`*`: any)' },
  { path: 'http.cors.allowed_methods', type: strings(HTTP_METHODS, 'HTTP method'), default: ['GET', 'POST', 'PUT', 'DELETE'], description: 'Methods allowed by CORS' },
  { path: 'http.control.allowed_origins', type: origins, default: [], description: "Browser origins, besides rt's own, whose pages may restart, quiesce and reload (`https://admin.example`; `*`: any); other origins get 403 (docs/api.md §5.6)" },
  { path: 'http.control.token', type: str, defaultText: 'none: no token needed', description: 'When set, restart, quiesce and reload need `Authorization: Bearer <token>` (401 without it)' },
  {
    path: 'http.trusted_proxies',
    type: stringsThat(isAddressOrRange, 'an IP address or CIDR range', 'an array of IP addresses or CIDR ranges'),
    default: [],
    description: "Proxies (addresses or CIDR ranges: `10.0.0.0/8`) whose `X-Forwarded-For` says who the client is: a request from one is counted as the nearest address in it that is not a trusted proxy, so fair shares stay per client behind a load balancer (docs/api.md §5.10); their `X-Forwarded-Proto` and `X-Forwarded-Host` say where clients sent requests (the OpenAPI document's `servers`)",
  },
  { path: 'runtime.max_memory_mb', type: int(1, 65_536), default: 256, description: 'Largest linear memory one component instance may grow to; past it the call traps' },
  { path: 'runtime.max_thread_heap_mb', type: int(64, 65_536), default: 512, description: 'Largest JS heap of one instance thread (large JSON bodies are decoded there, results lifted there); past it the call answers 500 and a fresh thread replaces it' },
  { path: 'runtime.heartbeat_timeout_seconds', type: int(1, 3_600), default: 5, description: 'A worker that sends no heartbeat for this long (stopped, or its event loop blocked) is killed and replaced; workers send one every 0.5 s, and a starting worker gets six times as long' },
  { path: 'repositories.ca_file', type: str, defaultText: 'none: the system CAs', description: 'Extra CA certificate (PEM) trusted for `https:` repositories' },
  { path: 'repositories.download_timeout_seconds', type: int(1, 3_600), default: 30, description: 'Longest time one repository download may take' },
  { path: 'repositories.max_download_bytes', type: int(1), default: 104_857_600, description: 'Largest file downloaded from an `https:` repository' },
  { path: 'repositories.max_component_mib', type: int(1, 4_096), default: 256, description: 'Largest component file rt reads, from either kind of repository: a larger one fails to load, before it is read' },
  { path: 'repositories.trusted', type: urls('https:'), default: [], description: "`https:` repositories (as written in `repo_urls`) whose sidecars may grant `allowed_paths`, `env`, `allowed_outbound_hosts`, `http_route` and `[imports]`; a sidecar of any other `https:` repository that grants them fails its component. `file:` repositories are the operator's own files and always may (docs/api.md §8)" },
  {
    path: 'repositories.watch',
    type: bool,
    default: false,
    description: 'Reload by itself when a repository changes (docs/api.md §5.4): `file:` repositories on a change of their files, `https:` ones by polling; off, only `POST /api/reload` reloads',
  },
  { path: 'repositories.settle_ms', type: int(50, 60_000), default: 500, description: 'With `repositories.watch`: how long a `file:` repository must stay unchanged before a burst of changes becomes one reload' },
  {
    path: 'repositories.poll_seconds',
    type: int(1, 86_400),
    default: 30,
    description: "With `repositories.watch`: how often an `https:` repository is asked, with `If-None-Match`, whether it changed; also how often a `file:` repository's listing is compared, for volumes whose changes raise no file events (network file systems)",
  },
  { path: 'log.level', type: oneOf(LOG_LEVELS), default: 'info', description: 'Least severe log level written (`rt start --verbose` forces `debug`)' },
  { path: 'log.requests', type: bool, default: true, description: 'One `info` line per request; `false` leaves them out (metrics still count every request; the lines cost ~7 % of the throughput: docs/performance.md)' },
  { path: 'console.enabled', type: bool, default: true, description: 'Serve the web console at `/console/` (`/` redirects there); `false`: both answer 404' },
] as const satisfies readonly KeySpec[];

/** Every key path, as a type: `index.ts` checks that `Config` has exactly these fields. */
export type KeyPath = (typeof DECLARED)[number]['path'];

export const KEYS: readonly KeySpec[] = DECLARED;

export const KEYS_BY_PATH: ReadonlyMap<string, KeySpec> = new Map(KEYS.map((k) => [k.path, k]));

/** Every table that holds keys: `http`, `http.cors`, `log`. */
export const TABLES: ReadonlySet<string> = new Set(
  KEYS.flatMap((k) => {
    const parts = k.path.split('.');
    return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('.'));
  }),
);
