// A service's live handles in one worker (docs/api.md §5.1.2), on its main
// thread: where each lives (the `HandleHolder`: one instance, inline or on a
// thread), when it was made and last used, and why the ones that ended did.
// The resource objects themselves stay in their instance's table
// (handle-table.ts); this is what requests are routed and answered by.
//
// A handle ends when it is dropped, moved into a call (own), unused for the
// sidecar's `handle_idle_seconds`, or when its instance ends (a trap, a
// timeout, a lost thread, a restart, quiesce or reload): its holder ends, and
// every handle it held with it. Why is remembered (EndedHandles, one per
// worker, so that the service a restart makes still knows) for the last
// ENDED_REMEMBERED of them: using one answers 410 with the reason.

import { handleOwner, type HandleIssuer } from './handle-ids.js';
import type { HandleCall, HandleCallResult } from './handle-table.js';
import type { Failure } from './invocation.js';

/** How long an ended handle's reason is remembered, at most: past it, 410 says only that it ended. */
const ENDED_REMEMBERED = 10_000;

/** Why handles ended, in one worker: the last ENDED_REMEMBERED of them. */
export class EndedHandles {
  readonly #why = new Map<string, string>();

  remember(id: string, why: string): void {
    this.#why.set(id, why);
    if (this.#why.size > ENDED_REMEMBERED) this.#why.delete(this.#why.keys().next().value!);
  }

  /** Why `id` ended, or that it ended when that is forgotten. */
  why(id: string): string {
    return this.#why.get(id) ?? 'it was dropped, moved, expired, or its instance ended';
  }

  knows(id: string): string | undefined {
    return this.#why.get(id);
  }
}

/** What a handle call on a holder comes to. */
export type HolderResult = HandleCallResult | Failure;

/** One instance that holds handles, as the main thread reaches it. */
export class HandleHolder {
  #ended: string | undefined;
  readonly #listeners: ((reason: string) => void)[] = [];

  constructor(
    /** Makes a handle call on this instance (whatever else is queued for it first). */
    readonly run: (call: HandleCall, deadline: number, signal?: AbortSignal) => Promise<HolderResult>,
    /** Drops a handle here (the guest's destructor runs); resolves once done. */
    readonly drop: (id: string) => Promise<void>,
  ) {}

  /** Why the instance has ended, once it has. */
  get ended(): string | undefined {
    return this.#ended;
  }

