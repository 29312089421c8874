// Links (docs/api.md §5.9): a sidecar's `[imports]` bind an interface the
// component imports to a service that exports it. Read here from the sidecar
// (the import must exist) and settled across the catalog once every service
// is known: the target must be served and export the interface with the same
// types, and no link may lead back to where it started (a cycle would have a
// call wait on itself). A service whose link does not hold fails to load,
// the error naming both sides; so, in turn, does one that links to it.

import { HANDLER_LINK, serviceKey, serviceName, type LoadFailure, type ServiceDescriptor, type ServiceLink } from '../service.js';
import { WASI_0_3 } from '../wasi-lines.js';
import { interfaceKey, unversioned } from '../wit/interface-key.js';
import { printSignature, printType } from '../wit/print.js';
import { innerTypes, type ComponentInterface, type WitFunction, type WitType } from '../wit/types.js';
import { SidecarError } from './sidecar.js';

/** The sidecar's `[imports]` of a component as links; `path` (the sidecar's) names a key whose interface the component does not import. */
export function sidecarLinks(iface: ComponentInterface, imports: Record<string, string>, path: string): ServiceLink[] {
  return Object.entries(imports).map(([name, target]) => {
    const imported = iface.imports.find((i) => i.kind === 'instance' && (name.includes('@') ? interfaceKey(i.name) === interfaceKey(name) : unversioned(i.name) === name));
    if (!imported) throw new SidecarError(`${path}: imports.${name}: the component imports no interface ${name}`);
    const [domain, service] = target.split('/');
    return { interface: imported.name, target: { domain, service } };
  });
}

/** `services` whose links all hold (failures get the others, each naming both sides). */
export function settleLinks(services: ServiceDescriptor[], failures: LoadFailure[]): ServiceDescriptor[] {
  let serving = services;
  for (;;) {
    const byKey = new Map(serving.map((s) => [serviceKey(s.id), s]));
    const refused = new Map<ServiceDescriptor, string>();
    for (const service of serving) {
      for (const link of service.links) {
        const problem = linkProblem(service, link, byKey.get(serviceKey(link.target)));
        if (problem) {
          refused.set(service, `${serviceName(service.id)} imports ${link.interface} from ${serviceKey(link.target)} ([imports]): ${problem}`);
          break;
        }
      }
      const cycle = refused.has(service) ? undefined : cycleFrom(service, byKey);
      if (cycle) refused.set(service, `its [imports] make a link cycle: ${cycle.map((s) => serviceName(s.id)).join(' → ')} (a call across it would wait on itself)`);
    }
    // A service that links to one refused now is refused in the next round: its target is gone.
    if (refused.size === 0) return serving;
    for (const [service, error] of refused) failures.push({ source: service.source, error });
    serving = serving.filter((s) => !refused.has(s));
  }
}

/** Why `target` cannot serve `importer`'s `link`, if it cannot. */
function linkProblem(importer: ServiceDescriptor, link: ServiceLink, target: ServiceDescriptor | undefined): string | undefined {
  const name = serviceKey(link.target);
  if (!target) return `no service ${name} is served (no component has that address, or it failed to load)`;
  if (unversioned(link.interface) === HANDLER_LINK) {
    return target.http?.wasi === WASI_0_3 && interfaceKey(link.interface) === interfaceKey(target.http.interface) ? undefined : `${name} (${target.source}) is no wasi:http/handler@${WASI_0_3}.x handler`;
  }
  const exported = target.interface.interfaces.find((i) => interfaceKey(i.name) === interfaceKey(link.interface));
  if (!exported) return `${name} (${target.source}) does not export ${link.interface}`;
  const imported = importer.interface.imports.find((i) => i.name === link.interface)?.functions ?? [];
  for (const fn of imported) {
    const theirs = exported.functions.find((f) => f.name === fn.name);
    if (!theirs) return `${name} (${target.source}) has no function ${fn.name} in ${exported.name}`;
    if (!sameSignature(fn, theirs)) return `${name}'s ${fn.name} is ${printSignature(theirs)}, the import's is ${printSignature(fn)}`;
    const refused = crossingProblem(fn);
    if (refused) return refused;
  }
  return undefined;
}

/**
 * Why a call of `fn` cannot cross a link, if it cannot. Values cross
 * anywhere; a stream<T> or future<T> of values crosses as a parameter (one
 * stream at most) or as the result itself, of an async function: the
 * importer's side reads and writes them while its task waits, which a
 * synchronous call, blocking its thread, could not. Resources never cross.
 */
function crossingProblem(fn: WitFunction): string | undefined {
  for (const t of [...fn.params.map((p) => p.type), ...(fn.result ? [fn.result] : [])]) {
    if (plainValue(t)) continue;
    const carried = (t.kind === 'stream' && t.element !== null && plainValue(t.element)) || (t.kind === 'future' && (t.element === null || plainValue(t.element)));
    if (!carried) return `${fn.name} passes ${printType(t)}: a link carries values, and streams and futures of values as a parameter or the result itself (no resources, nor a stream or future inside another type)`;
    if (!fn.async) return `${fn.name} passes ${printType(t)} but is not async: a stream or future crosses a link only in an async func (the caller's task waits while it is read and written)`;
  }
  if (fn.params.filter((p) => p.type.kind === 'stream').length > 1) return `${fn.name} takes more than one stream: a link carries one stream parameter`;
  return undefined;
}

/** The same function type: parameters (by position) and result alike, whatever names their types were exported under. */
export function sameSignature(a: WitFunction, b: WitFunction): boolean {
  return Boolean(a.async) === Boolean(b.async) && a.params.length === b.params.length && a.params.every((p, i) => sameType(p.type, b.params[i].type)) && sameType(a.result, b.result);
}

function sameType(a: WitType | null, b: WitType | null): boolean {
  return structure(a) === structure(b);
}

/** A value that is all data: no handle, stream or future anywhere in it. */
function plainValue(t: WitType): boolean {
  return t.kind !== 'own' && t.kind !== 'borrow' && t.kind !== 'stream' && t.kind !== 'future' && innerTypes(t).every(plainValue);
}

/** A type's structure as text, without the names it was exported under. */
function structure(t: WitType | null): string {
  return JSON.stringify(t, (key, value: unknown) => (key === 'origin' ? undefined : value));
}

/** The service `start` reaches back to through links, as the path there; undefined when none leads back. */
function cycleFrom(start: ServiceDescriptor, byKey: Map<string, ServiceDescriptor>): ServiceDescriptor[] | undefined {
  const seen = new Set<ServiceDescriptor>();
  const walk = (at: ServiceDescriptor, path: ServiceDescriptor[]): ServiceDescriptor[] | undefined => {
    for (const link of at.links) {
      const next = byKey.get(serviceKey(link.target));
      if (!next) continue;
      if (next === start) return [...path, next];
      if (seen.has(next)) continue;
      seen.add(next);
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, [start]);
}
