// docs/api.md §4 "Addressing": how a component's exports become a service address
// and method names.

import type { MethodDescriptor, ServiceId } from '../service.js';
import { jsIdentifier } from '../wit/js-names.js';
import { streamSignature, type StreamSignature } from '../wit/streaming.js';
import { containsResource, type ComponentInterface, type WitFunction, type WitInterface } from '../wit/types.js';

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
 * domain/service come from the one package whose interfaces the component
 * exports; with several packages or only world-level functions the sidecar
 * should name them, and without one the fallback is `default`/<file stem>.
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
  const [fromPackageDomain, fromPackageService] = single ? single[0].split(':') : ['default', fileStem];
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

/** Why a function cannot be called over HTTP, or undefined when it can (`stream`: what it streams, if it does). */
function notInvocableReason(fn: WitFunction, stream: StreamSignature | string | undefined): string | undefined {
  if (fn.name.startsWith('[')) return 'resource constructors and methods need a resource handle, which JSON cannot carry';
  if (fn.async) return 'async (component model async ABI) functions are not supported yet';
  const param = fn.params.find((p) => containsResource(p.type));
  if (param) return `parameter "${param.name}" holds a resource handle, which JSON cannot carry`;
  if (typeof stream === 'string') return `the result holds a resource handle, which JSON cannot carry, and it is not a stream: ${stream}`;
  if (fn.result && containsResource(fn.result) && !stream) return 'the result holds a resource handle, which JSON cannot carry';
  return undefined;
}

/**
 * Every exported function as a method. `interface.function` always resolves;
 * the bare name resolves when no other exported function shares it.
 */
export function serviceMethods(iface: ComponentInterface): MethodDescriptor[] {
  const qualifiers = interfaceQualifiers(iface.interfaces);
  const entries: { fn: WitFunction; interfaceName: string | null; shortInterface: string | null }[] = [
    ...iface.functions.map((fn) => ({ fn, interfaceName: null, shortInterface: null })),
    ...iface.interfaces.flatMap((i) => i.functions.map((fn) => ({ fn, interfaceName: i.name, shortInterface: qualifiers.get(i)! }))),
  ];
  const count = new Map<string, number>();
  for (const { fn } of entries) count.set(fn.name, (count.get(fn.name) ?? 0) + 1);

  return entries.map(({ fn, interfaceName, shortInterface }) => {
    const qualified = shortInterface ? `${shortInterface}.${fn.name}` : fn.name;
    const unique = count.get(fn.name) === 1;
    const aliases = unique && qualified !== fn.name ? [fn.name, qualified] : [qualified];
    const stream = streamSignature(iface, fn);
    const reason = notInvocableReason(fn, stream);
    const method: MethodDescriptor = {
      name: aliases[0],
      aliases,
      interface: interfaceName,
      function: fn,
      invocable: reason === undefined,
      exportKey: interfaceName,
      jsName: jsIdentifier(fn.name),
    };
    if (reason !== undefined) method.reason = reason;
    else if (typeof stream === 'object') method.stream = stream;
    return method;
  });
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
