// The WASI version lines rt's hosts serve: the sandbox's imports for every
// component and the handler host's for wasi:http handlers (worker/sandbox,
// worker/wasi-host/p2, p3). Read by the catalog too, so that the listing's
// unsatisfied imports name every import a stub stands in for, a WASI import
// of a line rt does not serve among them.

import { interfaceKey, unversioned } from './wit/interface-key.js';

export const WASI_0_2 = '0.2';
export const WASI_0_3 = '0.3';

/** The WASI 0.3 interfaces rt serves so far (worker/sandbox/wasi-p3.ts, and wasi-host/p3's http types); the rest of that line are stubs. */
export const WASI_0_3_SERVED: readonly string[] = ['wasi:random/random', 'wasi:random/insecure', 'wasi:random/insecure-seed', 'wasi:clocks/monotonic-clock', 'wasi:clocks/system-clock', 'wasi:cli/environment', 'wasi:cli/exit', 'wasi:cli/stdin', 'wasi:cli/stdout', 'wasi:cli/stderr', 'wasi:filesystem/types', 'wasi:filesystem/preopens', 'wasi:http/types', 'wasi:http/client'];

/** Whether `name` (`wasi:io/streams@0.2.3`) is a WASI import rt serves: any of the 0.2 line, those above of 0.3. */
export function isServedWasiImport(name: string): boolean {
  if (!name.startsWith('wasi:')) return false;
  const key = interfaceKey(name);
  if (key.endsWith(`@${WASI_0_2}`)) return true;
  return key.endsWith(`@${WASI_0_3}`) && WASI_0_3_SERVED.includes(unversioned(name));
}
