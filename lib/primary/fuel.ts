// Fuel instrumentation of core modules: a call into the instrumented module
// can be interrupted by its host, on the host's own thread, without a worker
// thread to terminate. Every loop iteration and function entry ("tick")
// spends one unit of a fuel counter kept in a wasm global; when it runs out
// (every FUEL_INTERVAL ticks) the module calls the host's `rt:fuel.check`,
// which refills nothing: it reads the clock and throws once the call is past
// its budget. The exception unwinds the wasm frames to the host.
//
// How: binaryen's `log-execution` pass (C++, ~0.1 s on an 11 MB
// componentize-js core) puts a call to an imported `log_execution(id)` at
// every function entry, loop header and function exit. rt then defines that
// function inside the module instead of importing it: it decrements the
// counter and calls the check when it reaches zero. Reading and writing the
// module dominate (~3.5 s and ~350 MB for that core, once: the compiler caches
// the result by the component's hash, and runs this on a thread of its own,
// fuel-thread.ts, so the primary's event loop stays free).
//
// Refused: modules that use exception handling (a `catch_all` could swallow
// the interrupt and go on running) and modules binaryen cannot read or that
// do not validate after instrumentation. Such a service runs on instance
// threads, uninstrumented.

import binaryen from 'binaryen';
import { FUEL_IMPORT_MODULE, FUEL_IMPORT_NAME, FUEL_INTERVAL } from '../fuel.js';

export type FuelOutcome = { ok: true; bytes: Uint8Array } | { ok: false; reason: string };

const LOGGER = 'log_execution';

export function instrumentFuel(core: Uint8Array): FuelOutcome {
  let module: binaryen.Module;
  try {
    module = quietly(() => binaryen.readBinary(core));
  } catch (e) {
    return { ok: false, reason: `binaryen cannot read the module: ${(e as Error).message}` };
  }
  try {
    module.setFeatures(binaryen.Features.All & ~binaryen.Features.ExceptionHandling);
    if (!quietly(() => module.validate())) {
      module.setFeatures(binaryen.Features.All);
      return quietly(() => module.validate())
        ? { ok: false, reason: 'it uses wasm exception handling, which could catch the interrupt' }
        : { ok: false, reason: 'the module does not validate' };
    }
    if (hasFunction(module, LOGGER)) return { ok: false, reason: `it already has a function named ${LOGGER}` };
    module.runPasses(['log-execution']);
    // A module without functions (a shim of tables and imports) has nothing to instrument.
    if (hasFunction(module, LOGGER)) defineLogger(module);
    if (!quietly(() => module.validate())) return { ok: false, reason: 'the instrumented module does not validate' };
    return { ok: true, bytes: module.emitBinary() };
  } catch (e) {
    return { ok: false, reason: `instrumenting failed: ${(e as Error).message}` };
  } finally {
    module.dispose();
  }
}

/** Turns the pass's imported logger into the fuel counter: `fuel -= 1; if (fuel <= 0) { fuel = INTERVAL; check() }`. */
function defineLogger(module: binaryen.Module): void {
  // The pass imports it from the module of the first existing import (`env` when there is none).
  const info = binaryen.getFunctionInfo(module.getFunction(LOGGER));
  if (typeof info.module !== 'string' || info.base !== LOGGER) throw new Error(`log-execution did not import ${LOGGER}`);
  const fuel = 'rt_fuel';
  const check = 'rt_fuel_check';
  module.addGlobal(fuel, binaryen.i32, true, module.i32.const(FUEL_INTERVAL));
  module.addFunctionImport(check, FUEL_IMPORT_MODULE, FUEL_IMPORT_NAME, binaryen.none, binaryen.none);
  module.removeFunction(LOGGER);
  module.addFunction(
    LOGGER,
    binaryen.i32,
    binaryen.none,
    [],
    module.block(null, [
      module.global.set(fuel, module.i32.sub(module.global.get(fuel, binaryen.i32), module.i32.const(1))),
      module.if(
        module.i32.le_s(module.global.get(fuel, binaryen.i32), module.i32.const(0)),
        module.block(null, [module.global.set(fuel, module.i32.const(FUEL_INTERVAL)), module.call(check, [], binaryen.none)]),
      ),
    ]),
  );
}

function hasFunction(module: binaryen.Module, name: string): boolean {
  return module.getFunction(name) !== 0;
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
