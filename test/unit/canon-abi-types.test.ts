// The canonical ABI's value layout as rt's own host uses it
// (lib/wit/canon/abi-types.ts): sizes, alignments and flattening as the
// spec gives them (checked against the core signatures wit-component gave a
// real guest: the P3 handler's task.return takes eight values), and values
// stored, loaded and lifted from flat values round trip, in a memory of the
// test's own with a bump allocator as the guest's realloc.

import { expect } from 'chai';
import { flatten, layout, liftFlat, load, lowerFlat, store, t, type Handles } from '../../lib/wit/canon/abi-types.js';
import { AbiTrap, GuestMemory } from '../../lib/wit/canon/guest-memory.js';
import { errorCode } from '../../lib/worker/wasi-host/p3/canon-functions.js';

class Thing {}

/** A memory of one page, allocating upwards from 1024, and a table of handles to plain objects. */
function guest(): { mem: GuestMemory; handles: Handles; held: Map<number, object> } {
  const memory = new WebAssembly.Memory({ initial: 1 });
  let next = 1024;
  const mem = new GuestMemory(memory, (_old, _oldSize, align, size) => {
    next = Math.ceil(next / align) * align;
    const ptr = next;
    next += size;
    return ptr;
  });
  const held = new Map<number, object>();
  let handle = 0;
  const handles: Handles = {
    own: (object) => (held.set(++handle, object), handle),
    take: (h) => {
      const object = held.get(h);
      if (!object) throw new AbiTrap(`no handle ${h}`);
      held.delete(h);
      return object;
    },
    borrow: (h) => held.get(h)!,
    liftReadable: () => undefined,
    lowerReadable: () => 0,
  };
  return { mem, handles, held };
}

