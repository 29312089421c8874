// Components with streaming methods (docs/api.md §5.1.1) for end-to-end tests:
// functions that return a resource whose `next` rt calls until it answers none.

import type { ComponentSource } from '../../examples/builder.js';

// The WASI interfaces a stream sleeps with, spelled out whole: componentize-js
// merges them with its engine's own copies (0.2.3), and wit-component resolves
// the hand-written module's imports against them.
const SLEEP_WIT = `package wasi:io@0.2.3 {
  interface poll {
    resource pollable { ready: func() -> bool; block: func(); }
    poll: func(in: list<borrow<pollable>>) -> list<u32>;
  }
}
package wasi:clocks@0.2.3 {
  interface monotonic-clock {
    use wasi:io/poll@0.2.3.{pollable};
    type instant = u64;
    type duration = u64;
    now: func() -> instant;
    resolution: func() -> duration;
    subscribe-instant: func(when: instant) -> pollable;
    subscribe-duration: func(when: duration) -> pollable;
  }
}`;

/**
 * Every kind of stream, and every way one ends, in componentize-js
 * (`acme:streams/streams@1.0.0`):
 * - `count(n, delay-ms)` → `items`: n items `{ seq, text: "item <seq>" }`
 *   (seq from 0), sleeping `delay-ms` before each (on a wasi:io pollable,
 *   not a busy loop; 0: no sleep), then none.
 * - `fail-after(n)` → `items`: n items, then `err("failed after <n>")`.
 * - `trap-after(n)` → `items`: n items, then a trap (a thrown JS Error:
 *   componentize-js traps with `unreachable`; only a thrown string is an err).
 *   The instance is unusable afterwards.
 * - `spin-after(n)` → `items`: n items, then a `next` that never returns.
 * - `bytes(total, chunk)` → `chunks`: `total` bytes, byte i being i % 251, in
 *   items of `chunk` bytes (the last one shorter; `chunk` 0: all in one item).
 * - `words(n)` → `lines`: the strings "word 0\n" … "word <n-1>\n".
 * - `stats()` → `counters { nexts, dropped }`: `next` calls on this instance's
 *   resources, and destructors run; `reset()` zeroes both. Instances are
 *   reused, so the counts span calls.
 *
 * `dropped` stays 0: componentize-js 0.18.5 gives exported resources no
 * destructor (the resource type has no dtor, and jco's `[Symbol.dispose]` on
 * the handle is a no-op), so dropping an `items` never reaches the guest's
 * `[Symbol.dispose]`. A test that needs a destructor to run uses {@link DROPS}.
 * The `clocks` feature stays on: without it componentize-js replaces the
 * monotonic clock with a stub that traps.
 */
