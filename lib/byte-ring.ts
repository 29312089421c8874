// A body's bytes between two threads of a worker without a message or an
// allocation per item: a single-producer, single-consumer ring of bytes in a
// SharedArrayBuffer. The producer (an instance thread) frames items straight
// into it and publishes them with one atomic store; the consumer (the
// worker's main thread) takes what was published as views of the shared
// memory, which go to the socket as they are, and releases them once the
// socket has taken them. The ring's capacity is the body's window: a producer
// whose reader takes nothing stops when the ring is full.
//
// No message passes between the threads: a side that waits sleeps on a cell
// of the ring (Atomics.waitAsync, so its event loop runs on), and the other
// notifies it only when it asked. The consumer arms when a look finds nothing
// new: the producer's next publish wakes it (Atomics.notify, a few µs where a
// postMessage costs 10–20), and while bytes keep coming the consumer looks
// again each turn of its event loop without being woken. The producer stalls
// when the ring is full: the consumer wakes it once a quarter of the ring is
// free again, so a full ring costs one wake-up per quarter, not one per
// release.
//
// Positions are byte counts that wrap at 2^32 (Int32 arithmetic); the
// capacity is a power of two, so a position modulo the capacity is its index.

/** Int32 cells before the bytes. */
const WRITTEN = 0;
const RELEASED = 1;
/** 1: the consumer waits on WRITTEN for the producer's next publish. */
const ARMED = 2;
/** 1: the producer waits for room (on this cell, or on its thread's own: see RingReader's `wake`). */
const STALLED = 3;
/** 1: the consumer is gone; the producer's bytes go nowhere. */
const CLOSED = 4;
/** Items published since the ring was handed out (stored before WRITTEN: a reader sees at most one item ahead of the bytes). */
const ITEMS = 5;
const HEADER_BYTES = 8 * 4;

const encoder = new TextEncoder();

/** Lays out a ring of `capacity` bytes (a power of two). */
function ringMemory(capacity: number): SharedArrayBuffer {
  if (capacity <= 0 || capacity & (capacity - 1) || capacity > 1 << 30) throw new RangeError(`a ring's capacity is a power of two up to 1 GiB, not ${capacity}`);
  return new SharedArrayBuffer(HEADER_BYTES + capacity);
}

function capacityOf(shared: SharedArrayBuffer): number {
  return shared.byteLength - HEADER_BYTES;
}

/** Bytes published into the ring `shared` so far (wrapping at 2^32): for tests that watch a producer. */
export function publishedBytes(shared: SharedArrayBuffer): number {
  return Atomics.load(new Int32Array(shared, 0, HEADER_BYTES / 4), WRITTEN);
}

/** The producer's end, on the thread that makes the bytes. */
export class RingProducer {
  readonly #cells: Int32Array;
  readonly #data: Uint8Array;
  readonly #capacity: number;
  #written: number;
  #items: number;
  /** What did not fit of the last item put: written before anything else. */
  #pending: Uint8Array | undefined;
  /** Where a string is encoded when it cannot be encoded in place. */
  #scratch = new Uint8Array(0);

  constructor(shared: SharedArrayBuffer) {
    this.#cells = new Int32Array(shared, 0, HEADER_BYTES / 4);
    this.#capacity = capacityOf(shared);
    this.#data = new Uint8Array(shared, HEADER_BYTES, this.#capacity);
    this.#written = Atomics.load(this.#cells, WRITTEN);
    this.#items = Atomics.load(this.#cells, ITEMS);
  }

  /** Bytes that fit now. */
  get free(): number {
    return this.#capacity - ((this.#written - Atomics.load(this.#cells, RELEASED)) | 0);
  }

  /** Whether part of the last item still waits for room. */
  get pending(): boolean {
    return this.#pending !== undefined;
  }

