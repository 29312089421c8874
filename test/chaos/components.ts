// Components the chaos script needs beyond the test fixtures.

import type { ComponentSource } from '../../examples/builder.js';

/** A component whose core module's start function never returns: it can never be instantiated. */
export const LOOPING_START: ComponentSource = {
  kind: 'wat',
  world: 'looping',
  wit: `package acme:looping@1.0.0;
interface api { ping: func() -> u32; }
world looping { export api; }`,
  wat: `(module
  (func $forever (loop $again (br $again)))
  (start $forever)
  (func (export "acme:looping/api@1.0.0#ping") (result i32) (i32.const 1))
  (memory (export "memory") 1))`,
};

/** `count(items)` answers the length of a deeply nested list: what a big JSON body of nested arrays decodes to. */
export const NESTED: ComponentSource = {
  kind: 'wat',
  world: 'nested',
  wit: `package acme:nested@1.0.0;
interface api { count: func(items: list<list<list<u32>>>) -> u32; }
world nested { export api; }`,
  wat: `(module
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))
  ;; A bump allocator that grows memory as the host lowers the lists into it.
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $ptr i32) (local $end i32)
    (local.set $ptr (i32.and (i32.add (global.get $heap) (i32.sub (local.get 2) (i32.const 1))) (i32.sub (i32.const 0) (local.get 2))))
    (local.set $end (i32.add (local.get $ptr) (local.get 3)))
    (block $ok (loop $grow
      (br_if $ok (i32.le_u (local.get $end) (i32.mul (memory.size) (i32.const 65536))))
      (if (i32.eq (memory.grow (i32.const 16)) (i32.const -1)) (then unreachable))
      (br $grow)))
    (global.set $heap (local.get $end))
    (local.get $ptr))
  (func (export "acme:nested/api@1.0.0#count") (param $ptr i32) (param $len i32) (result i32) (local.get $len))
  (func (export "cabi_post_acme:nested/api@1.0.0#count") (param i32) (global.set $heap (i32.const 1024))))`,
};
