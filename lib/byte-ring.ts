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
// when the ring is full: the consumer wakes it once half the ring is free
// again, so a full ring costs one wake-up per half, not one per release, and
// the producer fills what is free in one go (fewer, longer turns of its
// thread: each wake-up may preempt the consumer on a busy machine).
//
// A wake-up can be lost, though: on Node 20 a notify was seen never to reach
// the consumer's waitAsync (it stayed armed, its flag taken by the producer's
// notify, a full ring published, and the stream stood until its deadline;
// about 1 stream in 1,000 under the streams bench's load). Not Node 20's
// alone: in a loop of 2 MiB streams through 64 KiB rings from two producer
// threads, a consumer's wait still unwoken 500 ms after its cell had changed
// came 1 in 1.35 million waits on Node 22.23.3 and 5 in 0.5 million on
// 24.21.0 (none in 1.5 million on 26.12.1, nor in 1.35 million on 20.20.2
// there). So a side that waits also looks for itself every WATCH_MS, and a
// lost wake-up costs that long, not the stream.
//
// Positions are byte counts that wrap at 2^32 (Int32 arithmetic); the
// capacity is a power of two, so a position modulo the capacity is its index.
//
// Holes: V8 copies into shared memory with relaxed atomics, word by word only
// when source and destination lie alike modulo 8 and byte by byte otherwise:
// 25–45 µs for 64 KiB where the aligned copy takes 4–6 (measured here; an
// item read in place from a guest's memory lies wherever the guest put it).
// So a large item that lies otherwise than the write position goes in 1–7
// bytes further on, and the gap is listed as a hole: the consumer skips it,
// and frees it with the bytes before it.

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
/** Holes listed so far (stored before WRITTEN, like ITEMS), and holes the consumer has passed. */
const HOLES = 6;
const HOLES_PASSED = 7;
/** The holes: HOLE_SLOTS pairs of cells (position, length), the n-th hole in slot n modulo HOLE_SLOTS. */
const HOLE_TABLE = 8;
const HOLE_SLOTS = 64;
/** A multiple of 8, so that a position's alignment is its bytes'. */
const HEADER_BYTES = (HOLE_TABLE + 2 * HOLE_SLOTS) * 4;
/** Smaller items are copied where they fall: at a few hundred bytes the slow copy costs less than a hole. */
const ALIGN_FROM_BYTES = 4096;

const encoder = new TextEncoder();

/** How often a waiting side looks for what its wake-up should have told it (see above). */
const WATCH_MS = 50;

/** What a side waits for: whether it has come, and how to wake the side when it has. */
interface Waiter {
  ready(): boolean;
  wake(): void;
}

/**
 * The sides of rings waiting on this thread, looked at every WATCH_MS while
 * there are any: one timer for all of them, none when nobody waits.
 */
class Watch {
  readonly #waiting = new Map<object, Waiter>();
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #look = () => {
    const due = [...this.#waiting].filter(([, waiter]) => waiter.ready());
    for (const [side, waiter] of due) {
      this.#waiting.delete(side);
      waiter.wake();
    }
    this.#idle();
  };

  add(side: object, waiter: Waiter): void {
    this.#waiting.set(side, waiter);
    // Unreferenced: a thread or server is kept alive by what it serves, not by this.
    this.#timer ??= setInterval(this.#look, WATCH_MS).unref();
  }

