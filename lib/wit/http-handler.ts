// An HTTP handler component (docs/api.md §5.8, §5.9): one that exports
// `wasi:http/incoming-handler@0.2.x`, as Spin, wasmCloud, `wasmtime serve`,
// componentize-js fetch-event handlers and `jco serve` run, or WASI 0.3's
// `wasi:http/handler@0.3.x` (the `service` world). Its `handle` is served at
// `/api/services/{domain}/{service}/http/...` (and at the routes its sidecar
// mounts), not as a method: its parameters are host resources (0.2: the
// request and the response's outparam; 0.3: the request, the response being
// its async result), which rt makes per request.

import { WASI_0_2, WASI_0_3 } from '../wasi-lines.js';
import type { ComponentInterface, WitInterface } from './types.js';

/** The handler a component exports: which interface (its exact name, for the export's key), its version, and the WASI line that version is of. */
export interface HttpHandlerExport {
  /** As exported, e.g. `wasi:http/incoming-handler@0.2.3`, `wasi:http/handler@0.3.0`. */
  interface: string;
  version: string;
  /** `0.2`: incoming-handler, its guest blocking in poll; `0.3`: handler, an async func serving requests side by side. */
  wasi: typeof WASI_0_2 | typeof WASI_0_3;
}

/**
 * Every 0.2.x serves alike: from 0.2.3 to 0.2.10 the handler and the types it
 * uses changed only in `use` versions. Of 0.3, rt's host has the WIT of 0.3.0.
 */
const SERVED: Record<string, { line: typeof WASI_0_2 | typeof WASI_0_3; version: RegExp; served: string }> = {
  'incoming-handler': { line: WASI_0_2, version: /^0\.2\.\d+$/, served: 'wasi:http/incoming-handler@0.2.x' },
  handler: { line: WASI_0_3, version: /^0\.3\.\d+$/, served: 'wasi:http/handler@0.3.x' },
};

/** Whether `i` is wasi:http's handler of either line (0.2's incoming-handler, 0.3's handler), of any version. */
function isHttpHandler(i: WitInterface): boolean {
  return i.package?.namespace === 'wasi' && i.package.name === 'http' && i.interfaceName in SERVED;
}

/**
 * The incoming handler `iface` exports, if it exports one rt serves;
 * `{ unsupported }` with the reason for another version, so that the load
 * error says what rt does serve.
 */
export function httpHandlerExport(iface: ComponentInterface): HttpHandlerExport | { unsupported: string } | undefined {
  const handler = iface.interfaces.find(isHttpHandler);
  if (!handler) return undefined;
  const version = handler.package?.version;
  const served = SERVED[handler.interfaceName];
  if (version === undefined || !served.version.test(version)) {
    return { unsupported: `it exports ${handler.name}; rt serves wasi:http/incoming-handler@0.2.x and wasi:http/handler@0.3.x` };
  }
  if (!handler.functions.some((f) => f.name === 'handle')) return { unsupported: `its ${handler.name} has no handle function` };
  return { interface: handler.name, version, wasi: served.line };
}
