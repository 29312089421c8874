// What rt changes in jco's generated glue before caching it. jco ≥ 1.13 logs
// through a `_debugLog` that reads `globalThis?.process?.env?.JCO_DEBUG` on
// each of its calls, several per component call, and every call site builds
// its arguments (objects of task ids and names) before that read: on Node,
// `process.env` is a getter into the C++ environment. Measured on the WAT
// `add` (bench/per-call.ts, docs/performance.md "`calls`"): ~2,300 ns a call
// as jco writes it, ~630 ns as rewritten here. So the variable is read once, when the glue
// module loads, and each debug call is guarded by it: setting JCO_DEBUG for
// rt's processes still turns jco's debug output on. The guarded arguments are
// log payloads (accessors of task state), nothing a call depends on.
//
// And a resource that nobody dropped runs its guest destructor from the
// glue's FinalizationRegistry when V8 collects it: outside any call, on an
// instance that may have trapped or been interrupted since. A destructor
// that throws there is an uncaught exception, which ends the instance thread
// (every call on it answers "instance lost") or, inline, the worker process
// with every request in flight. rt drops what it makes explicitly (handles,
// stream items); what the collector finds is what an ended instance left,
// so its destructor's failure is dropped with it.
//
// And the machinery for the async ABI (WASI 0.3) is changed as
// glue-async-rewrite.ts says: traps after a task returned are reported,
// waits are woken by events instead of timers, bytes stay bytes.

import { rewriteAsyncGlue, type AsyncPatchGroup } from './glue-async-rewrite.js';

/** The expression jco's glue reads the debug switch with. */
const DEBUG_READ = 'globalThis?.process?.env?.JCO_DEBUG';
/** The module-level constant that replaces it. */
const DEBUG_CONSTANT = 'RT_JCO_DEBUG_AT_LOAD';
/** A call of the glue's debug logger (not a member call such as `x._debugLog(`). */
const DEBUG_CALL = /(?<![\w$.])_debugLog\(/g;
/** Where the glue makes its finalization registries, from the cleanup callback it is given. */
const REGISTRY = 'return new FinalizationRegistry(unregister);';
const GUARDED_REGISTRY = 'return new FinalizationRegistry((held) => { try { unregister(held); } catch { /* rt: the instance has ended (glue-rewrite.ts) */ } });';

export interface RewrittenGlue {
  text: string;
  /** How many per-call reads of the environment were replaced (0: the glue has none, as jco 1.12's: then nothing is changed). */
  debugReads: number;
  /** How many debug calls were guarded by the constant. */
  debugCalls: number;
  /** How many finalization registries were made not to throw (the glue makes them in one function, where it has resources). */
  registries: number;
  /** The groups of glue-async-rewrite.ts applied (none where the component does not use the async ABI). */
  asyncPatches: AsyncPatchGroup[];
}

/** `glue` with its per-call environment reads hoisted to one read at load, its debug calls guarded by it, its finalizers kept from throwing, and its async machinery changed (glue-async-rewrite.ts). */
export function rewriteGlue(glue: string): RewrittenGlue {
  const { text: changed, applied: asyncPatches } = rewriteAsyncGlue(glue);
  const registryParts = changed.split(REGISTRY);
  const registries = registryParts.length - 1;
  const parts = registryParts.join(GUARDED_REGISTRY).split(DEBUG_READ);
  const debugReads = parts.length - 1;
  if (debugReads === 0) return { text: parts[0], debugReads, debugCalls: 0, registries, asyncPatches };
  let debugCalls = 0;
  const body = parts.join(DEBUG_CONSTANT).replace(DEBUG_CALL, (call) => {
    debugCalls++;
    return `${DEBUG_CONSTANT} && ${call}`;
  });
  // After the glue's directive line ("use components"), if it has one, so that it stays first.
  const directive = /^(["'])use [^"'\n]*\1;?\n/.exec(body)?.[0] ?? '';
  const text = `${directive}const ${DEBUG_CONSTANT} = ${DEBUG_READ};\n${body.slice(directive.length)}`;
  return { text, debugReads, debugCalls, registries, asyncPatches };
}
