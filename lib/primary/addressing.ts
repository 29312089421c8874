// docs/api.md §4 "Addressing": how a component's exports become a service address
// and method names.

import type { MethodDescriptor, ResourceDescriptor, ServiceId } from '../service.js';
import { asInvoked, bodyStreamParam } from '../wit/async-abi.js';
import { resourceKey, type HandleType } from '../wit/handles.js';
import { httpHandlerExport, type HttpHandlerExport } from '../wit/http-handler.js';
import { jsClassName, jsIdentifier } from '../wit/js-names.js';
import { streamSignature, type StreamSignature } from '../wit/streaming.js';
import { containsResource, resourceFunctionName, type ComponentInterface, type TypeDefinition, type TypeOrigin, type WitFunction, type WitInterface, type WitType } from '../wit/types.js';

/** A service address cannot be used: a file name that is no service name. */
export class AddressError extends Error {}

// Address parts travel in URL paths (and the console shows them): keep them to WIT identifier characters.
const ADDRESS_PART = /^[a-z0-9][a-z0-9-]*$/i;
export const ADDRESS_PART_SHAPE = 'a name of letters, digits and dashes';

export function isAddressPart(name: string): boolean {
  return ADDRESS_PART.test(name);
}

export interface AddressOverride {
  domain?: string;
  service?: string;
}

export interface Address {
  id: ServiceId;
  version?: string;
}

/**
 * The service name a file stem gives: as written, with underscores read as
 * dashes (cargo names a crate's component `my_component.wasm`; WIT names and
 * rt's addresses are kebab-case).
 */
export function stemServiceName(fileStem: string): string {
  return fileStem.replaceAll('_', '-');
}

/**
 * domain/service come from the one package whose interfaces the component
 * exports; with several packages or only world-level functions the sidecar
 * should name them, and without one the fallback is `default`/<file stem>
 * (stemServiceName).
 * Standard `wasi:` exports (`wasi:cli/run`, `wasi:http/incoming-handler`)
 * never name it: every such component would claim the same address.
 */
export function serviceAddress(iface: ComponentInterface, fileStem: string, override: AddressOverride = {}): Address {
  const naming = iface.interfaces.filter((i) => i.package?.namespace !== 'wasi');
  const packages = new Map<string, string | undefined>();
  for (const exported of naming) {
    if (exported.package) packages.set(`${exported.package.namespace}:${exported.package.name}`, exported.package.version);
  }
  const single = packages.size === 1 && naming.every((i) => i.package) ? [...packages][0] : undefined;
  const [fromPackageDomain, fromPackageService] = single ? single[0].split(':') : ['default', stemServiceName(fileStem)];
  const address: Address = {
    id: {
      domain: override.domain ?? fromPackageDomain,
      service: override.service ?? fromPackageService,
    },
  };
  // A file's name is the service's when nothing else names it: it must be a name like a sidecar's (WIT package names are identifiers already).
  if (!isAddressPart(address.id.service)) {
    throw new AddressError(`the file name ${JSON.stringify(fileStem)} is not a service name (expected ${ADDRESS_PART_SHAPE}); rename the file, or name the service in its sidecar (service = "...")`);
  }
  if (single?.[1] !== undefined) address.version = single[1];
  return address;
}

/**
 * The resources the component exports, by resourceKey(): handles to them can be made and passed (docs/api.md §5.1.2).
 *
 * A component may import an interface and export one of the same name (wit-bindgen's tests do:
 * `import test; export test; export toplevel-export: func(a: thing) -> thing`, where the world's
 * `thing` is the imported one). Then both resources have the same key, and only the declaration
 * tells them apart: the reader gives a handle the origin of the very type it refers to, so a handle
 * to the exported resource carries the origin the export declares, and one to the imported
 * resource the import's.
 */
class ExportedResources {
  readonly #keys = new Set<string>();
  /** The origins the exported interfaces (and the world) declare their resources with. */
  readonly #declared = new Set<TypeOrigin>();
  /** Keys an import defines a resource under too. */
  readonly #contested = new Set<string>();

