// The set of services the runtime serves, built from the repositories: scan,
// transpile, address, and settle address conflicts. A file that fails at any
// step becomes a LoadFailure; it never stops the others from loading.
// Components are described several at once (their compiles run on the
// compiler threads, compiler-threads.ts), in the repositories' order all the
// same: services, failures and conflicts come out as a one-by-one build
// would give them.

import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import semver from 'semver';
import type { Logger } from 'pino';
import { DEFAULT_INSTANCES, OVERFLOW_INSTANCES, serviceKey, serviceName, serviceRevision, type ExportLocation, type InstanceOptions, type LoadFailure, type MethodDescriptor, type ServiceDescriptor } from '../service.js';
import { bytesResult, isBytes, type ImportedItem, type WitFunction } from '../wit/types.js';
import { serviceAddress, serviceExports } from './addressing.js';
import { mapConcurrently } from '../concurrently.js';
import { firstLine } from '../first-line.js';
import { THREADS } from './compiler-threads.js';
import { transpileComponent, type TranspileEvents } from './transpiler.js';
import { scanRepository, type RepositoryReading } from './repositories.js';
import { mayGrant } from './repository-trust.js';
import type { FoundComponent } from './repository-scan.js';
import { findConfigFile, readConfigFile } from './service-config.js';
import { readSidecar, SidecarError, sidecarPath, type Sidecar } from './sidecar.js';
import { isServedWasiImport, WASI_0_2 } from '../wasi-lines.js';
import { isUnder } from '../http-mounts.js';
import { settleLinks, sidecarLinks } from './service-links.js';

export interface Catalog {
  services: ServiceDescriptor[];
  failures: LoadFailure[];
}

/** A catalog as the repositories give it, and which of them could not be read at all. */
export interface ScannedCatalog extends Catalog {
  unreadable: string[];
}

/** The services `repoUrls` hold, read as the repository settings say (`trusted`: the `https:` repositories whose sidecars may grant, repository-trust.ts), and what failed to load. */
export async function buildCatalog(repoUrls: string[], cwd: string, { download, trusted, maxComponentBytes }: RepositoryReading, log: Logger): Promise<ScannedCatalog> {
  const failures: LoadFailure[] = [];
  const found: FoundComponent[] = [];
  const unreadable: string[] = [];
  for (const url of repoUrls) {
    const scan = await scanRepository(url, cwd, download);
    found.push(...scan.components);
    for (const error of scan.errors) failures.push({ source: url, error });
    if (scan.unreadable) unreadable.push(url);
  }
  let done = 0;
  const described = await mapConcurrently(found, DESCRIBING, async (component): Promise<ServiceDescriptor | LoadFailure> => {
    const compiling = compileLog(component, log);
    try {
      const descriptor = await describe(component, trusted, maxComponentBytes, compiling.events);
      compiling.done(++done, found.length);
      return descriptor;
    } catch (e) {
      ++done;
      return { source: component.path, error: firstLine(e) };
    }
  });
  const candidates: ServiceDescriptor[] = [];
  for (const outcome of described) {
    if ('error' in outcome) failures.push(outcome);
    else candidates.push(outcome);
  }
  const services = settleLinks(settleRoutes(settleConflicts(candidates, failures), failures, log), failures);
  for (const failure of failures) log.warn({ source: failure.source }, `skipped: ${failure.error}`);
  return { services, failures, unreadable };
}

/**
 * Components described at once: enough to keep every compiler thread busy
 * while others read and look up their files, and no more (each holds its
 * bytes meanwhile, ~11 MB for a componentize-js one).
 */
const DESCRIBING = 2 * THREADS;

/**
 * A component's compile in the log, one line at each step (a failure is
 * reported once the catalog is built): it can take seconds, and a cold start
 * has several. `k/n`: components described of the catalog's.
 */
function compileLog(component: FoundComponent, log: Logger): { events: TranspileEvents; done(k: number, n: number): void } {
  const source = { source: component.path };
  let started: number | undefined;
  return {
    events: {
      transpiling: () => {
        started = performance.now();
        log.info(source, `transpiling ${component.stem} (first load of this version)...`);
      },
      instrumenting: () => log.info(source, `instrumenting ${component.stem} for inline calls...`),
      rebuilding: (entry, problem) => log.warn({ ...source, entry }, `the transpile cache entry ${entry} is damaged (${problem}); building it anew`),
    },
    done: (k, n) => {
      if (started !== undefined) log.info(source, `${component.stem} compiled in ${((performance.now() - started) / 1000).toFixed(1)} s (${k}/${n})`);
    },
  };
}

