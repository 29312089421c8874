// Streams and futures between a guest and rt (CanonicalABI.md,
// "stream.read/write", "future.read/write"), as rt's own host carries them.
// Each has two ends; the guest holds one or both in its table, and rt the
// other once the guest hands it over (a readable end lifted: a body it
// returns, a future its response's trailers come by) or makes it (a readable
// end lowered: a request's body and trailers).
//
// A copy between the guest and rt happens as soon as both sides are there:
// a guest's write to a stream rt reads is taken when rt reads (the guest's
// write completes then, with what rt took, and its task hears of it); a
// guest's write to a future rt holds is taken at once; a guest's read of
// what rt hands it is filled when rt has the bytes or the value. rt's side
// is always ready to take a future's value, and reads a stream only as its
// consumer (the client's connection) asks: that is the backpressure.

import { layout, load, store, type AbiType, type FuturePayload, type Handles, type StreamSource } from '../../../wit/canon/abi-types.js';
import { AbiTrap, type GuestMemory } from '../../../wit/canon/guest-memory.js';
import { EVENT, Waitable } from './waitables.js';

/** A copy's result codes (the low 4 bits; what was copied is above them). */
export const COPY = { COMPLETED: 0, DROPPED: 1, CANCELLED: 2 } as const;
export const BLOCKED = -1;

const packed = (code: number, count: number) => code | (count << 4);

/** Items of a stream the guest writes, as rt reads them (a stream<u8>'s bytes, others' items): read(count) as the guest writes, `done` once it dropped its end. */
export interface HostStreamReader {
  read(count: number): Promise<{ done: boolean; value?: Items }>;
  /**
   * As `read`, but a stream<u8>'s bytes come in a buffer the reader reuses:
   * valid until the next read, for a consumer that copies them at once (an
   * instance thread's ring). A fresh buffer a read, as `read` gives, costs
   * a stream's whole rate in garbage (measured: a third of the instance
   * thread's time in slices and their collection).
   */
  readLent(count: number): Promise<{ done: boolean; value?: Items }>;
  /** What `readLent` would give at once, without a promise: items, null at the end, undefined if the guest has written nothing since. */
  takeLent(count: number): Items | null | undefined;
  /** rt reads no more: the guest's next write finds the end dropped. */
  return(): Promise<unknown>;
}

/** Some items of a stream: a stream<u8>'s as bytes, others' each as its value. */
export type Items = Uint8Array | readonly unknown[];

// ---- stream<T> ----

/** How a stream's items lie in the guest's memory: bytes, or values of its element type. */
class Elements {
  readonly size: number;

  constructor(
    readonly mem: GuestMemory,
    readonly handles: Handles,
    /** Absent for a stream<u8>. */
    readonly type: AbiType | undefined,
  ) {
    this.size = type ? layout(type).size : 1;
  }

  check(ptr: number, count: number): void {
    this.mem.check(ptr, count * this.size);
  }

  /** The `count` items at `ptr`, copied out. */
  take(ptr: number, count: number): Items {
    const { type, size } = this;
    if (!type) return this.mem.bytes(ptr, count);
    this.check(ptr, count);
    return Array.from({ length: count }, (_, i) => load(this.mem, this.handles, type, ptr + i * size));
  }

  /** `items` put at `ptr`. */
  put(items: Items, ptr: number): void {
    const { type, size } = this;
    this.check(ptr, items.length);
    if (!type) return this.mem.u8().set(items as Uint8Array, ptr);
    for (let i = 0; i < items.length; i++) store(this.mem, this.handles, type, items[i], ptr + i * size);
  }
}

/** A stream both of whose ends are the guest's, or whose readable end rt took: the guest writes. */
class GuestWrittenStream {
  /** A guest's write rt has not taken yet. */
  pending: { end: WritableStreamEnd; ptr: number; length: number } | undefined;
  /** rt's read waiting for the guest to write (into rt's reused buffer if `lent`). */
  waiting: { max: number; lent: boolean; resolve: (items: Items | undefined) => void } | undefined;
  /** rt's reused buffer for lent reads. */
  #scratch: Uint8Array | undefined;
  readerHeld: 'guest' | 'host' | 'dropped' = 'guest';
  writerDropped = false;

  constructor(readonly elements: Elements) {}

