// The import through which rt's rewrite of jco's glue (primary/glue-rewrite.ts)
// reports a WASI 0.3 task that failed after it returned. Shared by the
// primary, which rewrites the glue, and the worker, which provides it
// (worker/execution/component-instance.ts).

/** A name no component's own imports can use (`rt:` is no WIT package): a function of the task's error. */
export const TASK_FAILED_IMPORT = 'rt:task-failed';