async function describe(component: FoundComponent, trusted: readonly string[], maxBytes: number, events: TranspileEvents): Promise<ServiceDescriptor> {
  // Checked before it is read: a file of gigabytes would hold that much of the primary's memory, several times over while it is transpiled.
  const { size } = await stat(component.path);
  if (size > maxBytes) throw new Error(`the component is ${mib(size)} MiB, over repositories.max_component_mib (${mib(maxBytes)} MiB)`);
  const file = await readFile(component.path);
  // A plain Uint8Array over the Buffer's memory: a copy would cost ~5 ms of the event loop for an 11 MB component.
  const bytes = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
  const { artifact, interface: iface } = await transpileComponent(bytes, events);
  const sidecar = await readSidecar(component.path, { repository: component.repository, mayGrant: mayGrant(component.repository, trusted) });
  const address = serviceAddress(iface, component.stem, sidecar);
  const { methods, resources, hook: init, http } = serviceExports(iface, isInitHook);
  if (sidecar.http_route !== undefined && !http) {
    throw new SidecarError(`${sidecarPath(component.path)}: http_route: the component exports no HTTP handler (wasi:http/incoming-handler@0.2.x or wasi:http/handler@0.3.x) to mount`);
  }
  applyMediaTypes(methods, sidecar.media_types ?? {}, sidecarPath(component.path));
  const links = sidecarLinks(iface, sidecar.imports ?? {}, sidecarPath(component.path));
  const configFile = await findConfigFile(component.path, sidecar.config, component.root);
  const descriptor: Omit<ServiceDescriptor, 'revision'> = {
    id: address.id,
    source: component.path,
    repository: component.repository,
    artifact,
    interface: iface,
    methods,
    resources,
    unsatisfiedImports: iface.imports.filter((i) => !isServedWasiImport(i.name) && !typesOnly(i) && !links.some((l) => l.interface === i.name)).map((i) => i.name),
    instances: instanceOptions(sidecar, sidecarPath(component.path), http?.wasi === WASI_0_2),
    env: sidecar.env ?? {},
    init: init ? ({ exportKey: init.exportKey, jsName: init.jsName } satisfies ExportLocation) : null,
    config: configFile ? await readConfigFile(configFile) : null,
    configFile,
    quiesced: false,
    paths: sidecar.allowed_paths ?? [],
    outboundHosts: sidecar.allowed_outbound_hosts ?? [],
    http: http ? { ...http, route: sidecar.http_route ?? null } : null,
    links,
  };
  if (address.version !== undefined) descriptor.version = address.version;
  return { ...descriptor, revision: serviceRevision(descriptor) };
}

function mib(bytes: number): string {
  return String(Math.round((bytes / 2 ** 20) * 10) / 10);
}

/**
 * `init: func(config: list<u8>) -> result<_, string>`, world-level or in any
 * exported interface: the runtime calls it once per instance with the
 * configuration (docs/api.md §5.2). It is not a method clients can call.
 */
function isInitHook(fn: WitFunction): boolean {
  const result = fn.result;
  return (
    fn.name === 'init' &&
    fn.params.length === 1 &&
    isBytes(fn.params[0].type) &&
    result?.kind === 'result' &&
    result.ok === null &&
    result.err?.kind === 'primitive' &&
    result.err.name === 'string'
  );
}

/** An imported interface of types alone (`wasi:clocks/types@0.3.0`): there is nothing in it to serve. */
function typesOnly(item: ImportedItem): boolean {
  return item.kind === 'instance' && (item.functions ?? []).length === 0 && !(item.types ?? []).some((t) => t.type.kind === 'resource');
}

/**
 * How the service's instances are kept. A WASI 0.2 HTTP handler's default is
 * a fresh instance per request (docs/api.md §5.8: a componentize-js
 * fetch-event instance answers one); `max_invocations` lets the operator
 * reuse one that is known to serve many. A 0.3 handler serves requests side
 * by side in one instance (§5.9), so its instances are kept as any service's.
 */