  /** Forgets what `side` waits for: `waiter` only, when given (a late wake-up of an earlier wait must not end a later one's watch). */
  delete(side: object, waiter?: Waiter): void {
    if (waiter && this.#waiting.get(side) !== waiter) return;
    this.#waiting.delete(side);
  }

  /** The timer stops at a look that finds nobody waiting, not as the last side stops: a stream arms and is woken thousands of times a second. */
  #idle(): void {
    if (this.#waiting.size > 0 || !this.#timer) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

const watch = new Watch();

/** Lays out a ring of `capacity` bytes (a power of two). */
function ringMemory(capacity: number): SharedArrayBuffer {
  if (capacity <= 0 || capacity & (capacity - 1) || capacity > 1 << 30) throw new RangeError(`a ring's capacity is a power of two up to 1 GiB, not ${capacity}`);
  return new SharedArrayBuffer(HEADER_BYTES + capacity);
}

function capacityOf(shared: SharedArrayBuffer): number {
  return shared.byteLength - HEADER_BYTES;
}

const headerCell = (shared: SharedArrayBuffer, cell: number): number => Atomics.load(new Int32Array(shared, 0, HEADER_BYTES / 4), cell);

/** Bytes published into the ring `shared` so far (wrapping at 2^32): for tests that watch a producer. */
export const publishedBytes = (shared: SharedArrayBuffer): number => headerCell(shared, WRITTEN);

/** Holes the producer of the ring `shared` has listed so far: for tests that check items went in aligned. */
export const listedHoles = (shared: SharedArrayBuffer): number => headerCell(shared, HOLES);

/** The producer's end, on the thread that makes the bytes. */
export class RingProducer {
  readonly #cells: Int32Array;
  readonly #data: Uint8Array;
  readonly #capacity: number;
  #written: number;
  #items: number;
  #holes: number;
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
    this.#holes = Atomics.load(this.#cells, HOLES);
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
    if (typeof item !== 'string') {
      this.#align(item);
      return this.#copy(item, false);
    }
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
    Atomics.store(this.#cells, HOLES, this.#holes);
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

  /** Resolves once the consumer has woken a stalled producer (or cleared STALLED to do so), without blocking the thread's event loop. */
  room(): Promise<void> {
    const wait = Atomics.waitAsync(this.#cells, STALLED, 1);
    if (!wait.async) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        ready: () => Atomics.load(this.#cells, STALLED) !== 1,
        wake: () => {
          watch.delete(this, waiter);
          resolve();
        },
      };
      void wait.value.then(waiter.wake);
      watch.add(this, waiter);
    });
  }

  /** Leaves a hole before a large item that lies otherwise than the write position, so that it is copied word by word (see Holes above). */
  #align(bytes: Uint8Array): void {
    if (bytes.length < ALIGN_FROM_BYTES) return;
    const start = this.#written & (this.#capacity - 1);
    const gap = (bytes.byteOffset - start) & 7;
    const free = this.free;
    // Never across the ring's end, never into a slot the consumer has not passed, and never making an item that
    // fits whole not fit (an HTTP handler's sink puts what its credit allowed and keeps nothing pending).
    if (gap === 0 || start + gap > this.#capacity || gap > free || (bytes.length <= free && bytes.length + gap > free)) return;
    if (this.#holes - Atomics.load(this.#cells, HOLES_PASSED) >= HOLE_SLOTS) return;
    const slot = HOLE_TABLE + 2 * (this.#holes & (HOLE_SLOTS - 1));
    Atomics.store(this.#cells, slot, this.#written);
    Atomics.store(this.#cells, slot + 1, gap);
    this.#holes = (this.#holes + 1) | 0;
    this.#written = (this.#written + gap) | 0;
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

/**
 * Rings kept for reuse once their bodies are done: a body takes one, rather
 * than zeroed memory of its own. At most 64 of them per worker, kept for good
 * once a burst has ended. A WASI 0.3 handler answers that many requests at
 * once from one instance, each through a ring: with 4 kept, most of 50 at a
 * time took fresh shared memory, which cost its worker ~0.3 ms of a ~1 ms
 * request and 120 MiB more RSS (measured: 1,000 → 1,600–2,000 requests/s,
 * RSS 210 → 86 MiB). An idle ring holds in memory only the pages its last
 * body touched (a small answer's: one or two).
 */
const idle: SharedArrayBuffer[] = [];
const MAX_IDLE = 64;

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
  /** Position up to which bytes were delivered (holes included), and the items counted with them. */
  #taken = 0;
  #items = 0;
  /** Bytes given back to the producer (holes included). */
  #released = 0;
  #holesPassed = 0;
  /** Bytes delivered, and released by the owner (holes not included). */
  #delivered = 0;
  #releasedDelivered = 0;
  /** Holes passed but not yet freed: pairs of (bytes delivered before it, its length), freed once those are released. */
  readonly #holeCredits: number[] = [];
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
    watch.delete(this);
    this.#armed = false;
    this.pull();
  };
  /** What the watch asks while this waits for a publish: whether one came (its wake-up lost). */
  readonly #waiter: Waiter = { ready: () => Atomics.load(this.#cells, WRITTEN) !== this.#taken, wake: this.#woken };

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
      watch.add(this, this.#waiter);
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
    bytes = Math.min(bytes, (this.#delivered - this.#releasedDelivered) | 0);
    this.#releasedDelivered = (this.#releasedDelivered + bytes) | 0;
    this.#free(bytes + this.#passedHoles());
    const free = this.#capacity - ((Atomics.load(this.#cells, WRITTEN) - this.#released) | 0);
    if (free >= this.#capacity / 2 && Atomics.load(this.#cells, STALLED) === 1 && Atomics.exchange(this.#cells, STALLED, 0) === 1) this.#wake();
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
    watch.delete(this);
    // Its own wait on WRITTEN ends (it would hold the ring while nothing is published), and a stalled producer's on
    // STALLED: cleared too, so that a producer whose wake-up is lost hears it from the watch.
    if (this.#armed) Atomics.notify(this.#cells, WRITTEN);
    Atomics.store(this.#cells, STALLED, 0);
    Atomics.notify(this.#cells, STALLED);
  }

  #wake(): void {
    Atomics.notify(this.#cells, STALLED);
    this.wake();
  }

  /** Delivers the bytes up to `written`, around the holes among them. */
  #deliver(written: number): void {
    const items = Atomics.load(this.#cells, ITEMS);
    let newItems = items - this.#items;
    this.#items = items;
    const holes = Atomics.load(this.#cells, HOLES);
    let from = this.#taken;
    while (this.#holesPassed !== holes) {
      const slot = HOLE_TABLE + 2 * (this.#holesPassed & (HOLE_SLOTS - 1));
      const at = Atomics.load(this.#cells, slot);
      // A hole listed with bytes not yet published (the producer published again since `written` was read).
      if (((at - from) | 0) >= ((written - from) | 0)) break;
      if (this.#run(from, at, newItems)) newItems = 0;
      const length = Atomics.load(this.#cells, slot + 1);
      this.#holeCredits.push(this.#delivered, length);
      from = (at + length) | 0;
      this.#holesPassed = (this.#holesPassed + 1) | 0;
    }
    Atomics.store(this.#cells, HOLES_PASSED, this.#holesPassed);
    this.#run(from, written, newItems);
    this.#taken = written;
    // A hole with nothing delivered before it that is still held is free at once.
    this.#free(this.#passedHoles());
  }

  /** Delivers the bytes from `from` to `to` (two views across the ring's end); whether there were any. */
  #run(from: number, to: number, items: number): boolean {
    const length = (to - from) | 0;
    if (length === 0) return false;
    const start = from & (this.#capacity - 1);
    const first = Math.min(length, this.#capacity - start);
    this.#delivered = (this.#delivered + length) | 0;
    this.deliver(this.#data.subarray(start, start + first), items);
    if (length > first) this.deliver(this.#data.subarray(0, length - first), 0);
    return true;
  }

  /** The length of the holes whose bytes before them have all been released, taken off the list. */
  #passedHoles(): number {
    let bytes = 0;
    const credits = this.#holeCredits;
    while (credits.length > 0 && ((this.#releasedDelivered - credits[0]) | 0) >= 0) {
      bytes += credits[1];
      credits.splice(0, 2);
    }
    return bytes;
  }

  #free(bytes: number): void {
    if (bytes === 0) return;
    this.#released = (this.#released + bytes) | 0;
    Atomics.add(this.#cells, RELEASED, bytes);
  }

  #recycle(): void {
    if (!this.#stopped || this.#abandoned || this.#recycled || this.#released !== this.#taken) return;
    this.#recycled = true;
    if (idle.length < MAX_IDLE) idle.push(this.shared);
  }
}
