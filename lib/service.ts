// The domain model shared by the primary and the workers: what a service is,
// which methods it has, and where its compiled code lives. Everything here is
// plain data so it can cross the cluster IPC channel as-is.

import { createHash } from 'node:crypto';
import type { StreamSignature } from './wit/streaming.js';
import type { HttpHandlerExport } from './wit/http-handler.js';
import type { ComponentInterface, WitFunction } from './wit/types.js';

export interface ServiceId {
  domain: string;
  service: string;
}

/** `<domain>.<service>`: how errors and control answers name a service (docs/api.md §5.5). */
export function serviceName(id: ServiceId): string {
  return `${id.domain}.${id.service}`;
}

/** The registry key, and a service's place in its URLs (`/api/services/<domain>/<service>`); `/` cannot appear in either part, so it is unambiguous. */
export function serviceKey(id: ServiceId): string {
  return `${id.domain}/${id.service}`;
}

export interface MethodDescriptor {
  /** The name a client uses: the bare function name when unique in the service, else `interface.function`. */
  name: string;
  /** Every name that resolves to this method (bare when unique, and `interface.function`). */
  aliases: string[];
  /** The exporting interface's full name, or null for a world-level function. */
  interface: string | null;
  function: WitFunction;
  invocable: boolean;
  /** Why not, when `invocable` is false. */
  reason?: string;
  /** Where jco's glue puts the function: `exports[exportKey][jsName]`, or `exports[jsName]` when exportKey is null. */
  exportKey: string | null;
  jsName: string;
  /** The media type of a list<u8> result or stream item, from the sidecar (default application/octet-stream). */
  mediaType?: string;
  /** Present for a streaming method (docs/api.md §5.1.1): it returns a resource whose `next` gives the items. */
  stream?: StreamSignature;
  /** A resource's constructor, method or static function (docs/api.md §5.1.2): which, of which resource (its `ResourceDescriptor.name`), and the resource's class in jco's exports. */
  member?: { kind: 'constructor' | 'method' | 'static'; resource: string; className: string };
  /** Its parameters hold handles (a method's `self` included), or its result does: the call runs where those handles live. */
  handles?: { params: boolean; result: boolean };
}

/**
 * A resource the component exports (docs/api.md §5.1.2): its functions are
 * entries of `ServiceDescriptor.methods`, named here by their index there.
 */
export interface ResourceDescriptor {
  /** The name a client uses (`/resources/<name>`): the WIT name when unique in the service, else `interface.name`. */
  name: string;
  /** Every name that resolves to it. */
  aliases: string[];
  /** The exporting interface's full name, or null for a world-level resource. */
  interface: string | null;
  /** resourceKey() of it (lib/wit/handles.ts): how handles name their resource. */
  key: string;
  constructorMethod: number | null;
  methods: number[];
  statics: number[];
}

/** The output of compiling one component (primary side), enough for a worker to instantiate it. */
export interface ComponentArtifact {
  /** sha256 of the .wasm bytes: the component's identity across reloads. */
  hash: string;
  /** Absolute path of the transpiled ES module exporting `instantiate` (shared by components with the same glue). */
  entry: string;
  /** The cache directory holding the core modules. */
  dir: string;
  /** Core module file names as the glue asks for them, relative to `dir`. */
  coreModules: string[];
  /**
   * The fuel-instrumented twin of each core module, in the same order, for
   * running inline; null when a module could not be instrumented
   * (`fuelRefusal` says why) and the service runs on instance threads.
   */
  fuelModules: string[] | null;
  fuelRefusal?: string;
  /** Import specifiers the glue expects in its import object (versionless, as jco names them). */
  importSpecifiers: string[];
}

export interface ServiceDescriptor {
  id: ServiceId;
  /** The package version the address came from, if any. */
  version?: string;
  /** The component's file (for an `https:` repository, its local copy). */
  source: string;
  /** The repository URL it was found through. */
  repository: string;
  artifact: ComponentArtifact;
  interface: ComponentInterface;
  methods: MethodDescriptor[];
  /** The resources it exports, whose handles clients hold (docs/api.md §5.1.2). */
  resources: ResourceDescriptor[];
  /** Non-WASI imports linked to trapping stubs. */
  unsatisfiedImports: string[];
  /** How a worker keeps the service's instances (sidecar `pool_size`, `max_invocations`, `instance_per_call`). */
  instances: InstanceOptions;
  /** Environment variables the sidecar grants the component (docs/api.md §8): it sees nothing else of the host's. */
  env: Record<string, string>;
  /** The component's `init` export, called once per instance with the configuration (docs/api.md §5.2); not a method. */
  init: ExportLocation | null;
  /** The configuration its instances get: from a restart body, else from its file in the repository. */
  config: ServiceConfig | null;
  /** The configuration file in the repository (sidecar `config`, or `<stem>.config.*`): what a restart without body reads. */
  configFile: string | null;
  /** Quiesced (docs/api.md §5.3): no instances, invocations answered 503, until a restart. */
  quiesced: boolean;
  /** Identifies what the instances are made from (component, sidecar options, configuration): equal revisions need no new instances. */
  revision: string;
  /** Host directories the sidecar grants as preopens (`allowed_paths`, docs/api.md §8); none by default. */
  paths: PathGrant[];
  /** Hosts the component may send HTTP requests to (`allowed_outbound_hosts`); none by default. */
  outboundHosts: string[];
  /** The wasi:http incoming handler it exports (docs/api.md §5.8), and where its sidecar mounts it outside /api; null for none. */
  http: HttpService | null;
  /** Imported interfaces its sidecar binds to other services (`[imports]`, docs/api.md §5.9). */
  links: ServiceLink[];
}

