// What an instance of a service is made from, wherever it runs: inline on
// the worker's main thread (execution.ts) or on an instance thread
// (instance-thread.ts), both from the service's descriptor, so the two
// cannot disagree on its methods, configuration or grants.

import type { ServiceDescriptor } from '../../service.js';
import { handlerLink } from './handler-link.js';
import type { LinkCaller } from './link-calls.js';
import type { OutputCapture } from '../sandbox/output-capture.js';
import { hostImports, type Grants } from '../sandbox/wasi-imports.js';
import { WASI_0_2, WASI_0_3 } from '../../wasi-lines.js';
import { p2, p3, type OutgoingChannel } from '../wasi-host/index.js';
import type { InstanceSpec } from './component-instance.js';
import { HANDLER_EXPORT, type OwnExport } from './own-host.js';
import { exportTypes, type FutureKinds } from '../../wit/canon/wit-abi-types.js';
import type { ComponentInterface, WitFunction } from '../../wit/types.js';

/**
 * The instance spec of `d`, its core modules compiled already (with the
 * memory cap `memoryCapBytes`). An HTTP handler's instance takes wasi:io,
 * wasi:http/types and what goes with them from rt's handler host
 * (`handlerHost`: where what the guest prints goes, how its outgoing
 * requests leave the thread, and its calls across links).
 */
export function instanceSpec(d: ServiceDescriptor, modules: Iterable<[string, WebAssembly.Module]>, memoryCapBytes: number, handlerHost?: { output: OutputCapture; outgoing?: OutgoingChannel; links?: LinkCaller }): InstanceSpec {
  // 0.3's http types are plain host objects: every instance may have them; its client needs the thread's channel, as 0.2's handler host does.
  const handlerInterfaces = {
    ...p3.httpTypes,
    ...(handlerHost?.outgoing && d.http?.wasi !== WASI_0_2 ? p3.clientImports(handlerHost.outgoing, handlerLink(d)?.interface) : {}),
    ...(handlerHost?.links?.imports(d) ?? {}),
    ...(d.http?.wasi === WASI_0_2 && handlerHost ? p2.handlerImports(handlerHost.output, handlerHost.outgoing) : {}),
  };
  return {
    entry: d.artifact.entry,
    modules: new Map(modules),
    imports: hostImports(d.artifact.importSpecifiers, d.interface.imports, grants(d), handlerInterfaces),
    ...(d.http ? { handler: { exportKey: d.http.interface, jsName: 'handle' } } : {}),
    methods: d.methods.map((m) => (m.member ? { exportKey: m.exportKey, jsName: m.jsName, className: m.member.className, kind: m.member.kind } : { exportKey: m.exportKey, jsName: m.jsName })),
    init: d.init,
    config: d.config?.bytes ?? new Uint8Array(),
    memoryCapBytes,
    ...ownHosting(d),
  };
}

/**
 * What rt's own host may serve of `d` (own-host.ts has the last word, on its
 * core modules), its strings UTF-8 (what rt's own host reads:
 * lib/wit/canon/guest-memory.ts), with no resources, and functions of types
 * it lifts (wit-abi-types.ts): a WASI 0.3 handler without init; async
 * functions (and plain ones beside them); or plain functions alone when the
 * component imports nothing. jco's glue makes a task per call of those (two
 * promises, a scope its borrowed handles are checked against) for the
 * imports the guest may call meanwhile; with no imports there is nothing to
 * keep it for, and rt calls the core export itself. `init` (docs/api.md
 * §5.2) comes after the methods. Nothing for jco's glue.
 */
export function ownHosting(d: ServiceDescriptor): { own: NonNullable<InstanceSpec['own']> } | Record<string, never> {
  if (d.interface.stringEncoding !== undefined) return {};
  if (d.http) return d.http.wasi === WASI_0_3 && d.methods.length === 0 && d.init === null ? { own: { exports: [HANDLER_EXPORT], futures: new Map() } } : {};
  if (d.methods.some((m) => m.member)) return {};
  if (!d.methods.some((m) => m.function.async) && d.interface.imports.length > 0) return {};
  const functions = d.methods.map((m) => ({ iface: m.interface, fn: m.function }));
  if (d.init) {
    // runInit calls it synchronously.
    const fn = initFunction(d.interface, d.init.exportKey);
    if (!fn || fn.async) return {};
    functions.push({ iface: d.init.exportKey, fn });
  }
  const futures: FutureKinds = new Map();
  const exports: OwnExport[] = [];
  for (const { iface, fn } of functions) {
    const types = exportTypes(fn, futures);
    if ('reason' in types) return {};
    exports.push({ interface: iface, name: fn.name, async: fn.async === true, params: types.params, result: types.result });
  }
  return { own: { exports, futures } };
}

/** The `init` export (docs/api.md §5.2) at `exportKey`: a world-level function (null), or one of the interface of that name. */
function initFunction(iface: ComponentInterface, exportKey: string | null): WitFunction | undefined {
  const functions = exportKey === null ? iface.functions : iface.interfaces.find((i) => i.name === exportKey)?.functions;
  return functions?.find((fn) => fn.name === 'init');
}

/** Whether `d` is a WASI 0.3 handler rt's own host may serve. */
export function servedByOwnHost(d: ServiceDescriptor): boolean {
  return d.http !== null && ownHosting(d).own !== undefined;
}

/** What the operator grants the service (its sidecar, as trusted: docs/api.md §8), and its configuration's flattened keys. */
function grants(d: ServiceDescriptor): Grants {
  return { env: Object.entries(d.env), config: d.config?.entries ?? [], paths: d.paths, outboundHosts: d.outboundHosts };
}
