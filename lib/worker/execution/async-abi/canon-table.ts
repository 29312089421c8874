// A component instance's table of handles (CanonicalABI.md, "Table State"):
// one index space for everything the guest holds a handle to — rt's host
// objects (fields, requests, responses), waitables and waitable sets. Index
// 0 is never used; freed indices are reused.

import { AbiTrap } from '../../../wit/canon/guest-memory.js';

/** A class whose instances may be in the table (its constructor may be private). */
interface Class<T> {
  readonly prototype: T;
}

/** The most handles one instance may hold (the ABI's limit is 2^28): a guest that leaks them traps instead of growing the worker. */
export const MAX_HANDLES = 1 << 20;

export class CanonTable {
  readonly #slots: (object | undefined)[] = [undefined];
  readonly #free: number[] = [];

  get size(): number {
    return this.#slots.length - 1 - this.#free.length;
  }

  add(item: object): number {
    const free = this.#free.pop();
    if (free !== undefined) {
      this.#slots[free] = item;
      return free;
    }
    if (this.#slots.length > MAX_HANDLES) throw new AbiTrap(`the guest holds more than ${MAX_HANDLES} handles`);
    this.#slots.push(item);
    return this.#slots.length - 1;
  }

  get<T>(handle: number, kind: Class<T>, what: string): T {
    const item = this.#slots[handle];
    if (!(item instanceof (kind as unknown as abstract new () => T))) throw new AbiTrap(`handle ${handle} is not a ${what}`);
    return item;
  }

  remove<T>(handle: number, kind: Class<T>, what: string): T {
    const item = this.get(handle, kind, what);
    this.#slots[handle] = undefined;
    this.#free.push(handle);
    return item;
  }
}
