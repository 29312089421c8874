// Components for links (docs/api.md §5.9, sidecar `[imports]`): a service
// that exports an interface, and one that imports it and answers through it.
// Plain WAT with no WASI (they load on every Node line, inline or on
// threads).

import type { ComponentSource } from '../../examples/builder.js';

/** acme:calc/math@1.0.0, as both sides spell it (`offset`: what `add` adds beyond the sum, to tell versions apart). */
const MATH = `package acme:calc@1.0.0 {
  interface math {
    add: func(a: u32, b: u32) -> u32;
    tag: func(text: string) -> string;
    checked-div: func(a: u32, b: u32) -> result<u32, string>;
    crash: func();
  }
}`;

/** Both sides' allocator: what the glue allocates goes from 1024 up, and `$reset` (a post-return) starts it over. */
const BUMP_ALLOCATOR = `(global $heap (mut i32) (i32.const 1024))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (global.set $heap (i32.add (local.get $p) (local.get 3)))
    (local.get $p))
  (func $reset (param i32) (global.set $heap (i32.const 1024)))`;

/**
 * Exports acme:calc/math: `add` (a + b + `offset`), `tag` ("got:" before the
 * text), `checked-div` (err "division by zero" for b = 0), `crash` (traps).
 */
export function calc(offset = 0): ComponentSource {
  return {
    kind: 'wat',
    world: 'calc',
    wit: `package acme:calc-server@1.0.0;\n${MATH}\nworld calc { export acme:calc/math@1.0.0; }`,
    wat: `(module
  (memory (export "memory") 1)
  (data (i32.const 64) "got:")
  (data (i32.const 96) "division by zero")
  ${BUMP_ALLOCATOR}
  (func (export "acme:calc/math@1.0.0#add") (param i32 i32) (result i32)
    (i32.add (i32.add (local.get 0) (local.get 1)) (i32.const ${offset})))
  (func (export "acme:calc/math@1.0.0#tag") (param $ptr i32) (param $len i32) (result i32) (local $out i32)
    (local.set $out (global.get $heap))
    (global.set $heap (i32.add (local.get $out) (i32.add (local.get $len) (i32.const 4))))
    (memory.copy (local.get $out) (i32.const 64) (i32.const 4))
    (memory.copy (i32.add (local.get $out) (i32.const 4)) (local.get $ptr) (local.get $len))
    (i32.store (i32.const 16) (local.get $out))
    (i32.store (i32.const 20) (i32.add (local.get $len) (i32.const 4)))
    (i32.const 16))
  (func (export "cabi_post_acme:calc/math@1.0.0#tag") (param i32) (call $reset (local.get 0)))
  (func (export "acme:calc/math@1.0.0#checked-div") (param $a i32) (param $b i32) (result i32)
    (if (i32.eqz (local.get $b))
      (then
        (i32.store8 (i32.const 32) (i32.const 1))
        (i32.store (i32.const 36) (i32.const 96))
        (i32.store (i32.const 40) (i32.const 16)))
      (else
        (i32.store8 (i32.const 32) (i32.const 0))
        (i32.store (i32.const 36) (i32.div_u (local.get $a) (local.get $b)))))
    (i32.const 32))
  (func (export "acme:calc/math@1.0.0#crash") unreachable))`,
  };
}

/**
 * Imports acme:calc/math (a link makes it another service's) and exports
 * what it answers through it: `sum-twice` (add, twice: add(add(a, b),
 * add(a, b))), `relay` (tag's answer), `divide` (checked-div's result, err
 * and all), `boom` (crash).
 */
export const FRONT: ComponentSource = {
  kind: 'wat',
  world: 'front',
  wit: `package acme:front@1.0.0;\n${MATH}\nworld front {
  import acme:calc/math@1.0.0;
  export sum-twice: func(a: u32, b: u32) -> u32;
  export relay: func(text: string) -> string;
  export divide: func(a: u32, b: u32) -> result<u32, string>;
  export boom: func();
}`,
  wat: `(module
  (import "acme:calc/math@1.0.0" "add" (func $add (param i32 i32) (result i32)))
  (import "acme:calc/math@1.0.0" "tag" (func $tag (param i32 i32 i32)))
  (import "acme:calc/math@1.0.0" "checked-div" (func $div (param i32 i32 i32)))
  (import "acme:calc/math@1.0.0" "crash" (func $crash))
  (memory (export "memory") 1)
  ${BUMP_ALLOCATOR}
  (func (export "sum-twice") (param i32 i32) (result i32) (local $s i32)
    (local.set $s (call $add (local.get 0) (local.get 1)))
    (call $add (local.get $s) (local.get $s)))
  (func (export "relay") (param i32 i32) (result i32)
    (call $tag (local.get 0) (local.get 1) (i32.const 16))
    (i32.const 16))
  (func (export "cabi_post_relay") (param i32) (call $reset (local.get 0)))
  (func (export "divide") (param i32 i32) (result i32)
    (call $div (local.get 0) (local.get 1) (i32.const 32))
    (i32.const 32))
  (func (export "cabi_post_divide") (param i32) (call $reset (local.get 0)))
  (func (export "boom") (call $crash)))`,
};