export const STREAMS: ComponentSource = {
  kind: 'js',
  world: 'streaming',
  disableFeatures: ['stdio', 'random', 'http', 'fetch-event'],
  wit: `package acme:streams@1.0.0;
interface streams {
  record item { seq: u32, text: string }
  record counters { nexts: u32, dropped: u32 }
  resource items { next: func() -> result<option<item>, string>; }
  resource chunks { next: func() -> option<list<u8>>; }
  resource lines { next: func() -> option<string>; }
  count: func(n: u32, delay-ms: u32) -> items;
  fail-after: func(n: u32) -> items;
  trap-after: func(n: u32) -> items;
  spin-after: func(n: u32) -> items;
  bytes: func(total: u32, chunk: u32) -> chunks;
  words: func(n: u32) -> lines;
  stats: func() -> counters;
  reset: func();
}
world streaming { import wasi:clocks/monotonic-clock@0.2.3; export streams; }
${SLEEP_WIT}`,
  js: `
import { subscribeDuration } from 'wasi:clocks/monotonic-clock@0.2.3';
let nexts = 0;
let dropped = 0;
function sleep(ms) {
  if (ms > 0) subscribeDuration(BigInt(ms) * 1000000n).block();
}
class Items {
  constructor(n, delayMs, end) { this.n = n; this.delayMs = delayMs; this.end = end; this.seq = 0; }
  next() {
    nexts++;
    if (this.seq < this.n) {
      sleep(this.delayMs);
      const seq = this.seq++;
      return { seq, text: 'item ' + seq };
    }
    switch (this.end) {
      case 'fail': throw 'failed after ' + this.n;
      case 'trap': throw new Error('trap after ' + this.n);
      case 'spin': for (;;) {}
      default: return undefined;
    }
  }
  [Symbol.dispose]() { dropped++; }
}
// A run of the pattern long enough for any chunk: a chunk is then one copy,
// not a loop over its bytes (the engine interprets JS).
let pattern = new Uint8Array(0);
function patternAt(offset, size) {
  const start = offset % 251;
  if (pattern.length < start + size) {
    pattern = new Uint8Array(start + size);
    for (let i = 0; i < 251 && i < pattern.length; i++) pattern[i] = i;
    for (let have = 251; have < pattern.length; have *= 2) pattern.copyWithin(have, 0, have);
  }
  return pattern.slice(start, start + size);
}
class Chunks {
  constructor(total, chunk) { this.total = total; this.chunk = chunk || total; this.sent = 0; }
  next() {
    nexts++;
    if (this.sent >= this.total) return undefined;
    const size = Math.min(this.chunk, this.total - this.sent);
    const bytes = patternAt(this.sent, size);
    this.sent += size;
    return bytes;
  }
  [Symbol.dispose]() { dropped++; }
}
class Lines {
  constructor(n) { this.n = n; this.i = 0; }
  next() {
    nexts++;
    return this.i < this.n ? 'word ' + this.i++ + '\\n' : undefined;
  }
  [Symbol.dispose]() { dropped++; }
}
export const streams = {
  Items,
  Chunks,
  Lines,
  count: (n, delayMs) => new Items(n, delayMs, 'end'),
  failAfter: (n) => new Items(n, 0, 'fail'),
  trapAfter: (n) => new Items(n, 0, 'trap'),
  spinAfter: (n) => new Items(n, 0, 'spin'),
  bytes: (total, chunk) => new Chunks(total, chunk),
  words: (n) => new Lines(n),
  stats: () => ({ nexts, dropped }),
  reset() { nexts = 0; dropped = 0; },
};`,
};

/**
 * A stream whose destructor runs (hand-written WAT; `acme:drops/api@1.0.0`):
 * `start(n, delay-ms)` → `ticks`, whose `next` answers 0, 1, … n-1, then
 * none, sleeping `delay-ms` before each (wasi:clocks subscribe-duration,
 * then block on the pollable; 0: no sleep). `live()` counts the `ticks` made
 * and not dropped yet on this instance, `dropped()` the destructors run.
 */
