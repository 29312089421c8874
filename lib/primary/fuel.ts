// Fuel instrumentation of core modules: a call into the instrumented module
// can be interrupted by its host, on the host's own thread, without a worker
// thread to terminate. Every loop iteration and function entry ("tick")
// spends one unit of a fuel counter kept in a mutable i32 global; when it
// runs out (every FUEL_INTERVAL ticks) the module refills it and calls the
// host's `rt:fuel.check`, which reads the clock and throws once the call is
// past its budget. The exception unwinds the wasm frames to the host.
//
// How (measured on the 11.6 MB core of a componentize-js component; the other
// way, walking every expression through binaryen.js's expression API, costs a
// wasm→JS round trip per expression and gains nothing the C++ passes lack):
// 1. binaryen's `log-execution` pass (C++, ~0.2 s) puts a call to an imported
//    `log_execution(id)` at every function entry, loop header, `return` and
//    function end. The function-end calls are taken out again (an entry tick
//    per call is enough; it halves the ticks of a call): they sit at the top
//    level of each body, so this touches no more than a few nodes a function.
// 2. That import becomes a function of the module: the counter's decrement,
//    and the refill and check at zero. Ticks never leave wasm.
// 3. binaryen's `inlining` pass, with every original function marked
//    no-inline, copies that function into each tick site (~1.5 s): a direct
//    call per tick doubles the time of a tight loop (2.1× on 1e7 iterations),
//    inline it is noise (1.0×). In SpiderMonkey's interpreter loop (one tick
//    per JS bytecode) both cost about the same, +20-30%.
// No optimisation passes run over the module (far too slow for 11 MB; and
// instrumented code should be the code that was compiled). Reading and
// writing the module dominate: ~5 s and ~350 MB for that core, once (the
// compiler caches the result by the component's hash and runs this on a
// thread of its own, fuel-thread.ts). The name section is not kept (binaryen
// would only write it with debug info on; function names in traps are lost,
// their indices move by one anyway).
//
// Refused (`ok: false`, never a throw): modules that use exception handling
// (a `catch_all` could swallow the interrupt and go on running), modules
// binaryen cannot read or that do not validate, and instrumented modules
// that would not validate. Such a service runs on instance threads,
// uninstrumented.

import binaryen from 'binaryen';
import { FUEL_IMPORT_MODULE, FUEL_IMPORT_NAME, FUEL_INTERVAL } from '../fuel.js';

export type FuelOutcome = { ok: true; bytes: Uint8Array } | { ok: false; reason: string };

/** The function log-execution calls (and imports). Fixed by the pass. */
const LOGGER = 'log_execution';

/**
 * What binaryen reads and validates: everything it knows (bulk memory,
 * sign-ext, mutable globals, non-trapping float-to-int, multi-value, reference
 * types, SIMD, tail calls, GC...) but exception handling, which is refused.
 */
const FEATURES = binaryen.Features.All & ~binaryen.Features.ExceptionHandling;

/** binaryen's size of the counter function is ~13 nodes: inlined whatever the defaults. */
const INLINE_MAX_SIZE = 64;

export function instrumentFuel(core: Uint8Array): FuelOutcome {
  let module: binaryen.Module;
  try {
    module = quietly(() => binaryen.readBinary(core));
  } catch (e) {
    return { ok: false, reason: `binaryen cannot read the module: ${firstLine(e)}` };
  }
  try {
    module.setFeatures(FEATURES);
    if (!quietly(() => module.validate())) {
      module.setFeatures(binaryen.Features.All);
      return quietly(() => module.validate())
        ? { ok: false, reason: 'it uses wasm exception handling (try/catch/throw), which could catch the interrupt' }
        : { ok: false, reason: 'the module does not validate' };
    }
    if (module.getFunction(LOGGER) !== 0) return { ok: false, reason: `it already has a function named ${LOGGER}` };
    // Marks the module's own functions, before the counter exists: `inlining` inlines nothing of theirs.
    withPassArgument('no-inline', '*', () => module.runPasses(['log-execution', 'no-inline']));
    // A module without functions of its own (a shim of tables and imports) has no ticks: nothing to add.
    if (module.getFunction(LOGGER) !== 0) {
      dropFunctionEndTicks(module);
      defineCounter(module);
      withInlineMaxSize(INLINE_MAX_SIZE, () => module.runPasses(['inlining']));
    }
    if (!quietly(() => module.validate())) return { ok: false, reason: 'the instrumented module does not validate' };
    return { ok: true, bytes: module.emitBinary() };
  } catch (e) {
    return { ok: false, reason: `instrumenting failed: ${firstLine(e)}` };
  } finally {
    module.dispose();
  }
}

