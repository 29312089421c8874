// Components for links (docs/api.md §5.9, sidecar `[imports]`): a service
// that exports an interface, and one that imports it and answers through it.
// calc and FRONT are plain WAT with no WASI (they load on every Node line,
// inline or on threads); P3_FLOW passes streams and futures through links,
// with the async ABI (Node lines with JSPI).

import type { ComponentSource } from '../../examples/builder.js';
import { withWasi03 } from '../../examples/index.js';
import { TASK_INTRINSICS } from './async-components.js';

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

/** acme:flow, as P3_FLOW imports it and the targets export it (async-components.ts: asyncBodies and asyncCalls, each given the interface's name). */
export const FLOW_BYTES = 'acme:flow/bytes@1.0.0';
export const FLOW_FUTURES = 'acme:flow/futures@1.0.0';
export const FLOW_SOURCE = 'acme:flow/source@1.0.0';

/**
 * Imports acme:flow/bytes, acme:flow/futures and acme:flow/source (links
 * make them other services': asyncBodies, asyncCalls and asyncStreams given
 * their names) and exports each of their functions as its own, forwarding
 * every call: the stream or future it was given goes to the import as it
 * is, and what the import answered (a stream, a future, a number) is its
 * answer. It never touches a stream's items itself: they cross the links.
 * - `upper: async func(data: stream<u8>) -> stream<u8>`;
 * - `digest: async func(data: stream<u8>, seed: u32) -> u32`;
 * - `running: async func(n: stream<u32>) -> stream<u32>`;
 * - `promised: async func() -> future<u32>`;
 * - `wait: async func(v: future<u32>) -> u32`;
 * - `bytes: async func(count: u32) -> stream<u8>`;
 * - `broken: async func(count: u32) -> stream<u32>`.
 * Each call waits on its subtask in a slot of its own (calls side by side).
 */
