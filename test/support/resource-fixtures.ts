// Components that export resources (docs/api.md §5.1.2), for tests of
// handles: constructors, methods, statics, borrow and own parameters, results
// that hold handles, destructors.

import type { ComponentSource, WatSource } from '../../examples/builder.js';

/**
 * Counters in hand-written WAT (`acme:counters/counters@1.0.0`), with a
 * destructor:
 * - `counter(start)`; `add(n)` → the new value; `value()`; `fail()` traps.
 * - `counter.merge(a, b)` (static, borrows) → a new counter holding a + b.
 * - `total(all: list<borrow<counter>>)` → the sum of their values.
 * - `consume(c: counter)` (own) → its value; the counter is dropped inside
 *   the call (its destructor runs).
 * - `pair(a, b)` → `duo { left: counter, right: option<counter> }`: handles
 *   inside a record and an option; `both(d: duo)` → left + right (owns them).
 * - `live()` counts the counters made and not dropped on this instance,
 *   `dropped()` the destructors run.
 * A counter's state is its i64 value at its rep, from a bump allocator.
 */
export const COUNTERS: ComponentSource = {
  kind: 'wat',
  world: 'counting',
  wit: `package acme:counters@1.0.0;
interface counters {
  resource counter {
    constructor(start: s64);
    add: func(n: s64) -> s64;
    value: func() -> s64;
    fail: func();
    merge: static func(a: borrow<counter>, b: borrow<counter>) -> counter;
  }
  record duo { left: counter, right: option<counter> }
  total: func(all: list<borrow<counter>>) -> s64;
  consume: func(c: counter) -> s64;
  pair: func(a: s64, b: option<s64>) -> duo;
  both: func(d: duo) -> s64;
  live: func() -> u32;
  dropped: func() -> u32;
}
world counting { export counters; }`,
  // Memory: 0..15 return area; 1024.. counters (8 bytes each) and lists
  // lowered into the instance (cabi_realloc), from one bump allocator.
  wat: `(module
  (import "[export]acme:counters/counters@1.0.0" "[resource-new]counter" (func $new (param i32) (result i32)))
  (import "[export]acme:counters/counters@1.0.0" "[resource-rep]counter" (func $rep (param i32) (result i32)))
  (import "[export]acme:counters/counters@1.0.0" "[resource-drop]counter" (func $drop (param i32)))
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))
  (global $live (mut i32) (i32.const 0))
  (global $dropped (mut i32) (i32.const 0))
  (func $alloc (param $size i32) (param $align i32) (result i32)
    (local $at i32)
    (local.set $at (i32.and (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
                            (i32.sub (i32.const 0) (local.get $align))))
    (global.set $heap (i32.add (local.get $at) (local.get $size)))
    (if (i32.gt_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536)))
      (then (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then unreachable))))
    (local.get $at))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (call $alloc (local.get 3) (local.get 2)))
  (func $make (param $value i64) (result i32)
    (local $at i32)
    (local.set $at (call $alloc (i32.const 8) (i32.const 8)))
    (i64.store (local.get $at) (local.get $value))
    (global.set $live (i32.add (global.get $live) (i32.const 1)))
    (call $new (local.get $at)))
  (func (export "acme:counters/counters@1.0.0#[constructor]counter") (param i64) (result i32)
    (call $make (local.get 0)))
  (func (export "acme:counters/counters@1.0.0#[method]counter.add") (param $self i32) (param $n i64) (result i64)
    (i64.store (local.get $self) (i64.add (i64.load (local.get $self)) (local.get $n)))
    (i64.load (local.get $self)))
  (func (export "acme:counters/counters@1.0.0#[method]counter.value") (param $self i32) (result i64)
    (i64.load (local.get $self)))
  (func (export "acme:counters/counters@1.0.0#[method]counter.fail") (param $self i32)
    unreachable)
  (func (export "acme:counters/counters@1.0.0#[static]counter.merge") (param $a i32) (param $b i32) (result i32)
    (call $make (i64.add (i64.load (local.get $a)) (i64.load (local.get $b)))))
  (func (export "acme:counters/counters@1.0.0#total") (param $ptr i32) (param $len i32) (result i64)
    (local $sum i64)
    (block $done
      (loop $each
        (br_if $done (i32.eqz (local.get $len)))
        (local.set $sum (i64.add (local.get $sum) (i64.load (i32.load (local.get $ptr)))))
        (local.set $ptr (i32.add (local.get $ptr) (i32.const 4)))
        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
        (br $each)))
    (local.get $sum))
  (func $take (param $handle i32) (result i64)
    (local $value i64)
    (local.set $value (i64.load (call $rep (local.get $handle))))
    (call $drop (local.get $handle))
    (local.get $value))
  (func (export "acme:counters/counters@1.0.0#consume") (param $c i32) (result i64)
    (call $take (local.get $c)))
  ;; duo is lowered as (left, right-tag, right) and returned through the return area.
  (func (export "acme:counters/counters@1.0.0#pair") (param $a i64) (param $has i32) (param $b i64) (result i32)
    (i32.store (i32.const 0) (call $make (local.get $a)))
    (i32.store8 (i32.const 4) (local.get $has))
    (if (local.get $has) (then (i32.store (i32.const 8) (call $make (local.get $b)))))
    (i32.const 0))
  (func (export "acme:counters/counters@1.0.0#both") (param $left i32) (param $has i32) (param $right i32) (result i64)
    (local $sum i64)
    (local.set $sum (call $take (local.get $left)))
    (if (local.get $has) (then (local.set $sum (i64.add (local.get $sum) (call $take (local.get $right))))))
    (local.get $sum))
  (func (export "acme:counters/counters@1.0.0#[dtor]counter") (param $rep i32)
    (global.set $dropped (i32.add (global.get $dropped) (i32.const 1)))
    (global.set $live (i32.sub (global.get $live) (i32.const 1))))
  (func (export "acme:counters/counters@1.0.0#live") (result i32) (global.get $live))
  (func (export "acme:counters/counters@1.0.0#dropped") (result i32) (global.get $dropped)))`,
};

/** COUNTERS whose constructor traps for a start of -1, and whose destructor traps for a counter at -13: traps in calls that name no handle. */
export const BRITTLE: WatSource = {
  ...COUNTERS,
  wat: COUNTERS.wat
    .replace('#[constructor]counter") (param i64) (result i32)\n', '#[constructor]counter") (param i64) (result i32)\n    (if (i64.eq (local.get 0) (i64.const -1)) (then unreachable))\n')
    .replace('#[dtor]counter") (param $rep i32)\n', '#[dtor]counter") (param $rep i32)\n    (if (i64.eq (i64.load (local.get $rep)) (i64.const -13)) (then unreachable))\n'),
};

/** COUNTERS whose counters can grow the instance's memory: `grow(pages)` traps when the memory cannot (past `runtime.max_memory_mb`). */
export const GROWING: WatSource = {
  ...COUNTERS,
  wit: COUNTERS.wit.replace('    fail: func();\n', '    fail: func();\n    grow: func(pages: u32);\n'),
  wat: COUNTERS.wat.replace(
    '  (func (export "acme:counters/counters@1.0.0#[method]counter.fail")',
    `  (func (export "acme:counters/counters@1.0.0#[method]counter.grow") (param $self i32) (param $pages i32)
    (if (i32.eq (memory.grow (local.get $pages)) (i32.const -1)) (then unreachable)))
  (func (export "acme:counters/counters@1.0.0#[method]counter.fail")`,
  ),
};
