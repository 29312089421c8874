// The WASI version lines rt's hosts serve: the sandbox's imports for every
// component and the handler host's for wasi:http handlers (worker/sandbox,
// worker/wasi-host/p2). Read by the catalog too, so that the listing's
// unsatisfied imports name every import a stub stands in for, a WASI import
// of a line rt does not serve among them.

import { interfaceKey } from './wit/interface-key.js';

export const WASI_0_2 = '0.2';

const SERVED: readonly string[] = [WASI_0_2];

/** Whether `name` (`wasi:io/streams@0.2.3`) is a WASI import on a line rt serves. */
export function isServedWasiImport(name: string): boolean {
  if (!name.startsWith('wasi:')) return false;
  const key = interfaceKey(name);
  return SERVED.some((line) => key.endsWith(`@${line}`));
}
