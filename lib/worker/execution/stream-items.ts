// Where a stream's items come from, one `next` at a time: instance-thread.ts
// puts each into the stream's ring (byte-ring.ts).
//
// Through jco's glue a `list<u8>` item is lifted as
// `new Uint8Array(memory.buffer.slice(ptr, ptr + len))`: a fresh ArrayBuffer,
// zeroed and filled, which the ring then copies again. At 64 KiB items that
// allocation costs as much as the ring's copy, its fresh pages fault in once
// malloc has given the last ones back, and its garbage makes V8 collect
// (docs/performance-log.md). So a stream of bytes written raw reads each item
// where the guest made it: rt calls the core `next` itself, reads the
// option's discriminant, pointer and length from the return area, and hands
// the ring a view of the guest's memory. The guest's post-return (which may
// free the item) runs before the next call into the instance: the thread
// calls `next` again only once the ring holds all of the last item.
//
// The core function, its post-return and its memory (core-byte-next.ts) are
// found by the names wit-component gives them, and trusted only once the
// glue was seen to use them: a stream's first item goes through the glue,
// rt's wrappers on those core exports recording the rep the glue passed and
// the bytes it found, and that item must equal them. Anything else keeps
// the stream on the glue.

import type { ServiceDescriptor } from '../../service.js';
import type { NextStream, StreamSignature } from '../../wit/streaming.js';
import type { CallOutcome, ComponentInstance } from './component-instance.js';
import type { CoreByteNext } from './core-byte-next.js';
import type { Framing } from './invocation.js';

/** Whether a stream's items may be read in place: bytes, from an infallible `next`, written raw (`framing` left out: in any framing raw among them). */
export function readInPlace(stream: StreamSignature, framing?: Framing): stream is NextStream {
  return stream.source === 'next' && stream.encoding === 'bytes' && !stream.fallible && (framing === undefined || framing === 'raw');
}

/**
 * The core `next` functions (their `nextExport`) of `d`'s streams whose items
 * may be read in place: what an instance thread's instances look for among
 * their core exports (InstanceSpec's `byteNexts`). Inline instances never
 * stream, and look for none.
 */
export function byteNexts(d: ServiceDescriptor): Set<string> {
  return new Set(d.methods.flatMap((m) => (m.stream && readInPlace(m.stream) ? [m.stream.nextExport] : [])));
}

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

/** Every item through jco's glue: `next` on the resource, lifted by the glue. */
class GlueItems implements StreamItems {
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
    const { result: outcome, seen } = this.core.watch(() => this.instance.next(this.resource));
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

/**
 * A `stream<T>` the guest writes, as jco's glue gives the host one (its
 * `Stream`) or rt's own host does (copies.ts): reads up to `count` items as
 * the guest writes them; `return` drops it. rt's own host can lend a
 * stream<u8>'s bytes in a buffer it reuses (`readLent`).
 */
export interface GlueStream {
  read(count: number): Promise<{ done: boolean; value?: unknown }>;
  readLent?(count: number): Promise<{ done: boolean; value?: unknown }>;
  /** What `readLent` would give at once: items, null at the end, undefined if nothing was written since. */
  takeLent?(count: number): unknown;
  return(): Promise<unknown>;
}

/** What one read of a guest's stream asks for: 64 KiB of a stream<u8>, 256 items of another. */
export function readCount(bytes: boolean): number {
  return bytes ? 65_536 : 256;
}

/**
 * The items a guest writes to a `stream<T>` it returned (WASI 0.3), read
 * through the glue: each read gives what the guest has written so far, up
 * to a bound (a stream<u8>'s bytes as one chunk, other items each on its
 * own). Async, where `next` is not: the guest runs when the read lets it.
 */
export class WrittenItems {
  readonly #count: number;
  readonly #stream: GlueStream;

  /** `stream`: what the call answered with, the glue's Stream. */
  constructor(
    private readonly instance: ComponentInstance,
    stream: unknown,
    private readonly bytes: boolean,
  ) {
    this.#stream = stream as GlueStream;
    this.#count = readCount(bytes);
  }

  /**
   * What `next` would give, when the guest has written it already (or ended
   * the stream) on rt's own host: no promise a chunk, where the guest keeps
   * a write pending while rt puts the last one in the ring. Undefined: await
   * `next`.
   */
  nextNow(): CallOutcome | undefined {
    if (!this.#stream.takeLent || this.instance.failed) return undefined;
    const taken = this.#stream.takeLent(this.#count);
    if (taken === undefined) return undefined;
    if (taken === null) return { kind: 'ok', value: undefined };
    return { kind: 'ok', value: this.bytes ? [taken] : Array.from(taken as ArrayLike<unknown>) };
  }

  /** The items written since the last read (undefined: the stream's end), or how the guest failed meanwhile; bytes valid until the next read (the thread's ring copies them first). */
  async next(): Promise<CallOutcome> {
    const stream = this.#stream;
    if (stream.takeLent) {
      // On rt's own host, the write taken last completed as it was taken, and the guest's callback, queued then, writes the
      // next within one microtask: a tick is all it takes to find that write pending, where a read that waits costs a chain
      // of promises. jco's glue has no such write to find, and pays no tick.
      await Promise.resolve();
      const now = this.nextNow();
      if (now) return now;
    }
    const read = await this.instance.settled(stream.readLent ? stream.readLent(this.#count) : stream.read(this.#count));
    if (read.kind !== 'ok') return read;
    const { done, value } = read.value as { done: boolean; value?: unknown };
    if (done) return { kind: 'ok', value: undefined };
    return { kind: 'ok', value: this.bytes ? [value] : Array.from(value as ArrayLike<unknown>) };
  }

  /** The stream is over: its readable end is dropped, and the guest's next write finds it gone. */
  done(): void {
    this.#stream.return().catch(() => {});
  }
}

/**
 * The items of a stream's `resource` on `instance`: read in place from the
 * guest's memory when `byteNext` (its `nextExport`, for bytes written raw)
 * was found among the core exports, else each through the glue's `next`.
 */
export function streamItems(instance: ComponentInstance, resource: unknown, byteNext?: string): StreamItems {
  const core = byteNext === undefined ? undefined : instance.byteNext(byteNext);
  return core ? new InPlaceBytes(instance, resource, core) : new GlueItems(instance, resource);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}
