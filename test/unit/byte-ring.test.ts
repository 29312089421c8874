// The byte ring between an instance thread and its worker's main thread
// (lib/byte-ring.ts): bytes and strings in order across the ring's end, room
// and its wake-ups, the doorbell only while the consumer waits, reuse of a
// ring only once nothing can touch it, and a real producer thread.

import { expect } from 'chai';
import { Worker } from 'node:worker_threads';
import { listedHoles, RingProducer, RingReader } from '../../lib/byte-ring.js';
import { eventually, within } from '../support/eventually.js';
import { patternByte, type RingProducerData } from '../support/ring-producer.js';

/** A reader whose deliveries are kept (as copies) with their item counts; releases are the test's to make. */
function reader(capacity: number) {
  const got: { bytes: Buffer; items: number; shared: boolean }[] = [];
  let wakes = 0;
  const ring = new RingReader(
    capacity,
    (bytes, items) => got.push({ bytes: Buffer.from(bytes), items, shared: bytes.buffer instanceof SharedArrayBuffer }),
    () => wakes++,
  );
  const producer = new RingProducer(ring.shared);
  return {
    ring,
    producer,
    got,
    text: () => Buffer.concat(got.map((g) => g.bytes)).toString(),
    items: () => got.reduce((n, g) => n + g.items, 0),
    get wakes() {
      return wakes;
    },
  };
}

