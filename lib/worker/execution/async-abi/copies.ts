// Streams of bytes and futures between a guest and rt (CanonicalABI.md,
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

import { load, store, type ByteSource, type FuturePayload, type Handles } from '../../../wit/canon/abi-types.js';
import { AbiTrap, type GuestMemory } from '../../../wit/canon/guest-memory.js';
import { EVENT, Waitable } from './waitables.js';

/** A copy's result codes (the low 4 bits; what was copied is above them). */
export const COPY = { COMPLETED: 0, DROPPED: 1, CANCELLED: 2 } as const;
export const BLOCKED = -1;

const packed = (code: number, count: number) => code | (count << 4);

/** A stream<u8> the guest writes, as rt reads it: read(count) as the guest writes, `done` once it dropped its end. */
export interface HostByteReader {
  read(count: number): Promise<{ done: boolean; value?: Uint8Array }>;
  /** rt reads no more: the guest's next write finds the end dropped. */
  return(): Promise<unknown>;
}


// ---- stream<u8> ----

/** A stream<u8> both of whose ends are the guest's, or whose readable end rt took: the guest writes. */
class GuestWrittenBytes {
  /** A guest's write rt has not taken yet. */
  pending: { end: WritableBytes; ptr: number; length: number } | undefined;
  /** rt's read waiting for the guest to write. */
  waiting: { max: number; resolve: (bytes: Uint8Array | undefined) => void } | undefined;
  readerHeld: 'guest' | 'host' | 'dropped' = 'guest';
  writerDropped = false;

  constructor(readonly mem: GuestMemory) {}

  /** rt's side, once the guest handed the readable end over. */
  hostReader(): HostByteReader {
    this.readerHeld = 'host';
    return {
      read: (count) => this.#read(count).then((value) => (value ? { done: false, value } : { done: true })),
      return: () => {
        this.dropReader();
        return Promise.resolve();
      },
    };
  }