  /** rt's side, once the guest handed the readable end over. */
  hostReader(): HostStreamReader {
    this.readerHeld = 'host';
    const done = (value: Items | undefined) => (value ? { done: false, value } : { done: true });
    return {
      read: (count) => this.#read(count, false).then(done),
      readLent: (count) => this.#read(count, true).then(done),
      takeLent: (count) => this.#takePending(count, true) ?? (this.writerDropped ? null : undefined),
      return: () => {
        this.dropReader();
        return Promise.resolve();
      },
    };
  }

  #read(max: number, lent: boolean): Promise<Items | undefined> {
    const taken = this.#takePending(max, lent);
    if (taken) return Promise.resolve(taken);
    if (this.writerDropped) return Promise.resolve(undefined);
    return new Promise((resolve) => (this.waiting = { max, lent, resolve }));
  }

  /** Up to `max` items of the guest's pending write, which completes with them (its task hears of it); undefined if none is pending. */
  #takePending(max: number, lent: boolean): Items | undefined {
    const pending = this.pending;
    if (!pending) return undefined;
    this.pending = undefined;
    const n = Math.min(max, pending.length);
    const items = this.#take(pending.ptr, n, lent);
    pending.end.setEvent(EVENT.STREAM_WRITE, packed(COPY.COMPLETED, n));
    return items;
  }

  /** `count` items at `ptr`: a stream<u8>'s into rt's reused buffer if `lent`. */
  #take(ptr: number, count: number, lent: boolean): Items {
    if (!lent || this.elements.type) return this.elements.take(ptr, count);
    this.elements.check(ptr, count);
    if (!this.#scratch || this.#scratch.length < count) this.#scratch = new Uint8Array(Math.max(count, 65_536));
    this.#scratch.set(this.elements.mem.u8().subarray(ptr, ptr + count));
    return this.#scratch.subarray(0, count);
  }

  /** Nobody reads any more: a pending write and the next ones find the end dropped. */
  dropReader(): void {
    this.readerHeld = 'dropped';
    const pending = this.pending;
    this.pending = undefined;
    pending?.end.setEvent(EVENT.STREAM_WRITE, packed(COPY.DROPPED, 0));
  }

  write(end: WritableStreamEnd, ptr: number, length: number): number {
    if (this.pending) throw new AbiTrap('the guest wrote to a stream while its last write was pending');
    if (this.readerHeld === 'dropped') return packed(COPY.DROPPED, 0);
    this.elements.check(ptr, length);
    const waiting = this.waiting;
    if (waiting && length > 0) {
      this.waiting = undefined;
      const n = Math.min(waiting.max, length);
      waiting.resolve(this.#take(ptr, n, waiting.lent));
      return packed(COPY.COMPLETED, n);
    }
    this.pending = { end, ptr, length };
    return BLOCKED;
  }

  cancelWrite(end: WritableStreamEnd): number {
    if (this.pending?.end !== end) return end.takeEvent()?.[2] ?? packed(COPY.CANCELLED, 0);
    this.pending = undefined;
    return packed(COPY.CANCELLED, 0);
  }

  dropWriter(): void {
    if (this.pending) throw new AbiTrap('the guest dropped a stream while a write to it was pending');
    this.writerDropped = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve(undefined);
  }
}

export class WritableStreamEnd extends Waitable {
  constructor(readonly stream: GuestWrittenStream) {
    super();
  }
}

/** A readable end of a stream in the guest's table: of a stream the guest writes too, or of items rt hands it. */
export class ReadableStreamEnd extends Waitable {
  /** What rt's source held past the guest's last read. */
  #held: Items | undefined;
  #reading: { ptr: number; length: number } | undefined;
  #ended = false;
  /** The guest read from it: handed back to rt, it is not the source as rt made it any more. */
  touched = false;

  constructor(
    readonly elements: Elements,
    readonly from: { kind: 'guest'; stream: GuestWrittenStream } | { kind: 'host'; body: unknown; source: () => StreamSource },
  ) {
    super();
  }

  #source: StreamSource | undefined;

