// The import through which fuel-instrumented core modules (primary/fuel-instrumentation.ts)
// ask the host whether the running call may go on. Shared by the primary,
// which adds the import, and the worker, which provides it.

/** A namespace no component's own imports can use (`rt:` is no WIT package), so the added import never clashes. */
export const FUEL_IMPORT_MODULE = 'rt:fuel';
/** The function in it: no parameters, no results; it returns to go on, or throws to interrupt the call. */
export const FUEL_IMPORT_NAME = 'check';
/** Ticks (loop iterations and function entries) between checks: a check reads the clock, ~10k ticks keep its cost under a few percent. */
export const FUEL_INTERVAL = 10_000;
