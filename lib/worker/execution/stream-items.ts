// Where a stream's items come from, one `next` at a time: instance-thread.ts
// puts each into the stream's ring (byte-ring.ts).
//
// Through jco's glue a `list<u8>` item is lifted as
// `new Uint8Array(memory.buffer.slice(ptr, ptr + len))`: a fresh ArrayBuffer,
// zeroed and filled, which the ring then copies again. At 64 KiB items that
// allocation costs as much as the ring's copy, its fresh pages fault in once
// malloc has given the last ones back, and its garbage makes V8 collect
// (docs/performance.md). So a stream of bytes written raw reads each item
// where the guest made it: rt calls the core `next` itself, reads the
// option's discriminant, pointer and length from the return area, and hands
// the ring a view of the guest's memory. The guest's post-return (which may
// free the item) runs before the next call into the instance: the thread
// calls `next` again only once the ring holds all of the last item.
//
// The core function, its post-return and its memory are found by the names
// wit-component gives them, and trusted only once the glue was seen to use
// them: a stream's first item goes through the glue, rt's wrappers on those
// core exports recording the rep the glue passed and the bytes it found,
// and that item must equal them. Anything else keeps the stream on the glue.

import type { CallOutcome, ComponentInstance } from './component-instance.js';

/** A stream's items, as the thread takes them. */
export interface StreamItems {
  /**
   * The next item (undefined or null: the stream's end), or how `next`
   * failed. An item may be a view of the guest's memory: valid until the
   * next call of `next` or `done`.
   */
  next(): CallOutcome;
  /** The stream is over: the last item's memory goes back to the guest. A trap here fails the stream as one in `next` would. */
  done(): CallOutcome | undefined;
}

type CoreNext = (rep: number) => number;
type PostReturn = (ret: number) => void;

/** What the glue's last watched `next` did through rt's wrappers. */
interface Seen {
  rep: number;
  /** The item at the return area when the glue had lifted it (before post-return could free it); null when it was not one. */
  item: Uint8Array | null | undefined;
}

/**
 * The core `next` of a byte stream's resource (`option<list<u8>>`), its
 * post-return and the memory of the core instance exporting it, as found in
 * that instance's exports; `exports` is what the glue gets instead, the
 * two functions wrapped to watch what the glue does with them.
 */
export class CoreByteNext {
  readonly exports: WebAssembly.Exports;
  #watching = false;
  #seen: Seen | undefined;
  #dataView = new DataView(new ArrayBuffer(0));

  private constructor(
    readonly name: string,
    readonly next: CoreNext,
    readonly postReturn: PostReturn | undefined,
    readonly memory: WebAssembly.Memory,
    exports: WebAssembly.Exports,
  ) {
    const watched: WebAssembly.Exports = { ...exports };
    watched[name] = (rep: number): number => {
      const ret = next(rep);
      if (this.#watching) this.#seen = { rep, item: postReturn ? undefined : this.#copyAt(ret) };
      return ret;
    };
    if (postReturn) {
      watched[`cabi_post_${name}`] = (ret: number): void => {
        if (this.#watching && this.#seen) this.#seen.item = this.#copyAt(ret);
        postReturn(ret);
      };
    }
    this.exports = watched;
  }

  /**
   * The core `next` named `name` in a core instance's `exports`, with its
   * post-return (`cabi_post_<name>`) and the instance's `memory`; undefined
   * when the instance has no such function or memory.
   */
  static find(exports: WebAssembly.Exports, name: string): CoreByteNext | undefined {
    const next = exports[name];
    const memory = exports.memory;
    const postReturn = exports[`cabi_post_${name}`];
    if (typeof next !== 'function' || !(memory instanceof WebAssembly.Memory)) return undefined;
    return new CoreByteNext(name, next as CoreNext, typeof postReturn === 'function' ? (postReturn as PostReturn) : undefined, memory, exports);
  }

  /** Runs `glueNext` (the glue's `next` on a resource) watching what it does with the core functions. */
  watch(glueNext: () => CallOutcome): { outcome: CallOutcome; seen: Seen | undefined } {
    this.#watching = true;
    this.#seen = undefined;
    try {
      return { outcome: glueNext(), seen: this.#seen };
    } finally {
      this.#watching = false;
      this.#seen = undefined;
    }
  }

  /**
   * The item at return area `ret`: a view of the guest's memory, undefined
   * for none. Throws (a trap) when the area is not an `option<list<u8>>`.
   */
  itemAt(ret: number): Uint8Array | undefined {
    const buffer = this.memory.buffer;
    if (this.#dataView.buffer !== buffer) this.#dataView = new DataView(buffer);
    const view = this.#dataView;
    const tag = view.getUint8(ret);
    if (tag === 0) return undefined;
    if (tag !== 1) throw new TypeError(`invalid variant discriminant for option: ${tag}`);
    const ptr = view.getUint32(ret + 4, true);
    const len = view.getUint32(ret + 8, true);
    if (ptr + len > buffer.byteLength) throw new RangeError(`${this.name} returned a list at ${ptr} of ${len} bytes, past the end of the instance's memory (${buffer.byteLength} bytes)`);
    return new Uint8Array(buffer, ptr, len);
  }

  /** A copy of the item at `ret`, or null when there is none (or the area holds no item). */
  #copyAt(ret: number): Uint8Array | null {
    try {
      return this.itemAt(ret)?.slice() ?? null;
    } catch {
      return null;
    }
  }
}

/** Every item through jco's glue: `next` on the resource, lifted by the glue. */
export class GlueItems implements StreamItems {
  constructor(
    private readonly instance: ComponentInstance,
    private readonly resource: unknown,
  ) {}

  next(): CallOutcome {
    return this.instance.next(this.resource);
  }

  done(): undefined {
    return undefined;
  }
}

const NO_ARGS: unknown[] = [];

/** Items read in place from the guest's memory once the glue's first item showed where (see the top of this file). */
export class InPlaceBytes implements StreamItems {
  /** The rep the glue passed to the core `next`; undefined until the first item matched, null when it did not (the glue serves the rest). */
  #rep: number | null | undefined;
  /** The return area of the item last read in place, whose post-return is owed. */
  #owed: number | undefined;
  readonly #read = (): Uint8Array | undefined => {
    this.#release();
    const ret = this.core.next(this.#rep!);
    this.#owed = ret;
    return this.core.itemAt(ret);
  };
  readonly #releaseNow = (): void => this.#release();

  constructor(
    private readonly instance: ComponentInstance,
    private readonly resource: unknown,
    private readonly core: CoreByteNext,
  ) {}

  /** Whether the items after the first are read in place (known after the first). */
  get inPlace(): boolean {
    return typeof this.#rep === 'number';
  }

  next(): CallOutcome {
    if (this.#rep === null) return this.instance.next(this.resource);
    if (this.#rep !== undefined) return this.instance.callCore(this.#read, NO_ARGS);
    const { outcome, seen } = this.core.watch(() => this.instance.next(this.resource));
    const item = outcome.kind === 'ok' ? outcome.value : undefined;
    this.#rep = item instanceof Uint8Array && seen?.item && sameBytes(seen.item, item) ? seen.rep : null;
    return outcome;
  }

  done(): CallOutcome | undefined {
    if (this.#owed === undefined) return undefined;
    const outcome = this.instance.callCore(this.#releaseNow, NO_ARGS);
    return outcome.kind === 'trap' ? outcome : undefined;
  }

  #release(): void {
    const ret = this.#owed;
    if (ret === undefined) return;
    this.#owed = undefined;
    this.core.postReturn?.(ret);
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}
