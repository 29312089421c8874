// Which instance a call that makes handles from none runs on, in the worker
// that is its scope's home (docs/api.md §5.1.2, handle-homes.ts). Handles
// that can be passed together must live in one instance, and handles of
// different scopes never share one:
// - the default scope's handles are made on its maker, the holder that made
//   its last handles, while it lives (the first such call chooses it while
//   the others wait, so a pool's threads do not split them);
// - a named scope (`RT-Handle-Scope`) has an instance of its own
//   (execution.ts `scopePlace`), started for its first handle and ended
//   once the directory says it holds none, so a trap or a memory cap there
//   ends that scope's handles alone. `max_scopes` bounds how many live.

import type { Execution } from './execution.js';
import type { HandleDirectory, HandleHolder, HolderResult } from './handle-directory.js';
import type { HandleCall } from './handle-table.js';
import type { Failure } from './invocation.js';
import type { Place } from './place.js';

type Ran = { result: HolderResult; holder?: HandleHolder };

export class HandleScopes {
  #maker: HandleHolder | undefined;
  /** Settles once the call choosing the maker (there being none) has run. */
  #choosingMaker: Promise<void> | undefined;
  /** Each named scope's instance, while it holds handles (or a call is making its first). */
  readonly #named = new Map<string, Promise<Place>>();

  constructor(
    private readonly directory: HandleDirectory,
    private readonly maxScopes: number,
  ) {}

  /** Named scopes alive (each an instance). */
  get live(): number {
    return this.#named.size;
  }

  /** A call in the default scope: on `holder` (the handles it names), else, when it makes handles from none (`fresh`), on the maker. */
  async inDefault(execution: Execution, call: HandleCall, deadline: number, signal: AbortSignal | undefined, holder: HandleHolder | undefined, fresh: boolean): Promise<Ran> {
    while (fresh && !this.#liveMaker() && this.#choosingMaker) await this.#choosingMaker;
    const maker = fresh ? this.#liveMaker() : undefined;
    let chosen: (() => void) | undefined;
    if (fresh && !maker) this.#choosingMaker = new Promise<void>((resolve) => (chosen = resolve));
    try {
      const on = holder ?? maker;
      const ran = await execution.run({ kind: 'handles', call, ...(on ? { holder: on } : {}) }, deadline, signal);
      if (chosen && ran.holder && ran.result.kind === 'called' && ran.result.issued.length > 0) this.#maker = ran.holder;
      return ran;
    } finally {
      if (chosen) {
        this.#choosingMaker = undefined;
        chosen();
      }
    }
  }

  /** A call that makes handles in named scope `scope`: on the scope's instance, started for its first. */
  async inNamed(scope: string, execution: Execution, call: HandleCall, deadline: number, signal: AbortSignal | undefined): Promise<Ran | Failure> {
    let instance = this.#named.get(scope);
    if (!instance) {
      if (this.#named.size >= this.maxScopes) return { kind: 'too-many-scopes', max: this.maxScopes };
      instance = execution.scopePlace();
      this.#named.set(scope, instance);
      // One that cannot start is forgotten: the next call tries again.
      instance.catch(() => this.#named.get(scope) === instance && this.#named.delete(scope));
    }
    try {
      return await (await instance).run({ kind: 'handles', call }, deadline, signal ? { signal } : {});
    } catch (e) {
      return { kind: 'trap', code: 'RT_ERR_INSTANCE_LOST', message: `the handle scope's instance could not start: ${e instanceof Error ? e.message : String(e)}` };
    } finally {
      // A first call that made no handle (it failed) leaves the scope holding none: its instance goes as if its last had ended.
      this.emptied(scope);
    }
  }

  /** Ends named scope `scope`'s instance if it holds no handles and no call is making one (the directory tells when its last ends). */
  emptied(scope: string): void {
    setImmediate(() => {
      const instance = this.#named.get(scope);
      if (!instance || this.directory.inUse(scope)) return;
      this.#named.delete(scope);
      void instance.then((i) => i.drain('its handle scope holds no handles'), () => {});
    });
  }

  /** Ends every named scope's instance (the service's instances are ending). */
  close(reason: string): void {
    for (const instance of this.#named.values()) void instance.then((i) => i.drain(reason), () => {});
    this.#named.clear();
  }

  #liveMaker(): HandleHolder | undefined {
    return this.#maker?.ended === undefined ? this.#maker : undefined;
  }
}
