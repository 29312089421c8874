// A guest's linear memory as rt's own host reads and writes it: bounds
// checked (a guest's pointer is input), strings UTF-8 (the canonical ABI's
// default encoding, and the one wit-component's guests use),
// and new lists in memory its `cabi_realloc` gives.

/** The guest broke the component model's rules (a bad handle, a pointer out of bounds, a call out of turn): its instance traps. */
export class AbiTrap extends Error {}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

export class GuestMemory {
  #buffer: ArrayBuffer | undefined;
  #view: DataView | undefined;
  #bytes: Uint8Array | undefined;

  constructor(
    readonly memory: WebAssembly.Memory,
    private readonly realloc: ((old: number, oldSize: number, align: number, size: number) => number) | undefined,
  ) {}

  /** The memory as a DataView (a fresh one once it grew). */
  view(): DataView {
    if (this.#buffer !== this.memory.buffer) this.#refresh();
    return this.#view!;
  }

  u8(): Uint8Array {
    if (this.#buffer !== this.memory.buffer) this.#refresh();
    return this.#bytes!;
  }

  #refresh(): void {
    this.#buffer = this.memory.buffer;
    this.#view = new DataView(this.#buffer);
    this.#bytes = new Uint8Array(this.#buffer);
  }

  check(ptr: number, length: number): void {
    if (ptr < 0 || length < 0 || ptr + length > this.memory.buffer.byteLength) throw new AbiTrap(`the guest's pointer ${ptr} (+${length}) is out of its memory's bounds`);
  }

  string(ptr: number, length: number): string {
    this.check(ptr, length);
    try {
      return UTF8.decode(this.u8().subarray(ptr, ptr + length));
    } catch {
      throw new AbiTrap('the guest passed a string that is not UTF-8');
    }
  }

  /** A copy of `length` bytes at `ptr`. */
  bytes(ptr: number, length: number): Uint8Array {
    this.check(ptr, length);
    return this.u8().slice(ptr, ptr + length);
  }

  /** Space for `size` bytes aligned to `align`, from the guest's allocator. */
  alloc(size: number, align: number): number {
    if (size === 0) return align;
    if (!this.realloc) throw new AbiTrap('the guest exports no cabi_realloc, and rt must hand it a list');
    const ptr = this.realloc(0, 0, align, size) >>> 0;
    if (ptr % align !== 0) throw new AbiTrap(`the guest's cabi_realloc gave an unaligned pointer ${ptr}`);
    this.check(ptr, size);
    return ptr;
  }

  /** `bytes` copied into memory the guest allocates: where, and how many. */
  putBytes(bytes: Uint8Array, align: number): [number, number] {
    const ptr = this.alloc(bytes.length, align);
    this.u8().set(bytes, ptr);
    return [ptr, bytes.length];
  }
}