describe('byte ring', () => {
  it('delivers bytes and strings in order, as views of the shared memory, across the ring’s end', () => {
    const r = reader(16);
    r.producer.put('abcdefghij');
    r.producer.publish();
    r.ring.pull();
    expect(r.text()).to.equal('abcdefghij');
    expect(r.got.every((g) => g.shared)).to.equal(true);
    r.ring.release(10);
    // 10 bytes in: the next 12 go 6 to the end and 6 from the start.
    r.producer.put(Buffer.from('klmnop'));
    r.producer.put('qrstuv');
    r.producer.publish();
    r.ring.pull();
    expect(r.text()).to.equal('abcdefghijklmnopqrstuv');
    expect(r.got.slice(1).map((g) => g.bytes.toString())).to.deep.equal(['klmnop', 'qrstuv']);
    expect(r.items()).to.equal(3);
  });

  it('encodes a string whose UTF-8 straddles the end through its scratch, characters whole', () => {
    const r = reader(16);
    r.producer.put('0123456789abc');
    r.producer.publish();
    r.ring.pull();
    r.ring.release(13);
    // 3 bytes to the end: "é€😀" is 2 + 3 + 4 bytes.
    expect(r.producer.put('é€😀')).to.equal(true);
    r.producer.publish();
    r.ring.pull();
    expect(r.text()).to.equal('0123456789abcé€😀');
  });

  it('keeps what does not fit pending, writes it as room comes, and stalls only when full', () => {
    const r = reader(16);
    expect(r.producer.put(Buffer.alloc(24, 'x'))).to.equal(false);
    expect(r.producer.pending).to.equal(true);
    expect(r.producer.free).to.equal(0);
    r.producer.publish();
    expect(r.producer.stall()).to.equal(true);
    expect(r.ring.stalled).to.equal(true);
    r.ring.pull();
    r.ring.release(7);
    expect(r.wakes, 'less than half free: no wake-up').to.equal(0);
    r.ring.release(1);
    expect(r.wakes, 'half free: one wake-up').to.equal(1);
    expect(r.ring.stalled).to.equal(false);
    r.ring.release(8);
    expect(r.wakes, 'not stalled any more: no second wake-up').to.equal(1);
    expect(r.producer.flush()).to.equal(true);
    r.producer.publish();
    r.ring.pull();
    expect(r.text()).to.equal('x'.repeat(24));
    expect(r.items(), 'an item split across deliveries counts once').to.equal(1);
  });

  it('does not stall when room came between the look and the wait', () => {
    const r = reader(16);
    r.producer.put(Buffer.alloc(16));
    r.producer.publish();
    r.ring.pull();
    r.ring.release(16);
    expect(r.producer.stall()).to.equal(false);
    expect(r.ring.stalled).to.equal(false);
  });

  it('wakes the consumer at the first publish once it waits, not at every publish, and not while bytes keep coming', async () => {
    const r = reader(1024);
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    let notified = 0;
    const notify = Atomics.notify;
    Atomics.notify = ((cells: Int32Array, index: number, count?: number) => {
      notified++;
      return notify(cells, index, count);
    }) as typeof Atomics.notify;
    try {
      r.ring.pull(); // finds nothing: waits
      for (let i = 0; i < 10; i++) {
        r.producer.put(`${i}\n`);
        r.producer.publish();
      }
      expect(notified).to.equal(1);
      await turn();
      expect(r.items(), 'delivered once woken').to.equal(10);
      // While bytes keep coming it looks again each turn, unasked.
      r.producer.put('10\n');
      r.producer.publish();
      expect(notified).to.equal(1);
      await turn();
      expect(r.items()).to.equal(11);
      // A turn that finds nothing has it wait again.
      await turn();
      r.producer.put('11\n');
      r.producer.publish();
      expect(notified).to.equal(2);
      await turn();
      expect(r.items()).to.equal(12);
    } finally {
      Atomics.notify = notify;
    }
  });

  it('is reused once its producer ended and every byte was released; never when a byte is held or the producer was cut off', () => {
    const capacity = 4096;
    const used = reader(capacity);
    used.producer.put('held');
    used.producer.publish();
    used.ring.end();
    expect(used.text()).to.equal('held');
    expect(new RingReader(capacity, () => {}, () => {}).shared, 'a byte is still held').to.not.equal(used.ring.shared);
    used.ring.release(4);
    const next = new RingReader(capacity, () => {}, () => {});
    expect(next.shared, 'released whole: reused').to.equal(used.ring.shared);
    expect(new RingProducer(next.shared).free, 'and empty').to.equal(capacity);

    const cut = reader(capacity);
    cut.ring.abandon();
    expect(new RingReader(capacity, () => {}, () => {}).shared).to.not.equal(cut.ring.shared);
  });

  it('once reused, is not touched by its former reader: a late close (its client gone after the body ended) leaves the new body open', () => {
    const capacity = 4096;
    const former = reader(capacity);
    former.producer.put('done');
    former.producer.publish();
    former.ring.end();
    former.ring.release(4);
    const now = reader(capacity);
    expect(now.ring.shared, 'reused').to.equal(former.ring.shared);
    former.ring.close();
    former.ring.end();
    former.ring.abandon();
    expect(now.producer.closed, 'the new body is still open').to.equal(false);
    expect(now.producer.put('still'), 'and takes bytes').to.equal(true);
    now.producer.publish();
    now.ring.pull();
    expect(now.text()).to.equal('still');
    expect(former.text(), 'the former reader delivers nothing of it').to.equal('done');
  });

  describe('when a wake-up is lost (Atomics.notify reaching nobody)', () => {
    const notify = Atomics.notify;
    beforeEach(() => {
      Atomics.notify = () => 0;
    });
    afterEach(() => {
      Atomics.notify = notify;
    });

    it('the consumer, armed, still takes what was published, within its watch', async () => {
      const r = reader(16);
      r.ring.pull();
      r.producer.put('abc');
      r.producer.publish();
      const published = performance.now();
      await within(eventually(() => expect(r.text()).to.equal('abc'), { what: 'the bytes delivered', intervalMs: 5 }), 2_000, 'the watch');
      expect(performance.now() - published).to.be.below(1_000);
    });

    it('the producer, stalled, still goes on once room came, within its watch', async () => {
      const r = reader(16);
      r.producer.put('0123456789abcdef');
      r.producer.publish();
      expect(r.producer.stall()).to.equal(true);
      const room = r.producer.room();
      r.ring.pull();
      r.ring.release(16);
      expect(r.producer.free).to.equal(16);
      await within(room, 2_000, 'the producer to be told of room');
    });
  });

  it('refuses a capacity that is no power of two', () => {
    expect(() => new RingReader(1000, () => {}, () => {})).to.throw(RangeError, /power of two/);
  });

  it('carries 16 MiB from a producer thread in items of every size, strings and bytes, byte for byte, through a 64 KiB ring', async function () {
    this.timeout(20_000);
    const total = 16 << 20;
    let expected = 0;
    let bad = -1;
    let items = 0;
    let wakes = 0;
    const ring: RingReader = new RingReader(
      64 * 1024,
      (bytes, n) => {
        items += n;
        for (let i = 0; i < bytes.length; i++) if (bad === -1 && bytes[i] !== patternByte(expected + i)) bad = expected + i;
        expected += bytes.length;
        // Released a turn later, as a socket would.
        const length = bytes.length;
        setImmediate(() => ring.release(length));
      },
      () => wakes++,
    );
    const worker = new Worker(new URL('../support/ring-producer.js', import.meta.url), { workerData: { ring: ring.shared, total } satisfies RingProducerData });
    ring.pull();
    try {
      await within(
        new Promise<void>((resolve, reject) => {
          worker.on('error', reject);
          worker.once('message', () => {
            ring.end();
            resolve();
          });
        }),
        15_000,
        'the producer thread to end',
      );
    } finally {
      await worker.terminate();
    }
    expect(bad, 'the first byte out of place').to.equal(-1);
    expect(expected).to.equal(total);
    expect(items).to.be.greaterThan(100);
    expect(wakes, 'a full ring woke its producer').to.be.greaterThan(0);
    // Large items at every alignment went in after holes; with every byte released, the holes were freed too.
    expect(listedHoles(ring.shared)).to.be.greaterThan(10);
    await new Promise((resolve) => setImmediate(resolve));
    expect(new RingProducer(ring.shared).free).to.equal(64 * 1024);
  });

  it('puts a large item that lies otherwise than the write position after a hole, skipped on delivery and freed with the bytes before it', () => {
    const r = reader(64 * 1024);
    const offsets: number[] = [];
    const ring = new RingReader(64 * 1024, (bytes) => offsets.push(bytes.byteOffset));
    const producer = new RingProducer(ring.shared);
    // 8 KiB at offset 8 of its buffer: 3 bytes in, the write position lies at 3.
    const item = new Uint8Array(8192 + 16).subarray(8, 8 + 8192).map((_, i) => i % 251);
    for (const p of [r.producer, producer]) {
      p.put('abc');
      p.put(item);
      p.publish();
    }
    r.ring.pull();
    ring.pull();
    expect(r.got.map((g) => g.bytes.length)).to.deep.equal([3, 8192]);
    expect(Buffer.concat(r.got.map((g) => g.bytes)).equals(Buffer.concat([Buffer.from('abc'), item]))).to.equal(true);
    expect(r.items()).to.equal(2);
    // The item's bytes lie as its source's, modulo 8: copied word by word.
    expect((offsets[1] - item.byteOffset) % 8).to.equal(0);
    // 5 bytes of hole: freed once the 3 before it are, not before.
    const capacity = 64 * 1024;
    expect(r.producer.free).to.equal(capacity - 3 - 5 - 8192);
    r.ring.release(2);
    expect(r.producer.free).to.equal(capacity - 1 - 5 - 8192);
    r.ring.release(1);
    expect(r.producer.free).to.equal(capacity - 8192);
    r.ring.release(8192);
    expect(r.producer.free).to.equal(capacity);
  });

  it('leaves no hole that would keep part of an item out of a ring it fits in whole (a handler’s sink puts what its credit allowed)', () => {
    const r = reader(16 * 1024);
    r.producer.put('abc');
    // 16 KiB less the 3: fits exactly where it falls, not after a hole of 5.
    const item = new Uint8Array(16 * 1024 + 8).subarray(0, 16 * 1024 - 3);
    expect(r.producer.put(item)).to.equal(true);
    expect(r.producer.pending).to.equal(false);
    expect(r.producer.free).to.equal(0);
  });

  it('leaves no hole before a small item, or one that lies as the write position does', () => {
    const r = reader(64 * 1024);
    r.producer.put('abc');
    r.producer.put(new Uint8Array(4095));
    // Now at 4098: a large item at an offset of 2 modulo 8 lies alike.
    r.producer.put(new Uint8Array(8192 + 8).subarray(2, 2 + 8192));
    r.producer.publish();
    r.ring.pull();
    expect(r.got.map((g) => g.bytes.length)).to.deep.equal([3 + 4095 + 8192]);
    expect(r.producer.free).to.equal(64 * 1024 - 3 - 4095 - 8192);
  });
});
