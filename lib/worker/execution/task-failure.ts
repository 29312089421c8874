// What rejects a guest's promises once a task of its instance failed where
// nobody awaits it (glue-async-rewrite.ts reports it through
// TASK_FAILED_IMPORT): the instance has trapped, and nothing it promised
// comes any more.

/**
 * Awaits a guest's promises against the instance's failure. Not a promise
 * raced against each awaited one: a race leaves its reactions on the side
 * that never settles, ~256 bytes a race (measured), several a request, for
 * the instance's life: a 0.3 handler's worker grew by ~1.7 KiB a request
 * (RSS +30 MiB in 20,000; flat now). Here each awaited promise is let go
 * once it settles.
 */
export class TaskFailure {
  #error: { cause: unknown } | undefined;
  readonly #waiting = new Set<(e: unknown) => void>();

  get failed(): boolean {
    return this.#error !== undefined;
  }

  fail(e: unknown): void {
    if (this.#error) return;
    this.#error = { cause: e };
    for (const reject of this.#waiting) reject(e);
    this.#waiting.clear();
  }

  /** `promise`'s outcome, or the failure if it comes first. */
  guard<T>(promise: PromiseLike<T>): Promise<T> {
    if (this.#error) {
      // What `promise` comes to no longer matters, but a rejection nobody observes ends an instance thread.
      promise.then(undefined, () => {});
      // The glue's own error (a trap), passed on as the awaited promise would have.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      return Promise.reject(this.#error.cause);
    }
    return new Promise<T>((resolve, reject) => {
      this.#waiting.add(reject);
      promise.then(
        (value) => {
          this.#waiting.delete(reject);
          resolve(value);
        },
        (e: unknown) => {
          this.#waiting.delete(reject);
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the guest's promise's own reason, passed on
          reject(e);
        },
      );
    });
  }
}
