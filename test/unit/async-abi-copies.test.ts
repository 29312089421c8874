// Streams and futures between a guest and rt, as rt's own host
// carries them (lib/worker/execution/async-abi/copies.ts), on a memory of
// the test's own: a guest's write waits for rt's read and completes with
// what rt took; a write finds a dropped reader; bytes rt hands the guest
// fill its read when they come; a future's value goes to rt once rt holds
// its readable end; what rt made comes back to it untouched.

import { expect } from 'chai';
import { t, type FuturePayload, type Handles } from '../../lib/wit/canon/abi-types.js';
import { GuestMemory } from '../../lib/wit/canon/guest-memory.js';
import { BLOCKED, hostStream, newFuture, newStream, type HostStreamReader } from '../../lib/worker/execution/async-abi/copies.js';
import { EVENT } from '../../lib/worker/execution/async-abi/waitables.js';

const NO_HANDLES: Handles = {
  own: () => 0,
  take: () => ({}),
  borrow: () => ({}),
  liftReadable: () => undefined,
  lowerReadable: () => 0,
};

const U32: FuturePayload = { type: t.u32, dropped: 'dropped' };

function memory(): GuestMemory {
  return new GuestMemory(new WebAssembly.Memory({ initial: 1 }), undefined);
}

const COMPLETED = (n: number) => n << 4;
const DROPPED = (n: number) => 1 | (n << 4);

describe("rt's own host: streams and futures between a guest and rt", () => {
  it('takes a guest’s write when rt reads, up to what rt asks; the write completes with that much, and its task hears it', async () => {
    const mem = memory();
    const [readable, writable] = newStream(mem, NO_HANDLES, undefined);
    mem.u8().set(new TextEncoder().encode('hello world'), 100);
    expect(writable.stream.write(writable, 100, 11)).to.equal(BLOCKED);
    const reader = readable.lift() as HostStreamReader;
    const first = await reader.read(5);
    expect(Buffer.from(first.value as Uint8Array).toString()).to.equal('hello');
    expect(writable.takeEvent()).to.deep.equal([EVENT.STREAM_WRITE, 0, COMPLETED(5)]);
    // A read waiting when the guest writes takes it at once.
    const waiting = reader.read(64);
    expect(writable.stream.write(writable, 105, 6)).to.equal(COMPLETED(6));
    expect(Buffer.from((await waiting).value as Uint8Array).toString()).to.equal(' world');
    writable.stream.dropWriter();
    expect(await reader.read(64)).to.deep.equal({ done: true });
  });

  it('lends rt a stream<u8>’s bytes in one reused buffer (a consumer that copies at once), at once when the guest wrote already', async () => {
    const mem = memory();
    const [readable, writable] = newStream(mem, NO_HANDLES, undefined);
    const reader = readable.lift() as HostStreamReader;
    expect(reader.takeLent(64), 'nothing written yet').to.equal(undefined);
    mem.u8().set(new TextEncoder().encode('first'), 100);
    expect(writable.stream.write(writable, 100, 5)).to.equal(BLOCKED);
    const first = reader.takeLent(64) as Uint8Array;
    expect(Buffer.from(first).toString()).to.equal('first');
    expect(writable.takeEvent(), 'the write completed with what rt took').to.deep.equal([EVENT.STREAM_WRITE, 0, COMPLETED(5)]);
    // The guest's memory is its own again: what rt was lent is rt's copy.
    mem.u8().set(new TextEncoder().encode('XXXXX'), 100);
    expect(Buffer.from(first).toString()).to.equal('first');
    // A read waiting when the guest writes is lent the same buffer.
    const waiting = reader.readLent(64);
    mem.u8().set(new TextEncoder().encode('second'), 200);
    expect(writable.stream.write(writable, 200, 6)).to.equal(COMPLETED(6));
    const second = (await waiting).value as Uint8Array;
    expect(Buffer.from(second).toString()).to.equal('second');
    expect(second.buffer).to.equal(first.buffer);
    writable.stream.dropWriter();
    expect(reader.takeLent(64), 'the end').to.equal(null);
  });

  it('tells a guest whose reader went away: a pending write, and any later one, finds it dropped', async () => {
    const mem = memory();
    const [readable, writable] = newStream(mem, NO_HANDLES, undefined);
    const reader = readable.lift() as HostStreamReader;
    expect(writable.stream.write(writable, 0, 4)).to.equal(BLOCKED);
    await reader.return();
    expect(writable.takeEvent()).to.deep.equal([EVENT.STREAM_WRITE, 0, DROPPED(0)]);
    expect(writable.stream.write(writable, 0, 4)).to.equal(DROPPED(0));
  });

  it('fills a guest’s read of bytes rt hands it as they come, keeps what did not fit for the next read, and reports the end', async () => {
    const mem = memory();
    const chunks = [new TextEncoder().encode('abcdef')];
    let closed = false;
    const source = { read: () => Promise.resolve(chunks.shift()), close: () => void (closed = true) };
    const end = hostStream(mem, NO_HANDLES, undefined, 'the body as rt made it', () => source);
    expect(end.read(200, 4)).to.equal(BLOCKED);
    await new Promise((resolve) => setImmediate(resolve));
    expect(end.takeEvent()).to.deep.equal([EVENT.STREAM_READ, 0, COMPLETED(4)]);
    expect(Buffer.from(mem.u8().subarray(200, 204)).toString()).to.equal('abcd');
    expect(end.read(300, 4)).to.equal(COMPLETED(2));
    expect(Buffer.from(mem.u8().subarray(300, 302)).toString()).to.equal('ef');
    expect(end.read(300, 4)).to.equal(BLOCKED);
    await new Promise((resolve) => setImmediate(resolve));
    expect(end.takeEvent()).to.deep.equal([EVENT.STREAM_READ, 0, DROPPED(0)]);
    end.drop();
    expect(closed).to.equal(true);
  });

  it('gives rt back what it made, untouched, when the guest hands it over unread (an echo)', () => {
    const end = hostStream(memory(), NO_HANDLES, undefined, 'the body as rt made it', () => {
      throw new Error('never read');
    });
    expect(end.lift()).to.equal('the body as rt made it');
  });

  it('sends a future’s value to rt at once when rt holds the readable end, and once rt takes it when the guest wrote first', async () => {
    const mem = memory();
    mem.view().setUint32(8, 42, true);
    const [early, earlyWriter] = newFuture(mem, NO_HANDLES, U32);
    expect(earlyWriter.future.write(earlyWriter, 8)).to.equal(BLOCKED);
    expect(await early.lift()).to.equal(42);
    expect(earlyWriter.takeEvent()).to.deep.equal([EVENT.FUTURE_WRITE, 0, COMPLETED(1)]);
    const [late, lateWriter] = newFuture(mem, NO_HANDLES, U32);
    const value = late.lift();
    expect(lateWriter.future.write(lateWriter, 8)).to.equal(COMPLETED(1));
    expect(await value).to.equal(42);
  });

  it('gives rt the kind’s dropped value for a future dropped unwritten, and a guest whose own reader it dropped learns its write goes nowhere', async () => {
    const mem = memory();
    const [readable, writer] = newFuture(mem, NO_HANDLES, U32);
    const value = readable.lift();
    writer.future.dropWriter();
    expect(await value).to.equal('dropped');
    // Dropped before rt took the readable end: rt learns it when it does.
    const [late, lateWriter] = newFuture(mem, NO_HANDLES, U32);
    lateWriter.future.dropWriter();
    expect(await late.lift()).to.equal('dropped');
    // A kind whose dropped future is a failure (an export's own future: wit-abi-types.ts).
    const [failing, failingWriter] = newFuture(mem, NO_HANDLES, { ...U32, droppedFails: 'the guest dropped a future it had not written' });
    failingWriter.future.dropWriter();
    const failure = await Promise.resolve(failing.lift()).catch((e: Error) => e.message);
    expect(failure).to.equal('the guest dropped a future it had not written');
    const [own, ownWriter] = newFuture(mem, NO_HANDLES, U32);
    expect(ownWriter.future.write(ownWriter, 8)).to.equal(BLOCKED);
    own.drop();
    expect(ownWriter.takeEvent()).to.deep.equal([EVENT.FUTURE_WRITE, 0, DROPPED(0)]);
  });
});