/** The interface a middleware's downstream handler is: a link of it goes to a WASI 0.3 HTTP handler service. */
export const HANDLER_LINK = 'wasi:http/handler';

/** An imported interface served by another service in the same worker: calls cross between the two instances, no network between them. */
export interface ServiceLink {
  /** As the component imports it, e.g. `wasi:http/handler@0.3.0`. */
  interface: string;
  target: ServiceId;
}

/** An HTTP handler service: the handler export, and its mount (sidecar `http_route`) if any. */
export interface HttpService extends HttpHandlerExport {
  route: string | null;
}

/** A host directory a component sees as a preopened directory. */
export interface PathGrant {
  /** Absolute host path. */
  host: string;
  /** The directory's name in the component (absolute, e.g. `/data`). */
  guest: string;
  writable: boolean;
}

/**
 * Where jco's glue puts an exported function: `exports[exportKey][jsName]`,
 * or `exports[jsName]` when exportKey is null; a resource's functions are on
 * its class `className` there: the class itself (a constructor), its
 * prototype (a method, `jsName`), or the class (a static, `jsName`).
 */
export interface ExportLocation {
  exportKey: string | null;
  jsName: string;
  className?: string;
  kind?: 'constructor' | 'method' | 'static';
}

/** A service's configuration data: handed to `init` as bytes and, when TOML or JSON, served through wasi:config/store. */
export interface ServiceConfig {
  bytes: Uint8Array;
  contentType: string;
  /** Where it came from: the file's path, or "restart body". */
  origin: string;
  /** Its keys flattened to `a.b.c`, when it is TOML or JSON; empty otherwise. */
  entries: [key: string, value: string][];
}

/** The revision of `d`, from everything its instances are made from. */
export function serviceRevision(d: Omit<ServiceDescriptor, 'revision'>): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify([d.artifact.hash, d.instances, d.env, d.paths, d.outboundHosts, d.init, d.methods.map((m) => m.mediaType ?? null), d.config?.contentType ?? null, d.http?.route ?? null, d.links]));
  if (d.config) hash.update(d.config.bytes);
  return hash.digest('hex').slice(0, 16);
}

export interface InstanceOptions {
  /** Instances per worker, each on its own thread. */
  poolSize: number;
  /** Replace an instance after this many calls; 0 = never. `instance_per_call` is 1. */
  recycleAfter: number;
  /** Calls that may wait for an instance thread, per worker; beyond it 503 with Retry-After (sidecar `max_queue`). */
  maxQueue: number;
  /** Calls of functions that answer later (async: WASI 0.3) one instance serves at once, while they wait (sidecar `max_concurrency`). */
  maxConcurrency: number;
  /** Instances (threads) per worker at most: `poolSize` kept, the rest started while calls need them (sidecar `max_instances`). */
  maxInstances: number;
  /** A handle unused this long is dropped (sidecar `handle_idle_seconds`). */
  handleIdleSeconds: number;
  /** Live handles per handle scope at most; beyond it 503 with Retry-After (sidecar `max_handles`). */
  maxHandles: number;
  /** Whether a constructor must name a handle scope (`RT-Handle-Scope`), or may join the default one (sidecar `handle_scope`). */
  handleScope: 'optional' | 'required';
  /** Named handle scopes alive at most, each an instance of its own, in each worker (sidecar `max_scopes`). */
  maxScopes: number;
}

/** Instances beyond pool_size a worker may start for a service by default (sidecar `max_instances`). */
export const OVERFLOW_INSTANCES = 4;

export const DEFAULT_INSTANCES: InstanceOptions = { poolSize: 1, recycleAfter: 0, maxQueue: 64, maxConcurrency: 16, maxInstances: 1 + OVERFLOW_INSTANCES, handleIdleSeconds: 300, maxHandles: 1000, handleScope: 'optional', maxScopes: 64 };

/** Where a service's calls run in one worker: inline on its main thread, or on instance threads (docs/architecture.md, "Execution model"). */
export type Placement = 'inline' | 'threads';

/** Every worker's placement of every service: by service key, then by worker id. */
export type PlacementTable = Record<string, Record<string, Placement>>;

/** A file that was found but could not be served. */
export interface LoadFailure {
  source: string;
  error: string;
}
