// A byte stream's items read in place from the guest's memory
// (lib/worker/execution/stream-items.ts), on real components through jco's
// real glue, in this process: the first item through the glue, the rest as
// views of the guest's memory with no buffer of their own, the guest's
// post-return run before the next call, and a malformed answer a trap.

import { expect } from 'chai';
import type { ComponentSource } from '../../examples/builder.js';
import { compileCoreModules } from '../../lib/worker/execution/compile-core-modules.js';
import { ComponentInstance, type CallOutcome } from '../../lib/worker/execution/component-instance.js';
import { instanceSpec } from '../../lib/worker/execution/instance-spec.js';
import { byteNexts, InPlaceBytes, streamItems, type StreamItems } from '../../lib/worker/execution/stream-items.js';
import type { ServiceDescriptor } from '../../lib/service.js';
import { catalog } from '../support/hosting.js';
import { CHUNKS, STREAMS } from '../support/streaming-fixtures.js';

const CAP = 256 << 20;

/**
 * `open(n, ending)` → `chunks`: n items of 4 KiB, item k filled with byte k,
 * at the same place in memory each time; then, by `ending`: 0 none, 1 an
 * option whose discriminant is 2, 2 a list past the memory's end. A
 * post-return counts itself (`posted()`), and `next` traps when the last
 * post-return is still owed: the guest itself checks the canonical ABI's order.
 */
const POSTED: ComponentSource = {
  kind: 'wat',
  world: 'posted',
  wit: `package acme:posted@1.0.0;
interface api {
  resource chunks { next: func() -> option<list<u8>>; }
  open: func(n: u32, ending: u32) -> chunks;
  posted: func() -> u32;
}
world posted { export api; }`,
  // The return area is at 16, a stream's state (sent, n, ending) at its rep 64, items at 4096.
  wat: `(module
  (import "[export]acme:posted/api@1.0.0" "[resource-new]chunks" (func $resource_new (param i32) (result i32)))
  (memory (export "memory") 1)
  (global $owed (mut i32) (i32.const 0))
  (global $posted (mut i32) (i32.const 0))
  (func (export "acme:posted/api@1.0.0#open") (param $n i32) (param $ending i32) (result i32)
    (i32.store offset=0 (i32.const 64) (i32.const 0))
    (i32.store offset=4 (i32.const 64) (local.get $n))
    (i32.store offset=8 (i32.const 64) (local.get $ending))
    (call $resource_new (i32.const 64)))
  (func (export "acme:posted/api@1.0.0#posted") (result i32) (global.get $posted))
  (func (export "acme:posted/api@1.0.0#[method]chunks.next") (param $rep i32) (result i32)
    (local $sent i32)
    (if (global.get $owed) (then unreachable))
    (global.set $owed (i32.const 1))
    (local.set $sent (i32.load offset=0 (local.get $rep)))
    (if (i32.lt_u (local.get $sent) (i32.load offset=4 (local.get $rep)))
      (then
        (memory.fill (i32.const 4096) (local.get $sent) (i32.const 4096))
        (i32.store offset=0 (local.get $rep) (i32.add (local.get $sent) (i32.const 1)))
        (i32.store8 (i32.const 16) (i32.const 1))
        (i32.store (i32.const 20) (i32.const 4096))
        (i32.store (i32.const 24) (i32.const 4096))
        (return (i32.const 16))))
    (block $ending
      (br_if $ending (i32.eq (i32.load offset=8 (local.get $rep)) (i32.const 1)))
      (if (i32.eq (i32.load offset=8 (local.get $rep)) (i32.const 2))
        (then
          (i32.store8 (i32.const 16) (i32.const 1))
          (i32.store (i32.const 20) (i32.const 0x7fff0000))
          (i32.store (i32.const 24) (i32.const 4096))
          (return (i32.const 16))))
      (i32.store8 (i32.const 16) (i32.const 0))
      (return (i32.const 16)))
    (i32.store8 (i32.const 16) (i32.const 2))
    (i32.const 16))
  (func (export "cabi_post_acme:posted/api@1.0.0#[method]chunks.next") (param i32)
    (global.set $owed (i32.const 0))
    (global.set $posted (i32.add (global.get $posted) (i32.const 1))))
  (func (export "acme:posted/api@1.0.0#[dtor]chunks") (param $rep i32)))`,
};

/** A fresh instance of `d` in this process, as an instance thread makes it. */
async function instantiate(d: ServiceDescriptor): Promise<ComponentInstance> {
  return ComponentInstance.create({ ...instanceSpec(d, await compileCoreModules(d.artifact, CAP, 'plain'), CAP), byteNexts: byteNexts(d) });
}

async function service(name: string, source: ComponentSource): Promise<ServiceDescriptor> {
  const { services, failures } = await catalog({ [name]: source });
  expect(failures).to.deep.equal([]);
  return services[0];
}

function value(outcome: CallOutcome): unknown {
  if (outcome.kind !== 'ok') throw new Error(`expected a value, got ${JSON.stringify(outcome)}`);
  return outcome.value;
}

/** Calls `name` of `d` on `instance`, its value. */
function call(d: ServiceDescriptor, instance: ComponentInstance, name: string, args: unknown[]): unknown {
  return value(instance.call(d.methods.findIndex((m) => m.name === name), args));
}

