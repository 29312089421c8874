// Turns component bytes into what workers load: jco's transpiled glue (an ES
// module exporting `instantiate`), its core modules, and the component's
// interface as read by the runtime, plus a fuel-instrumented twin of each core
// module (fuel-instrumentation.ts) for running calls inline. Output is cached by the
// component's sha256 (transpile-cache.ts), so each component is transpiled and
// instrumented once per machine, not once per start. The transpile and the
// instrumentation run on compiler threads (compiler-threads.ts): seconds of
// synchronous work that the primary's event loop never sees.
//
// The interface is not cached: reading it takes well under a millisecond even
// for an 11 MB componentize-js component (measured: 0.03–0.5 ms), and read
// anew, a fix to the reader reaches components transpiled before it.

import { join } from 'node:path';
import { packageVersion } from '../package-version.js';
import { cacheDir } from '../paths.js';
import { WASI_0_2 } from '../wasi-lines.js';
import type { ComponentArtifact } from '../service.js';
import { requireJspi } from '../platform.js';
import { answersLater, asyncAbiUse, exportedFunctions } from '../wit/async-abi.js';
import { readComponentInterface } from '../wit/component-reader.js';
import { httpHandlerExport } from '../wit/http-handler.js';
import type { ComponentInterface } from '../wit/types.js';
import type { CompileOptions } from './compile-job.js';
import { compileOffThread } from './compiler-threads.js';
import { sha256InSlices } from './sha256-in-slices.js';
import { TranspileCache, type EntryMeta } from './transpile-cache.js';

/**
 * The tools' versions are part of the cache key: glue from another jco, or
 * twins from another binaryen, are not interchangeable.
 */
export const TOOLCHAIN = `jco-transpile-${packageVersion('@bytecodealliance/jco-transpile')}-binaryen-${packageVersion('binaryen')}`;
/**
 * How entries are laid out (every file's hash recorded, no interface; glue apart by its hash); a change makes new entries.
 * 6 rather than 5: entries of 5 may record a fuel refusal that came from the instrumentation thread ending as the work came, not from the module.
 * 7, 8: the glue is rewritten (glue-rewrite.ts; 8 guards its finalizers): a change to the rewrite is a change of layout.
 * 9: a component's async exports are transpiled through JSPI.
 * 10: the glue reports the failure of a task that trapped after it returned.
 * 11: the glue's async waits are woken by events, a stream<u8>'s bytes stay bytes (glue-async-rewrite.ts).
 * 12: so are they in glue without host-side streams, and an async import call is looked at on setImmediate.
 * 13: tasks that end out of order are let go, and so are streams, futures and copy buffers once done with (glue-async-rewrite.ts taskExits, releases).
 * 14: a component that uses the async ABI is transpiled whole, not from its hollow twin (compile-job.ts): its callbacks may call async imports.
 * 15: the glue tells rt each export call's task, which rt may cancel (glue-async-rewrite.ts taskStarts).
 * 16: only an async export's (a sync one's call is never cancelled, and the invoke path pays nothing for it).
 * 17: the host's read of a stream<u8>'s bytes it holds is a view, not a copy, and joined writes fill one buffer (glue-async-rewrite.ts byteCopies); so is a guest's read of bytes the host handed in, where one chunk holds it (givenBytes).
 * 18: a WASI 0.3 handler has fuel twins (rt's own host may serve it inline).
 */
const CACHE_LAYOUT = 18;

export interface TranspiledComponent {
  artifact: ComponentArtifact;
  interface: ComponentInterface;
}

/** What transpiling tells its caller about, for the log. */
export interface TranspileEvents {
  /** Real work starts (on a compiler thread): a first transpile can take seconds. */
  transpiling?(): void;
  /** The transpile is done; fuel instrumentation starts (~5 s for an 11 MB core). */
  instrumenting?(): void;
  /** The cache entry `entry` (a folder) is damaged and is being built anew. */
  rebuilding?(entry: string, problem: string): void;
}