  /** Whether the consumer is gone. */
  get closed(): boolean {
    return Atomics.load(this.#cells, CLOSED) === 1;
  }

  /**
   * Puts `item` (a string as its UTF-8) after what is there; what does not
   * fit stays pending until `flush` finds room. Visible to the consumer at
   * the next `publish`. Whether all of it went in.
   */
  put(item: Uint8Array | string): boolean {
    this.#items++;
    if (typeof item !== 'string') return this.#copy(item, false);
    const start = this.#written & (this.#capacity - 1);
    const room = Math.min(this.#capacity - start, this.free);
    // UTF-8 takes at most 3 bytes per UTF-16 unit: then it is encoded where it goes.
    if (item.length * 3 <= room) {
      this.#written = (this.#written + encoder.encodeInto(item, this.#data.subarray(start, start + room)).written) | 0;
      return true;
    }
    // At the ring's end, or with little room: encoded aside, then copied in (in two pieces across the end).
    if (this.#scratch.length < item.length * 3) this.#scratch = new Uint8Array(Math.max(item.length * 3, 4096));
    const encoded = this.#scratch.subarray(0, encoder.encodeInto(item, this.#scratch).written);
    return this.#copy(encoded, true);
  }

  /** Puts what fits of the pending rest; whether none is left. */
  flush(): boolean {
    const rest = this.#pending;
    if (!rest) return true;
    this.#pending = undefined;
    return this.#copy(rest, false);
  }

  /** Makes what was put visible to the consumer, and wakes it if it waits. */
  publish(): void {
    Atomics.store(this.#cells, ITEMS, this.#items);
    Atomics.store(this.#cells, WRITTEN, this.#written);
    if (Atomics.load(this.#cells, ARMED) === 1 && Atomics.exchange(this.#cells, ARMED, 0) === 1) Atomics.notify(this.#cells, WRITTEN);
  }

  /**
   * The producer is about to wait for room: true when it must (the
   * consumer's release will wake it), false when room came meanwhile.
   */
  stall(): boolean {
    Atomics.store(this.#cells, STALLED, 1);
    if (this.free === 0) return true;
    // Room came: whether or not the consumer has seen the flag (then a wake-up is on its way, and finds nothing to do).
    Atomics.store(this.#cells, STALLED, 0);
    return false;
  }

  /** Resolves once the consumer has woken a stalled producer, without blocking the thread's event loop. */
  async room(): Promise<void> {
    const wait = Atomics.waitAsync(this.#cells, STALLED, 1);
    if (wait.async) await wait.value;
  }

  /** Copies what fits of `bytes` in; the rest stays pending (copied when `bytes` is the scratch, which the next put reuses). */
  #copy(bytes: Uint8Array, scratch: boolean): boolean {
    const n = Math.min(bytes.length, this.free);
    const start = this.#written & (this.#capacity - 1);
    const first = Math.min(n, this.#capacity - start);
    this.#data.set(first === bytes.length ? bytes : bytes.subarray(0, first), start);
    if (n > first) this.#data.set(bytes.subarray(first, n), 0);
    this.#written = (this.#written + n) | 0;
    if (n === bytes.length) return true;
    this.#pending = scratch ? bytes.slice(n) : bytes.subarray(n);
    return false;
  }
}

/** Rings kept for reuse once their bodies are done: a body takes one, rather than zeroed memory of its own. */
const idle: SharedArrayBuffer[] = [];
const MAX_IDLE = 16;

/**
 * The consumer's end, on the worker's main thread: delivers what the
 * producer publishes, as views of the ring, to `deliver`; each byte must be
 * released (`release`) once nothing needs it any more. Its ring goes back
 * for reuse once the producer is done with it (`end`) and every byte
 * delivered was released; a ring whose bytes a dead socket still holds, or
 * whose producer was cut off (`abandon`), never does.
 */
export class RingReader {
  readonly shared: SharedArrayBuffer;
  readonly #cells: Int32Array;
  readonly #data: Uint8Array;
  readonly #capacity: number;
  /** Position up to which bytes were delivered, and the items counted with them. */
  #taken = 0;
  #items = 0;
  #released = 0;
  #scheduled = false;
  #stopped = false;
  /** The producer said it is done with the ring. */
  #ended = false;
  #recycled = false;
  /** The producer may still write into the ring: it is never reused. */
  #abandoned = false;
  /** Waiting on WRITTEN for the producer's next publish. */
  #armed = false;
  readonly #again = () => {
    this.#scheduled = false;
    this.pull();
  };
  readonly #woken = () => {
    this.#armed = false;
    this.pull();
  };

  /**
   * A ring of `capacity` bytes (reused when one is idle). `deliver` gets
   * each run of published bytes, with the items published since the last
   * run (an item split across runs counts once), from the first `pull` on
   * (the owner's to make once what must come before the bytes has come: a
   * stream's opening, a response's head). A stalled producer is woken on the
   * ring's STALLED cell, and with `wake` besides when it sleeps on a cell of
   * its own (an HTTP handler's thread, blocked in its guest's poll).
   */
  constructor(
    capacity: number,
    private readonly deliver: (bytes: Uint8Array, items: number) => void,
    private readonly wake: () => void = () => {},
  ) {
    const reused = idle.findIndex((shared) => capacityOf(shared) === capacity);
    this.shared = reused === -1 ? ringMemory(capacity) : idle.splice(reused, 1)[0];
    this.#capacity = capacity;
    this.#cells = new Int32Array(this.shared, 0, HEADER_BYTES / 4);
    this.#cells.fill(0);
    this.#data = new Uint8Array(this.shared, HEADER_BYTES, capacity);
  }

  /** Items the producer has put so far (its progress). */
  get items(): number {
    return Atomics.load(this.#cells, ITEMS);
  }

  /** Whether the producer waits for room. */
  get stalled(): boolean {
    return Atomics.load(this.#cells, STALLED) === 1;
  }

  /**
   * Delivers what was published since the last delivery; looks again next
   * turn while bytes keep coming, and once a look finds none waits (without
   * blocking) for the producer's next publish to wake it.
   */
  pull(): void {
    if (this.#stopped) return;
    const written = Atomics.load(this.#cells, WRITTEN);
    if (written !== this.#taken) {
      this.#deliver(written);
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(this.#again);
      }
      return;
    }
    if (this.#scheduled || this.#armed) return;
    Atomics.store(this.#cells, ARMED, 1);
    const wait = Atomics.waitAsync(this.#cells, WRITTEN, written);
    if (wait.async) {
      this.#armed = true;
      void wait.value.then(this.#woken);
      return;
    }
    // Published between the look and the arming: take it now.
    Atomics.store(this.#cells, ARMED, 0);
    this.pull();
  }

  /** `bytes` delivered earlier are no longer needed: room for the producer. */
  release(bytes: number): void {
    if (this.#recycled) return;
    // Never more than was delivered: the producer would take bytes still in use for room.
    bytes = Math.min(bytes, (this.#taken - this.#released) | 0);
    this.#released = (this.#released + bytes) | 0;
    Atomics.add(this.#cells, RELEASED, bytes);
    const free = this.#capacity - ((Atomics.load(this.#cells, WRITTEN) - this.#released) | 0);
    if (free >= this.#capacity / 4 && Atomics.load(this.#cells, STALLED) === 1 && Atomics.exchange(this.#cells, STALLED, 0) === 1) this.#wake();
    this.#recycle();
  }

  /** The consumer is gone: the producer's writes fail from now on (a handler's guest sees its client gone). */
  close(): void {
    // Once reused, the ring is another body's: its client leaving late (after this body ended) must not close that one.
    if (this.#recycled) return;
    Atomics.store(this.#cells, CLOSED, 1);
    Atomics.store(this.#cells, STALLED, 0);
    this.#wake();
  }

  /** The producer is done with the ring: what it published last is delivered, then nothing more. */
  end(): void {
    this.pull();
    this.#stop();
    this.#ended = true;
    this.#recycle();
  }

  /** Delivers nothing more, the producer perhaps still writing (its thread being ended): the ring is never reused, unless it had ended. */
  abandon(): void {
    if (this.#ended) return;
    this.#stop();
    this.#abandoned = true;
  }

  #stop(): void {
    // Once: a second stop could wake the producer of the body that reuses the ring.
    if (this.#stopped) return;
    this.#stopped = true;
    // Its own wait on WRITTEN ends (it would hold the ring while nothing is published), and a stalled producer's on STALLED.
    if (this.#armed) Atomics.notify(this.#cells, WRITTEN);
    Atomics.notify(this.#cells, STALLED);
  }

  #wake(): void {
    Atomics.notify(this.#cells, STALLED);
    this.wake();
  }

  #deliver(written: number): void {
    const start = this.#taken & (this.#capacity - 1);
    const length = (written - this.#taken) | 0;
    const items = Atomics.load(this.#cells, ITEMS);
    const newItems = items - this.#items;
    this.#taken = written;
    this.#items = items;
    const first = Math.min(length, this.#capacity - start);
    this.deliver(this.#data.subarray(start, start + first), newItems);
    if (length > first) this.deliver(this.#data.subarray(0, length - first), 0);
  }

  #recycle(): void {
    if (!this.#stopped || this.#abandoned || this.#recycled || this.#released !== this.#taken) return;
    this.#recycled = true;
    if (idle.length < MAX_IDLE) idle.push(this.shared);
  }
}
