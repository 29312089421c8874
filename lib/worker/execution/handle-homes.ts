// Where a service's handles live (docs/api.md §5.1.2). Handles a client
// passes together must live in one instance, but node:cluster hands each
// connection to whichever worker accepts it: two constructors on two
// connections would make their handles in two workers, which no call can
// then join (409). So the handles of a scope have a home: one worker, chosen
// by hashing the service's name and the scope into one of the run's
// `workers` slots. Every worker computes the same home without asking
// anyone; a call that makes handles and names none is made there (forwarded
// like a call on a handle, http/peers.ts). The primary keeps the slots: a
// worker that dies takes its handles with it (410), and its replacement takes
// its slot, so every other scope keeps its home, and the dead one's scopes
// get their new handles in the replacement.

import { createHash } from 'node:crypto';

export class HandleHomes {
  /** The worker in each slot (cluster ids; 0 for a slot whose worker is not forked yet). */
  #workers: number[];
  /** Each scope's slot, by service and scope: a hash, computed once. */
  readonly #slots = new Map<string, number>();

  constructor(workers: number[]) {
    this.#workers = workers;
  }

  /** The primary's table, whenever a slot gets a new worker. */
  update(workers: number[]): void {
    this.#workers = workers;
  }

  /** The worker that holds the handles of `scope` (`''`: the default scope) of `service`, or undefined while its slot has none. */
  home(service: string, scope = ''): number | undefined {
    const n = this.#workers.length;
    if (n === 0) return undefined;
    const key = `${service}\n${scope}`;
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      slot = createHash('sha256').update(key).digest().readUInt32BE(0) % n;
      this.#slots.set(key, slot);
    }
    return this.#workers[slot] || undefined;
  }
}