/** The cache of this jco and layout. */
function cache(): TranspileCache {
  return new TranspileCache(join(cacheDir(), 'components', `${TOOLCHAIN}-${CACHE_LAYOUT}`));
}

/**
 * Builds of this process under way, by entry: a component found twice (two
 * files, or a reload while the catalog is being built) is compiled once.
 */
const building = new Map<string, Promise<EntryMeta>>();

/**
 * Transpiles `bytes` (or finds them transpiled). Throws a one-line Error for a file
 * that is not a valid component.
 */
export async function transpileComponent(bytes: Uint8Array, events: TranspileEvents = {}): Promise<TranspiledComponent> {
  // Read first: it turns "not a component" into a clear message instead of a transpiler stack trace.
  const iface = readComponentInterface(bytes);
  const asyncUse = asyncAbiUse(iface);
  requireJspi(asyncUse);
  const hash = await sha256InSlices(bytes);
  const entries = cache();
  const entry = entries.entry(hash);
  let meta = building.get(entry);
  if (!meta) {
    meta = cached(entries, hash, bytes, iface, asyncUse, events).finally(() => building.delete(entry));
    building.set(entry, meta);
  }
  return transpiled(entries, hash, await meta, iface);
}

/** The entry for `hash`: the cache's, or built (on a compiler thread) and written when there is no sound one. */
async function cached(entries: TranspileCache, hash: string, bytes: Uint8Array, iface: ComponentInterface, asyncUse: string | undefined, events: TranspileEvents): Promise<EntryMeta> {
  const found = await entries.lookup(hash);
  if (found.kind === 'good') return found.meta;
  if (found.kind === 'damaged') {
    events.rebuilding?.(entries.entry(hash), found.problem);
    await entries.remove(hash);
  }
  const compiled = await compileOffThread(bytes, (stage) => (stage === 'transpiling' ? events.transpiling?.() : events.instrumenting?.()), compileOptions(iface, asyncUse));
  const glue = await entries.writeGlue(compiled.glue);
  return entries.write(hash, compiled.files, {
    glue,
    coreModules: compiled.coreModules,
    fuelModules: compiled.fuel.ok ? compiled.fuel.modules : null,
    ...(compiled.fuel.ok ? {} : { fuelRefusal: compiled.fuel.reason }),
    importSpecifiers: compiled.importSpecifiers,
  });
}

/**
 * How `iface`'s component is compiled: one that uses the async ABI, through
 * JSPI; no fuel twins for one that always runs on threads (execution.ts: a
 * WASI 0.2 HTTP handler, functions that answer later), where making them
 * would cost seconds for nothing. A WASI 0.3 handler gets them: rt's own
 * host may serve it inline (inline-handler-place.ts).
 */
function compileOptions(iface: ComponentInterface, asyncUse: string | undefined): CompileOptions {
  const exported = exportedFunctions(iface);
  const asyncExports = asyncUse === undefined ? undefined : exported.filter(([, fn]) => fn.async).map(([name]) => name);
  const handler = httpHandlerExport(iface);
  const line = handler !== undefined && !('unsupported' in handler) ? handler.wasi : undefined;
  const uninstrumented =
    line === WASI_0_2
      ? 'it is a WASI 0.2 HTTP handler, which always runs on instance threads'
      : line === undefined && exported.some(([, fn]) => answersLater(fn))
        ? 'it has functions that answer later (async, or taking or returning a future), which always run on instance threads'
        : undefined;
  return { ...(asyncExports ? { asyncExports } : {}), ...(uninstrumented ? { uninstrumented } : {}) };
}

function transpiled(entries: TranspileCache, hash: string, meta: EntryMeta, iface: ComponentInterface): TranspiledComponent {
  return {
    artifact: {
      hash,
      entry: entries.glue(meta),
      dir: entries.entry(hash),
      coreModules: meta.coreModules,
      fuelModules: meta.fuelModules,
      ...(meta.fuelRefusal ? { fuelRefusal: meta.fuelRefusal } : {}),
      importSpecifiers: meta.importSpecifiers,
    },
    interface: iface,
  };
}
