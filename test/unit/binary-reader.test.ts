// The shared WebAssembly byte cursor (component reader, memory cap): LEB128
// edge cases and how truncation is reported in the caller's words.

import { expect } from 'chai';

import { BinaryReader, encodeU32, type BinaryFaults } from '../../lib/wit/binary-reader.js';
import { MemoryCapError, capMemories } from '../../lib/worker/sandbox/memory-cap.js';

class Fault extends Error {}
const faults: BinaryFaults = {
  truncated: (offset) => new Fault(`truncated at ${offset}`),
  malformed: (offset, what) => new Fault(`malformed at ${offset}: ${what}`),
};
const reader = (...bytes: number[]): BinaryReader => new BinaryReader(Uint8Array.from(bytes), 0, bytes.length, faults);

describe('binary reader', () => {
  it('reads one-byte and multi-byte unsigned LEB128', () => {
    expect(reader(0x00).u32()).to.equal(0);
    expect(reader(0x7f).u32()).to.equal(127);
    expect(reader(0x80, 0x01).u32()).to.equal(128);
    const r = reader(0xe5, 0x8e, 0x26, 0x2a);
    expect(r.u32()).to.equal(624_485);
    expect(r.pos).to.equal(3);
    expect(r.byte()).to.equal(0x2a);
  });

  it('reads the largest u32 without losing bits to 32-bit arithmetic', () => {
    expect(reader(0xff, 0xff, 0xff, 0xff, 0x0f).u32()).to.equal(0xffff_ffff);
  });

  it('refuses an unsigned LEB128 longer than five bytes', () => {
    expect(() => reader(0x80, 0x80, 0x80, 0x80, 0x80, 0x00).u32()).to.throw(Fault, 'malformed at 5: LEB128 integer too long');
  });

  it('reads signed 33-bit LEB128, negatives included', () => {
    expect(reader(0x7f).s33()).to.equal(-1);
    expect(reader(0x40).s33()).to.equal(-64);
    expect(reader(0x3f).s33()).to.equal(63);
    expect(reader(0xc0, 0x00).s33()).to.equal(64);
    expect(reader(0x80, 0x7f).s33()).to.equal(-128);
    expect(reader(0x80, 0x80, 0x80, 0x80, 0x70).s33()).to.equal(-(2 ** 32));
    expect(reader(0xff, 0xff, 0xff, 0xff, 0x0f).s33()).to.equal(0xffff_ffff);
  });

  it('reports input that ends inside an integer, a name or a skip as truncated, at the offset', () => {
    expect(() => reader(0x80, 0x80).u32()).to.throw(Fault, 'truncated at 2');
    expect(() => reader(0xff).s33()).to.throw(Fault, 'truncated at 1');
    expect(() => reader(0x03, 0x61, 0x62).string()).to.throw(Fault, 'truncated at 1');
    expect(() => reader(0x01).skip(2)).to.throw(Fault, 'truncated at 0');
    expect(() => reader().byte()).to.throw(Fault, 'truncated at 0');
  });

  it('reads names, vectors and optionals', () => {
    const r = reader(0x02, 0x68, 0x69, 0x02, 0x05, 0x06, 0x00, 0x01, 0x07, 0x02);
    expect(r.string()).to.equal('hi');
    expect(r.vec(() => r.byte())).to.deep.equal([5, 6]);
    expect(r.optional(() => r.byte())).to.equal(undefined);
    expect(r.optional(() => r.byte())).to.equal(7);
    expect(() => r.optional(() => r.byte())).to.throw(Fault, 'malformed at 10: expected 0x00 or 0x01, got 0x2');
  });

  it('encodes what it reads', () => {
    for (const n of [0, 1, 127, 128, 16_383, 16_384, 624_485, 0xffff_ffff]) {
      const bytes = encodeU32(n);
      expect(reader(...bytes).u32(), String(n)).to.equal(n);
    }
    expect(encodeU32(128)).to.deep.equal([0x80, 0x01]);
  });
});

describe('memory cap', () => {
  const PAGE = 65_536;
  // A core module with only a memory section: one memory of `min` pages, with `max` when given.
  const moduleWith = (min: number, max?: number): Uint8Array<ArrayBuffer> => {
    const memory = max === undefined ? [0x00, ...encodeU32(min)] : [0x01, ...encodeU32(min), ...encodeU32(max)];
    const body = [0x01, ...memory];
    return Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x05, ...encodeU32(body.length), ...body]);
  };

  it('gives a memory without a maximum the cap as its maximum', async () => {
    const capped = capMemories(moduleWith(1), 4 * PAGE);
    expect([...capped.subarray(8)]).to.deep.equal([0x05, 0x04, 0x01, 0x01, 0x01, 0x04]);
    expect(WebAssembly.validate(capped)).to.equal(true);
  });

  it('lowers a larger maximum (multi-byte LEB128) to the cap and keeps a smaller one', () => {
    expect([...capMemories(moduleWith(2, 65_536), 300 * PAGE).subarray(8)]).to.deep.equal([0x05, 0x05, 0x01, 0x01, 0x02, 0xac, 0x02]);
    expect([...capMemories(moduleWith(2, 3), 300 * PAGE).subarray(8)]).to.deep.equal([0x05, 0x04, 0x01, 0x01, 0x02, 0x03]);
  });

  it('refuses a memory whose minimum is above the cap', () => {
    expect(() => capMemories(moduleWith(20), 16 * PAGE)).to.throw(MemoryCapError, 'needs 1.25 MiB of memory to start, more than runtime.max_memory_mb (1 MiB)');
  });

  it('reports a module that ends inside a memory section as truncated', () => {
    const cut = moduleWith(1, 0x4000).subarray(0, 13);
    expect(() => capMemories(cut, 16 * PAGE)).to.throw(MemoryCapError, 'truncated core module');
  });

  it('returns a module without memories as it is', () => {
    const bytes = Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    expect(capMemories(bytes, PAGE)).to.equal(bytes);
  });
});