describe("rt's own host: streams of items other than bytes", () => {
  it('reads what a guest writes to a stream<u32> item by item, as values, counting items, not bytes', async () => {
    const mem = memory();
    const [readable, writable] = newStream(mem, NO_HANDLES, t.u32);
    [7, 8, 9].forEach((n, i) => mem.view().setUint32(64 + i * 4, n, true));
    expect(writable.stream.write(writable, 64, 3)).to.equal(BLOCKED);
    const reader = readable.lift() as HostStreamReader;
    expect((await reader.read(2)).value).to.deep.equal([7, 8]);
    expect(writable.takeEvent()).to.deep.equal([EVENT.STREAM_WRITE, 0, COMPLETED(2)]);
    // A write past the memory's end traps, measured in items.
    expect(() => writable.stream.write(writable, 65_536 - 8, 3)).to.throw(/out of its memory's bounds/);
  });

  it('fills a guest’s read of tuples rt hands it, keeping what did not fit', async () => {
    const mem = memory();
    const items: unknown[][] = [[[1, 2], [3, 4], [5, 6]]];
    const end = hostStream(mem, NO_HANDLES, t.tuple(t.u32, t.u32), undefined, () => ({ read: () => Promise.resolve(items.shift()), close: () => {} }));
    expect(end.read(128, 2)).to.equal(BLOCKED);
    await new Promise((resolve) => setImmediate(resolve));
    expect(end.takeEvent()).to.deep.equal([EVENT.STREAM_READ, 0, COMPLETED(2)]);
    expect(Array.from(new Uint32Array(mem.memory.buffer, 128, 4))).to.deep.equal([1, 2, 3, 4]);
    expect(end.read(128, 2)).to.equal(COMPLETED(1));
    expect(Array.from(new Uint32Array(mem.memory.buffer, 128, 2))).to.deep.equal([5, 6]);
  });
});