  end(reason: string): void {
    if (this.#ended !== undefined) return;
    this.#ended = reason;
    for (const listener of this.#listeners.splice(0)) listener(reason);
  }

  onEnd(listener: (reason: string) => void): void {
    if (this.#ended !== undefined) listener(this.#ended);
    else this.#listeners.push(listener);
  }
}

export interface LiveHandle {
  id: string;
  /** resourceKey() of its resource. */
  key: string;
  holder: HandleHolder;
  /** Its handle scope (docs/api.md §5.1.2): `''` for the default one. */
  scope: string;
  /** In the default scope, the address of the client that made it (its share is bounded). */
  client?: string;
  /** Date.now() times. */
  created: number;
  lastUsed: number;
}

/** How a handle's life began or ended, for the metric. */
export type HandleChange = 'created' | 'dropped' | 'moved' | 'expired' | 'instance-ended';

/** Where a handle is, as its id says and this worker knows. */
export type HandleLocation =
  | { kind: 'live'; handle: LiveHandle }
  /** Issued by another worker, which holds it if it lives. */
  | { kind: 'other-worker'; worker: number }
  | { kind: 'ended'; why: string }
  | { kind: 'unknown' };

export interface DirectoryOptions {
  /** This worker, and the run's key: what tells this worker's ids from others' and from ids never issued. */
  issuer: HandleIssuer;
  idleMs: number;
  /** Live handles per scope (`max_handles`); in the default scope, per client address. */
  max: number;
  /** `max_scopes`: the default scope holds at most `max` × this, all its clients together. */
  maxScopes: number;
  ended: EndedHandles;
  /** Told of every handle made and ended (the metric). */
  onChange?: (change: HandleChange, count: number) => void;
  /** Told when a named scope's last live handle ends (its instance can go). */
  onScopeEmpty?: (scope: string) => void;
  now?: () => number;
}

export class HandleDirectory {
  readonly #live = new Map<string, LiveHandle>();
  readonly #holders = new Set<HandleHolder>();
  /** Live handles by scope. */
  readonly #inScope = new Map<string, number>();
  /** Calls that make handles under way, by scope (reserve). */
  readonly #reserved = new Map<string, number>();
  /** The default scope's live handles, and calls making some, by client address. */
  readonly #byClient = new Map<string, number>();
  readonly #now: () => number;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: DirectoryOptions) {
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#live.size;
  }

  /**
   * Room for one call that makes handles, held until `release` is called:
   * calls under way count with the live handles, so concurrent constructors
   * cannot pass `max` together (a call that makes several can, by those).
   * In the default scope, `max` bounds each client address's share, and the
   * scope holds `max` × `maxScopes` in all. Or which bound is reached.
   */
  reserve(scope = '', client?: string): { release(): void } | { full: 'scope' | 'client'; max: number } {
    const { max } = this.options;
    const reserved = this.#reserved.get(scope) ?? 0;
    // The default scope is every scopeless client's: `max` bounds each client's share, and the whole as many as all named scopes could hold.
    const [limit, share] = scope === '' && client !== undefined ? [max * this.options.maxScopes, this.#byClient.get(client) ?? 0] : [max, 0];
    if (this.handlesIn(scope) + reserved >= limit) return { full: 'scope', max: limit };
    if (share >= max) return { full: 'client', max };
    const ofClient = scope === '' ? client : undefined;
    this.#reserved.set(scope, reserved + 1);
    if (ofClient !== undefined) bump(this.#byClient, ofClient, 1);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        bump(this.#reserved, scope, -1);
        if (ofClient !== undefined) bump(this.#byClient, ofClient, -1);
      },
    };
  }

  /** Whether `scope` holds live handles, or a call is making some. */
  inUse(scope: string): boolean {
    return this.handlesIn(scope) + (this.#reserved.get(scope) ?? 0) > 0;
  }

  /** Live handles of `scope`. */
  handlesIn(scope: string): number {
    return this.#inScope.get(scope) ?? 0;
  }

  /** Where handle `id` is: live here, in another worker, ended (and why), or never issued by rt. */
  locate(id: string): HandleLocation {
    const owner = handleOwner(id, this.options.issuer);
    if (owner === undefined) return { kind: 'unknown' };
    if (owner !== this.options.issuer.workerId) return { kind: 'other-worker', worker: owner };
    const live = this.#live.get(id);
    return live ? { kind: 'live', handle: live } : { kind: 'ended', why: this.options.ended.why(id) };
  }

  list(): LiveHandle[] {
    return [...this.#live.values()];
  }

  expires(handle: LiveHandle): number {
    return handle.lastUsed + this.options.idleMs;
  }

  /** Records what a call on `holder`, in `scope`, for `client`, did: handles it made, handles moved into it, handles it used. */
  record(holder: HandleHolder, issued: { id: string; key: string }[], consumed: string[], used: string[], scope = '', client?: string): void {
    const now = this.#now();
    for (const id of used) {
      const live = this.#live.get(id);
      if (live) live.lastUsed = now;
    }
    for (const id of consumed) this.#end(id, 'it was passed as an own<T> parameter, which moved it into that call', 'moved');
    if (issued.length === 0) return;
    if (holder.ended !== undefined) {
      // The instance ended while the answer came back: its handles are gone already.
      for (const { id } of issued) this.#remember(id, `its instance ended: ${holder.ended}`);
      return;
    }
    // Only the default scope's handles count against their client's share.
    const ofClient = scope === '' ? client : undefined;
    for (const { id, key } of issued) this.#live.set(id, { id, key, holder, scope, ...(ofClient === undefined ? {} : { client: ofClient }), created: now, lastUsed: now });
    bump(this.#inScope, scope, issued.length);
    if (ofClient !== undefined) bump(this.#byClient, ofClient, issued.length);
    this.options.onChange?.('created', issued.length);
    if (!this.#holders.has(holder)) {
      this.#holders.add(holder);
      holder.onEnd((reason) => this.#endHolder(holder, reason));
    }
    this.#sweeper ??= setInterval(() => this.#expire(), Math.min(Math.max(this.options.idleMs / 4, 250), 30_000)).unref();
  }

  /** Drops live handle `id` at a client's request; false when it is not live. */
  async drop(id: string): Promise<boolean> {
    const live = this.#live.get(id);
    if (!live) return false;
    this.#end(id, 'it was dropped', 'dropped');
    await live.holder.drop(id);
    return true;
  }

  /** Ends every handle (the service's instances are ending); `reason` is what using one answers. */
  endAll(reason: string): void {
    for (const holder of this.#holders) holder.end(reason);
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  #endHolder(holder: HandleHolder, reason: string): void {
    this.#holders.delete(holder);
    let n = 0;
    for (const live of this.#live.values()) {
      if (live.holder !== holder) continue;
      this.#live.delete(live.id);
      this.#left(live);
      this.#remember(live.id, `its instance ended: ${reason}`);
      n++;
    }
    if (n > 0) this.options.onChange?.('instance-ended', n);
  }

  #expire(): void {
    const now = this.#now();
    for (const live of [...this.#live.values()]) {
      if (now < this.expires(live)) continue;
      this.#end(live.id, `it expired: unused for handle_idle_seconds (${this.options.idleMs / 1000} s)`, 'expired');
      void live.holder.drop(live.id);
    }
    if (this.#live.size === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }

  #end(id: string, why: string, ending: Exclude<HandleChange, 'created'>): void {
    const live = this.#live.get(id);
    if (!live) return;
    this.#live.delete(id);
    this.#left(live);
    this.#remember(id, why);
    this.options.onChange?.(ending, 1);
  }

  /** `live` has ended. */
  #left({ scope, client }: LiveHandle): void {
    if (client !== undefined) bump(this.#byClient, client, -1);
    if (bump(this.#inScope, scope, -1) === 0 && scope !== '') this.options.onScopeEmpty?.(scope);
  }

  #remember(id: string, why: string): void {
    this.options.ended.remember(id, why);
  }
}

/** Adds `by` to `counts`' entry for `key`, removing it at 0; the new count. */
function bump(counts: Map<string, number>, key: string, by: number): number {
  const n = (counts.get(key) ?? 0) + by;
  if (n <= 0) counts.delete(key);
  else counts.set(key, n);
  return Math.max(n, 0);
}
