// Numeric lists decoded within one call share chunks of memory (typed-arena.ts):
// the values stay exact, views are aligned, and no two calls share a chunk.

import { expect } from 'chai';
import { functionCodec, typeCodec } from '../../lib/wit/codec.js';
import type { WitFunction, WitType } from '../../lib/wit/types.js';
import { func, list, prim } from '../support/wit-types.js';

/** `f: func(p0: T0, p1: T1, ...)` */
const fn = (...types: WitType[]): WitFunction => func('f', Object.fromEntries(types.map((type, i) => [`p${i}`, type])), null);

describe('typed arrays of one decode', () => {
  it('small lists of one call are views into shared chunks, with their values', () => {
    const decode = functionCodec(fn(list(list(prim('u32'))))).decodeArgs;
    const [lists] = decode([[[1], [2, 3], [], [4_000_000_000]]]) as [Uint32Array[]];
    expect(lists.map((l) => [...l])).to.deep.equal([[1], [2, 3], [], [4_000_000_000]]);
    expect(new Set(lists.map((l) => l.buffer)).size).to.equal(1);
    expect(lists[0].buffer.byteLength).to.be.below(1024);
  });

  it('views are aligned to their element size, whatever came before them', () => {
    const decode = functionCodec(fn(list(prim('u8')), list(prim('f64')), list(prim('u8')), list(prim('s64')), list(prim('u16')))).decodeArgs;
    const args = decode([[1, 2, 3], [1.5, -2], [9], ['-9223372036854775808'], [65535]]) as ArrayBufferView[];
    for (const a of args) expect(a.byteOffset % (a as Uint8Array).BYTES_PER_ELEMENT).to.equal(0);
    expect([...(args[1] as Float64Array)]).to.deep.equal([1.5, -2]);
    expect([...(args[3] as BigInt64Array)]).to.deep.equal([-9223372036854775808n]);
    expect([...(args[4] as Uint16Array)]).to.deep.equal([65535]);
  });

  it('base64 text decodes into the chunks too, padded or not, standard or URL-safe', () => {
    const decode = functionCodec(fn(list(list(prim('u8'))))).decodeArgs;
    const [blobs] = decode([['', 'AQ==', 'AQI', 'AQID', '_-8', '/+8=']]) as [Uint8Array[]];
    expect(blobs.map((b) => [...b])).to.deep.equal([[], [1], [1, 2], [1, 2, 3], [255, 239], [255, 239]]);
    expect(new Set(blobs.filter((b) => b.length > 0).map((b) => b.buffer)).size).to.equal(1);
  });

  it('chunks grow for many lists, and a large list has a buffer of its own', () => {
    const decode = functionCodec(fn(list(list(prim('u32'))), list(prim('u32')))).decodeArgs;
    const many = Array.from({ length: 10_000 }, (_, i) => [i, i + 1]);
    const large = Array.from({ length: 2_000 }, (_, i) => i);
    const [lists, own] = decode([many, large]) as [Uint32Array[], Uint32Array];
    expect(lists.every((l, i) => l[0] === i && l[1] === i + 1)).to.equal(true);
    // 80 KB of lists in chunks that double from 256 B: a handful of chunks, not 10,000 buffers.
    expect(new Set(lists.map((l) => l.buffer)).size).to.be.within(2, 12);
    expect(own.buffer.byteLength).to.equal(8_000);
    expect(own.byteOffset).to.equal(0);
  });

  it('no two calls share a chunk', () => {
    const decode = functionCodec(fn(list(prim('u32')))).decodeArgs;
    const [a] = decode([[1]]) as [Uint32Array];
    const [b] = decode([[2]]) as [Uint32Array];
    expect(a.buffer).to.not.equal(b.buffer);
    expect([a[0], b[0]]).to.deep.equal([1, 2]);
  });

  it('a decode outside a call (typeCodec) gives each list its own buffer', () => {
    const codec = typeCodec(list(list(prim('u32'))));
    const [a, b] = codec.decode([[1], [2]], 'x') as Uint32Array[];
    expect(a.buffer).to.not.equal(b.buffer);
  });

  it('a call that fails leaves the next call a fresh arena', () => {
    const decode = functionCodec(fn(list(list(prim('u8'))))).decodeArgs;
    expect(() => decode([[[1], [256]]])).to.throw('p0[1][0]: expected u8 (0..255), got 256');
    const [[x]] = decode([[[7]]]) as [Uint8Array[]];
    expect([...x]).to.deep.equal([7]);
    expect(x.buffer.byteLength).to.be.below(1024);
  });

  it('the arguments clone to another thread as the values they hold', () => {
    const decode = functionCodec(fn(list(list(prim('s16'))), list(prim('f32')))).decodeArgs;
    const args = decode({ p0: [[-1, 2], [], [3]], p1: [0.5] });
    const cloned = structuredClone(args) as [Int16Array[], Float32Array];
    expect(cloned[0].map((l) => [...l])).to.deep.equal([[-1, 2], [], [3]]);
    expect([...cloned[1]]).to.deep.equal([0.5]);
  });
});
