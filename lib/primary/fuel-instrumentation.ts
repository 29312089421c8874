// Fuel instrumentation of core modules: a call into the instrumented module
// can be interrupted by its host, on the host's own thread, without a worker
// thread to terminate. Every loop iteration and function entry ("tick")
// spends one unit of a fuel counter kept in a mutable i32 global; when it
// runs out (every FUEL_INTERVAL ticks) the module refills it and calls the
// host's `rt:fuel.check`, which reads the clock and throws once the call is
// past its budget. The exception unwinds the wasm frames to the host.
//
// How (chosen by measuring on the 11.6 MB core of a componentize-js
// component; walking every expression through binaryen.js's expression API
// instead costs JS↔wasm round trips per expression, for what C++ passes do):
// 1. binaryen's `log-execution` pass (C++, ~0.15 s) puts a call to an
//    imported `log_execution(id)` at every function entry, loop header,
//    `return` and function end. The function-end calls are taken out again
//    (the entry tick counts the call; this halves the ticks of most calls):
//    they sit at the top level of each body, a few nodes a function to touch.
// 2. That import becomes a function of the module: the counter's decrement,
//    and the refill and check at zero. Ticks never leave wasm.
// 3. binaryen's `inlining` pass, with every original function marked
//    no-inline first, copies that function into each tick site (~1.4 s): a
//    direct call per tick doubles the time of a tight loop (2.1× on 1e7
//    iterations), inlined it is noise (1.0×); a JS loop in componentize-js
//    (SpiderMonkey's interpreter: a tick per bytecode) costs +15-20% instead
//    of +30%. A tiny recursive function pays most: fib(30) 1.7×.
// No optimisation pass runs over the module (far too slow at 11 MB; and the
// instrumented code should be the code that was compiled). Reading and
// writing the module dominate: ~5.5-6.5 s and ~360 MB peak RSS for that core
// on a busy 2-core machine (without the inlining: ~4.5 s), once (the
// compiler caches the result by the component's hash and runs this on a
// compiler thread, compiler-threads.ts). The name section is kept (binaryen
// writes it with debug info on, at no measurable cost); DWARF, which would
// describe code that moved, and the target features section are dropped.
//
// Refused (`ok: false` and a reason, never a throw): modules that use
// exception handling (a `catch_all` could swallow the interrupt and go on
// running), modules binaryen cannot read or that do not validate, and
// instrumented modules that would not validate. Such a service runs on
// instance threads, uninstrumented.

import binaryen from 'binaryen';
import { firstLine } from '../first-line.js';
import { FUEL_IMPORT_MODULE, FUEL_IMPORT_NAME, FUEL_INTERVAL } from '../fuel-import.js';

export type FuelOutcome = { ok: true; bytes: Uint8Array } | { ok: false; reason: string };

/** The function log-execution calls (and imports); the pass fixes the name. */
const LOGGER = 'log_execution';

/**
 * What binaryen reads, validates and writes with: all it knows (bulk memory,
 * sign-ext, mutable globals, non-trapping float-to-int, multi-value,
 * reference types, SIMD, tail calls, GC...) but exception handling, refused,
 * and compact imports (binaryen ≥ 130 writes imports in that encoding when
 * allowed to, and V8 does not read it: "unknown import kind 0x7f").
 */
const WRITABLE = binaryen.Features.All & ~(binaryen.Features as unknown as { CompactImports: binaryen.Features }).CompactImports;
const FEATURES = WRITABLE & ~binaryen.Features.ExceptionHandling;

/** binaryen measures the counter function at ~13 nodes: this inlines it whatever the defaults. */
const INLINE_MAX_SIZE = 64;