/** The stream `name(args)` opens, with its items read in place where they can be. */
function stream(d: ServiceDescriptor, instance: ComponentInstance, name: string, args: unknown[]): StreamItems {
  const { stream } = d.methods.find((m) => m.name === name)!;
  return streamItems(instance, call(d, instance, name, args), stream?.source === 'next' ? stream.nextExport : undefined);
}

/** Every item of `items` until none, as `next` gave them. */
function all(items: StreamItems): Uint8Array[] {
  const got: Uint8Array[] = [];
  for (;;) {
    const item = value(items.next());
    if (item === undefined || item === null) return got;
    // The next `next` may reuse the memory a view shows: keep a copy, as the ring would.
    got.push((item as Uint8Array).slice());
  }
}

describe('stream items read in place from the guest', function () {
  this.timeout(180_000);

  it('after the first item (the glue’s copy), WAT items are views of the guest’s memory, no buffer of their own, their bytes as the glue lifts them', async () => {
    const d = await service('chunks', CHUNKS);
    const instance = await instantiate(d);
    const chunk = 64 * 1024;
    const items = stream(d, instance, 'bytes', [64 * chunk, chunk]);
    const buffers: ArrayBufferLike[] = [];
    const received: number[] = [];
    for (let item = value(items.next()) as Uint8Array | undefined; item; item = value(items.next()) as Uint8Array | undefined) {
      buffers.push(item.buffer);
      received.push(...item.subarray(0, 3), item.length);
      // Byte i of the stream is i % 251.
      const at = (buffers.length - 1) * chunk;
      expect(item[0]).to.equal(at % 251);
      expect(item[chunk - 1]).to.equal((at + chunk - 1) % 251);
    }
    expect(buffers).to.have.length(64);
    expect((items as InPlaceBytes).inPlace).to.equal(true);
    // The glue lifts the first into a buffer of its own; the rest are all views of one memory, larger than an item.
    expect(buffers[0].byteLength).to.equal(chunk);
    expect(new Set(buffers.slice(1)).size).to.equal(1);
    expect(buffers[1].byteLength).to.be.above(chunk);
    expect(items.done()).to.equal(undefined);
    // The same stream through the glue alone gives the same items.
    const glue = streamItems(instance, call(d, instance, 'bytes', [64 * chunk, chunk]));
    const lifted = all(glue).flatMap((item) => [...item.subarray(0, 3), item.length]);
    expect(lifted).to.deep.equal(received);
  });

  it('runs the guest’s post-return for each item before the next call, and for the last at done', async () => {
    const d = await service('posted', POSTED);
    const instance = await instantiate(d);
    const items = stream(d, instance, 'open', [5, 0]);
    // The guest traps if `next` comes while a post-return is owed.
    const got = all(items);
    expect(got.map((item) => [item.length, item[0], item[4095]])).to.deep.equal([0, 1, 2, 3, 4].map((k) => [4096, k, k]));
    expect((items as InPlaceBytes).inPlace).to.equal(true);
    // Four by rt; the first item's by the glue. The none's is owed until done.
    expect(call(d, instance, 'posted', [])).to.equal(5);
    expect(items.done()).to.equal(undefined);
    expect(call(d, instance, 'posted', [])).to.equal(6);
  });

  it('traps on an option whose discriminant is neither 0 nor 1, and on a list past the end of memory', async () => {
    const d = await service('posted', POSTED);
    const badTag = stream(d, await instantiate(d), 'open', [2, 1]);
    expect(value(badTag.next())).to.be.instanceOf(Uint8Array);
    expect(value(badTag.next())).to.be.instanceOf(Uint8Array);
    expect(badTag.next()).to.deep.include({ kind: 'trap', code: 'RT_ERR_COMPONENT_TRAPPED', message: 'invalid variant discriminant for option: 2' });
    const pastEnd = stream(d, await instantiate(d), 'open', [1, 2]);
    expect(value(pastEnd.next())).to.be.instanceOf(Uint8Array);
    const trap = pastEnd.next();
    expect(trap).to.include({ kind: 'trap', code: 'RT_ERR_COMPONENT_TRAPPED' });
    expect((trap as { message: string }).message).to.match(/returned a list at 2147418112 of 4096 bytes, past the end of the instance's memory \(65536 bytes\)/);
  });

  it('componentize-js items come through the glue (its engine’s `next` calls host imports, which the glue runs only in an export call’s task), every one whole and in order over a long stream', async () => {
    const d = await service('streams', STREAMS);
    const instance = await instantiate(d);
    const chunk = 16 * 1024;
    const n = 2_000;
    const items = stream(d, instance, 'bytes', [n * chunk, chunk]);
    let count = 0;
    for (let item = value(items.next()) as Uint8Array | undefined; item; item = value(items.next()) as Uint8Array | undefined) {
      expect([item.length, item[0], item[chunk - 1]]).to.deep.equal([chunk, (count * chunk) % 251, (count * chunk + chunk - 1) % 251]);
      count++;
    }
    expect(count).to.equal(n);
    expect(items).to.not.be.instanceOf(InPlaceBytes);
    expect(items.done()).to.equal(undefined);
  });
});