  read(ptr: number, length: number): number {
    if (this.from.kind === 'guest') throw new AbiTrap("rt's host does not copy between two ends in one instance");
    if (this.#reading) throw new AbiTrap('the guest read from a stream while its last read was pending');
    this.touched = true;
    this.elements.check(ptr, length);
    if (this.#held && this.#held.length > 0) return packed(COPY.COMPLETED, this.#fill(ptr, length));
    if (this.#ended) return packed(COPY.DROPPED, 0);
    this.#reading = { ptr, length };
    void this.#pull();
    return BLOCKED;
  }

  async #pull(): Promise<void> {
    const source = (this.#source ??= (this.from as { source: () => StreamSource }).source());
    let items: Items | undefined;
    try {
      items = await source.read(this.#reading?.length || 1);
    } catch {
      items = undefined;
    }
    const reading = this.#reading;
    if (!reading) {
      // Cancelled meanwhile: what came is kept for the next read.
      if (items) this.#held = items;
      else this.#ended = true;
      return;
    }
    this.#reading = undefined;
    if (!items) {
      this.#ended = true;
      return this.setEvent(EVENT.STREAM_READ, packed(COPY.DROPPED, 0));
    }
    this.#held = items;
    this.setEvent(EVENT.STREAM_READ, packed(COPY.COMPLETED, this.#fill(reading.ptr, reading.length)));
  }

  #fill(ptr: number, length: number): number {
    const held = this.#held!;
    const n = Math.min(length, held.length);
    this.elements.put(held instanceof Uint8Array ? held.subarray(0, n) : held.slice(0, n), ptr);
    this.#held = held instanceof Uint8Array ? held.subarray(n) : held.slice(n);
    return n;
  }

  cancelRead(): number {
    if (!this.#reading) return this.takeEvent()?.[2] ?? packed(COPY.CANCELLED, 0);
    this.#reading = undefined;
    return packed(COPY.CANCELLED, 0);
  }

  /** rt's side of it, handed over by the guest: what rt made (less what the guest read), or the guest's stream. */
  lift(): unknown {
    if (this.from.kind === 'guest') return this.from.stream.hostReader();
    if (!this.touched) return this.from.body;
    return rest(this.#held as Uint8Array | undefined, this.#ended ? undefined : (this.#source ?? this.from.source()));
  }

  drop(): void {
    if (this.from.kind === 'guest') return this.from.stream.dropReader();
    this.#reading = undefined;
    this.#source?.close();
  }
}

/** What is left of a body rt made for the guest that the guest read from and handed back (a stream<u8>'s: what rt hands back is only ever a body). */
async function* rest(held: Uint8Array | undefined, source: StreamSource | undefined): AsyncGenerator<Uint8Array, void, undefined> {
  if (held && held.length > 0) yield held;
  if (!source) return;
  try {
    for (let bytes = await source.read(65_536); bytes; bytes = await source.read(65_536)) yield bytes as Uint8Array;
  } finally {
    source.close();
  }
}

/** A new stream of `element`s (absent: a stream<u8>): its readable and writable ends. */
export function newStream(mem: GuestMemory, handles: Handles, element: AbiType | undefined): [ReadableStreamEnd, WritableStreamEnd] {
  const elements = new Elements(mem, handles, element);
  const stream = new GuestWrittenStream(elements);
  return [new ReadableStreamEnd(elements, { kind: 'guest', stream }), new WritableStreamEnd(stream)];
}

// ---- future<T> ----

/** A future the guest writes: its value goes to rt once rt holds the readable end. */
class GuestWrittenFuture {
  pending: { end: WritableFuture; ptr: number } | undefined;
  /** rt's side: settled with the value (or as the kind says when the guest drops it unwritten). */
  taken: { resolve: (value: unknown) => void; reject: (e: Error) => void } | undefined;
  done = false;
  /** The guest dropped its writable end without writing. */
  unwritten = false;
  /** The guest dropped the readable end it held: nobody will read the value. */
  readerDropped = false;

  constructor(
    readonly mem: GuestMemory,
    readonly handles: Handles,
    readonly payload: FuturePayload,
  ) {}

  hostValue(): Promise<unknown> {
    const value = new Promise<unknown>((resolve, reject) => (this.taken = { resolve, reject }));
    if (this.unwritten) this.#dropped();
    const pending = this.pending;
    if (pending) {
      this.pending = undefined;
      this.#deliver(pending.ptr);
      pending.end.setEvent(EVENT.FUTURE_WRITE, packed(COPY.COMPLETED, 1));
    }
    return value;
  }

  write(end: WritableFuture, ptr: number): number {
    if (this.done || this.pending) throw new AbiTrap('the guest wrote a future twice');
    if (this.readerDropped) return packed(COPY.DROPPED, 0);
    if (this.taken) {
      this.#deliver(ptr);
      return packed(COPY.COMPLETED, 1);
    }
    this.mem.check(ptr, 1);
    this.pending = { end, ptr };
    return BLOCKED;
  }

  #deliver(ptr: number): void {
    this.done = true;
    this.taken!.resolve(load(this.mem, this.handles, this.payload.type, ptr));
  }

  cancelWrite(end: WritableFuture): number {
    if (this.pending?.end !== end) return end.takeEvent()?.[2] ?? packed(COPY.CANCELLED, 0);
    this.pending = undefined;
    return packed(COPY.CANCELLED, 0);
  }

  dropWriter(): void {
    if (this.pending) throw new AbiTrap('the guest dropped a future while a write to it was pending');
    if (!this.done) {
      this.unwritten = true;
      if (this.taken) this.#dropped();
    }
    this.done = true;
  }

  #dropped(): void {
    const { droppedFails } = this.payload;
    if (droppedFails) this.taken!.reject(new Error(droppedFails));
    else this.taken!.resolve(this.payload.dropped);
  }

  /** The guest dropped the readable end it held: a pending write, and any later one, finds it gone. */
  dropReader(): void {
    this.readerDropped = true;
    const pending = this.pending;
    this.pending = undefined;
    pending?.end.setEvent(EVENT.FUTURE_WRITE, packed(COPY.DROPPED, 0));
  }
}

export class WritableFuture extends Waitable {
  constructor(readonly future: GuestWrittenFuture) {
    super();
  }
}

export class ReadableFuture extends Waitable {
  #value: { settled: false } | { settled: true; value: unknown } = { settled: false };
  #reading: number | undefined;

  constructor(
    readonly mem: GuestMemory,
    readonly handles: Handles,
    readonly payload: FuturePayload,
    readonly from: { kind: 'guest'; future: GuestWrittenFuture } | { kind: 'host'; value: PromiseLike<unknown> },
  ) {
    super();
    if (from.kind === 'host') {
      Promise.resolve(from.value).then(
        (value) => this.#settle(value),
        () => this.#settle(payload.dropped),
      );
    }
  }

  #settle(value: unknown): void {
    this.#value = { settled: true, value };
    const ptr = this.#reading;
    if (ptr === undefined) return;
    this.#reading = undefined;
    this.#put(value, ptr);
    this.setEvent(EVENT.FUTURE_READ, packed(COPY.COMPLETED, 1));
  }

  #put(value: unknown, ptr: number): void {
    store(this.mem, this.handles, this.payload.type, value, ptr);
  }

  read(ptr: number): number {
    if (this.from.kind === 'guest') throw new AbiTrap("rt's host does not copy between two ends in one instance");
    if (this.#reading !== undefined) throw new AbiTrap('the guest read a future while its last read was pending');
    this.mem.check(ptr, 1);
    if (this.#value.settled) {
      this.#put(this.#value.value, ptr);
      return packed(COPY.COMPLETED, 1);
    }
    this.#reading = ptr;
    return BLOCKED;
  }

  cancelRead(): number {
    if (this.#reading === undefined) return this.takeEvent()?.[2] ?? packed(COPY.CANCELLED, 0);
    this.#reading = undefined;
    return packed(COPY.CANCELLED, 0);
  }

  /** rt's side of it, handed over by the guest: the promise of its value. */
  lift(): PromiseLike<unknown> {
    return this.from.kind === 'guest' ? this.from.future.hostValue() : this.from.value;
  }

  /** The guest dropped it: a future it writes itself learns that nobody reads it; one rt made is let go. */
  drop(): void {
    if (this.from.kind === 'guest') this.from.future.dropReader();
  }
}

/** A new future: its readable and writable ends. */
export function newFuture(mem: GuestMemory, handles: Handles, payload: FuturePayload): [ReadableFuture, WritableFuture] {
  const future = new GuestWrittenFuture(mem, handles, payload);
  return [new ReadableFuture(mem, handles, payload, { kind: 'guest', future }), new WritableFuture(future)];
}

/** rt's readable end for the guest: items of `element` (absent: bytes) it reads from `source` (or hands back: `body`, as rt made it). */
export function hostStream(mem: GuestMemory, handles: Handles, element: AbiType | undefined, body: unknown, source: () => StreamSource): ReadableStreamEnd {
  return new ReadableStreamEnd(new Elements(mem, handles, element), { kind: 'host', body, source });
}

/** rt's readable end of a future for the guest: `value` once it settles. */
export function hostFuture(mem: GuestMemory, handles: Handles, payload: FuturePayload, value: PromiseLike<unknown>): ReadableFuture {
  return new ReadableFuture(mem, handles, payload, { kind: 'host', value });
}

