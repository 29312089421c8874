// The core parts of a byte stream's `next` (`option<list<u8>>`), found among a
// core instance's exports as jco's glue is instantiated (component-instance.ts),
// so that stream-items.ts can read its items in place: the core function, its
// post-return, and the memory they live in. The glue is handed wrappers of the
// two functions, which watch what it does with them when asked (`watch`).
//
// Only a core module that imports no host function may be called past the
// glue: jco-transpile's glue runs every import a guest calls inside the task
// of the export call that reached it, and an import called with no task
// (a core function rt called itself) makes one the glue never ends. A
// componentize-js `next` calls imports (its engine's), and those tasks piled
// up, each later import searching them all: its 1 KiB items slowed to
// ~1.8 ms each. The canonical resource intrinsics are no host functions.

type CoreNext = (rep: number) => number;
type PostReturn = (ret: number) => void;

/** What the glue's last watched `next` did through rt's wrappers. */
export interface Seen {
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
   * The core `next` named `name` in a core instance's `exports` (of
   * `module`), with its post-return (`cabi_post_<name>`) and the instance's
   * `memory`; undefined when the instance has no such function or memory,
   * or its module imports host functions (above).
   */
  static find(module: WebAssembly.Module, exports: WebAssembly.Exports, name: string): CoreByteNext | undefined {
    if (!importsNoHostFunction(module)) return undefined;
    const next = exports[name];
    const memory = exports.memory;
    const postReturn = exports[`cabi_post_${name}`];
    if (typeof next !== 'function' || !(memory instanceof WebAssembly.Memory)) return undefined;
    return new CoreByteNext(name, next as CoreNext, typeof postReturn === 'function' ? (postReturn as PostReturn) : undefined, memory, exports);
  }

  /** Runs `glueNext` (the glue's `next` on a resource) watching what it does with the core functions. */
  watch<T>(glueNext: () => T): { result: T; seen: Seen | undefined } {
    this.#watching = true;
    this.#seen = undefined;
    try {
      return { result: glueNext(), seen: this.#seen };
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

/** A canonical resource intrinsic of a resource the component exports, as wit-component names it: the glue's own bookkeeping, no host code. */
const RESOURCE_INTRINSIC = /^\[resource-(new|rep|drop)\]/;

/** Whether `module` imports no function but resource intrinsics (and rt's fuel check, which no thread's module has). */
function importsNoHostFunction(module: WebAssembly.Module): boolean {
  return WebAssembly.Module.imports(module).every((i) => i.kind !== 'function' || (i.module.startsWith('[export]') && RESOURCE_INTRINSIC.test(i.name)));
}