export const DROPS: ComponentSource = {
  kind: 'wat',
  world: 'drops',
  wit: `package acme:drops@1.0.0;
interface api {
  resource ticks { next: func() -> option<u32>; }
  start: func(n: u32, delay-ms: u32) -> ticks;
  live: func() -> u32;
  dropped: func() -> u32;
}
world drops { import wasi:clocks/monotonic-clock@0.2.3; export api; }
${SLEEP_WIT}`,
  // A ticks' state is 16 bytes at its rep: +0 next seq, +4 n, +8 delay (ms).
  // States come from a bump allocator that starts over once none is live.
  // Bytes 0..7 are `next`'s return area (option tag, value).
  wat: `(module
  (import "[export]acme:drops/api@1.0.0" "[resource-new]ticks" (func $resource_new (param i32) (result i32)))
  (import "wasi:clocks/monotonic-clock@0.2.3" "subscribe-duration" (func $subscribe_duration (param i64) (result i32)))
  (import "wasi:io/poll@0.2.3" "[method]pollable.block" (func $block (param i32)))
  (import "wasi:io/poll@0.2.3" "[resource-drop]pollable" (func $drop_pollable (param i32)))
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))
  (global $live (mut i32) (i32.const 0))
  (global $dropped (mut i32) (i32.const 0))
  (func (export "acme:drops/api@1.0.0#start") (param $n i32) (param $delay i32) (result i32)
    (local $rep i32)
    (local.set $rep (global.get $heap))
    (global.set $heap (i32.add (local.get $rep) (i32.const 16)))
    (if (i32.gt_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536)))
      (then (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then unreachable))))
    (i32.store offset=0 (local.get $rep) (i32.const 0))
    (i32.store offset=4 (local.get $rep) (local.get $n))
    (i32.store offset=8 (local.get $rep) (local.get $delay))
    (global.set $live (i32.add (global.get $live) (i32.const 1)))
    (call $resource_new (local.get $rep)))
  (func (export "acme:drops/api@1.0.0#[method]ticks.next") (param $rep i32) (result i32)
    (local $seq i32) (local $pollable i32)
    (local.set $seq (i32.load offset=0 (local.get $rep)))
    (if (i32.ge_u (local.get $seq) (i32.load offset=4 (local.get $rep)))
      (then (i32.store8 (i32.const 0) (i32.const 0)) (return (i32.const 0))))
    (if (i32.load offset=8 (local.get $rep))
      (then
        (local.set $pollable (call $subscribe_duration
          (i64.mul (i64.extend_i32_u (i32.load offset=8 (local.get $rep))) (i64.const 1000000))))
        (call $block (local.get $pollable))
        (call $drop_pollable (local.get $pollable))))
    (i32.store offset=0 (local.get $rep) (i32.add (local.get $seq) (i32.const 1)))
    (i32.store8 (i32.const 0) (i32.const 1))
    (i32.store (i32.const 4) (local.get $seq))
    (i32.const 0))
  (func (export "acme:drops/api@1.0.0#[dtor]ticks") (param $rep i32)
    (global.set $dropped (i32.add (global.get $dropped) (i32.const 1)))
    (global.set $live (i32.sub (global.get $live) (i32.const 1)))
    (if (i32.eqz (global.get $live)) (then (global.set $heap (i32.const 1024)))))
  (func (export "acme:drops/api@1.0.0#live") (result i32) (global.get $live))
  (func (export "acme:drops/api@1.0.0#dropped") (result i32) (global.get $dropped)))`,
};

/**
 * Raw bytes from a guest whose `next` costs next to nothing (hand-written WAT;
 * `acme:chunks/api@1.0.0`): `bytes(total, chunk)` → `chunks`, the same bytes
 * as {@link STREAMS}'s `bytes` (byte i is i % 251, in items of `chunk` bytes,
 * the last one shorter; `chunk` 0: all in one item). `next` returns a slice of
 * a pattern kept in linear memory, so it neither loops over bytes nor
 * allocates: what a stream of it costs is rt's (and jco's copy of the list
 * out of linear memory), not the guest's. componentize-js's `next` costs
 * 50–250 µs a call by chunk size (bench/streams.ts measures both).
 */