function instanceOptions(sidecar: Sidecar, path: string, freshPerRequest: boolean): InstanceOptions {
  if (sidecar.instance_per_call && sidecar.max_invocations !== undefined && sidecar.max_invocations !== 1) {
    throw new SidecarError(`${path}: instance_per_call = true means max_invocations = 1, not ${sidecar.max_invocations}`);
  }
  const poolSize = sidecar.pool_size ?? DEFAULT_INSTANCES.poolSize;
  if (sidecar.max_instances !== undefined && sidecar.max_instances < poolSize) {
    throw new SidecarError(`${path}: max_instances (${sidecar.max_instances}) is below pool_size (${poolSize}): it bounds the instances a worker keeps and starts, pool_size's among them`);
  }
  return {
    poolSize,
    recycleAfter: sidecar.instance_per_call ? 1 : (sidecar.max_invocations ?? (freshPerRequest ? 1 : DEFAULT_INSTANCES.recycleAfter)),
    maxQueue: sidecar.max_queue ?? DEFAULT_INSTANCES.maxQueue,
    maxConcurrency: sidecar.max_concurrency ?? DEFAULT_INSTANCES.maxConcurrency,
    maxInstances: sidecar.max_instances ?? poolSize + OVERFLOW_INSTANCES,
    handleIdleSeconds: sidecar.handle_idle_seconds ?? DEFAULT_INSTANCES.handleIdleSeconds,
    maxHandles: sidecar.max_handles ?? DEFAULT_INSTANCES.maxHandles,
    handleScope: sidecar.handle_scope === 'required' ? 'required' : DEFAULT_INSTANCES.handleScope,
    maxScopes: sidecar.max_scopes ?? DEFAULT_INSTANCES.maxScopes,
  };
}

/** A sidecar's media types belong to methods that exist and answer raw bytes. */
function applyMediaTypes(methods: MethodDescriptor[], mediaTypes: Record<string, string>, path: string): void {
  for (const [name, type] of Object.entries(mediaTypes)) {
    const method = methods.find((m) => m.aliases.includes(name));
    if (!method) throw new SidecarError(`${path}: media_types.${name}: the component has no method "${name}"`);
    if (!bytesResult(method.function) && method.stream?.encoding !== 'bytes') {
      throw new SidecarError(`${path}: media_types.${name}: only a method returning list<u8> (or streaming list<u8> items) answers raw bytes`);
    }
    method.mediaType = type;
  }
}

/**
 * Two components claiming one address: the higher package semver serves, the
 * other is reported shadowed. Of two at the same version (two files that both
 * map to default/<name>, `my-component.wasm` and `my_component.wasm`), the
 * one whose file stem is the name as written serves.
 */
function settleConflicts(candidates: ServiceDescriptor[], failures: LoadFailure[]): ServiceDescriptor[] {
  const winners = new Map<string, ServiceDescriptor>();
  for (const candidate of candidates) {
    const key = serviceKey(candidate.id);
    const current = winners.get(key);
    if (!current) {
      winners.set(key, candidate);
      continue;
    }
    const [winner, loser] = newer(candidate, current) || (!newer(current, candidate) && namedAsWritten(candidate) && !namedAsWritten(current)) ? [candidate, current] : [current, candidate];
    winners.set(key, winner);
    failures.push({
      source: loser.source,
      error: `shadowed: ${winner.source} serves ${key}${winner.version ? ` at version ${winner.version}` : ''}`,
    });
  }
  return [...winners.values()];
}

/**
 * A route two handlers claim (sidecar `http_route`): the service first by
 * address keeps it, the other fails to load, the error naming both
 * (docs/api.md §5.8). Routes nest freely: the longest one a path is under
 * serves it.
 */
function settleRoutes(services: ServiceDescriptor[], failures: LoadFailure[], log: Logger): ServiceDescriptor[] {
  const claimed = new Map<string, ServiceDescriptor>();
  const refused = new Set<ServiceDescriptor>();
  for (const service of [...services].sort((a, b) => serviceKey(a.id).localeCompare(serviceKey(b.id)))) {
    const route = service.http?.route ?? null;
    if (route === null) continue;
    const holder = claimed.get(route);
    if (!holder) {
      claimed.set(route, service);
      continue;
    }
    refused.add(service);
    failures.push({ source: service.source, error: `http_route ${JSON.stringify(route)} is claimed by ${serviceName(holder.id)} (${holder.source}) already` });
  }
  // Allowed (the longest route wins), but a subtree taken from another service is worth a look.
  for (const [inner, nested] of claimed) {
    for (const [outer, around] of claimed) {
      if (inner !== outer && isUnder(inner, outer)) {
        log.warn({ source: nested.source, route: inner, within: outer }, `http_route ${inner} of ${serviceName(nested.id)} lies within ${outer} of ${serviceName(around.id)}: requests below ${inner} go to ${serviceName(nested.id)}`);
      }
    }
  }
  return services.filter((s) => !refused.has(s));
}

/** Whether the service's file stem is its service name as it is, not read from underscores. */
function namedAsWritten(d: ServiceDescriptor): boolean {
  return !basename(d.source).includes('_');
}

function newer(a: ServiceDescriptor, b: ServiceDescriptor): boolean {
  const va = semver.valid(a.version ?? '') ?? '0.0.0';
  const vb = semver.valid(b.version ?? '') ?? '0.0.0';
  return semver.gt(va, vb);
}
