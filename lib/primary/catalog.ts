// The set of services the runtime serves, built from the repositories: scan,
// transpile, address, and settle address conflicts. A file that fails at any
// step becomes a LoadFailure; it never stops the others from loading.

import { readFile } from 'node:fs/promises';
import semver from 'semver';
import type { Logger } from 'pino';
import { DEFAULT_INSTANCES, serviceKey, serviceRevision, type ExportLocation, type InstanceOptions, type LoadFailure, type MethodDescriptor, type ServiceDescriptor } from '../service.js';
import { bytesResult, isBytes, type WitFunction } from '../wit/types.js';
import { serviceAddress, serviceMethods } from './addressing.js';
import { firstLine } from '../first-line.js';
import { transpileComponent } from './transpiler.js';
import type { HttpsOptions } from './https-repository.js';
import { scanRepository } from './repositories.js';
import type { FoundComponent } from './repository-scan.js';
import { findConfigFile, readConfigFile } from './service-config.js';
import { readSidecar, SidecarError, sidecarPath, type Sidecar } from './sidecar.js';

export interface Catalog {
  services: ServiceDescriptor[];
  failures: LoadFailure[];
}

/** A catalog as the repositories give it, and which of them could not be read at all. */
export interface ScannedCatalog extends Catalog {
  unreadable: string[];
}

export async function buildCatalog(repoUrls: string[], cwd: string, download: HttpsOptions, log: Logger): Promise<ScannedCatalog> {
  const failures: LoadFailure[] = [];
  const found: FoundComponent[] = [];
  const unreadable: string[] = [];
  for (const url of repoUrls) {
    const scan = await scanRepository(url, cwd, download);
    found.push(...scan.components);
    for (const error of scan.errors) failures.push({ source: url, error });
    if (scan.unreadable) unreadable.push(url);
  }
  const candidates: ServiceDescriptor[] = [];
  for (const component of found) {
    try {
      candidates.push(await describe(component, log));
    } catch (e) {
      failures.push({ source: component.path, error: firstLine(e) });
    }
  }
  const services = settleConflicts(candidates, failures);
  for (const failure of failures) log.warn({ source: failure.source }, `skipped: ${failure.error}`);
  return { services, failures, unreadable };
}

async function describe(component: FoundComponent, log: Logger): Promise<ServiceDescriptor> {
  const bytes = new Uint8Array(await readFile(component.path));
  const { artifact, interface: iface } = await transpileComponent(bytes, {
    transpiling: () => log.info({ source: component.path }, `transpiling ${component.stem} (first load of this version)...`),
    rebuilding: (entry, problem) => log.warn({ source: component.path, entry }, `the transpile cache entry ${entry} is damaged (${problem}); building it anew`),
  });
  const sidecar = await readSidecar(component.path);
  const address = serviceAddress(iface, component.stem, sidecar);
  const exported = serviceMethods(iface);
  const init = exported.find((m) => isInitHook(m.function));
  const methods = exported.filter((m) => m !== init);
  applyMediaTypes(methods, sidecar.media_types ?? {}, sidecarPath(component.path));
  const configFile = await findConfigFile(component.path, sidecar.config);
  const descriptor: Omit<ServiceDescriptor, 'revision'> = {
    id: address.id,
    source: component.path,
    repository: component.repository,
    artifact,
    interface: iface,
    methods,
    unsatisfiedImports: iface.imports.filter((i) => !i.name.startsWith('wasi:')).map((i) => i.name),
    instances: instanceOptions(sidecar, sidecarPath(component.path)),
    env: sidecar.env ?? {},
    init: init ? ({ exportKey: init.exportKey, jsName: init.jsName } satisfies ExportLocation) : null,
    config: configFile ? await readConfigFile(configFile) : null,
    configFile,
    quiesced: false,
    paths: sidecar.allowed_paths ?? [],
    outboundHosts: sidecar.allowed_outbound_hosts ?? [],
  };
  if (address.version !== undefined) descriptor.version = address.version;
  return { ...descriptor, revision: serviceRevision(descriptor) };
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

function instanceOptions(sidecar: Sidecar, path: string): InstanceOptions {
  if (sidecar.instance_per_call && sidecar.max_invocations !== undefined && sidecar.max_invocations !== 1) {
    throw new SidecarError(`${path}: instance_per_call = true means max_invocations = 1, not ${sidecar.max_invocations}`);
  }
  return {
    poolSize: sidecar.pool_size ?? DEFAULT_INSTANCES.poolSize,
    recycleAfter: sidecar.instance_per_call ? 1 : (sidecar.max_invocations ?? DEFAULT_INSTANCES.recycleAfter),
    maxQueue: sidecar.max_queue ?? DEFAULT_INSTANCES.maxQueue,
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

/** Two components claiming one address: the higher package semver serves, the other is reported shadowed. */
function settleConflicts(candidates: ServiceDescriptor[], failures: LoadFailure[]): ServiceDescriptor[] {
  const winners = new Map<string, ServiceDescriptor>();
  for (const candidate of candidates) {
    const key = serviceKey(candidate.id);
    const current = winners.get(key);
    if (!current) {
      winners.set(key, candidate);
      continue;
    }
    const [winner, loser] = newer(candidate, current) ? [candidate, current] : [current, candidate];
    winners.set(key, winner);
    failures.push({
      source: loser.source,
      error: `shadowed: ${winner.source} serves ${key}${winner.version ? ` at version ${winner.version}` : ''}`,
    });
  }
  return [...winners.values()];
}

function newer(a: ServiceDescriptor, b: ServiceDescriptor): boolean {
  const va = semver.valid(a.version ?? '') ?? '0.0.0';
  const vb = semver.valid(b.version ?? '') ?? '0.0.0';
  return semver.gt(va, vb);
}
