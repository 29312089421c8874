// The imports through which rt's rewrite of jco's glue (primary/glue-rewrite.ts)
// reports a WASI 0.3 task that failed after it returned, and the task each
// call of an export starts (so that rt can cancel it). Shared by the
// primary, which rewrites the glue, and the worker, which provides them
// (worker/execution/component-instance.ts).

/** A name no component's own imports can use (`rt:` is no WIT package): a function of the task's error. */
export const TASK_FAILED_IMPORT = 'rt:task-failed';

/** Told the glue's task object of each async export call as the call starts (before the call's first await): `requestCancellation()` cancels it. */
export const TASK_STARTED_IMPORT = 'rt:task-started';