/** Static accessors of binaryen.js's expression classes, which its typings leave out. */
interface ExpressionClasses {
  Function: { getBody(fn: binaryen.FunctionRef): binaryen.ExpressionRef };
  Block: {
    getName(block: binaryen.ExpressionRef): string | null;
    getNumChildren(block: binaryen.ExpressionRef): number;
    getChildAt(block: binaryen.ExpressionRef, index: number): binaryen.ExpressionRef;
    setChildAt(block: binaryen.ExpressionRef, index: number, child: binaryen.ExpressionRef): void;
  };
  Call: { getTarget(call: binaryen.ExpressionRef): string };
}
const { Function: Fn, Block, Call } = binaryen as unknown as ExpressionClasses;

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
      module.setFeatures(WRITABLE);
      return quietly(() => module.validate())
        ? { ok: false, reason: 'it uses wasm exception handling (try/catch/throw), whose catch could swallow the interrupt' }
        : { ok: false, reason: 'the module does not validate' };
    }
    if (module.getFunction(LOGGER) !== 0) return { ok: false, reason: `it already has a function named ${LOGGER}` };
    // Marks the module's own functions, before the counter exists: `inlining` inlines nothing of theirs.
    withSetting(
      () => binaryen.getPassArgument('no-inline') ?? null,
      (v) => binaryen.setPassArgument('no-inline', v),
      '*',
      () => module.runPasses(['log-execution', 'no-inline']),
    );
    // The pass imports the logger even into a module without functions of its own: every output has the check import.
    dropFunctionEndTicks(module);
    defineCounter(module);
    withSetting(binaryen.getAlwaysInlineMaxSize, binaryen.setAlwaysInlineMaxSize, INLINE_MAX_SIZE, () => module.runPasses(['inlining']));
    module.runPasses(['strip-dwarf', 'strip-target-features']);
    if (!quietly(() => module.validate())) return { ok: false, reason: 'the instrumented module does not validate' };
    return { ok: true, bytes: withSetting(binaryen.getDebugInfo, binaryen.setDebugInfo, true, () => module.emitBinary()) };
  } catch (e) {
    return { ok: false, reason: `instrumenting failed: ${firstLine(e)}` };
  } finally {
    module.dispose();
  }
}

/**
 * log-execution wraps each function body as `{ log(id); body }` and, when the
 * body is a block, that block's last expression as `{ log(id); last }`. The
 * latter goes: the entry tick has counted the call.
 */
function dropFunctionEndTicks(module: binaryen.Module): void {
  for (let i = 0, n = module.getNumFunctions(); i < n; i++) {
    const entry = Fn.getBody(module.getFunctionByIndex(i));
    if (!entry || !isTick(entry)) continue;
    const body = Block.getChildAt(entry, 1);
    if (binaryen.getExpressionId(body) !== (binaryen.BlockId as number)) continue;
    const last = Block.getNumChildren(body) - 1;
    const end = last >= 0 ? Block.getChildAt(body, last) : 0;
    if (end && isTick(end)) Block.setChildAt(body, last, Block.getChildAt(end, 1));
  }
}

/** `{ log(id); x }` as log-execution builds it: an unnamed block of the call and the expression. */
function isTick(expr: binaryen.ExpressionRef): boolean {
  if (binaryen.getExpressionId(expr) !== (binaryen.BlockId as number) || Block.getName(expr) || Block.getNumChildren(expr) !== 2) return false;
  const call = Block.getChildAt(expr, 0);
  return binaryen.getExpressionId(call) === (binaryen.CallId as number) && Call.getTarget(call) === LOGGER;
}

/** Turns the pass's imported logger into the counter: `fuel -= 1; if (fuel <= 0) { fuel = INTERVAL; check() }`. */
function defineCounter(module: binaryen.Module): void {
  const info = binaryen.getFunctionInfo(module.getFunction(LOGGER));
  // Imported from the module of the first import there is, which may be '' (jco's shim modules).
  if (typeof info.module !== 'string' || info.base !== LOGGER) throw new Error(`log-execution did not import ${LOGGER}`);
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

/** `base`, or `base_2`, `base_3`...: a name no function or global of the module has. */
function freshName(module: binaryen.Module, base: string): string {
  for (let i = 1; ; i++) {
    const name = i === 1 ? base : `${base}_${i}`;
    if (module.getFunction(name) === 0 && module.getGlobal(name) === 0) return name;
  }
}

// Pass arguments, inlining limits and debug info are binaryen's process-wide
// settings: each is set for one call, then put back.

/** Runs `fn` with one of binaryen's process-wide settings at `value`, then puts back what it was. */
function withSetting<V, T>(get: () => V, set: (value: V) => void, value: V, fn: () => T): T {
  const before = get();
  set(value);
  try {
    return fn();
  } finally {
    set(before);
  }
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