/**
 * log-execution wraps each function body as `{ log(id); body }` and, when the
 * body is a block, its last expression as `{ log(id); last }`. The latter goes:
 * the entry tick counts the call.
 */
function dropFunctionEndTicks(module: binaryen.Module): void {
  for (let i = 0, n = module.getNumFunctions(); i < n; i++) {
    const fn = module.getFunctionByIndex(i);
    const entry = binaryen.Function.getBody(fn);
    if (!entry || !isTick(entry)) continue;
    const body = binaryen.Block.getChildAt(entry, 1);
    if (binaryen.getExpressionId(body) !== binaryen.BlockId) continue;
    const last = binaryen.Block.getNumChildren(body) - 1;
    const end = last >= 0 ? binaryen.Block.getChildAt(body, last) : 0;
    if (end && isTick(end)) binaryen.Block.setChildAt(body, last, binaryen.Block.getChildAt(end, 1));
  }
}

/** `{ log(id); x }` as log-execution builds it: an unnamed block of the call and the expression. */
function isTick(expr: binaryen.ExpressionRef): boolean {
  if (binaryen.getExpressionId(expr) !== binaryen.BlockId || binaryen.Block.getName(expr) || binaryen.Block.getNumChildren(expr) !== 2) return false;
  const call = binaryen.Block.getChildAt(expr, 0);
  return binaryen.getExpressionId(call) === binaryen.CallId && binaryen.Call.getTarget(call) === LOGGER;
}

/** Turns the pass's imported logger into the counter: `fuel -= 1; if (fuel <= 0) { fuel = INTERVAL; check() }`. */
function defineCounter(module: binaryen.Module): void {
  const info = binaryen.getFunctionInfo(module.getFunction(LOGGER));
  if (!info.module || info.base !== LOGGER) throw new Error(`log-execution did not import ${LOGGER}`);
  const fuel = freshName(module, 'rt_fuel');
  const check = freshName(module, 'rt_fuel_check');
  const get = () => module.global.get(fuel, binaryen.i32);
  module.addGlobal(fuel, binaryen.i32, true, module.i32.const(FUEL_INTERVAL));
  module.addFunctionImport(check, FUEL_IMPORT_MODULE, FUEL_IMPORT_NAME, binaryen.none, binaryen.none);
  module.removeFunction(LOGGER);
  module.addFunction(
    LOGGER,
    binaryen.i32,
    binaryen.none,
    [],
    module.block(null, [
      module.global.set(fuel, module.i32.sub(get(), module.i32.const(1))),
      module.if(
        module.i32.le_s(get(), module.i32.const(0)),
        module.block(null, [module.global.set(fuel, module.i32.const(FUEL_INTERVAL)), module.call(check, [], binaryen.none)]),
      ),
    ]),
  );
}

/** `base`, or `base_2`, `base_3`... : a name no function or global of the module has. */
function freshName(module: binaryen.Module, base: string): string {
  for (let i = 1; ; i++) {
    const name = i === 1 ? base : `${base}_${i}`;
    if (module.getFunction(name) === 0 && module.getGlobal(name) === 0) return name;
  }
}

/** Pass arguments and inlining limits are binaryen's process-wide settings: set for one call, then put back. */
function withPassArgument<T>(key: string, value: string, fn: () => T): T {
  const before = binaryen.getPassArgument(key);
  binaryen.setPassArgument(key, value);
  try {
    return fn();
  } finally {
    binaryen.setPassArgument(key, before ?? null);
  }
}

function withInlineMaxSize<T>(size: number, fn: () => T): T {
  const before = binaryen.getAlwaysInlineMaxSize();
  binaryen.setAlwaysInlineMaxSize(size);
  try {
    return fn();
  } finally {
    binaryen.setAlwaysInlineMaxSize(before);
  }
}

function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split('\n', 1)[0]!.trim() || 'unknown error';
}

/**
 * binaryen prints validation errors and warnings (an unknown name subsection)
 * through the console functions it bound when it loaded: not rt's output, and
 * not JSON log lines. Its writes are dropped while it works.
 */
function quietly<T>(fn: () => T): T {
  const { stdout, stderr } = process;
  const [out, err] = [stdout.write, stderr.write];
  stdout.write = stderr.write = (() => true) as typeof stdout.write;
  try {
    return fn();
  } finally {
    stdout.write = out;
    stderr.write = err;
  }
}