export const CHUNKS: ComponentSource = {
  kind: 'wat',
  world: 'chunks',
  wit: `package acme:chunks@1.0.0;
interface api {
  resource chunks { next: func() -> option<list<u8>>; }
  bytes: func(total: u32, chunk: u32) -> chunks;
}
world chunks { export api; }`,
  // Bytes 0..11 are `next`'s return area: option tag (u8) at 0, then the
  // list's ptr at 4 and len at 8. A chunks' state is 16 bytes at its rep, in
  // 1024..65535: +0 bytes sent, +4 total, +8 item size (chunk, or total when
  // chunk is 0); states come from a bump allocator, and the destructor puts
  // them on a free list (linked through +0). From 65536 on is the pattern:
  // byte 65536 + i is i % 251, `$have` bytes of it filled so far, always a
  // multiple of 251. `bytes` makes it reach 250 + the largest item (1 MiB of
  // pattern: 17 pages more), doubling it with memory.copy; an item at
  // offset `sent` is then the slice at 65536 + sent % 251, never copied by
  // the guest. Items larger than 1 GiB trap (the arithmetic stays in u32).
  wat: `(module
  (import "[export]acme:chunks/api@1.0.0" "[resource-new]chunks" (func $resource_new (param i32) (result i32)))
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))
  (global $free (mut i32) (i32.const 0))
  (global $have (mut i32) (i32.const 0))
  ;; Makes the first $need bytes of the pattern hold it (grows memory as needed).
  (func $pattern (param $need i32)
    (local $i i32) (local $pages i32) (local $n i32)
    ;; A multiple of 251, so that each copy continues the pattern where it stops.
    (local.set $need (i32.mul (i32.div_u (i32.add (local.get $need) (i32.const 250)) (i32.const 251)) (i32.const 251)))
    (if (i32.le_u (local.get $need) (global.get $have)) (then (return)))
    (local.set $pages (i32.sub
      (i32.shr_u (i32.add (i32.add (i32.const 65536) (local.get $need)) (i32.const 65535)) (i32.const 16))
      (memory.size)))
    (if (i32.gt_s (local.get $pages) (i32.const 0))
      (then (if (i32.eq (memory.grow (local.get $pages)) (i32.const -1)) (then unreachable))))
    (if (i32.eqz (global.get $have))
      (then
        (block $done (loop $fill
          (br_if $done (i32.eq (local.get $i) (i32.const 251)))
          (i32.store8 offset=65536 (local.get $i) (local.get $i))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $fill)))
        (global.set $have (i32.const 251))))
    (block $done (loop $double
      (br_if $done (i32.ge_u (global.get $have) (local.get $need)))
      (local.set $n (i32.sub (local.get $need) (global.get $have)))
      (if (i32.gt_u (local.get $n) (global.get $have)) (then (local.set $n (global.get $have))))
      (memory.copy (i32.add (i32.const 65536) (global.get $have)) (i32.const 65536) (local.get $n))
      (global.set $have (i32.add (global.get $have) (local.get $n)))
      (br $double))))
  (func (export "acme:chunks/api@1.0.0#bytes") (param $total i32) (param $chunk i32) (result i32)
    (local $rep i32) (local $item i32)
    (if (i32.eqz (local.get $chunk)) (then (local.set $chunk (local.get $total))))
    (local.set $item (local.get $chunk))
    (if (i32.gt_u (local.get $item) (local.get $total)) (then (local.set $item (local.get $total))))
    (if (i32.gt_u (local.get $item) (i32.const 0x40000000)) (then unreachable))
    (call $pattern (i32.add (local.get $item) (i32.const 250)))
    (if (global.get $free)
      (then
        (local.set $rep (global.get $free))
        (global.set $free (i32.load offset=0 (local.get $rep))))
      (else
        (local.set $rep (global.get $heap))
        (global.set $heap (i32.add (local.get $rep) (i32.const 16)))
        (if (i32.gt_u (global.get $heap) (i32.const 65536)) (then unreachable))))
    (i32.store offset=0 (local.get $rep) (i32.const 0))
    (i32.store offset=4 (local.get $rep) (local.get $total))
    (i32.store offset=8 (local.get $rep) (local.get $chunk))
    (call $resource_new (local.get $rep)))
  (func (export "acme:chunks/api@1.0.0#[method]chunks.next") (param $rep i32) (result i32)
    (local $sent i32) (local $left i32) (local $size i32)
    (local.set $sent (i32.load offset=0 (local.get $rep)))
    (local.set $left (i32.sub (i32.load offset=4 (local.get $rep)) (local.get $sent)))
    (if (i32.eqz (local.get $left))
      (then (i32.store8 (i32.const 0) (i32.const 0)) (return (i32.const 0))))
    (local.set $size (i32.load offset=8 (local.get $rep)))
    (if (i32.lt_u (local.get $left) (local.get $size)) (then (local.set $size (local.get $left))))
    (i32.store offset=0 (local.get $rep) (i32.add (local.get $sent) (local.get $size)))
    (i32.store8 (i32.const 0) (i32.const 1))
    (i32.store (i32.const 4) (i32.add (i32.const 65536) (i32.rem_u (local.get $sent) (i32.const 251))))
    (i32.store (i32.const 8) (local.get $size))
    (i32.const 0))
  (func (export "acme:chunks/api@1.0.0#[dtor]chunks") (param $rep i32)
    (i32.store offset=0 (local.get $rep) (global.get $free))
    (global.set $free (local.get $rep))))`,
};
