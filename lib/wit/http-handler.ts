// An HTTP handler component (docs/api.md §5.8): one that exports
// `wasi:http/incoming-handler@0.2.x`, as Spin, wasmCloud, `wasmtime serve`,
// componentize-js fetch-event handlers and `jco serve` run. Its `handle` is
// served at `/api/services/{domain}/{service}/http/...` (and at the routes
// its sidecar mounts), not as a method: its parameters are host resources
// (the request and the response's outparam), which rt makes per request.

import type { ComponentInterface, WitInterface } from './types.js';

/** The handler a component exports: which interface (its exact name, for the export's key), and its 0.2.x version. */
export interface HttpHandlerExport {
  /** As exported, e.g. `wasi:http/incoming-handler@0.2.3`. */
  interface: string;
  version: string;
}

/** Every 0.2.x serves alike: from 0.2.3 to 0.2.10 the handler and the types it uses changed only in `use` versions. */
const SERVED = /^0\.2\.\d+$/;

/** Whether `i` is wasi:http's incoming handler, of any version. */
export function isIncomingHandler(i: WitInterface): boolean {
  return i.package?.namespace === 'wasi' && i.package.name === 'http' && i.interfaceName === 'incoming-handler';
}

/**
 * The incoming handler `iface` exports, if it exports one rt serves;
 * `{ unsupported }` with the reason for another version, so that the load
 * error says what rt does serve.
 */
export function httpHandlerExport(iface: ComponentInterface): HttpHandlerExport | { unsupported: string } | undefined {
  const handler = iface.interfaces.find(isIncomingHandler);
  if (!handler) return undefined;
  const version = handler.package?.version;
  if (version === undefined || !SERVED.test(version)) {
    return { unsupported: `it exports ${handler.name}; rt serves wasi:http/incoming-handler@0.2.x` };
  }
  if (!handler.functions.some((f) => f.name === 'handle')) return { unsupported: `its ${handler.name} has no handle function` };
  return { interface: handler.name, version };
}