  constructor(iface: ComponentInterface) {
    const add = (interfaceName: string, types: TypeDefinition[]) => {
      for (const t of types) {
        if (t.type.kind !== 'resource') continue;
        const origin = t.type.origin ?? { interface: interfaceName, name: t.name };
        // An exported interface lists the resources it `use`s too: one an import defines is the host's, not the component's.
        if (origin.interface === interfaceName) this.#keys.add(resourceKey({ resource: t.name, origin }));
        if (t.type.origin) this.#declared.add(t.type.origin);
      }
    };
    add('', iface.types);
    for (const i of iface.interfaces) add(i.name, i.types);
    for (const i of iface.imports) {
      for (const t of i.types ?? []) {
        if (t.type.kind !== 'resource' || !t.type.origin) continue;
        const key = resourceKey({ resource: t.name, origin: t.type.origin });
        if (this.#keys.has(key)) this.#contested.add(key);
      }
    }
  }

  /** Whether the component exports the resource of this key (`interface#name`). */
  has(key: string): boolean {
    return this.#keys.has(key);
  }

  /** Whether `t` is a handle to a resource the component exports. */
  holds(t: HandleType): boolean {
    const key = resourceKey(t);
    if (!this.#keys.has(key)) return false;
    return !this.#contested.has(key) || (t.origin !== undefined && this.#declared.has(t.origin));
  }
}

/** What in `t` JSON cannot carry: a handle to a resource the component does not export, a stream, a future; undefined when nothing. */
function uncarried(t: WitType, exported: ExportedResources): string | undefined {
  switch (t.kind) {
    case 'own':
    case 'borrow':
      return exported.holds(t) ? undefined : `a handle to ${t.resource}, a resource the component imports (rt makes no such handles)`;
    case 'stream':
    case 'future':
      return `a ${t.kind}, which JSON cannot carry`;
    case 'primitive':
      return t.name === 'error-context' ? 'an error-context, which JSON cannot carry' : undefined;
    case 'enum':
    case 'flags':
      return undefined;
    case 'list':
    case 'fixed-list':
      return uncarried(t.element, exported);
    case 'option':
      return uncarried(t.inner, exported);
    case 'tuple':
      return firstOf(t.elements, (e) => uncarried(e, exported));
    case 'record':
      return firstOf(t.fields, (f) => uncarried(f.type, exported));
    case 'variant':
      return firstOf(t.cases, (c) => (c.type ? uncarried(c.type, exported) : undefined));
    case 'result':
      return (t.ok && uncarried(t.ok, exported)) ?? (t.err ? uncarried(t.err, exported) : undefined);
  }
}

function firstOf<T>(items: T[], f: (item: T) => string | undefined): string | undefined {
  for (const item of items) {
    const found = f(item);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Whether a call of `fn` takes handles, and whether its result holds any, as
 * invoke writes them (asInvoked: a future<T> is T, a stream it reads is the
 * body); a stream<T> it answers with is the answer, not a result.
 */
function handleUse(fn: WitFunction): { params: boolean; result: boolean } {
  const { params, result } = asInvoked(fn);
  return { params: params.some((p) => containsResource(p.type)), result: result !== null && result.kind !== 'stream' && containsResource(result) };
}

/** Why a function cannot be called over HTTP, or undefined when it can (`stream`: what it streams, if it does). */
function notInvocableReason(fn: WitFunction, stream: StreamSignature | string | undefined, exported: ExportedResources): string | undefined {
  const ofResource = /^\[(?:async )?(?:constructor|method|static)\]/.test(fn.name);
  if (fn.async && ofResource) return 'an async function of a resource: rt does not call those yet';
  // One stream<T> parameter is the request body (docs/api.md §5.9).
  const streams = fn.params.filter((p) => p.type.kind === 'stream');
  if (streams.length > 1) return `it takes ${streams.length} stream parameters (${streams.map((p) => `"${p.name}"`).join(', ')}): rt reads one, from the request body`;
  if (streams.length === 1 && ofResource) return `parameter "${streams[0].name}" is a stream, which rt does not give a resource's function yet`;
  for (const p of fn.params) {
    // A stream<u8> is the body's raw bytes; a stream<T> its NDJSON lines, each a T (docs/api.md §5.9).
    if (p.type.kind === 'stream') {
      if (p.type.element === null) return `parameter "${p.name}" is a stream without items, which rt cannot read from a request body`;
      const what = uncarried(p.type.element, exported);
      if (what) return `parameter "${p.name}" is a stream whose items hold ${what}`;
      if (containsResource(p.type.element)) return `parameter "${p.name}" is a stream whose items hold handles, which rt does not read from a request body yet`;
      continue;
    }
    // A future<T> parameter is written as T (docs/api.md §5.9).
    if (p.type.kind === 'future' && p.type.element === null) return `parameter "${p.name}" is a future without a value, which rt cannot write yet`;
    const what = uncarried(p.type.kind === 'future' ? p.type.element! : p.type, exported);
    if (what) return `parameter "${p.name}" holds ${what}`;
  }
  if (typeof stream === 'object' && stream.source === 'stream') {
    // Its items are written as they come, not kept: a handle among them would have no home.
    const what = uncarried(stream.item, exported) ?? (containsResource(stream.item) ? 'a resource handle, which a stream cannot pass on' : undefined);
    return what && `the items of its stream hold ${what}`;
  }
  // A future<T> result is answered as T (docs/api.md §5.9).
  const answered = asInvoked(fn).result;
  const what = answered && uncarried(answered, exported);
  if (what) return `the result holds ${what}`;
  return undefined;
}

/** What a service exports: its methods (every exported function but the `hook`), and its resources, whose functions are among those methods. */
export interface ServiceExports {
  methods: MethodDescriptor[];
  resources: ResourceDescriptor[];
  /** The function `isHook` picked (the `init` export), apart from the methods. */
  hook: MethodDescriptor | undefined;
  /** The wasi:http incoming handler it exports (docs/api.md §5.8): served over /http, not among the methods. */
  http: HttpHandlerExport | undefined;
}

/**
 * Every exported function as a method. `interface.function` always resolves;
 * the bare name resolves when no other exported function shares it. A
 * resource's static function is the method `resource.function` (and
 * `interface.resource.function`); its constructor and methods are reached
 * through the resource and its handles, not by a method name.
 */
export function serviceExports(iface: ComponentInterface, isHook: (fn: WitFunction) => boolean = () => false): ServiceExports {
  const qualifiers = interfaceQualifiers(iface.interfaces);
  const exported = new ExportedResources(iface);
  const handler = httpHandlerExport(iface);
  const http = handler && !('unsupported' in handler) ? handler : undefined;
  // A handler of another version stays among the methods, not invocable (its parameters are the host's resources).
  const served = (i: WitInterface) => http !== undefined && i.name === http.interface;
  const entries: { fn: WitFunction; interfaceName: string | null; shortInterface: string | null }[] = [
    ...iface.functions.map((fn) => ({ fn, interfaceName: null, shortInterface: null })),
    ...iface.interfaces.filter((i) => !served(i)).flatMap((i) => i.functions.map((fn) => ({ fn, interfaceName: i.name, shortInterface: qualifiers.get(i)! }))),
  ];
  const hookEntry = entries.find((e) => isHook(e.fn));
  const callable = entries.filter((e) => e !== hookEntry);
  const resources = resourceDescriptors(callable, exported);
  // The name a function goes by: a static's is `resource.function`, a plain function's its own.
  const plainName = (fn: WitFunction) => {
    const member = resourceFunctionName(fn.name);
    return member?.kind === 'static' ? `${member.resource}.${member.member}` : fn.name;
  };
  const count = new Map<string, number>();
  for (const { fn } of callable) count.set(plainName(fn), (count.get(plainName(fn)) ?? 0) + 1);

  const describe = ({ fn, interfaceName, shortInterface }: (typeof entries)[number]): MethodDescriptor => {
    const member = resourceFunctionName(fn.name);
    const resource = member && resources.byWitName.get(`${interfaceName ?? ''}#${member.resource}`);
    const name = plainName(fn);
    const qualified = shortInterface ? `${shortInterface}.${name}` : name;
    const unique = count.get(name) === 1;
    // Constructors and methods answer to no method name: clients reach them through /resources and /handles.
    const aliases = member && member.kind !== 'static' ? [] : unique && qualified !== name ? [name, qualified] : [qualified];
    // A constructor or method that returns a stream's resource makes a handle to it; functions and statics stream (§5.1.1).
    const stream = member?.kind === 'constructor' || member?.kind === 'method' ? undefined : streamSignature(iface, fn);
    const handles = handleUse(fn);
    const reason =
      member && !resource
        ? `it belongs to ${member.resource}, a resource the component does not export`
        : typeof stream === 'object' && handles.params
          ? 'a streaming method that takes handles is not supported yet (a stream runs on an instance of its own, and handles live in the instance that made them)'
          : bodyStreamParam(fn) !== undefined && (handles.params || handles.result)
            ? 'a method that reads a stream parameter and takes or makes handles is not supported yet (the body it reads cannot follow a call to the worker that holds them)'
          : // A stream<T> that cannot be one says why; a resource without a streaming next is a handle like any other.
            typeof stream === 'string' && fn.result?.kind === 'stream'
            ? stream
            : notInvocableReason(fn, typeof stream === 'object' ? stream : undefined, exported);
    const method: MethodDescriptor = {
      name: member?.kind === 'method' ? member.member! : member?.kind === 'constructor' ? (resource?.name ?? member.resource) : (aliases[0] ?? qualified),
      aliases,
      interface: interfaceName,
      function: fn,
      invocable: reason === undefined,
      exportKey: interfaceName,
      jsName: member ? (member.kind === 'constructor' ? jsClassName(member.resource) : jsIdentifier(member.member!)) : jsIdentifier(fn.name),
    };
    if (member && resource) method.member = { kind: member.kind, resource: resource.name, className: jsClassName(member.resource) };
    if (reason !== undefined) {
      method.reason = reason;
      return method;
    }
    if (typeof stream === 'object') method.stream = stream;
    // A streaming method's resource (its `next`) stays in its instance: no handle.
    const result = !method.stream && handles.result;
    if (handles.params || result) method.handles = { params: handles.params, result };
    return method;
  };
  const methods = callable.map(describe);
  methods.forEach((m, index) => {
    const resource = m.member && resources.list.find((r) => r.name === m.member!.resource);
    if (!resource) return;
    if (m.member!.kind === 'constructor') resource.constructorMethod = index;
    else resource[m.member!.kind === 'method' ? 'methods' : 'statics'].push(index);
  });
  return { methods, resources: resources.list, hook: hookEntry && describe(hookEntry), http };
}

/**
 * The exported resources that have functions: named by their WIT name when
 * it is unique in the service, else `interface.resource` (as methods are).
 */
function resourceDescriptors(entries: { fn: WitFunction; interfaceName: string | null; shortInterface: string | null }[], exported: ExportedResources): { list: ResourceDescriptor[]; byWitName: Map<string, ResourceDescriptor> } {
  const found = new Map<string, { witName: string; interfaceName: string | null; shortInterface: string | null }>();
  for (const { fn, interfaceName, shortInterface } of entries) {
    const member = resourceFunctionName(fn.name);
    if (!member) continue;
    const key = `${interfaceName ?? ''}#${member.resource}`;
    if (exported.has(key)) found.set(key, { witName: member.resource, interfaceName, shortInterface });
  }
  const count = new Map<string, number>();
  for (const { witName } of found.values()) count.set(witName, (count.get(witName) ?? 0) + 1);
  const byWitName = new Map<string, ResourceDescriptor>();
  for (const [key, { witName, interfaceName, shortInterface }] of found) {
    const qualified = shortInterface ? `${shortInterface}.${witName}` : witName;
    const aliases = count.get(witName) === 1 && qualified !== witName ? [witName, qualified] : [qualified];
    byWitName.set(key, { name: aliases[0], aliases, interface: interfaceName, key, constructorMethod: null, methods: [], statics: [] });
  }
  return { list: [...byWitName.values()], byWitName };
}

/**
 * The `interface` part of `interface.function` for each exported interface:
 * its own name, unless another exported interface has it too (two versions of
 * one interface, as wit-bindgen's test components export); then with its
 * version (`test@0.2.0`), or else its full name (which a URL must escape).
 */
function interfaceQualifiers(interfaces: WitInterface[]): Map<WitInterface, string> {
  const count = (names: string[], name: string) => names.filter((n) => n === name).length;
  const short = interfaces.map((i) => i.interfaceName);
  const versioned = interfaces.map((i) => (i.package?.version ? `${i.interfaceName}@${i.package.version}` : i.interfaceName));
  return new Map(
    interfaces.map((i, n) => {
      if (count(short, short[n]) === 1) return [i, short[n]];
      if (count(versioned, versioned[n]) === 1) return [i, versioned[n]];
      return [i, i.name];
    }),
  );
}