  #read(max: number): Promise<Uint8Array | undefined> {
    const pending = this.pending;
    if (pending) {
      this.pending = undefined;
      const n = Math.min(max, pending.length);
      const bytes = this.mem.bytes(pending.ptr, n);
      pending.end.setEvent(EVENT.STREAM_WRITE, packed(COPY.COMPLETED, n));
      return Promise.resolve(bytes);
    }
    if (this.writerDropped) return Promise.resolve(undefined);
    return new Promise((resolve) => (this.waiting = { max, resolve }));
  }

  /** Nobody reads any more: a pending write and the next ones find the end dropped. */
  dropReader(): void {
    this.readerHeld = 'dropped';
    const pending = this.pending;
    this.pending = undefined;
    pending?.end.setEvent(EVENT.STREAM_WRITE, packed(COPY.DROPPED, 0));
  }

  write(end: WritableBytes, ptr: number, length: number): number {
    if (this.pending) throw new AbiTrap('the guest wrote to a stream while its last write was pending');
    if (this.readerHeld === 'dropped') return packed(COPY.DROPPED, 0);
    this.mem.check(ptr, length);
    const waiting = this.waiting;
    if (waiting && length > 0) {
      this.waiting = undefined;
      const n = Math.min(waiting.max, length);
      waiting.resolve(this.mem.bytes(ptr, n));
      return packed(COPY.COMPLETED, n);
    }
    this.pending = { end, ptr, length };
    return BLOCKED;
  }

  cancelWrite(end: WritableBytes): number {
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

export class WritableBytes extends Waitable {
  constructor(readonly stream: GuestWrittenBytes) {
    super();
  }
}

/** A readable end of bytes in the guest's table: of a stream the guest writes too, or of bytes rt hands it. */
export class ReadableBytes extends Waitable {
  /** What rt's source held past the guest's last read. */
  #held: Uint8Array | undefined;
  #reading: { ptr: number; length: number } | undefined;
  #ended = false;
  /** The guest read from it: handed back to rt, it is not the source as rt made it any more. */
  touched = false;

  constructor(
    readonly mem: GuestMemory,
    readonly from: { kind: 'guest'; stream: GuestWrittenBytes } | { kind: 'host'; body: unknown; source: () => ByteSource },
  ) {
    super();
  }

  #source: ByteSource | undefined;

  read(ptr: number, length: number): number {
    if (this.from.kind === 'guest') throw new AbiTrap("rt's host does not copy between two ends in one instance");
    if (this.#reading) throw new AbiTrap('the guest read from a stream while its last read was pending');
    this.touched = true;
    this.mem.check(ptr, length);
    if (this.#held && this.#held.length > 0) return packed(COPY.COMPLETED, this.#fill(ptr, length));
    if (this.#ended) return packed(COPY.DROPPED, 0);
    this.#reading = { ptr, length };
    void this.#pull();
    return BLOCKED;
  }

  async #pull(): Promise<void> {
    const source = (this.#source ??= (this.from as { source: () => ByteSource }).source());
    let bytes: Uint8Array | undefined;
    try {
      bytes = await source.read(this.#reading?.length || 1);
    } catch {
      bytes = undefined;
    }
    const reading = this.#reading;
    if (!reading) {
      // Cancelled meanwhile: what came is kept for the next read.
      if (bytes) this.#held = bytes;
      else this.#ended = true;
      return;
    }
    this.#reading = undefined;
    if (!bytes) {
      this.#ended = true;
      return this.setEvent(EVENT.STREAM_READ, packed(COPY.DROPPED, 0));
    }
    this.#held = bytes;
    this.setEvent(EVENT.STREAM_READ, packed(COPY.COMPLETED, this.#fill(reading.ptr, reading.length)));
  }

  #fill(ptr: number, length: number): number {
    const held = this.#held!;
    const n = Math.min(length, held.length);
    this.mem.check(ptr, n);
    this.mem.u8().set(held.subarray(0, n), ptr);
    this.#held = held.subarray(n);
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
    return rest(this.#held, this.#ended ? undefined : (this.#source ?? this.from.source()));
  }

  drop(): void {
    if (this.from.kind === 'guest') return this.from.stream.dropReader();
    this.#reading = undefined;
    this.#source?.close();
  }
}

async function* rest(held: Uint8Array | undefined, source: ByteSource | undefined): AsyncGenerator<Uint8Array, void, undefined> {
  if (held && held.length > 0) yield held;
  if (!source) return;
  try {
    for (let bytes = await source.read(65_536); bytes; bytes = await source.read(65_536)) yield bytes;
  } finally {
    source.close();
  }
}

/** A new stream<u8>: its readable and writable ends. */
export function newByteStream(mem: GuestMemory): [ReadableBytes, WritableBytes] {
  const stream = new GuestWrittenBytes(mem);
  return [new ReadableBytes(mem, { kind: 'guest', stream }), new WritableBytes(stream)];
}

// ---- future<T> ----

/** A future the guest writes: its value goes to rt once rt holds the readable end. */
class GuestWrittenFuture {
  pending: { end: WritableFuture; ptr: number } | undefined;
  /** rt's side: resolved with the value (or the kind's dropped value). */
  taken: ((value: unknown) => void) | undefined;
  done = false;
  /** The guest dropped the readable end it held: nobody will read the value. */
  readerDropped = false;

  constructor(
    readonly mem: GuestMemory,
    readonly handles: Handles,
    readonly payload: FuturePayload,
  ) {}

  hostValue(): Promise<unknown> {
    const value = new Promise<unknown>((resolve) => (this.taken = resolve));
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
    this.taken!(load(this.mem, this.handles, this.payload.type, ptr));
  }

  cancelWrite(end: WritableFuture): number {
    if (this.pending?.end !== end) return end.takeEvent()?.[2] ?? packed(COPY.CANCELLED, 0);
    this.pending = undefined;
    return packed(COPY.CANCELLED, 0);
  }

  dropWriter(): void {
    if (this.pending) throw new AbiTrap('the guest dropped a future while a write to it was pending');
    if (!this.done) this.taken?.(this.payload.dropped);
    this.done = true;
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

/** rt's readable end for the guest: bytes it reads from `source` (or hands back: `body`, as rt made it). */
export function hostBytes(mem: GuestMemory, body: unknown, source: () => ByteSource): ReadableBytes {
  return new ReadableBytes(mem, { kind: 'host', body, source });
}

/** rt's readable end of a future for the guest: `value` once it settles. */
export function hostFuture(mem: GuestMemory, handles: Handles, payload: FuturePayload, value: PromiseLike<unknown>): ReadableFuture {
  return new ReadableFuture(mem, handles, payload, { kind: 'host', value });
}

