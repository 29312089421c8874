// The import through which fuel-instrumented core modules (primary/fuel.ts)
// ask the host whether the running call may go on. Shared by the primary,
// which adds the import, and the worker, which provides it.

/** Module and name of the check: a namespace no component can import itself (`rt:` is not a WIT package rt serves). */
export const FUEL_IMPORT_MODULE = 'rt:fuel';
export const FUEL_IMPORT_NAME = 'check';
/** Ticks (loop iterations and function entries) between checks: a check reads the clock, ~10k ticks keep its cost under a few percent. */
export const FUEL_INTERVAL = 10_000;
