// What rt uses of the Node.js it runs on beyond its floor (package.json
// `engines`, checked by bin/rt.js): JSPI (`WebAssembly.Suspending`), through
// which jco's glue runs components that use the component model's async ABI
// (WASI 0.3). Node 24 and 26 have it; no Node 22 release does, not even with
// `--experimental-wasm-jspi` (measured on 22.23.3), so there is no flag for rt
// to turn on for its processes. On such a Node, rt says so once at start-up
// and refuses only those components, naming the Node line they need.

/** Whether this Node.js has JSPI. */
export const hasJspi = typeof (WebAssembly as { Suspending?: unknown }).Suspending === 'function';

/** The first Node.js line with JSPI on by default. */
const JSPI_NODE = 24;

/** The start-up line for a Node.js without JSPI; undefined where it has it. */
export function platformNote(): string | undefined {
  if (hasJspi) return undefined;
  return `Node.js ${process.versions.node} has no JSPI (WebAssembly.Suspending): WASI 0.3 components (async functions, streams, futures) will not load; Node.js ${JSPI_NODE} or later runs them`;
}

/** Throws the one-line load error for a component whose `use` of the async ABI (async-abi.ts) this Node.js cannot run. */
export function requireJspi(use: string | undefined): void {
  if (use === undefined || hasJspi) return;
  throw new Error(`the component uses WASI 0.3 (component-model async: ${use}), which needs JSPI (WebAssembly.Suspending): Node.js ${JSPI_NODE} or later; this is Node.js ${process.versions.node}`);
}