export const P3_FLOW: ComponentSource = {
  kind: 'wat',
  world: 'flow',
  wit: withWasi03(`package test:p3-flow@0.1.0;
package acme:flow@1.0.0 {
  interface bytes {
    upper: async func(data: stream<u8>) -> stream<u8>;
    digest: async func(data: stream<u8>, seed: u32) -> u32;
    running: async func(n: stream<u32>) -> stream<u32>;
  }
  interface futures {
    promised: async func() -> future<u32>;
    wait: async func(v: future<u32>) -> u32;
  }
  interface source {
    bytes: async func(count: u32) -> stream<u8>;
    broken: async func(count: u32) -> stream<u32>;
  }
}
world flow {
  import acme:flow/bytes@1.0.0;
  import acme:flow/futures@1.0.0;
  import acme:flow/source@1.0.0;
  export upper: async func(data: stream<u8>) -> stream<u8>;
  export digest: async func(data: stream<u8>, seed: u32) -> u32;
  export running: async func(n: stream<u32>) -> stream<u32>;
  export promised: async func() -> future<u32>;
  export wait: async func(v: future<u32>) -> u32;
  export bytes: async func(count: u32) -> stream<u8>;
  export broken: async func(count: u32) -> stream<u32>;
}`),
  wat: `(module
  (import "${FLOW_BYTES}" "[async-lower]upper" (func $upper (param i32 i32) (result i32)))
  (import "${FLOW_BYTES}" "[async-lower]digest" (func $digest (param i32 i32 i32) (result i32)))
  (import "${FLOW_BYTES}" "[async-lower]running" (func $running (param i32 i32) (result i32)))
  (import "${FLOW_FUTURES}" "[async-lower]promised" (func $promised (param i32) (result i32)))
  (import "${FLOW_FUTURES}" "[async-lower]wait" (func $wait (param i32 i32) (result i32)))
  (import "${FLOW_SOURCE}" "[async-lower]bytes" (func $bytes (param i32 i32) (result i32)))
  (import "${FLOW_SOURCE}" "[async-lower]broken" (func $broken (param i32 i32) (result i32)))
  ${TASK_INTRINSICS}
  (import "[export]$root" "[task-return]upper" (func $return-upper (param i32)))
  (import "[export]$root" "[task-return]digest" (func $return-digest (param i32)))
  (import "[export]$root" "[task-return]running" (func $return-running (param i32)))
  (import "[export]$root" "[task-return]promised" (func $return-promised (param i32)))
  (import "[export]$root" "[task-return]wait" (func $return-wait (param i32)))
  (import "[export]$root" "[task-return]bytes" (func $return-bytes (param i32)))
  (import "[export]$root" "[task-return]broken" (func $return-broken (param i32)))
  (memory (export "memory") 1)
  (type $return (func (param i32)))
  (table 7 funcref)
  (elem (i32.const 0) $return-upper $return-digest $return-running $return-promised $return-wait $return-bytes $return-broken)
  (global $calls (mut i32) (i32.const 0))
  ;; A call's slot, 16 bytes from 1024 (1,024 of them, reused in turn): +0 its set, +4 which export (its task-return in the table), +8 the import's answer.
  (func $begin (param $which i32) (result i32) (local $slot i32)
    (local.set $slot (i32.add (i32.const 1024) (i32.shl (i32.and (global.get $calls) (i32.const 1023)) (i32.const 4))))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (i32.store offset=4 (local.get $slot) (local.get $which))
    (call $ctx-set (local.get $slot))
    (local.get $slot))
  ;; Returns what the import answered: EXIT (0).
  (func $finish (param $slot i32) (result i32)
    (call_indirect (type $return) (i32.load offset=8 (local.get $slot)) (i32.load offset=4 (local.get $slot)))
    (i32.const 0))
  ;; The subtask's first status (RETURNED: finish now), else WAIT (2) on a set of its own holding it.
  (func $started (param $slot i32) (param $r i32) (result i32)
    (if (i32.eq (i32.and (local.get $r) (i32.const 15)) (i32.const 2)) (then (return (call $finish (local.get $slot)))))
    (i32.store (local.get $slot) (call $set-new))
    (call $join (i32.shr_u (local.get $r) (i32.const 4)) (i32.load (local.get $slot)))
    (i32.or (i32.shl (i32.load (local.get $slot)) (i32.const 4)) (i32.const 2)))
  ;; SUBTASK (1) RETURNED (2): the answer is in the slot; any other event, WAIT again.
  (func $resume (param $event i32) (param $w i32) (param $p i32) (result i32) (local $slot i32)
    (local.set $slot (call $ctx-get))
    (if (i32.and (i32.eq (local.get $event) (i32.const 1)) (i32.eq (local.get $p) (i32.const 2))) (then
      (call $join (local.get $w) (i32.const 0))
      (call $subtask-drop (local.get $w))
      (call $set-drop (i32.load (local.get $slot)))
      (return (call $finish (local.get $slot)))))
    (i32.or (i32.shl (i32.load (local.get $slot)) (i32.const 4)) (i32.const 2)))
  (func (export "[async-lift]upper") (param $s i32) (result i32) (local $slot i32)
    (local.set $slot (call $begin (i32.const 0)))
    (call $started (local.get $slot) (call $upper (local.get $s) (i32.add (local.get $slot) (i32.const 8)))))
  (func (export "[async-lift]digest") (param $s i32) (param $seed i32) (result i32) (local $slot i32)
    (local.set $slot (call $begin (i32.const 1)))
    (call $started (local.get $slot) (call $digest (local.get $s) (local.get $seed) (i32.add (local.get $slot) (i32.const 8)))))
  (func (export "[async-lift]running") (param $s i32) (result i32) (local $slot i32)
    (local.set $slot (call $begin (i32.const 2)))
    (call $started (local.get $slot) (call $running (local.get $s) (i32.add (local.get $slot) (i32.const 8)))))
  (func (export "[async-lift]promised") (result i32) (local $slot i32)
    (local.set $slot (call $begin (i32.const 3)))
    (call $started (local.get $slot) (call $promised (i32.add (local.get $slot) (i32.const 8)))))
  (func (export "[async-lift]wait") (param $f i32) (result i32) (local $slot i32)
    (local.set $slot (call $begin (i32.const 4)))
    (call $started (local.get $slot) (call $wait (local.get $f) (i32.add (local.get $slot) (i32.const 8)))))
  (func (export "[async-lift]bytes") (param $count i32) (result i32) (local $slot i32)
    (local.set $slot (call $begin (i32.const 5)))
    (call $started (local.get $slot) (call $bytes (local.get $count) (i32.add (local.get $slot) (i32.const 8)))))
  (func (export "[async-lift]broken") (param $count i32) (result i32) (local $slot i32)
    (local.set $slot (call $begin (i32.const 6)))
    (call $started (local.get $slot) (call $broken (local.get $count) (i32.add (local.get $slot) (i32.const 8)))))
  (func (export "[callback][async-lift]bytes") (param i32 i32 i32) (result i32) (call $resume (local.get 0) (local.get 1) (local.get 2)))
  (func (export "[callback][async-lift]broken") (param i32 i32 i32) (result i32) (call $resume (local.get 0) (local.get 1) (local.get 2)))
  (func (export "[callback][async-lift]upper") (param i32 i32 i32) (result i32) (call $resume (local.get 0) (local.get 1) (local.get 2)))
  (func (export "[callback][async-lift]digest") (param i32 i32 i32) (result i32) (call $resume (local.get 0) (local.get 1) (local.get 2)))
  (func (export "[callback][async-lift]running") (param i32 i32 i32) (result i32) (call $resume (local.get 0) (local.get 1) (local.get 2)))
  (func (export "[callback][async-lift]promised") (param i32 i32 i32) (result i32) (call $resume (local.get 0) (local.get 1) (local.get 2)))
  (func (export "[callback][async-lift]wait") (param i32 i32 i32) (result i32) (call $resume (local.get 0) (local.get 1) (local.get 2))))`,
};