describe('canonical ABI value layout (rt’s own host)', () => {
  it("lays out wasi:http's error-code as the spec does: a byte's discriminant, the payload at 8, 32 bytes in all", () => {
    expect(layout(errorCode)).to.include({ size: 32, align: 8, discSize: 1, payloadOffset: 8 });
    expect(layout(t.result(t.option(t.own(Thing)), errorCode))).to.include({ size: 40, align: 8, payloadOffset: 8 });
    expect(layout(t.record(['a', t.u8], ['b', t.u32], ['c', t.u16]))).to.deep.include({ size: 12, align: 4, offsets: [0, 4, 8] });
    expect(layout(t.enum('io', 'illegal-byte-sequence', 'pipe'))).to.include({ size: 1, align: 1 });
  });

  it('flattens result<response, error-code> to the eight core values of a handler’s task.return, the u64 slot joined', () => {
    expect(flatten(t.result(t.own(Thing), errorCode))).to.deep.equal(['i32', 'i32', 'i32', 'i64', 'i32', 'i32', 'i32', 'i32']);
    expect(flatten(t.tuple(t.string, t.bytes))).to.deep.equal(['i32', 'i32', 'i32', 'i32']);
  });

  it('stores and loads error-codes of every payload shape, strings and options included', () => {
    const { mem, handles } = guest();
    const codes = [
      { tag: 'DNS-timeout' },
      { tag: 'DNS-error', val: { rcode: 'NXDOMAIN', infoCode: 3 } },
      { tag: 'DNS-error', val: { rcode: undefined, infoCode: undefined } },
      { tag: 'TLS-alert-received', val: { alertId: 40, alertMessage: 'handshake failure' } },
      { tag: 'HTTP-request-body-size', val: 18_446_744_073_709_551_615n },
      { tag: 'HTTP-request-header-size', val: { fieldName: 'x-big', fieldSize: 70_000 } },
      { tag: 'HTTP-response-trailer-size', val: { fieldName: undefined, fieldSize: 1 } },
      { tag: 'internal-error', val: 'héllo ✓' },
      { tag: 'internal-error', val: undefined },
    ];
    for (const code of codes) {
      store(mem, handles, errorCode, code, 64);
      expect(load(mem, handles, errorCode, 64)).to.deep.equal(code);
    }
  });

  it('lifts a flat err out of the joined slots, a case’s i32 carried in an i64 slot', () => {
    const { mem, handles } = guest();
    const type = t.result(t.own(Thing), errorCode);
    // err(HTTP-request-body-size(some(7))): result 1, error-code 17, option 1 in the next slot, 7 in the i64 slot.
    expect(liftFlat(mem, handles, [type], [1, 17, 1, 7n, 0, 0, 0, 0])).to.deep.equal([{ tag: 'err', val: { tag: 'HTTP-request-body-size', val: 7n } }]);
    // err(HTTP-request-header-section-size(some(9))): its u32 rides in the i64 slot as a bigint.
    expect(liftFlat(mem, handles, [type], [1, 21, 1, 9n, 0, 0, 0, 0])).to.deep.equal([{ tag: 'err', val: { tag: 'HTTP-request-header-section-size', val: 9 } }]);
    expect(() => liftFlat(mem, handles, [type], [1, 99, 0, 0n, 0, 0, 0, 0])).to.throw(AbiTrap, 'invalid discriminant 99');
  });

  it('moves owned handles into the table and out again, and traps on one the guest does not hold', () => {
    const { mem, handles, held } = guest();
    const thing = new Thing();
    store(mem, handles, t.tuple(t.own(Thing), t.u32), [thing, 5], 128);
    expect(held.size).to.equal(1);
    expect(load(mem, handles, t.tuple(t.own(Thing), t.u32), 128)).to.deep.equal([thing, 5]);
    expect(held.size).to.equal(0);
    expect(() => load(mem, handles, t.own(Thing), 128)).to.throw(AbiTrap);
  });

  it('stores lists of lists through the guest’s realloc, and reads them back', () => {
    const { mem, handles } = guest();
    const type = t.list(t.tuple(t.string, t.bytes));
    const value = [
      ['content-type', Uint8Array.from([116, 101, 120, 116])],
      ['x-empty', new Uint8Array()],
    ];
    store(mem, handles, type, value, 0);
    expect(load(mem, handles, type, 0)).to.deep.equal(value);
  });

  it('traps on a pointer past the memory and on a string that is not UTF-8', () => {
    const { mem, handles } = guest();
    expect(() => load(mem, handles, t.u64, 65_532)).to.throw(AbiTrap, 'out of its memory');
    mem.u8().set([0xff, 0xfe], 300);
    expect(() => mem.string(300, 2)).to.throw(AbiTrap, 'not UTF-8');
    const v = mem.view();
    v.setUint32(400, 65_530, true);
    v.setUint32(404, 100, true);
    expect(() => load(mem, handles, t.bytes, 400)).to.throw(AbiTrap, 'out of its memory');
  });

  it('passes f32 and f64 as core floats and in memory, and as the same bits in a variant’s joined integer slots', () => {
    const { mem, handles } = guest();
    const narrow = t.variant(['f', t.f32], ['n', t.u32]);
    const wide = t.variant(['f', t.f32], ['d', t.f64], ['none']);
    expect(flatten(narrow)).to.deep.equal(['i32', 'i32']);
    expect(flatten(wide)).to.deep.equal(['i32', 'i64']);
    expect(flatten(t.variant(['d', t.f64], ['u', t.u64]))).to.deep.equal(['i32', 'i64']);
    expect(flatten(t.record(['x', t.f32], ['y', t.f64]))).to.deep.equal(['f32', 'f64']);
    expect(lowerFlat(mem, handles, [t.f32, t.f64], [1.1, 2.5])).to.deep.equal([Math.fround(1.1), 2.5]);
    // 1.5 as f32 is 0x3fc00000; 2.5 as f64 is 0x4004000000000000.
    const core = lowerFlat(mem, handles, [narrow, narrow, wide, wide, wide], [{ tag: 'f', val: 1.5 }, { tag: 'n', val: 7 }, { tag: 'f', val: 1.5 }, { tag: 'd', val: 2.5 }, { tag: 'none' }]);
    expect(core).to.deep.equal([0, 0x3fc00000, 1, 7, 0, 0x3fc00000n, 1, 0x4004000000000000n, 2, 0n]);
    expect(liftFlat(mem, handles, [narrow, narrow, wide, wide, wide], core)).to.deep.equal([{ tag: 'f', val: 1.5 }, { tag: 'n', val: 7 }, { tag: 'f', val: 1.5 }, { tag: 'd', val: 2.5 }, { tag: 'none' }]);
    const point = t.record(['x', t.f32], ['y', t.f64]);
    expect(layout(point)).to.include({ size: 16, align: 8 });
    store(mem, handles, point, { x: -0.25, y: Math.PI }, 2048);
    expect(load(mem, handles, point, 2048)).to.deep.equal({ x: -0.25, y: Math.PI });
  });

  it('lowers values to the core values they flatten to, and lifts them back: case indices, joined slots, lists in the guest’s memory', () => {
    const { mem, handles } = guest();
    expect(lowerFlat(mem, handles, [t.enum('a', 'b'), t.result(), t.option(t.u8), t.option(t.u8)], ['b', { tag: 'err' }, undefined, null])).to.deep.equal([1, 1, 0, 0, 0, 0]);
    // A variant's i32 case in a slot another case widens to i64 goes as an i64.
    const weight = t.variant(['light'], ['small', t.u32], ['heavy', t.s64]);
    expect(lowerFlat(mem, handles, [weight, weight, weight], [{ tag: 'light' }, { tag: 'small', val: 7 }, { tag: 'heavy', val: -5n }])).to.deep.equal([0, 0n, 1, 7n, 2, -5n]);
    // jco's option of an option is tagged; a list of numbers is a typed array.
    const types = [t.option(t.option(t.u8)), { kind: 'option', of: t.option(t.u8), tagged: true }, { kind: 'list', of: t.u32, typed: Uint32Array }, t.record(['get-HTTP-url', t.string])] as const;
    const values = [7, { tag: 'some', val: undefined }, Uint32Array.of(1, 4_000_000_000), { getHttpUrl: 'ünï' }];
    const core = lowerFlat(mem, handles, types, values);
    expect(liftFlat(mem, handles, types, core)).to.deep.equal(values);
    expect(() => lowerFlat(mem, handles, [t.enum('a')], ['z'])).to.throw(/no case z/);
  });
});
