// Components of WASI 0.3: ones that use the component model's async ABI,
// written in component WAT (jco's `parse` builds them without any other
// toolchain), and one of the host's 0.3 interfaces.

import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import type { ComponentSource } from '../../examples/builder.js';
import { withWasi03 } from '../../examples/index.js';

/**
 * What a module-style guest (wit-component's names) imports to wait on its
 * subtasks: waitable sets, joins, subtask drops, and its task's context slot
 * (where each call finds its own state when called back).
 */
export const TASK_INTRINSICS = `(import "$root" "[waitable-set-new]" (func $set-new (result i32)))
  (import "$root" "[waitable-set-drop]" (func $set-drop (param i32)))
  (import "$root" "[waitable-join]" (func $join (param i32 i32)))
  (import "$root" "[subtask-drop]" (func $subtask-drop (param i32)))
  (import "$root" "[context-get-0]" (func $ctx-get (result i32)))
  (import "$root" "[context-set-0]" (func $ctx-set (param i32)))`;

/**
 * World-level async functions, each lifted with the async option and a
 * callback, returning through `task.return`:
 * - `answer: async func() -> u32`, 42;
 * - `echo: async func(s: string) -> string`, `s` (lowered into the guest's
 *   memory by its realloc, returned from there);
 * - `stuck: async func() -> u32`, which waits on an empty waitable set: it
 *   can never go on, and nothing the host holds could wake it;
 * - `promised: async func() -> future<u32>`, a future it writes 7 to;
 * - `spin: async func() -> u32`, which yields whenever it runs: it never
 *   returns and never waits, so the host sees it busy for ever;
 * - `wait: async func(v: future<u32>) -> u32`, what the future gives plus 1
 *   (read at once when it is ready, else once it is; one call at a time);
 * and `plain: func() -> u32`, 2, lifted without it; and `answer` again as
 * `later` in interface `acme:p3/api@0.1.0`. With `futures` (an interface's
 * name, e.g. `acme:flow/futures@1.0.0`), `promised` and `wait` are exported
 * in it too (what a link reaches: link-components.ts).
 */
export function asyncCalls(futures?: string): Promise<Uint8Array> {
  return parse(`(component
    (core module $Memory (memory (export "memory") 1))
    (core instance $memory (instantiate $Memory))
    (alias core export $memory "memory" (core memory $mem))
    (core func $return-u32 (canon task.return (result u32)))
    (core func $return-string (canon task.return (result string) (memory $mem)))
    (core func $waitable-set-new (canon waitable-set.new))
    (type $future-u32 (future u32))
    (core func $future-new (canon future.new $future-u32))
    (core func $future-write (canon future.write $future-u32 async (memory $mem)))
    (core func $return-future (canon task.return (result $future-u32)))
    (core func $future-read (canon future.read $future-u32 async (memory $mem)))
    (core func $future-drop-readable (canon future.drop-readable $future-u32))
    (core func $join (canon waitable.join))
    (core module $M
      (import "" "memory" (memory 1))
      (import "" "return-u32" (func $return-u32 (param i32)))
      (import "" "return-string" (func $return-string (param i32 i32)))
      (import "" "waitable-set-new" (func $waitable-set-new (result i32)))
      (import "" "future-new" (func $future-new (result i64)))
      (import "" "future-write" (func $future-write (param i32 i32) (result i32)))
      (import "" "return-future" (func $return-future (param i32)))
      (import "" "future-read" (func $future-read (param i32 i32) (result i32)))
      (import "" "future-drop-readable" (func $future-drop-readable (param i32)))
      (import "" "join" (func $join (param i32 i32)))
      (global $heap (mut i32) (i32.const 1024))
      (global $awaited (mut i32) (i32.const 0))
      (func (export "realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
        (local.set $p (global.get $heap))
        (global.set $heap (i32.add (global.get $heap) (local.get 3)))
        (local.get $p))
      ;; Each returns 0 (EXIT): its task has returned.
      (func (export "answer") (result i32) (call $return-u32 (i32.const 42)) (i32.const 0))
      (func (export "echo") (param $ptr i32) (param $len i32) (result i32)
        (call $return-string (local.get $ptr) (local.get $len))
        (global.set $heap (i32.const 1024))
        (i32.const 0))
      ;; WAIT (2) on a new, empty waitable set (its index above the low 4 bits).
      (func (export "stuck") (result i32) (i32.or (i32.shl (call $waitable-set-new) (i32.const 4)) (i32.const 2)))
      ;; A new future (its readable end in the low 32 bits, writable in the high), returned, then 7 written to it.
      (func (export "promised") (result i32) (local $ends i64)
        (local.set $ends (call $future-new))
        (call $return-future (i32.wrap_i64 (local.get $ends)))
        (i32.store (i32.const 16) (i32.const 7))
        (drop (call $future-write (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32))) (i32.const 16)))
        (i32.const 0))
      (func (export "callback") (param i32 i32 i32) (result i32) (i32.const 0))
      ;; YIELD (1), and YIELD again whenever it is called back: it never returns, and never waits.
      (func (export "spin") (result i32) (i32.const 1))
      (func (export "spin-callback") (param i32 i32 i32) (result i32) (i32.const 1))
      (func (export "plain") (result i32) (i32.const 2))
      ;; The future's value lands at 32; BLOCKED (-1) until it is there: then WAIT on a set holding the future.
      (func $waited (result i32)
        (call $future-drop-readable (global.get $awaited))
        (call $return-u32 (i32.add (i32.load (i32.const 32)) (i32.const 1)))
        (i32.const 0))
      (func (export "wait") (param $f i32) (result i32) (local $set i32)
        (global.set $awaited (local.get $f))
        (if (i32.ne (call $future-read (local.get $f) (i32.const 32)) (i32.const -1)) (then (return (call $waited))))
        (local.set $set (call $waitable-set-new))
        (call $join (local.get $f) (local.get $set))
        (i32.or (i32.shl (local.get $set) (i32.const 4)) (i32.const 2)))
      ;; FUTURE_READ (4) is the one event its set can give: the future leaves the set, and its value is there.
      (func (export "wait-callback") (param i32 i32 i32) (result i32)
        (call $join (global.get $awaited) (i32.const 0))
        (call $waited)))
    (core instance $host
      (export "memory" (memory $mem))
      (export "return-u32" (func $return-u32))
      (export "return-string" (func $return-string))
      (export "waitable-set-new" (func $waitable-set-new))
      (export "future-new" (func $future-new))
      (export "future-write" (func $future-write))
      (export "return-future" (func $return-future))
      (export "future-read" (func $future-read))
      (export "future-drop-readable" (func $future-drop-readable))
      (export "join" (func $join)))
    (core instance $i (instantiate $M (with "" (instance $host))))
    (type $u32-t (func async (result u32)))
    (type $echo-t (func async (param "s" string) (result string)))
    (type $plain-t (func (result u32)))
    (type $promised-t (func async (result $future-u32)))
    (type $wait-t (func async (param "v" $future-u32) (result u32)))
    (func $answer (type $u32-t) (canon lift (core func $i "answer") async (callback (core func $i "callback"))))
    (func $echo (type $echo-t) (canon lift (core func $i "echo") async (callback (core func $i "callback")) (memory $mem) (realloc (core func $i "realloc"))))
    (func $stuck (type $u32-t) (canon lift (core func $i "stuck") async (callback (core func $i "callback"))))
    (func $plain (type $plain-t) (canon lift (core func $i "plain")))
    (func $spin (type $u32-t) (canon lift (core func $i "spin") async (callback (core func $i "spin-callback"))))
    (func $promised (type $promised-t) (canon lift (core func $i "promised") async (callback (core func $i "callback"))))
    (export "answer" (func $answer))
    (export "echo" (func $echo))
    (export "stuck" (func $stuck))
    (export "plain" (func $plain))
    (export "promised" (func $promised))
    (export "spin" (func $spin))
    (func $wait (type $wait-t) (canon lift (core func $i "wait") async (callback (core func $i "wait-callback"))))
    (export "wait" (func $wait))
    (instance $api (export "later" (func $answer)))
    (export "acme:p3/api@0.1.0" (instance $api))${futures ? `
    (instance $futures (export "promised" (func $promised)) (export "wait" (func $wait)))
    (export "${futures}" (instance $futures))` : ''})`);
}

/**
 * World-level async functions that return a `stream<T>` and write it from a
 * task of their own (the state of each in a block of memory its task's
 * context points to; 8 at once at most), as fast as their reader takes it:
 * - `numbers: async func(count: u32) -> stream<u32>`: 0, 1, … count - 1, up
 *   to 256 a write;
 * - `bytes: async func(count: u32) -> stream<u8>`: `count` bytes, byte i
 *   being i & 255, up to 16 KiB a write;
 * - `broken: async func(count: u32) -> stream<u32>`: as numbers, then traps
 *   where numbers would end its stream;
 * and `drops: func() -> u32`, how many of those writes found the stream's
 * reader gone. With `source` (an interface's name, e.g.
 * `acme:flow/source@1.0.0`), `bytes` and `broken` are exported in it too
 * (what a link reaches: link-components.ts).
 */
export function asyncStreams(source?: string): Promise<Uint8Array> {
  return parse(`(component
    (core module $Memory (memory (export "memory") 4))
    (core instance $memory (instantiate $Memory))
    (alias core export $memory "memory" (core memory $mem))
    (type $s-u32 (stream u32))
    (type $s-u8 (stream u8))
    (core func $new-u32 (canon stream.new $s-u32))
    (core func $write-u32 (canon stream.write $s-u32 async (memory $mem)))
    (core func $drop-u32 (canon stream.drop-writable $s-u32))
    (core func $new-u8 (canon stream.new $s-u8))
    (core func $write-u8 (canon stream.write $s-u8 async (memory $mem)))
    (core func $drop-u8 (canon stream.drop-writable $s-u8))
    (core func $return-u32s (canon task.return (result $s-u32)))
    (core func $return-u8s (canon task.return (result $s-u8)))
    (core func $set-new (canon waitable-set.new))
    (core func $join (canon waitable.join))
    (core func $ctx-get (canon context.get i32 0))
    (core func $ctx-set (canon context.set i32 0))
    (core module $M
      (import "" "memory" (memory 4))
      (import "" "new-u32" (func $new-u32 (result i64)))
      (import "" "write-u32" (func $write-u32 (param i32 i32 i32) (result i32)))
      (import "" "drop-u32" (func $drop-u32 (param i32)))
      (import "" "new-u8" (func $new-u8 (result i64)))
      (import "" "write-u8" (func $write-u8 (param i32 i32 i32) (result i32)))
      (import "" "drop-u8" (func $drop-u8 (param i32)))
      (import "" "return-u32s" (func $return-u32s (param i32)))
      (import "" "return-u8s" (func $return-u8s (param i32)))
      (import "" "set-new" (func $set-new (result i32)))
      (import "" "join" (func $join (param i32 i32)))
      (import "" "ctx-get" (func $ctx-get (result i32)))
      (import "" "ctx-set" (func $ctx-set (param i32)))
      ;; A task's state, in one of 8 slots taken in turn (8 tasks at once at most): 32 bytes from 1024 on, [0] writable end,
      ;; [4] items left, [8] next number, [12] waitable set, [16] 1 for a stream of bytes, [20] 1 to trap at its end,
      ;; [24] where its items are made (16 KiB from 65536 on).
      (global $tasks (mut i32) (i32.const 0))
      (global $drops (mut i32) (i32.const 0))
      (func $start (param $count i32) (param $bytes i32) (param $trap i32) (result i32) (local $st i32) (local $ends i64) (local $slot i32)
        (local.set $slot (i32.and (global.get $tasks) (i32.const 7)))
        (global.set $tasks (i32.add (global.get $tasks) (i32.const 1)))
        (local.set $st (i32.add (i32.const 1024) (i32.shl (local.get $slot) (i32.const 5))))
        (i32.store offset=24 (local.get $st) (i32.add (i32.const 65536) (i32.shl (local.get $slot) (i32.const 14))))
        (call $ctx-set (local.get $st))
        (local.set $ends (if (result i64) (local.get $bytes) (then (call $new-u8)) (else (call $new-u32))))
        (i32.store (local.get $st) (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32))))
        (i32.store offset=4 (local.get $st) (local.get $count))
        (i32.store offset=8 (local.get $st) (i32.const 0))
        (i32.store offset=12 (local.get $st) (call $set-new))
        (i32.store offset=16 (local.get $st) (local.get $bytes))
        (i32.store offset=20 (local.get $st) (local.get $trap))
        (call $join (i32.load (local.get $st)) (i32.load offset=12 (local.get $st)))
        (if (local.get $bytes)
          (then (call $return-u8s (i32.wrap_i64 (local.get $ends))))
          (else (call $return-u32s (i32.wrap_i64 (local.get $ends)))))
        (call $pump (local.get $st)))
      (func $end (param $st i32) (result i32)
        (if (i32.load offset=20 (local.get $st)) (then unreachable))
        (if (i32.load offset=16 (local.get $st))
          (then (call $drop-u8 (i32.load (local.get $st))))
          (else (call $drop-u32 (i32.load (local.get $st)))))
        (i32.const 0))
      ;; Fills the task's items for its next write; how many.
      (func $fill (param $st i32) (result i32) (local $n i32) (local $i i32) (local $at i32) (local $v i32)
        (local.set $n (i32.load offset=4 (local.get $st)))
        (local.set $at (i32.load offset=24 (local.get $st)))
        (if (i32.load offset=16 (local.get $st)) (then
          (if (i32.gt_u (local.get $n) (i32.const 16384)) (then (local.set $n (i32.const 16384))))
          (block $done (loop $l
            (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
            (i32.store8 (i32.add (local.get $at) (local.get $i)) (i32.add (i32.load offset=8 (local.get $st)) (local.get $i)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $l)))
          (return (local.get $n))))
        (if (i32.gt_u (local.get $n) (i32.const 256)) (then (local.set $n (i32.const 256))))
        (local.set $v (i32.load offset=8 (local.get $st)))
        (block $done (loop $l
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (i32.store (i32.add (local.get $at) (i32.shl (local.get $i) (i32.const 2))) (i32.add (local.get $v) (local.get $i)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $l)))
        (local.get $n))
      ;; A write came back (its packed result: count << 4 | status): counts what went; EXIT (0) when the reader is gone.
      (func $wrote (param $st i32) (param $r i32) (result i32) (local $c i32)
        (local.set $c (i32.shr_u (local.get $r) (i32.const 4)))
        (i32.store offset=4 (local.get $st) (i32.sub (i32.load offset=4 (local.get $st)) (local.get $c)))
        (i32.store offset=8 (local.get $st) (i32.add (i32.load offset=8 (local.get $st)) (local.get $c)))
        (if (i32.eqz (i32.and (local.get $r) (i32.const 15))) (then (return (i32.const 1))))
        (global.set $drops (i32.add (global.get $drops) (i32.const 1)))
        (if (i32.load offset=16 (local.get $st))
          (then (call $drop-u8 (i32.load (local.get $st))))
          (else (call $drop-u32 (i32.load (local.get $st)))))
        (i32.const 0))
      ;; Writes until a write blocks (then WAITs on the task's set) or the items are out (then ends the stream).
      (func $pump (param $st i32) (result i32) (local $n i32) (local $r i32)
        (loop $l
          (if (i32.eqz (i32.load offset=4 (local.get $st))) (then (return (call $end (local.get $st)))))
          (local.set $n (call $fill (local.get $st)))
          (local.set $r (if (result i32) (i32.load offset=16 (local.get $st))
            (then (call $write-u8 (i32.load (local.get $st)) (i32.load offset=24 (local.get $st)) (local.get $n)))
            (else (call $write-u32 (i32.load (local.get $st)) (i32.load offset=24 (local.get $st)) (local.get $n)))))
          (if (i32.ne (local.get $r) (i32.const -1)) (then
            (if (i32.eqz (call $wrote (local.get $st) (local.get $r))) (then (return (i32.const 0))))
            (br $l))))
        (i32.or (i32.shl (i32.load offset=12 (local.get $st)) (i32.const 4)) (i32.const 2)))
      (func (export "numbers") (param i32) (result i32) (call $start (local.get 0) (i32.const 0) (i32.const 0)))
      (func (export "bytes") (param i32) (result i32) (call $start (local.get 0) (i32.const 1) (i32.const 0)))
      (func (export "broken") (param i32) (result i32) (call $start (local.get 0) (i32.const 0) (i32.const 1)))
      ;; STREAM_WRITE (3): the blocked write went; anything else cannot come for this task's set.
      (func (export "callback") (param $event i32) (param $w i32) (param $payload i32) (result i32) (local $st i32)
        (local.set $st (call $ctx-get))
        (if (i32.eq (local.get $event) (i32.const 3)) (then
          (if (i32.eqz (call $wrote (local.get $st) (local.get $payload))) (then (return (i32.const 0))))))
        (call $pump (local.get $st)))
      (func (export "drops") (result i32) (global.get $drops)))
    (core instance $host
      (export "memory" (memory $mem))
      (export "new-u32" (func $new-u32)) (export "write-u32" (func $write-u32)) (export "drop-u32" (func $drop-u32))
      (export "new-u8" (func $new-u8)) (export "write-u8" (func $write-u8)) (export "drop-u8" (func $drop-u8))
      (export "return-u32s" (func $return-u32s)) (export "return-u8s" (func $return-u8s))
      (export "set-new" (func $set-new)) (export "join" (func $join))
      (export "ctx-get" (func $ctx-get)) (export "ctx-set" (func $ctx-set)))
    (core instance $i (instantiate $M (with "" (instance $host))))
    (type $numbers-t (func async (param "count" u32) (result $s-u32)))
    (type $bytes-t (func async (param "count" u32) (result $s-u8)))
    (type $drops-t (func (result u32)))
    (func $numbers (type $numbers-t) (canon lift (core func $i "numbers") async (callback (core func $i "callback"))))
    (func $bytes (type $bytes-t) (canon lift (core func $i "bytes") async (callback (core func $i "callback"))))
    (func $broken (type $numbers-t) (canon lift (core func $i "broken") async (callback (core func $i "callback"))))
    (func $drops (type $drops-t) (canon lift (core func $i "drops")))
    (export "numbers" (func $numbers))
    (export "bytes" (func $bytes))
    (export "broken" (func $broken))
    (export "drops" (func $drops))${source ? `
    (instance $source (export "bytes" (func $bytes)) (export "broken" (func $broken)))
    (export "${source}" (instance $source))` : ''})`);
}

/**
 * World-level async functions that take a `stream<u8>`: the request body
 * (docs/api.md §5.9), read 16 KiB at a time as it arrives (one call at a
 * time per instance: the state of the one running is in globals):
 * - `digest: async func(data: stream<u8>, seed: u32) -> u32`, the 32-bit
 *   FNV-1a of the bytes, started from `seed` instead of the offset basis;
 * - `echo-label: async func(label: string, data: stream<u8>) -> string`,
 *   `label`, once the stream has ended;
 * - `first-bytes: async func(data: stream<u8>) -> u32`, how many bytes its
 *   first read that brought any took (16,384 at most), leaving the rest
 *   unread;
 * - `upper: async func(data: stream<u8>) -> stream<u8>`, the bytes with
 *   ASCII letters upper-cased, each read written before the next read (full
 *   duplex: what has come goes back while the rest is on its way);
 * - `numbers: async func(n: stream<u32>) -> u32`, the sum of the items
 *   (mod 2^32), read 4,096 at a time: NDJSON in the request body;
 * - `products: async func(pairs: stream<tuple<u32, u32>>) -> u32`, the sum
 *   of each pair's product (mod 2^32);
 * - `running: async func(n: stream<u32>) -> stream<u32>`, the running sums,
 *   each read's written back before the next read, as `upper` does;
 * and, listed but never called, `pair: async func(a: stream<u8>, b:
 * stream<u8>) -> u32`. With `bytes` (an interface's name, e.g.
 * `acme:flow/bytes@1.0.0`), `upper`, `digest` and `running` are exported in
 * it too (what a link reaches: link-components.ts).
 */
export function asyncBodies(bytes?: string): Promise<Uint8Array> {
  return parse(`(component
    (core module $Memory (memory (export "memory") 2))
    (core instance $memory (instantiate $Memory))
    (alias core export $memory "memory" (core memory $mem))
    (type $bytes (stream u8))
    (type $nums (stream u32))
    (type $pairs (stream (tuple u32 u32)))
    (core func $read-nums (canon stream.read $nums async (memory $mem)))
    (core func $drop-nums (canon stream.drop-readable $nums))
    (core func $new-nums (canon stream.new $nums))
    (core func $write-nums (canon stream.write $nums async (memory $mem)))
    (core func $drop-writable-nums (canon stream.drop-writable $nums))
    (core func $return-nums (canon task.return (result $nums)))
    (core func $read-pairs (canon stream.read $pairs async (memory $mem)))
    (core func $drop-pairs (canon stream.drop-readable $pairs))
    (core func $read (canon stream.read $bytes async (memory $mem)))
    (core func $drop (canon stream.drop-readable $bytes))
    (core func $return-u32 (canon task.return (result u32)))
    (core func $return-string (canon task.return (result string) (memory $mem)))
    (core func $set-new (canon waitable-set.new))
    (core func $join (canon waitable.join))
    (core func $new (canon stream.new $bytes))
    (core func $write (canon stream.write $bytes async (memory $mem)))
    (core func $drop-writable (canon stream.drop-writable $bytes))
    (core func $return-bytes (canon task.return (result $bytes)))
    (core module $M
      (import "" "memory" (memory 2))
      (import "" "new" (func $new (result i64)))
      (import "" "write" (func $write (param i32 i32 i32) (result i32)))
      (import "" "drop-writable" (func $drop-writable (param i32)))
      (import "" "return-bytes" (func $return-bytes (param i32)))
      (import "" "read-bytes" (func $read-bytes (param i32 i32 i32) (result i32)))
      (import "" "drop-bytes" (func $drop-bytes (param i32)))
      (import "" "read-nums" (func $read-nums (param i32 i32 i32) (result i32)))
      (import "" "drop-nums" (func $drop-nums (param i32)))
      (import "" "new-nums" (func $new-nums (result i64)))
      (import "" "write-nums" (func $write-nums (param i32 i32 i32) (result i32)))
      (import "" "drop-writable-nums" (func $drop-writable-nums (param i32)))
      (import "" "return-nums" (func $return-nums (param i32)))
      (import "" "read-pairs" (func $read-pairs (param i32 i32 i32) (result i32)))
      (import "" "drop-pairs" (func $drop-pairs (param i32)))
      (import "" "return-u32" (func $return-u32 (param i32)))
      (import "" "return-string" (func $return-string (param i32 i32)))
      (import "" "set-new" (func $set-new (result i32)))
      (import "" "join" (func $join (param i32 i32)))
      ;; The running call: its stream, its waitable set, what it has found, which function it is (0 digest, 1 echo-label, 2 first-bytes, 3 numbers, 4 products, 5 upper, 6 running).
      (global $s (mut i32) (i32.const 0))
      (global $set (mut i32) (i32.const 0))
      (global $acc (mut i32) (i32.const 0))
      (global $mode (mut i32) (i32.const 0))
      (global $label-ptr (mut i32) (i32.const 0))
      (global $label-len (mut i32) (i32.const 0))
      (global $heap (mut i32) (i32.const 1024))
      (func (export "realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
        (local.set $p (global.get $heap))
        (global.set $heap (i32.add (global.get $heap) (local.get 3)))
        (local.get $p))
      ;; FNV-1a over the n bytes the last read put at 65536.
      (func $fold (param $n i32) (local $i i32) (local $h i32)
        (local.set $h (global.get $acc))
        (block $done (loop $l
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (local.set $h (i32.mul (i32.xor (local.get $h) (i32.load8_u (i32.add (i32.const 65536) (local.get $i)))) (i32.const 16777619)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $l)))
        (global.set $acc (local.get $h)))
      ;; Reads up to n items of the call's stream to 65536 (the stream's type is the function's).
      (func $read (param $s i32) (param $at i32) (param $n i32) (result i32)
        (if (i32.eq (global.get $mode) (i32.const 3)) (then (return (call $read-nums (local.get $s) (local.get $at) (i32.const 4096)))))
        (if (i32.eq (global.get $mode) (i32.const 6)) (then (return (call $read-nums (local.get $s) (local.get $at) (i32.const 4096)))))
        (if (i32.eq (global.get $mode) (i32.const 4)) (then (return (call $read-pairs (local.get $s) (local.get $at) (i32.const 2048)))))
        (call $read-bytes (local.get $s) (local.get $at) (local.get $n)))
      (func $drop (param $s i32)
        (if (i32.eq (global.get $mode) (i32.const 3)) (then (return (call $drop-nums (local.get $s)))))
        (if (i32.eq (global.get $mode) (i32.const 6)) (then (return (call $drop-nums (local.get $s)))))
        (if (i32.eq (global.get $mode) (i32.const 4)) (then (return (call $drop-pairs (local.get $s)))))
        (call $drop-bytes (local.get $s)))
      ;; Adds up the n items the last read put at 65536: u32s, or the products of u32 pairs.
      (func $sum (param $n i32) (local $i i32) (local $at i32)
        (block $done (loop $l
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (if (i32.eq (global.get $mode) (i32.const 3))
            (then (global.set $acc (i32.add (global.get $acc) (i32.load (i32.add (i32.const 65536) (i32.shl (local.get $i) (i32.const 2)))))))
            (else
              (local.set $at (i32.add (i32.const 65536) (i32.shl (local.get $i) (i32.const 3))))
              (global.set $acc (i32.add (global.get $acc) (i32.mul (i32.load (local.get $at)) (i32.load offset=4 (local.get $at)))))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $l))))
      ;; Drops the stream and returns: EXIT (0).
      (func $finish (result i32)
        (call $drop (global.get $s))
        (if (i32.eq (global.get $mode) (i32.const 1))
          (then (call $return-string (global.get $label-ptr) (global.get $label-len)) (global.set $heap (i32.const 1024)))
          (else (call $return-u32 (global.get $acc))))
        (i32.const 0))
      ;; A read came back (count << 4 | status): 1 to read on, 0 to finish (the writer ended the stream, or first-bytes has its bytes).
      (func $got (param $r i32) (result i32) (local $n i32)
        (local.set $n (i32.shr_u (local.get $r) (i32.const 4)))
        (if (i32.eq (global.get $mode) (i32.const 2)) (then
          (if (local.get $n) (then (global.set $acc (local.get $n)) (return (i32.const 0))))))
        (if (i32.eqz (global.get $mode)) (then (call $fold (local.get $n))))
        (if (i32.ge_u (global.get $mode) (i32.const 3)) (then (call $sum (local.get $n))))
        (i32.eqz (i32.and (local.get $r) (i32.const 15))))
      ;; Reads until a read waits for the writer (then WAIT (2) on the call's set) or the call is done.
      (func $pump (result i32) (local $r i32)
        (loop $l
          (local.set $r (call $read (global.get $s) (i32.const 65536) (i32.const 16384)))
          (if (i32.eq (local.get $r) (i32.const -1)) (then (return (i32.or (i32.shl (global.get $set) (i32.const 4)) (i32.const 2)))))
          (if (call $got (local.get $r)) (then (br $l))))
        (call $finish))
      (func $start (param $s i32) (param $mode i32) (result i32)
        (global.set $s (local.get $s))
        (global.set $mode (local.get $mode))
        (global.set $set (call $set-new))
        (call $join (local.get $s) (global.get $set))
        (call $pump))
      (func (export "digest") (param $s i32) (param $seed i32) (result i32)
        (global.set $acc (local.get $seed))
        (call $start (local.get $s) (i32.const 0)))
      (func (export "echo-label") (param $ptr i32) (param $len i32) (param $s i32) (result i32)
        (global.set $label-ptr (local.get $ptr))
        (global.set $label-len (local.get $len))
        (call $start (local.get $s) (i32.const 1)))
      (func (export "first-bytes") (param $s i32) (result i32)
        (global.set $acc (i32.const 0))
        (call $start (local.get $s) (i32.const 2)))
      (func (export "numbers") (param $s i32) (result i32)
        (global.set $acc (i32.const 0))
        (call $start (local.get $s) (i32.const 3)))
      (func (export "products") (param $s i32) (result i32)
        (global.set $acc (i32.const 0))
        (call $start (local.get $s) (i32.const 4)))
      ;; STREAM_READ (2): the read that waited came back.
      (func (export "callback") (param $event i32) (param $w i32) (param $r i32) (result i32)
        (if (i32.eq (local.get $event) (i32.const 2)) (then
          (if (i32.eqz (call $got (local.get $r))) (then (return (call $finish))))))
        (call $pump))
      ;; upper: its stream's writable end, the bytes of the last read still to write (from 65536 + $off), whether the body has ended.
      (global $out (mut i32) (i32.const 0))
      (global $pending (mut i32) (i32.const 0))
      (global $off (mut i32) (i32.const 0))
      (global $in-done (mut i32) (i32.const 0))
      (func (export "upper") (param $s i32) (result i32)
        (global.set $mode (i32.const 5))
        (call $open-duplex (local.get $s) (call $new)))
      (func (export "running") (param $s i32) (result i32)
        (global.set $mode (i32.const 6))
        (global.set $acc (i32.const 0))
        (call $open-duplex (local.get $s) (call $new-nums)))
      (func $open-duplex (param $s i32) (param $ends i64) (result i32)
        (global.set $s (local.get $s))
        (global.set $out (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32))))
        (global.set $pending (i32.const 0))
        (global.set $in-done (i32.const 0))
        (global.set $set (call $set-new))
        (call $join (local.get $s) (global.get $set))
        (call $join (global.get $out) (global.get $set))
        (if (i32.eq (global.get $mode) (i32.const 6))
          (then (call $return-nums (i32.wrap_i64 (local.get $ends))))
          (else (call $return-bytes (i32.wrap_i64 (local.get $ends)))))
        (call $duplex))
      ;; A read came back: its bytes upper-cased, to be written; the body ended unless it completed.
      (func $read-back (param $r i32) (local $n i32) (local $i i32) (local $b i32) (local $at i32)
        (local.set $n (i32.shr_u (local.get $r) (i32.const 4)))
        ;; running: each number becomes the sum of those so far.
        (if (i32.eq (global.get $mode) (i32.const 6)) (then
          (block $sums (loop $next
            (br_if $sums (i32.ge_u (local.get $i) (local.get $n)))
            (local.set $at (i32.add (i32.const 65536) (i32.shl (local.get $i) (i32.const 2))))
            (global.set $acc (i32.add (global.get $acc) (i32.load (local.get $at))))
            (i32.store (local.get $at) (global.get $acc))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $next)))
          ;; Its pending count is in bytes, none of them to upper-case.
          (local.set $n (i32.mul (local.get $n) (i32.const 4)))
          (local.set $i (local.get $n))))
        (block $done (loop $l
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (local.set $b (i32.load8_u (i32.add (i32.const 65536) (local.get $i))))
          (if (i32.and (i32.ge_u (local.get $b) (i32.const 97)) (i32.le_u (local.get $b) (i32.const 122)))
            (then (i32.store8 (i32.add (i32.const 65536) (local.get $i)) (i32.sub (local.get $b) (i32.const 32)))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $l)))
        (global.set $pending (local.get $n))
        (global.set $off (i32.const 0))
        (if (i32.and (local.get $r) (i32.const 15)) (then (global.set $in-done (i32.const 1)))))
      ;; A write came back: 1 to go on, 0 when the reader has gone.
      (func $write-back (param $r i32) (result i32) (local $c i32)
        (local.set $c (i32.shr_u (local.get $r) (i32.const 4)))
        (global.set $pending (i32.sub (global.get $pending) (local.get $c)))
        (global.set $off (i32.add (global.get $off) (local.get $c)))
        (i32.eqz (i32.and (local.get $r) (i32.const 15))))
      (func $upper-end (result i32)
        (if (i32.eq (global.get $mode) (i32.const 6))
          (then (call $drop-writable-nums (global.get $out)))
          (else (call $drop-writable (global.get $out))))
        (call $drop (global.get $s))
        (i32.const 0))
      ;; Writes n bytes, or (running) n / 4 numbers: what went, in bytes (count << 4 | status), or -1 (BLOCKED).
      (func $write-out (param $at i32) (param $n i32) (result i32) (local $r i32)
        (if (i32.ne (global.get $mode) (i32.const 6)) (then (return (call $write (global.get $out) (local.get $at) (local.get $n)))))
        (local.set $r (call $write-nums (global.get $out) (local.get $at) (i32.shr_u (local.get $n) (i32.const 2))))
        (if (i32.eq (local.get $r) (i32.const -1)) (then (return (i32.const -1))))
        (i32.or (i32.shl (i32.shr_u (local.get $r) (i32.const 4)) (i32.const 6)) (i32.and (local.get $r) (i32.const 15))))
      ;; Writes what is pending, reads when nothing is; WAITs when either waits for the other side.
      (func $duplex (result i32) (local $r i32)
        (loop $l
          (if (global.get $pending) (then
            (local.set $r (call $write-out (i32.add (i32.const 65536) (global.get $off)) (global.get $pending)))
            (if (i32.eq (local.get $r) (i32.const -1)) (then (return (i32.or (i32.shl (global.get $set) (i32.const 4)) (i32.const 2)))))
            (if (i32.eqz (call $write-back (local.get $r))) (then (return (call $upper-end))))
            (br $l)))
          (if (global.get $in-done) (then (return (call $upper-end))))
          (local.set $r (call $read (global.get $s) (i32.const 65536) (i32.const 16384)))
          (if (i32.eq (local.get $r) (i32.const -1)) (then (return (i32.or (i32.shl (global.get $set) (i32.const 4)) (i32.const 2)))))
          (call $read-back (local.get $r))
          (br $l))
        (unreachable))
      ;; STREAM_READ (2) or STREAM_WRITE (3): what waited came back.
      (func (export "upper-callback") (param $event i32) (param $w i32) (param $r i32) (result i32)
        (if (i32.eq (local.get $event) (i32.const 2)) (then (call $read-back (local.get $r))))
        (if (i32.eq (local.get $event) (i32.const 3)) (then
          (if (i32.eqz (call $write-back (call $in-bytes (local.get $r)))) (then (return (call $upper-end))))))
        (call $duplex))
      ;; A write's result in bytes: running's counts numbers.
      (func $in-bytes (param $r i32) (result i32)
        (if (i32.ne (global.get $mode) (i32.const 6)) (then (return (local.get $r))))
        (i32.or (i32.shl (i32.shr_u (local.get $r) (i32.const 4)) (i32.const 6)) (i32.and (local.get $r) (i32.const 15)))))
    (core instance $host
      (export "memory" (memory $mem))
      (export "read-bytes" (func $read)) (export "drop-bytes" (func $drop))
      (export "read-nums" (func $read-nums)) (export "drop-nums" (func $drop-nums))
      (export "new-nums" (func $new-nums)) (export "write-nums" (func $write-nums)) (export "drop-writable-nums" (func $drop-writable-nums)) (export "return-nums" (func $return-nums))
      (export "read-pairs" (func $read-pairs)) (export "drop-pairs" (func $drop-pairs))
      (export "return-u32" (func $return-u32)) (export "return-string" (func $return-string))
      (export "set-new" (func $set-new)) (export "join" (func $join))
      (export "new" (func $new)) (export "write" (func $write)) (export "drop-writable" (func $drop-writable)) (export "return-bytes" (func $return-bytes)))
    (core instance $i (instantiate $M (with "" (instance $host))))
    (type $upper-t (func async (param "data" $bytes) (result $bytes)))
    (func $upper (type $upper-t) (canon lift (core func $i "upper") async (callback (core func $i "upper-callback"))))
    (export "upper" (func $upper))
    (type $running-t (func async (param "n" $nums) (result $nums)))
    (func $running (type $running-t) (canon lift (core func $i "running") async (callback (core func $i "upper-callback"))))
    (export "running" (func $running))
    (type $digest-t (func async (param "data" $bytes) (param "seed" u32) (result u32)))
    (type $label-t (func async (param "label" string) (param "data" $bytes) (result string)))
    (type $first-t (func async (param "data" $bytes) (result u32)))
    (type $pair-t (func async (param "a" $bytes) (param "b" $bytes) (result u32)))
    (type $numbers-t (func async (param "n" $nums) (result u32)))
    (type $products-t (func async (param "pairs" $pairs) (result u32)))
    (func $digest (type $digest-t) (canon lift (core func $i "digest") async (callback (core func $i "callback"))))
    (func $echo-label (type $label-t) (canon lift (core func $i "echo-label") async (callback (core func $i "callback")) (memory $mem) (realloc (core func $i "realloc"))))
    (func $first-bytes (type $first-t) (canon lift (core func $i "first-bytes") async (callback (core func $i "callback"))))
    (func $pair (type $pair-t) (canon lift (core func $i "digest") async (callback (core func $i "callback"))))
    (func $numbers (type $numbers-t) (canon lift (core func $i "numbers") async (callback (core func $i "callback"))))
    (func $products (type $products-t) (canon lift (core func $i "products") async (callback (core func $i "callback"))))
    (export "digest" (func $digest))
    (export "echo-label" (func $echo-label))
    (export "first-bytes" (func $first-bytes))
    (export "pair" (func $pair))
    (export "numbers" (func $numbers))
    (export "products" (func $products))${bytes ? `
    (instance $bytes (export "upper" (func $upper)) (export "digest" (func $digest)) (export "running" (func $running)))
    (export "${bytes}" (instance $bytes))` : ''})`);
}


/**
 * A WASI 0.3 guest of the host's sync interfaces (no async ABI of its own:
 * its exports are plain functions, so it may run inline), each export
 * handing back what the import gave:
 * - `entropy: func(n: u64) -> list<u8>`, wasi:random/random's bytes;
 * - `number: func() -> u64`, its u64;
 * - `seed: func() -> tuple<u64, u64>`, wasi:random/insecure-seed's;
 * - `monotonic: func() -> u64`, wasi:clocks/monotonic-clock's now;
 * - `wall: func() -> tuple<s64, u32>`, wasi:clocks/system-clock's now;
 * - `environment: func() -> list<tuple<string, string>>`, wasi:cli/environment's;
 * - `leave: func(code: u8)`, wasi:cli/exit's exit-with-code.
 */
export const P3_HOST: ComponentSource = {
  kind: 'wat',
  world: 'host',
  wit: withWasi03(`package test:p3-host@0.1.0;
world host {
  import wasi:random/random@0.3.0;
  import wasi:random/insecure-seed@0.3.0;
  import wasi:clocks/monotonic-clock@0.3.0;
  import wasi:clocks/system-clock@0.3.0;
  import wasi:cli/environment@0.3.0;
  import wasi:cli/exit@0.3.0;
  export entropy: func(n: u64) -> list<u8>;
  export number: func() -> u64;
  export seed: func() -> tuple<u64, u64>;
  export monotonic: func() -> u64;
  export wall: func() -> tuple<s64, u32>;
  export environment: func() -> list<tuple<string, string>>;
  export leave: func(code: u8);
}`),
  wat: `(module
  (import "wasi:random/random@0.3.0" "get-random-bytes" (func $bytes (param i64 i32)))
  (import "wasi:random/random@0.3.0" "get-random-u64" (func $u64 (result i64)))
  (import "wasi:random/insecure-seed@0.3.0" "get-insecure-seed" (func $seed (param i32)))
  (import "wasi:clocks/monotonic-clock@0.3.0" "now" (func $mono (result i64)))
  (import "wasi:clocks/system-clock@0.3.0" "now" (func $wall (param i32)))
  (import "wasi:cli/environment@0.3.0" "get-environment" (func $env (param i32)))
  (import "wasi:cli/exit@0.3.0" "exit-with-code" (func $exit (param i32)))
  (memory (export "memory") 2)
  ;; A bump allocator from 1024, reset after each call.
  (global $heap (mut i32) (i32.const 1024))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (global.set $heap (i32.add (local.get $p) (local.get 3)))
    (local.get $p))
  (func $reset (param i32) (global.set $heap (i32.const 1024)))
  (func (export "entropy") (param $n i64) (result i32) (call $bytes (local.get $n) (i32.const 16)) (i32.const 16))
  (func (export "cabi_post_entropy") (param i32) (call $reset (local.get 0)))
  (func (export "number") (result i64) (call $u64))
  (func (export "seed") (result i32) (call $seed (i32.const 16)) (i32.const 16))
  (func (export "monotonic") (result i64) (call $mono))
  (func (export "wall") (result i32) (call $wall (i32.const 16)) (i32.const 16))
  (func (export "environment") (result i32) (call $env (i32.const 16)) (i32.const 16))
  (func (export "cabi_post_environment") (param i32) (call $reset (local.get 0)))
  (func (export "leave") (param $code i32) (call $exit (local.get $code))))`,
};

/**
 * `nap: async func(ns: u64) -> u64`: waits `ns` nanoseconds through
 * wasi:clocks/monotonic-clock@0.3.0's async `wait-for` (lowered async: its
 * task waits on the subtask), and answers how long it waited by the same
 * clock. Calls wait side by side: each task's start is in a slot of memory
 * (1,024 of them, reused in turn) that its context points to. And
 * `boom: async func()`, which traps; `flood: async func(n: u32) -> u32`,
 * which starts `n` waits of a minute and waits for none (nor drops them),
 * then answers `n`: a guest that spawns tasks without bound; and `plain:
 * func() -> u32`, 7, a call that has its instance to itself. A nap asked
 * to cancel (TASK_CANCELLED) acknowledges with task.cancel and leaves its
 * wait; `cancelled: func() -> u32` counts those, in this instance.
 */
export const P3_SLEEPER: ComponentSource = {
  kind: 'wat',
  world: 'sleeper',
  wit: withWasi03(`package test:p3-sleeper@0.1.0;
world sleeper {
  import wasi:clocks/monotonic-clock@0.3.0;
  export nap: async func(ns: u64) -> u64;
  export boom: async func();
  export flood: async func(n: u32) -> u32;
  export plain: func() -> u32;
  export cancelled: func() -> u32;
}`),
  wat: `(module
  (import "wasi:clocks/monotonic-clock@0.3.0" "[async-lower]wait-for" (func $wait-for (param i64) (result i32)))
  (import "[export]$root" "[task-cancel]" (func $task-cancel))
  (import "wasi:clocks/monotonic-clock@0.3.0" "now" (func $now (result i64)))
  (import "$root" "[waitable-set-new]" (func $set-new (result i32)))
  (import "$root" "[waitable-join]" (func $join (param i32 i32)))
  (import "$root" "[subtask-drop]" (func $subtask-drop (param i32)))
  (import "$root" "[context-get-0]" (func $ctx-get (result i32)))
  (import "$root" "[context-set-0]" (func $ctx-set (param i32)))
  (import "[export]$root" "[task-return]nap" (func $return (param i64)))
  (import "[export]$root" "[task-return]flood" (func $return-u32 (param i32)))
  (memory (export "memory") 1)
  (global $calls (mut i32) (i32.const 0))
  (func (export "[async-lift]nap") (param $ns i64) (result i32) (local $r i32) (local $set i32) (local $slot i32)
    (local.set $slot (i32.add (i32.const 1024) (i32.shl (i32.and (global.get $calls) (i32.const 1023)) (i32.const 3))))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (call $ctx-set (local.get $slot))
    (i64.store (local.get $slot) (call $now))
    (local.set $r (call $wait-for (local.get $ns)))
    ;; RETURNED (2) at once: nothing to wait for.
    (if (i32.eq (i32.and (local.get $r) (i32.const 15)) (i32.const 2)) (then
      (call $return (i64.sub (call $now) (i64.load (local.get $slot))))
      (return (i32.const 0))))
    (local.set $set (call $set-new))
    (call $join (i32.shr_u (local.get $r) (i32.const 4)) (local.get $set))
    (i32.or (i32.shl (local.get $set) (i32.const 4)) (i32.const 2)))
  (func (export "[async-lift]boom") (result i32) unreachable)
  (func (export "[async-lift]flood") (param $n i32) (result i32) (local $i i32)
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (drop (call $wait-for (i64.const 60000000000)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (call $return-u32 (local.get $n))
    (i32.const 0))
  (func (export "[callback][async-lift]flood") (param i32 i32 i32) (result i32) (i32.const 0))
  (func (export "plain") (result i32) (i32.const 7))
  (global $cancelled (mut i32) (i32.const 0))
  (func (export "cancelled") (result i32) (global.get $cancelled))
  (func (export "[callback][async-lift]boom") (param i32 i32 i32) (result i32) unreachable)
  ;; SUBTASK: the wait has returned; TASK_CANCELLED (6): the host asks it to stop, and it does (its wait left to the host).
  (func (export "[callback][async-lift]nap") (param $event i32) (param $subtask i32) (param $status i32) (result i32)
    (if (i32.eq (local.get $event) (i32.const 6)) (then
      (global.set $cancelled (i32.add (global.get $cancelled) (i32.const 1)))
      (call $task-cancel)
      (return (i32.const 0))))
    (call $join (local.get $subtask) (i32.const 0))
    (call $subtask-drop (local.get $subtask))
    (call $return (i64.sub (call $now) (i64.load (call $ctx-get))))
    (i32.const 0)))`,
};

/**
 * Async functions as a wasi:http-free toolchain component would export them
 * (wit-component's names, one core module), of the types invoke passes:
 * - `bytes: async func(count: u32) -> stream<u8>`: `count` bytes, byte i
 *   being i & 255, in writes of 16 KiB (what the streams bench reads);
 * - `numbers: async func(count: u32) -> stream<u32>`: 0 … count - 1, in
 *   writes of up to 256; `broken` the same, then it traps;
 * - `total: async func(data: stream<u32>) -> u64`, the sum of the items,
 *   and `length: async func(data: stream<u8>) -> u64`, how many bytes (each
 *   acknowledges a cancellation with task.cancel);
 * - `mirror: async func(s: shape) -> result<shape, string>`, `s` as it came
 *   (its strings and lists where the host put them), and `refuse: async
 *   func(reason: string) -> result<shape, string>`, err(reason);
 * - `later: async func(n: u32) -> future<u32>`, a future it writes n + 1 to
 *   (for 0, one it drops unwritten);
 * - `plain: func() -> u32`, 5, `greet: func(name: string) -> string`, the
 *   name (its post-return counted), and `posts: func() -> u32`, that count.
 * A task's state is in one of 8 slots of 32 bytes from 1024 on, taken in
 * turn, that its context points to.
 */
export const P3_PRODUCER: ComponentSource = {
  kind: 'wat',
  world: 'producer',
  wit: withWasi03(`package test:p3-producer@0.1.0;
world producer {
  variant weight { light, heavy(s64) }
  record shape { name: string, sizes: list<u32>, tag: option<option<u8>>, weight: weight }
  export bytes: async func(count: u32) -> stream<u8>;
  export numbers: async func(count: u32) -> stream<u32>;
  export broken: async func(count: u32) -> stream<u32>;
  export total: async func(data: stream<u32>) -> u64;
  export length: async func(data: stream<u8>) -> u64;
  export mirror: async func(s: shape) -> result<shape, string>;
  export refuse: async func(reason: string) -> result<shape, string>;
  export later: async func(n: u32) -> future<u32>;
  export plain: func() -> u32;
  export greet: func(name: string) -> string;
  export posts: func() -> u32;
}`),
  wat: `(module
  (import "$root" "[waitable-set-new]" (func $set-new (result i32)))
  (import "$root" "[waitable-set-drop]" (func $set-drop (param i32)))
  (import "$root" "[waitable-join]" (func $join (param i32 i32)))
  (import "$root" "[context-get-0]" (func $ctx-get (result i32)))
  (import "$root" "[context-set-0]" (func $ctx-set (param i32)))
  (import "[export]$root" "[task-cancel]" (func $task-cancel))
  (import "[export]$root" "[task-return]bytes" (func $return-bytes (param i32)))
  (import "[export]$root" "[stream-new-0]bytes" (func $bytes-new (result i64)))
  (import "[export]$root" "[async-lower][stream-write-0]bytes" (func $bytes-write (param i32 i32 i32) (result i32)))
  (import "[export]$root" "[stream-drop-writable-0]bytes" (func $bytes-drop (param i32)))
  (import "[export]$root" "[task-return]numbers" (func $return-numbers (param i32)))
  (import "[export]$root" "[stream-new-0]numbers" (func $numbers-new (result i64)))
  (import "[export]$root" "[async-lower][stream-write-0]numbers" (func $numbers-write (param i32 i32 i32) (result i32)))
  (import "[export]$root" "[stream-drop-writable-0]numbers" (func $numbers-drop (param i32)))
  (import "[export]$root" "[task-return]broken" (func $return-broken (param i32)))
  (import "[export]$root" "[stream-new-0]broken" (func $broken-new (result i64)))
  (import "[export]$root" "[async-lower][stream-write-0]broken" (func $broken-write (param i32 i32 i32) (result i32)))
  (import "[export]$root" "[task-return]total" (func $return-total (param i64)))
  (import "[export]$root" "[async-lower][stream-read-0]total" (func $total-read (param i32 i32 i32) (result i32)))
  (import "[export]$root" "[stream-cancel-read-0]total" (func $total-cancel (param i32) (result i32)))
  (import "[export]$root" "[stream-drop-readable-0]total" (func $total-drop (param i32)))
  (import "[export]$root" "[task-return]length" (func $return-length (param i64)))
  (import "[export]$root" "[async-lower][stream-read-0]length" (func $length-read (param i32 i32 i32) (result i32)))
  (import "[export]$root" "[stream-cancel-read-0]length" (func $length-cancel (param i32) (result i32)))
  (import "[export]$root" "[stream-drop-readable-0]length" (func $length-drop (param i32)))
  (import "[export]$root" "[task-return]mirror" (func $return-mirror (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i64)))
  (import "[export]$root" "[task-return]refuse" (func $return-refuse (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i64)))
  (import "[export]$root" "[task-return]later" (func $return-later (param i32)))
  (import "[export]$root" "[future-new-0]later" (func $future-new (result i64)))
  (import "[export]$root" "[async-lower][future-write-0]later" (func $future-write (param i32 i32) (result i32)))
  (import "[export]$root" "[future-drop-writable-0]later" (func $future-drop (param i32)))
  (memory (export "memory") 4)
  ;; 65536 on: 16 KiB + 256 bytes, byte i being i & 255 (bytes' writes start within its first 256); 131072 on: 1 KiB a
  ;; slot where numbers are made; 139264 on: 4 KiB a slot where reads land; 196608 on: what cabi_realloc gives.
  (func $fill (local $i i32)
    (block $d (loop $l
      (br_if $d (i32.ge_u (local.get $i) (i32.const 16640)))
      (i32.store8 (i32.add (i32.const 65536) (local.get $i)) (local.get $i))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l))))
  (start $fill)
  (global $heap (mut i32) (i32.const 196608))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
    (if (i32.gt_u (i32.add (global.get $heap) (local.get 3)) (i32.const 262144)) (then (global.set $heap (i32.const 196608))))
    (local.set $p (global.get $heap))
    (global.set $heap (i32.and (i32.add (i32.add (local.get $p) (local.get 3)) (i32.const 7)) (i32.const -8)))
    (local.get $p))
  ;; A slot: +0 the stream's or future's end, +4 items left (a future's value), +8 the task's waitable set, +12 which
  ;; function (0 bytes or length, 1 numbers or total, 2 broken), +16 items sent (a reader's sum, an i64).
  (global $tasks (mut i32) (i32.const 0))
  (func $slot (result i32) (local $s i32)
    (local.set $s (i32.add (i32.const 1024) (i32.shl (i32.and (global.get $tasks) (i32.const 7)) (i32.const 5))))
    (global.set $tasks (i32.add (global.get $tasks) (i32.const 1)))
    (memory.fill (local.get $s) (i32.const 0) (i32.const 32))
    (call $ctx-set (local.get $s))
    (local.get $s))
  (func $index (param $s i32) (result i32) (i32.shr_u (i32.sub (local.get $s) (i32.const 1024)) (i32.const 5)))
  ;; WAIT (2) on the task's set.
  (func $wait (param $s i32) (result i32) (i32.or (i32.shl (i32.load offset=8 (local.get $s)) (i32.const 4)) (i32.const 2)))

  ;; One write of the task's next items: its packed result (count << 4 | status), or -1 (BLOCKED).
  (func $write (param $s i32) (result i32) (local $n i32) (local $i i32) (local $buf i32)
    (if (i32.load offset=12 (local.get $s)) (then
      (local.set $n (select (i32.const 256) (i32.load offset=4 (local.get $s)) (i32.gt_u (i32.load offset=4 (local.get $s)) (i32.const 256))))
      (local.set $buf (i32.add (i32.const 131072) (i32.shl (call $index (local.get $s)) (i32.const 10))))
      (block $d (loop $l
        (br_if $d (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store (i32.add (local.get $buf) (i32.shl (local.get $i) (i32.const 2))) (i32.add (i32.load offset=16 (local.get $s)) (local.get $i)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
      (if (i32.eq (i32.load offset=12 (local.get $s)) (i32.const 2)) (then
        (return (call $broken-write (i32.load (local.get $s)) (local.get $buf) (local.get $n)))))
      (return (call $numbers-write (i32.load (local.get $s)) (local.get $buf) (local.get $n)))))
    (local.set $n (select (i32.const 16384) (i32.load offset=4 (local.get $s)) (i32.gt_u (i32.load offset=4 (local.get $s)) (i32.const 16384))))
    (call $bytes-write (i32.load (local.get $s)) (i32.add (i32.const 65536) (i32.and (i32.load offset=16 (local.get $s)) (i32.const 255))) (local.get $n)))
  ;; A write came back: counts what went; 0 when the reader is gone (DROPPED, 1).
  (func $wrote (param $s i32) (param $r i32) (result i32)
    (i32.store offset=4 (local.get $s) (i32.sub (i32.load offset=4 (local.get $s)) (i32.shr_u (local.get $r) (i32.const 4))))
    (i32.store offset=16 (local.get $s) (i32.add (i32.load offset=16 (local.get $s)) (i32.shr_u (local.get $r) (i32.const 4))))
    (i32.ne (i32.and (local.get $r) (i32.const 15)) (i32.const 1)))
  ;; Writes until a write blocks (WAIT), or the items are out or the reader gone (ends the stream: EXIT).
  (func $pump (param $s i32) (result i32) (local $r i32)
    (block $end (loop $l
      (br_if $end (i32.eqz (i32.load offset=4 (local.get $s))))
      (local.set $r (call $write (local.get $s)))
      (if (i32.eq (local.get $r) (i32.const -1)) (then
        (if (i32.eqz (i32.load offset=8 (local.get $s))) (then
          (i32.store offset=8 (local.get $s) (call $set-new))
          (call $join (i32.load (local.get $s)) (i32.load offset=8 (local.get $s)))))
        (return (call $wait (local.get $s)))))
      (br_if $end (i32.eqz (call $wrote (local.get $s) (local.get $r))))
      (br $l)))
    ;; broken traps where the others end their streams.
    (if (i32.eq (i32.load offset=12 (local.get $s)) (i32.const 2)) (then unreachable))
    (if (i32.load offset=8 (local.get $s)) (then
      (call $join (i32.load (local.get $s)) (i32.const 0))
      (call $set-drop (i32.load offset=8 (local.get $s)))))
    (if (i32.load offset=12 (local.get $s)) (then (call $numbers-drop (i32.load (local.get $s)))) (else (call $bytes-drop (i32.load (local.get $s)))))
    (i32.const 0))
  (func $produce (param $count i32) (param $kind i32) (result i32) (local $s i32) (local $ends i64)
    (local.set $s (call $slot))
    (local.set $ends (if (result i64) (i32.eq (local.get $kind) (i32.const 2)) (then (call $broken-new))
      (else (if (result i64) (local.get $kind) (then (call $numbers-new)) (else (call $bytes-new))))))
    (i32.store (local.get $s) (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32))))
    (i32.store offset=4 (local.get $s) (local.get $count))
    (i32.store offset=12 (local.get $s) (local.get $kind))
    (if (i32.eq (local.get $kind) (i32.const 2)) (then (call $return-broken (i32.wrap_i64 (local.get $ends))))
      (else (if (local.get $kind) (then (call $return-numbers (i32.wrap_i64 (local.get $ends)))) (else (call $return-bytes (i32.wrap_i64 (local.get $ends)))))))
    (call $pump (local.get $s)))
  (func (export "[async-lift]bytes") (param i32) (result i32) (call $produce (local.get 0) (i32.const 0)))
  (func (export "[async-lift]numbers") (param i32) (result i32) (call $produce (local.get 0) (i32.const 1)))
  (func (export "[async-lift]broken") (param i32) (result i32) (call $produce (local.get 0) (i32.const 2)))
  ;; STREAM_WRITE (3), the one event a producer's set gives: the blocked write went.
  (func $produced (param $r i32) (result i32) (local $s i32)
    (local.set $s (call $ctx-get))
    (if (i32.eqz (call $wrote (local.get $s) (local.get $r))) (then (i32.store offset=4 (local.get $s) (i32.const 0))))
    (call $pump (local.get $s)))
  (func (export "[callback][async-lift]bytes") (param i32 i32 i32) (result i32) (call $produced (local.get 2)))
  (func (export "[callback][async-lift]numbers") (param i32 i32 i32) (result i32) (call $produced (local.get 2)))
  (func (export "[callback][async-lift]broken") (param i32 i32 i32) (result i32) (call $produced (local.get 2)))

  ;; One read of the task's stream into its slot's 4 KiB: 1,024 u32s (total) or 4,096 bytes (length).
  (func $read (param $s i32) (result i32) (local $buf i32)
    (local.set $buf (i32.add (i32.const 139264) (i32.shl (call $index (local.get $s)) (i32.const 12))))
    (if (result i32) (i32.load offset=12 (local.get $s))
      (then (call $total-read (i32.load (local.get $s)) (local.get $buf) (i32.const 1024)))
      (else (call $length-read (i32.load (local.get $s)) (local.get $buf) (i32.const 4096)))))
  ;; A read came back: adds it up; 0 once the writer has ended the stream (DROPPED, 1).
  (func $got (param $s i32) (param $r i32) (result i32) (local $n i32) (local $i i32) (local $buf i32)
    (local.set $n (i32.shr_u (local.get $r) (i32.const 4)))
    (local.set $buf (i32.add (i32.const 139264) (i32.shl (call $index (local.get $s)) (i32.const 12))))
    (if (i32.load offset=12 (local.get $s))
      (then
        (block $d (loop $l
          (br_if $d (i32.ge_u (local.get $i) (local.get $n)))
          (i64.store offset=16 (local.get $s) (i64.add (i64.load offset=16 (local.get $s)) (i64.extend_i32_u (i32.load (i32.add (local.get $buf) (i32.shl (local.get $i) (i32.const 2)))))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $l))))
      (else (i64.store offset=16 (local.get $s) (i64.add (i64.load offset=16 (local.get $s)) (i64.extend_i32_u (local.get $n))))))
    (i32.ne (i32.and (local.get $r) (i32.const 15)) (i32.const 1)))
  ;; Leaves the set and drops the stream.
  (func $finish (param $s i32)
    (call $join (i32.load (local.get $s)) (i32.const 0))
    (if (i32.load offset=12 (local.get $s)) (then (call $total-drop (i32.load (local.get $s)))) (else (call $length-drop (i32.load (local.get $s)))))
    (call $set-drop (i32.load offset=8 (local.get $s))))
  (func $answer (param $s i32) (result i32)
    (call $finish (local.get $s))
    (if (i32.load offset=12 (local.get $s)) (then (call $return-total (i64.load offset=16 (local.get $s)))) (else (call $return-length (i64.load offset=16 (local.get $s)))))
    (i32.const 0))
  ;; Reads until a read waits for the writer (WAIT) or the stream ends (returns the sum: EXIT).
  (func $consume (param $s i32) (result i32) (local $r i32)
    (block $end (loop $l
      (local.set $r (call $read (local.get $s)))
      (if (i32.eq (local.get $r) (i32.const -1)) (then (return (call $wait (local.get $s)))))
      (br_if $end (i32.eqz (call $got (local.get $s) (local.get $r))))
      (br $l)))
    (call $answer (local.get $s)))
  (func $take (param $r i32) (param $kind i32) (result i32) (local $s i32)
    (local.set $s (call $slot))
    (i32.store (local.get $s) (local.get $r))
    (i32.store offset=12 (local.get $s) (local.get $kind))
    (i32.store offset=8 (local.get $s) (call $set-new))
    (call $join (local.get $r) (i32.load offset=8 (local.get $s)))
    (call $consume (local.get $s)))
  (func (export "[async-lift]total") (param i32) (result i32) (call $take (local.get 0) (i32.const 1)))
  (func (export "[async-lift]length") (param i32) (result i32) (call $take (local.get 0) (i32.const 0)))
  ;; STREAM_READ (2): the read that waited came back; TASK_CANCELLED (6): rt gave up, and the task ends acknowledging it.
  (func $consumed (param $event i32) (param $r i32) (result i32) (local $s i32)
    (local.set $s (call $ctx-get))
    (if (i32.eq (local.get $event) (i32.const 6)) (then
      (if (i32.load offset=12 (local.get $s))
        (then (drop (call $total-cancel (i32.load (local.get $s)))))
        (else (drop (call $length-cancel (i32.load (local.get $s))))))
      (call $finish (local.get $s))
      (call $task-cancel)
      (return (i32.const 0))))
    (if (i32.eqz (call $got (local.get $s) (local.get $r))) (then (return (call $answer (local.get $s)))))
    (call $consume (local.get $s)))
  (func (export "[callback][async-lift]total") (param i32 i32 i32) (result i32) (call $consumed (local.get 0) (local.get 2)))
  (func (export "[callback][async-lift]length") (param i32 i32 i32) (result i32) (call $consumed (local.get 0) (local.get 2)))

  ;; ok(s): a shape's nine core values as they came, after the ok case's discriminant.
  (func (export "[async-lift]mirror") (param i32 i32 i32 i32 i32 i32 i32 i32 i64) (result i32)
    (call $return-mirror (i32.const 0) (local.get 0) (local.get 1) (local.get 2) (local.get 3) (local.get 4) (local.get 5) (local.get 6) (local.get 7) (local.get 8))
    (i32.const 0))
  (func (export "[callback][async-lift]mirror") (param i32 i32 i32) (result i32) unreachable)
  (func (export "[async-lift]refuse") (param i32 i32) (result i32)
    (call $return-refuse (i32.const 1) (local.get 0) (local.get 1) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i64.const 0))
    (i32.const 0))
  (func (export "[callback][async-lift]refuse") (param i32 i32 i32) (result i32) unreachable)

  (func (export "[async-lift]later") (param $n i32) (result i32) (local $s i32) (local $ends i64) (local $r i32)
    (local.set $s (call $slot))
    (local.set $ends (call $future-new))
    (i32.store (local.get $s) (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32))))
    (call $return-later (i32.wrap_i64 (local.get $ends)))
    (if (i32.eqz (local.get $n)) (then
      (call $future-drop (i32.load (local.get $s)))
      (return (i32.const 0))))
    (i32.store offset=4 (local.get $s) (i32.add (local.get $n) (i32.const 1)))
    (local.set $r (call $future-write (i32.load (local.get $s)) (i32.add (local.get $s) (i32.const 4))))
    (if (i32.ne (local.get $r) (i32.const -1)) (then
      (call $future-drop (i32.load (local.get $s)))
      (return (i32.const 0))))
    (i32.store offset=8 (local.get $s) (call $set-new))
    (call $join (i32.load (local.get $s)) (i32.load offset=8 (local.get $s)))
    (call $wait (local.get $s)))
  ;; FUTURE_WRITE (5): the value went.
  (func (export "[callback][async-lift]later") (param i32 i32 i32) (result i32) (local $s i32)
    (local.set $s (call $ctx-get))
    (call $join (i32.load (local.get $s)) (i32.const 0))
    (call $future-drop (i32.load (local.get $s)))
    (call $set-drop (i32.load offset=8 (local.get $s)))
    (i32.const 0))

  (func (export "plain") (result i32) (i32.const 5))
  (global $posts (mut i32) (i32.const 0))
  (func (export "greet") (param i32 i32) (result i32)
    (i32.store (i32.const 2048) (local.get 0))
    (i32.store (i32.const 2052) (local.get 1))
    (i32.const 2048))
  (func (export "cabi_post_greet") (param i32) (global.set $posts (i32.add (global.get $posts) (i32.const 1))))
  (func (export "posts") (result i32) (global.get $posts)))`,
};

/**
 * `say: async func(text: string, err: bool)`: writes `text` to
 * wasi:cli/stdout@0.3.0 (stderr when `err`) through a stream it makes and
 * hands the host (write-via-stream), waiting while the host has not taken
 * it, then ends the stream. The writable end is the task's context.
 */
export const P3_SPEAKER: ComponentSource = {
  kind: 'wat',
  world: 'speaker',
  wit: withWasi03(`package test:p3-speaker@0.1.0;
world speaker {
  import wasi:cli/stdout@0.3.0;
  import wasi:cli/stderr@0.3.0;
  export say: async func(text: string, err: bool);
}`),
  wat: `(module
  (import "wasi:cli/stdout@0.3.0" "write-via-stream" (func $out (param i32) (result i32)))
  (import "wasi:cli/stdout@0.3.0" "[stream-new-0]write-via-stream" (func $out-new (result i64)))
  (import "wasi:cli/stdout@0.3.0" "[async-lower][stream-write-0]write-via-stream" (func $out-write (param i32 i32 i32) (result i32)))
  (import "wasi:cli/stdout@0.3.0" "[stream-drop-writable-0]write-via-stream" (func $out-drop (param i32)))
  (import "wasi:cli/stdout@0.3.0" "[future-drop-readable-1]write-via-stream" (func $out-done (param i32)))
  (import "wasi:cli/stderr@0.3.0" "write-via-stream" (func $err (param i32) (result i32)))
  (import "wasi:cli/stderr@0.3.0" "[stream-new-0]write-via-stream" (func $err-new (result i64)))
  (import "wasi:cli/stderr@0.3.0" "[async-lower][stream-write-0]write-via-stream" (func $err-write (param i32 i32 i32) (result i32)))
  (import "wasi:cli/stderr@0.3.0" "[stream-drop-writable-0]write-via-stream" (func $err-drop (param i32)))
  (import "wasi:cli/stderr@0.3.0" "[future-drop-readable-1]write-via-stream" (func $err-done (param i32)))
  (import "$root" "[waitable-set-new]" (func $set-new (result i32)))
  (import "$root" "[waitable-join]" (func $join (param i32 i32)))
  (import "$root" "[context-get-0]" (func $ctx-get (result i32)))
  (import "$root" "[context-set-0]" (func $ctx-set (param i32)))
  (import "[export]$root" "[task-return]say" (func $return))
  (memory (export "memory") 8)
  ;; Texts are lowered from 4096 on, each call's after the last; the heap starts over once no call is running.
  (global $heap (mut i32) (i32.const 4096))
  (global $running (mut i32) (i32.const 0))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
    (local.set $p (global.get $heap))
    (global.set $heap (i32.add (global.get $heap) (local.get 3)))
    (local.get $p))
  ;; The context: the writable end in the low 31 bits, stderr in the top one.
  (func $end (result i32) (local $ctx i32)
    (local.set $ctx (call $ctx-get))
    (call $join (i32.and (local.get $ctx) (i32.const 0x7fffffff)) (i32.const 0))
    (if (i32.lt_s (local.get $ctx) (i32.const 0))
      (then (call $err-drop (i32.and (local.get $ctx) (i32.const 0x7fffffff))))
      (else (call $out-drop (local.get $ctx))))
    (global.set $running (i32.sub (global.get $running) (i32.const 1)))
    (if (i32.eqz (global.get $running)) (then (global.set $heap (i32.const 4096))))
    (call $return)
    (i32.const 0))
  (func (export "[async-lift]say") (param $ptr i32) (param $len i32) (param $to-err i32) (result i32) (local $ends i64) (local $w i32) (local $r i32) (local $set i32)
    (global.set $running (i32.add (global.get $running) (i32.const 1)))
    (if (local.get $to-err)
      (then
        (local.set $ends (call $err-new))
        (local.set $w (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32))))
        (call $err-done (call $err (i32.wrap_i64 (local.get $ends))))
        (call $ctx-set (i32.or (local.get $w) (i32.const 0x80000000)))
        (local.set $r (call $err-write (local.get $w) (local.get $ptr) (local.get $len))))
      (else
        (local.set $ends (call $out-new))
        (local.set $w (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32))))
        (call $out-done (call $out (i32.wrap_i64 (local.get $ends))))
        (call $ctx-set (local.get $w))
        (local.set $r (call $out-write (local.get $w) (local.get $ptr) (local.get $len)))))
    ;; BLOCKED (-1): wait until the host has taken it (a STREAM_WRITE event), then end.
    (if (i32.eq (local.get $r) (i32.const -1)) (then
      (local.set $set (call $set-new))
      (call $join (local.get $w) (local.get $set))
      (return (i32.or (i32.shl (local.get $set) (i32.const 4)) (i32.const 2)))))
    (call $end))
  (func (export "[callback][async-lift]say") (param i32 i32 i32) (result i32) (call $end)))`,
};

/**
 * A wasi:http/handler@0.3.0 (the `service` world), what its `handle` does
 * chosen by the request's method:
 * - GET (and any other): 200 "Hello, world!\n", written to a stream of its
 *   own after `handle` returned, then trailers ok(none);
 * - POST: an echo, handing the request's body and trailers back as the
 *   response's (as wasmtime's p3 echo does);
 * - PUT: status 700, which no client can be sent;
 * - PATCH: err(connection-refused) instead of a response;
 * - DELETE: a trap;
 * - OPTIONS: the hello after a nap of 300 ms (wasi:clocks wait-for); HEAD:
 *   after one of 3 s; TRACE: after one of a minute;
 * - PURGE (a method of its own, of any length but four): the hello's body
 *   written, then a nap of 300 ms, then a trap instead of its end;
 * - LOCK (a method of its own of four letters): a loop in `handle` that
 *   never ends and never waits (a runaway guest).
 * Each task keeps its state in a record of its own (its context), so that
 * requests are served side by side in one instance, each waiting on a
 * waitable set of its own. Each response carries `x-served`: how many
 * responses its instance has made, modulo 10 (a fresh instance starts at 1).
 * A nap the host cancels (TASK_CANCELLED: its
 * client left, its deadline passed) drops its request and acknowledges with
 * task.cancel, leaving its wait to the host.
 */
export const P3_HANDLER: ComponentSource = {
  kind: 'wat',
  world: 'handler',
  wit: withWasi03(`package test:p3-handler@0.1.0;
world handler {
  import wasi:clocks/monotonic-clock@0.3.0;
  export wasi:http/handler@0.3.0;
}`),
  wat: `(module
  (import "wasi:http/types@0.3.0" "[constructor]fields" (func $fields-new (result i32)))
  (import "wasi:http/types@0.3.0" "[method]fields.append" (func $append (param i32 i32 i32 i32 i32 i32)))
  (import "wasi:http/types@0.3.0" "[method]request.get-method" (func $get-method (param i32 i32)))
  (import "wasi:http/types@0.3.0" "[static]request.consume-body" (func $consume-body (param i32 i32 i32)))
  (import "wasi:http/types@0.3.0" "[future-new-0][static]request.consume-body" (func $res-new (result i64)))
  (import "wasi:http/types@0.3.0" "[async-lower][future-write-0][static]request.consume-body" (func $res-write (param i32 i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[future-drop-writable-0][static]request.consume-body" (func $res-drop (param i32)))
  (import "wasi:http/types@0.3.0" "[static]response.new" (func $response-new (param i32 i32 i32 i32 i32)))
  (import "wasi:http/types@0.3.0" "[method]response.set-status-code" (func $set-status (param i32 i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[stream-new-0][static]response.new" (func $stream-new (result i64)))
  (import "wasi:http/types@0.3.0" "[future-new-1][static]response.new" (func $future-new (result i64)))
  (import "wasi:http/types@0.3.0" "[async-lower][stream-write-0][static]response.new" (func $stream-write (param i32 i32 i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[stream-drop-writable-0][static]response.new" (func $stream-drop (param i32)))
  (import "wasi:http/types@0.3.0" "[async-lower][future-write-1][static]response.new" (func $future-write (param i32 i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[future-drop-writable-1][static]response.new" (func $future-drop-w (param i32)))
  (import "wasi:http/types@0.3.0" "[future-drop-readable-2][static]response.new" (func $future-drop-r (param i32)))
  (import "wasi:http/types@0.3.0" "[resource-drop]request" (func $request-drop (param i32)))
  (import "wasi:clocks/monotonic-clock@0.3.0" "[async-lower]wait-for" (func $wait-for (param i64) (result i32)))
  ${TASK_INTRINSICS}
  (import "[export]$root" "[task-cancel]" (func $task-cancel))
  (import "[export]wasi:http/handler@0.3.0" "[task-return]handle" (func $return (param i32 i32 i32 i64 i32 i32 i32 i32)))
  (memory (export "memory") 1)
  ;; The 16 bytes at 0 are never written: zeros, the value ok (and ok(none)) the futures are written with.
  (data (i32.const 64) "Hello, world!\\n")
  ;; The x-served header's name; its one-digit value is written at 96, append's result at 104.
  (data (i32.const 80) "x-served")
  (global $responses (mut i32) (i32.const 0))
  ;; A task's record, 32 bytes from 1024 on (a free list of them): +0 its waitable set, +4 the response body's
  ;; writable end, +8 the trailers' writable end, +12 consume-body's res writable end, +16 waits pending, +20 the request (a nap's),
  ;; +24 1: it naps once its body is written, 2: it traps once that nap is over.
  (global $next (mut i32) (i32.const 1024))
  (global $free (mut i32) (i32.const 0))
  ;; What the glue allocates for strings (a method other than the standard ones): a bump region that starts over.
  (global $heap (mut i32) (i32.const 49152))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
    (if (i32.gt_u (i32.add (global.get $heap) (local.get 3)) (i32.const 65536)) (then (global.set $heap (i32.const 49152))))
    (local.set $p (global.get $heap))
    (global.set $heap (i32.and (i32.add (i32.add (local.get $p) (local.get 3)) (i32.const 7)) (i32.const -8)))
    (local.get $p))
  (func $task (result i32) (local $t i32)
    (if (global.get $free)
      (then (local.set $t (global.get $free)) (global.set $free (i32.load (local.get $t))))
      (else (local.set $t (global.get $next)) (global.set $next (i32.add (local.get $t) (i32.const 32)))))
    (memory.fill (local.get $t) (i32.const 0) (i32.const 32))
    (call $ctx-set (local.get $t))
    (local.get $t))
  ;; Waits on \`w\` in the task's set (made when first needed).
  (func $wait (param $w i32) (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    (if (i32.eqz (i32.load (local.get $t))) (then (i32.store (local.get $t) (call $set-new))))
    (call $join (local.get $w) (i32.load (local.get $t)))
    (i32.store offset=16 (local.get $t) (i32.add (i32.load offset=16 (local.get $t)) (i32.const 1)))
    (i32.or (i32.shl (i32.load (local.get $t)) (i32.const 4)) (i32.const 2)))
  ;; Exits once nothing is pending, else waits on.
  (func $settle (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    (if (i32.load offset=16 (local.get $t)) (then (return (i32.or (i32.shl (i32.load (local.get $t)) (i32.const 4)) (i32.const 2)))))
    (if (i32.load (local.get $t)) (then (call $set-drop (i32.load (local.get $t)))))
    (i32.store (local.get $t) (global.get $free))
    (global.set $free (local.get $t))
    (i32.const 0))
  (func $respond (param $contents i32) (param $trailers i32) (param $status i32) (result i32) (local $resp i32) (local $headers i32)
    (local.set $headers (call $fields-new))
    (global.set $responses (i32.add (global.get $responses) (i32.const 1)))
    (i32.store8 (i32.const 96) (i32.add (i32.const 48) (i32.rem_u (global.get $responses) (i32.const 10))))
    (call $append (local.get $headers) (i32.const 80) (i32.const 8) (i32.const 96) (i32.const 1) (i32.const 104))
    (call $response-new (local.get $headers) (i32.const 1) (local.get $contents) (local.get $trailers) (i32.const 16))
    (call $future-drop-r (i32.load (i32.const 20)))
    (local.set $resp (i32.load (i32.const 16)))
    (if (i32.ne (local.get $status) (i32.const 200)) (then (drop (call $set-status (local.get $resp) (local.get $status)))))
    (local.get $resp))
  ;; Hello, world, written to a stream of its own, then trailers ok(none).
  (func $hello (param $req i32) (param $status i32) (result i32) (local $s i64) (local $f i64) (local $t i32) (local $r i32)
    (local.set $t (call $ctx-get))
    (call $request-drop (local.get $req))
    (local.set $s (call $stream-new))
    (local.set $f (call $future-new))
    (i32.store offset=4 (local.get $t) (i32.wrap_i64 (i64.shr_u (local.get $s) (i64.const 32))))
    (i32.store offset=8 (local.get $t) (i32.wrap_i64 (i64.shr_u (local.get $f) (i64.const 32))))
    (call $return (i32.const 0) (call $respond (i32.wrap_i64 (local.get $s)) (i32.wrap_i64 (local.get $f)) (local.get $status)) (i32.const 0) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0))
    (local.set $r (call $stream-write (i32.load offset=4 (local.get $t)) (i32.const 64) (i32.const 14)))
    (if (i32.eq (local.get $r) (i32.const -1)) (then (return (call $wait (i32.load offset=4 (local.get $t))))))
    (call $finish))
  (func $finish (result i32) (local $t i32) (local $r i32)
    (local.set $t (call $ctx-get))
    (if (i32.eq (i32.load offset=24 (local.get $t)) (i32.const 1)) (then
      (i32.store offset=24 (local.get $t) (i32.const 2))
      (local.set $r (call $wait-for (i64.const 300000000)))
      (if (i32.eq (i32.and (local.get $r) (i32.const 15)) (i32.const 2)) (then unreachable))
      (return (call $wait (i32.shr_u (local.get $r) (i32.const 4))))))
    (call $stream-drop (i32.load offset=4 (local.get $t)))
    (i32.store offset=4 (local.get $t) (i32.const 0))
    (local.set $r (call $future-write (i32.load offset=8 (local.get $t)) (i32.const 0)))
    (if (i32.eq (local.get $r) (i32.const -1)) (then (return (call $wait (i32.load offset=8 (local.get $t))))))
    (call $future-drop-w (i32.load offset=8 (local.get $t)))
    (i32.store offset=8 (local.get $t) (i32.const 0))
    (call $settle))
  ;; The request's body and trailers, handed back as the response's.
  (func $echo (param $req i32) (result i32) (local $res i64) (local $t i32) (local $r i32)
    (local.set $t (call $ctx-get))
    (local.set $res (call $res-new))
    (call $consume-body (local.get $req) (i32.wrap_i64 (local.get $res)) (i32.const 40))
    (call $return (i32.const 0) (call $respond (i32.load (i32.const 40)) (i32.load (i32.const 44)) (i32.const 200)) (i32.const 0) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0))
    (i32.store offset=12 (local.get $t) (i32.wrap_i64 (i64.shr_u (local.get $res) (i64.const 32))))
    (local.set $r (call $res-write (i32.load offset=12 (local.get $t)) (i32.const 0)))
    (if (i32.eq (local.get $r) (i32.const -1)) (then (return (call $wait (i32.load offset=12 (local.get $t))))))
    (call $res-drop (i32.load offset=12 (local.get $t)))
    (i32.store offset=12 (local.get $t) (i32.const 0))
    (call $settle))
  (func (export "[async-lift]wasi:http/handler@0.3.0#handle") (param $req i32) (result i32) (local $t i32) (local $m i32) (local $r i32)
    (local.set $t (call $task))
    (call $get-method (local.get $req) (i32.const 48))
    (local.set $m (i32.load8_u (i32.const 48)))
    ;; DELETE: a trap.
    (if (i32.eq (local.get $m) (i32.const 4)) (then unreachable))
    ;; PATCH: err(connection-refused).
    (if (i32.eq (local.get $m) (i32.const 8)) (then
      (call $request-drop (local.get $req))
      (call $return (i32.const 1) (i32.const 6) (i32.const 0) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0))
      (return (call $settle))))
    ;; POST: an echo.
    (if (i32.eq (local.get $m) (i32.const 2)) (then (return (call $echo (local.get $req)))))
    ;; A method of its own of four letters (LOCK): a runaway.
    (if (i32.and (i32.eq (local.get $m) (i32.const 9)) (i32.eq (i32.load (i32.const 56)) (i32.const 4))) (then (loop $ever (br $ever))))
    ;; Any other method of its own: the hello's body, then a trap.
    (if (i32.eq (local.get $m) (i32.const 9)) (then
      (i32.store offset=24 (local.get $t) (i32.const 1))
      (return (call $hello (local.get $req) (i32.const 200)))))
    ;; OPTIONS: hello after a nap of 300 ms; HEAD: after one of 3 s; TRACE: after one of a minute.
    (if (i32.or (i32.or (i32.eq (local.get $m) (i32.const 6)) (i32.eq (local.get $m) (i32.const 7))) (i32.eq (local.get $m) (i32.const 1))) (then
      (i32.store offset=20 (local.get $t) (local.get $req))
      (local.set $r (call $wait-for (select (i64.const 300000000) (select (i64.const 3000000000) (i64.const 60000000000) (i32.eq (local.get $m) (i32.const 1))) (i32.eq (local.get $m) (i32.const 6)))))
      (if (i32.eq (i32.and (local.get $r) (i32.const 15)) (i32.const 2)) (then (return (call $hello (local.get $req) (i32.const 200)))))
      (return (call $wait (i32.shr_u (local.get $r) (i32.const 4))))))
    ;; PUT: status 700, which no client can be sent.
    (call $hello (local.get $req) (select (i32.const 700) (i32.const 200) (i32.eq (local.get $m) (i32.const 3)))))
  ;; Cancelled while it napped (before it returned): its request is dropped unanswered, and nothing is pending any more.
  (func $cancelled (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    (call $request-drop (i32.load offset=20 (local.get $t)))
    (call $task-cancel)
    (i32.store offset=16 (local.get $t) (i32.const 0))
    (call $settle))
  (func (export "[callback][async-lift]wasi:http/handler@0.3.0#handle") (param $event i32) (param $w i32) (param $p i32) (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    (if (i32.eq (local.get $event) (i32.const 6)) (then (return (call $cancelled))))
    (call $join (local.get $w) (i32.const 0))
    (i32.store offset=16 (local.get $t) (i32.sub (i32.load offset=16 (local.get $t)) (i32.const 1)))
    ;; SUBTASK: the nap is over.
    (if (i32.eq (local.get $event) (i32.const 1)) (then
      (call $subtask-drop (local.get $w))
      (if (i32.eq (i32.load offset=24 (local.get $t)) (i32.const 2)) (then unreachable))
      (return (call $hello (i32.load offset=20 (local.get $t)) (i32.const 200)))))
    (if (i32.eq (local.get $w) (i32.load offset=4 (local.get $t))) (then (return (call $finish))))
    (if (i32.eq (local.get $w) (i32.load offset=8 (local.get $t))) (then
      (call $future-drop-w (local.get $w))
      (i32.store offset=8 (local.get $t) (i32.const 0))))
    (if (i32.eq (local.get $w) (i32.load offset=12 (local.get $t))) (then
      (call $res-drop (local.get $w))
      (i32.store offset=12 (local.get $t) (i32.const 0))))
    (call $settle)))`,
};

/**
 * A WASI 0.3 proxy: `handle` sends a GET through wasi:http/client@0.3.0 to
 * the authority its request's `x-target` header names (scheme http, path
 * `/proxied`), and returns the response it got as its own, body and all
 * (none for a request without the header: err(HTTP-request-URI-invalid)). A
 * client.send that fails answers its error-code (HTTP-request-denied for a
 * host its sidecar does not grant). Its outgoing request has no body; its
 * trailers future is written ok(none) when rt reads it.
 */
export const P3_PROXY: ComponentSource = {
  kind: 'wat',
  world: 'proxy',
  wit: withWasi03(`package test:p3-proxy@0.1.0;
world proxy {
  import wasi:http/client@0.3.0;
  export wasi:http/handler@0.3.0;
}`),
  wat: `(module
  (import "wasi:http/types@0.3.0" "[constructor]fields" (func $fields-new (result i32)))
  (import "wasi:http/types@0.3.0" "[method]fields.get" (func $fields-get (param i32 i32 i32 i32)))
  (import "wasi:http/types@0.3.0" "[resource-drop]fields" (func $fields-drop (param i32)))
  (import "wasi:http/types@0.3.0" "[method]request.get-headers" (func $get-headers (param i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[resource-drop]request" (func $request-drop (param i32)))
  (import "wasi:http/types@0.3.0" "[static]request.new" (func $request-new (param i32 i32 i32 i32 i32 i32 i32)))
  (import "wasi:http/types@0.3.0" "[future-new-1][static]request.new" (func $future-new (result i64)))
  (import "wasi:http/types@0.3.0" "[async-lower][future-write-1][static]request.new" (func $future-write (param i32 i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[future-drop-writable-1][static]request.new" (func $future-drop-w (param i32)))
  (import "wasi:http/types@0.3.0" "[future-drop-readable-2][static]request.new" (func $future-drop-r (param i32)))
  (import "wasi:http/types@0.3.0" "[method]request.set-scheme" (func $set-scheme (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[method]request.set-authority" (func $set-authority (param i32 i32 i32 i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[method]request.set-path-with-query" (func $set-path (param i32 i32 i32 i32) (result i32)))
  (import "wasi:http/client@0.3.0" "[async-lower]send" (func $send (param i32 i32) (result i32)))
  ${TASK_INTRINSICS}
  (import "[export]wasi:http/handler@0.3.0" "[task-return]handle" (func $return (param i32 i32 i32 i64 i32 i32 i32 i32)))
  (memory (export "memory") 1)
  ;; The 16 bytes at 0 are never written: zeros, the value ok(none) the trailers future is written with.
  (data (i32.const 96) "x-target")
  (data (i32.const 112) "/proxied")
  ;; A task's record, 32 bytes: +0 its set, +4 the trailers' writable end (0 once done), +8 the send's subtask (0 once
  ;; done), +16 where send's result goes (16 bytes, 8-aligned).
  (global $next (mut i32) (i32.const 1024))
  (global $free (mut i32) (i32.const 0))
  (global $heap (mut i32) (i32.const 49152))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
    (if (i32.gt_u (i32.add (global.get $heap) (local.get 3)) (i32.const 65536)) (then (global.set $heap (i32.const 49152))))
    (local.set $p (global.get $heap))
    (global.set $heap (i32.and (i32.add (i32.add (local.get $p) (local.get 3)) (i32.const 7)) (i32.const -8)))
    (local.get $p))
  (func $wait (param $w i32) (local $t i32)
    (local.set $t (call $ctx-get))
    (if (i32.eqz (i32.load (local.get $t))) (then (i32.store (local.get $t) (call $set-new))))
    (call $join (local.get $w) (i32.load (local.get $t))))
  ;; Exits once the send and the trailers write are both done, else waits on.
  (func $settle (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    (if (i32.or (i32.load offset=4 (local.get $t)) (i32.load offset=8 (local.get $t)))
      (then (return (i32.or (i32.shl (i32.load (local.get $t)) (i32.const 4)) (i32.const 2)))))
    (if (i32.load (local.get $t)) (then (call $set-drop (i32.load (local.get $t)))))
    (i32.store (local.get $t) (global.get $free))
    (global.set $free (local.get $t))
    (i32.const 0))
  ;; send returned: its response is ours, or its error-code our error (without a payload: the fixture sends none).
  (func $answer (local $t i32)
    (local.set $t (call $ctx-get))
    (if (i32.load8_u offset=16 (local.get $t))
      (then (call $return (i32.const 1) (i32.load8_u offset=24 (local.get $t)) (i32.const 0) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0)))
      (else (call $return (i32.const 0) (i32.load offset=24 (local.get $t)) (i32.const 0) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0)))))
  (func (export "[async-lift]wasi:http/handler@0.3.0#handle") (param $req i32) (result i32) (local $t i32) (local $h i32) (local $f i64) (local $out i32) (local $r i32)
    (if (global.get $free)
      (then (local.set $t (global.get $free)) (global.set $free (i32.load (local.get $t))))
      (else (local.set $t (global.get $next)) (global.set $next (i32.add (local.get $t) (i32.const 32)))))
    (memory.fill (local.get $t) (i32.const 0) (i32.const 32))
    (call $ctx-set (local.get $t))
    ;; x-target's first value (fields.get: a list of list<u8> at 200).
    (local.set $h (call $get-headers (local.get $req)))
    (call $fields-get (local.get $h) (i32.const 96) (i32.const 8) (i32.const 200))
    (call $fields-drop (local.get $h))
    (call $request-drop (local.get $req))
    (if (i32.eqz (i32.load offset=4 (i32.const 200))) (then
      ;; err(HTTP-request-URI-invalid): case 19.
      (call $return (i32.const 1) (i32.const 19) (i32.const 0) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0))
      (return (call $settle))))
    (local.set $f (call $future-new))
    ;; request.new(fields, none, trailers, none) -> (request, its transmission future) at 40.
    (call $request-new (call $fields-new) (i32.const 0) (i32.const 0) (i32.wrap_i64 (local.get $f)) (i32.const 0) (i32.const 0) (i32.const 40))
    (call $future-drop-r (i32.load (i32.const 44)))
    (local.set $out (i32.load (i32.const 40)))
    ;; scheme some(HTTP): case 0.
    (drop (call $set-scheme (local.get $out) (i32.const 1) (i32.const 0) (i32.const 0) (i32.const 0)))
    (drop (call $set-authority (local.get $out) (i32.const 1) (i32.load (i32.load (i32.const 200))) (i32.load offset=4 (i32.load (i32.const 200)))))
    (drop (call $set-path (local.get $out) (i32.const 1) (i32.const 112) (i32.const 8)))
    ;; The trailers: ok(none), the zero bytes at 0; rt reads them once the (empty) body is sent.
    (i32.store offset=4 (local.get $t) (i32.wrap_i64 (i64.shr_u (local.get $f) (i64.const 32))))
    (local.set $r (call $future-write (i32.load offset=4 (local.get $t)) (i32.const 0)))
    (if (i32.eq (local.get $r) (i32.const -1))
      (then (call $wait (i32.load offset=4 (local.get $t))))
      (else (call $future-drop-w (i32.load offset=4 (local.get $t))) (i32.store offset=4 (local.get $t) (i32.const 0))))
    (local.set $r (call $send (local.get $out) (i32.add (local.get $t) (i32.const 16))))
    ;; RETURNED (2) at once, or a subtask to wait for.
    (if (i32.eq (i32.and (local.get $r) (i32.const 15)) (i32.const 2))
      (then (call $answer))
      (else
        (i32.store offset=8 (local.get $t) (i32.shr_u (local.get $r) (i32.const 4)))
        (call $wait (i32.load offset=8 (local.get $t)))))
    (call $settle))
  (func (export "[callback][async-lift]wasi:http/handler@0.3.0#handle") (param $event i32) (param $w i32) (param $p i32) (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    ;; SUBTASK: the send's progress; it has returned at status 2 (RETURNED).
    (if (i32.eq (local.get $event) (i32.const 1)) (then
      (if (i32.eq (local.get $p) (i32.const 2)) (then
        (call $join (local.get $w) (i32.const 0))
        (call $subtask-drop (local.get $w))
        (i32.store offset=8 (local.get $t) (i32.const 0))
        (call $answer)))
      (return (call $settle))))
    (call $join (local.get $w) (i32.const 0))
    (call $future-drop-w (local.get $w))
    (i32.store offset=4 (local.get $t) (i32.const 0))
    (call $settle)))`,
};

/**
 * A WASI 0.3 middleware (wasi:http's `middleware` world): its `handle`
 * hands the request it got, as it is, to the wasi:http/handler it imports
 * (a link: its sidecar's `[imports]`), and answers with what that returns:
 * the downstream's response, body and all, or its error-code (the fixture
 * passes on only a code without a payload).
 */
export const P3_MIDDLEWARE: ComponentSource = {
  kind: 'wat',
  world: 'middleware',
  wit: withWasi03(`package test:p3-middleware@0.1.0;
world middleware {
  import wasi:http/handler@0.3.0;
  export wasi:http/handler@0.3.0;
}`),
  wat: `(module
  (import "wasi:http/handler@0.3.0" "[async-lower]handle" (func $downstream (param i32 i32) (result i32)))
  ${TASK_INTRINSICS}
  (import "[export]wasi:http/handler@0.3.0" "[task-return]handle" (func $return (param i32 i32 i32 i64 i32 i32 i32 i32)))
  (memory (export "memory") 1)
  ;; A task's record, 32 bytes: +0 its set, +16 where the downstream's result goes (16 bytes, 8-aligned).
  (global $next (mut i32) (i32.const 1024))
  (global $free (mut i32) (i32.const 0))
  (global $heap (mut i32) (i32.const 49152))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
    (if (i32.gt_u (i32.add (global.get $heap) (local.get 3)) (i32.const 65536)) (then (global.set $heap (i32.const 49152))))
    (local.set $p (global.get $heap))
    (global.set $heap (i32.and (i32.add (i32.add (local.get $p) (local.get 3)) (i32.const 7)) (i32.const -8)))
    (local.get $p))
  ;; The downstream returned: its response is ours, or its error-code our error.
  (func $answer (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    (if (i32.load8_u offset=16 (local.get $t))
      (then (call $return (i32.const 1) (i32.load8_u offset=24 (local.get $t)) (i32.const 0) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0)))
      (else (call $return (i32.const 0) (i32.load offset=24 (local.get $t)) (i32.const 0) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0))))
    (if (i32.load (local.get $t)) (then (call $set-drop (i32.load (local.get $t)))))
    (i32.store (local.get $t) (global.get $free))
    (global.set $free (local.get $t))
    ;; EXIT
    (i32.const 0))
  (func (export "[async-lift]wasi:http/handler@0.3.0#handle") (param $req i32) (result i32) (local $t i32) (local $r i32)
    (if (global.get $free)
      (then (local.set $t (global.get $free)) (global.set $free (i32.load (local.get $t))))
      (else (local.set $t (global.get $next)) (global.set $next (i32.add (local.get $t) (i32.const 32)))))
    (memory.fill (local.get $t) (i32.const 0) (i32.const 32))
    (call $ctx-set (local.get $t))
    ;; The request goes downstream as it is (it is the downstream's now).
    (local.set $r (call $downstream (local.get $req) (i32.add (local.get $t) (i32.const 16))))
    ;; RETURNED (2) at once, or a subtask to wait for in this task's own set.
    (if (i32.eq (i32.and (local.get $r) (i32.const 15)) (i32.const 2)) (then (return (call $answer))))
    (i32.store (local.get $t) (call $set-new))
    (call $join (i32.shr_u (local.get $r) (i32.const 4)) (i32.load (local.get $t)))
    ;; WAIT on the set.
    (i32.or (i32.shl (i32.load (local.get $t)) (i32.const 4)) (i32.const 2)))
  (func (export "[callback][async-lift]wasi:http/handler@0.3.0#handle") (param $event i32) (param $w i32) (param $p i32) (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    ;; SUBTASK (1) RETURNED (2): done with it.
    (if (i32.and (i32.eq (local.get $event) (i32.const 1)) (i32.eq (local.get $p) (i32.const 2))) (then
      (call $join (local.get $w) (i32.const 0))
      (call $subtask-drop (local.get $w))
      (return (call $answer))))
    (i32.or (i32.shl (i32.load (local.get $t)) (i32.const 4)) (i32.const 2))))`,
};

/**
 * acme:rest/nap@1.0.0's `nap: async func(ns: u64) -> u64`, exported: waits
 * `ns` nanoseconds (wasi:clocks' async wait-for) and answers how long it
 * waited, calls side by side as P3_SLEEPER's `nap`.
 */
export const P3_NAP_SERVER: ComponentSource = {
  kind: 'wat',
  world: 'nap-server',
  wit: withWasi03(`package test:p3-nap-server@0.1.0;
package acme:rest@1.0.0 {
  interface nap { nap: async func(ns: u64) -> u64; }
}
world nap-server {
  import wasi:clocks/monotonic-clock@0.3.0;
  export acme:rest/nap@1.0.0;
}`),
  wat: `(module
  (import "wasi:clocks/monotonic-clock@0.3.0" "[async-lower]wait-for" (func $wait-for (param i64) (result i32)))
  (import "wasi:clocks/monotonic-clock@0.3.0" "now" (func $now (result i64)))
  ${TASK_INTRINSICS}
  (import "[export]acme:rest/nap@1.0.0" "[task-return]nap" (func $return (param i64)))
  (memory (export "memory") 1)
  (global $calls (mut i32) (i32.const 0))
  ;; A task's slot, 16 bytes from 1024 (1,024 of them, reused in turn): +0 its start, +8 its set.
  (func (export "[async-lift]acme:rest/nap@1.0.0#nap") (param $ns i64) (result i32) (local $r i32) (local $slot i32)
    (local.set $slot (i32.add (i32.const 1024) (i32.shl (i32.and (global.get $calls) (i32.const 1023)) (i32.const 4))))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (call $ctx-set (local.get $slot))
    (i64.store (local.get $slot) (call $now))
    (local.set $r (call $wait-for (local.get $ns)))
    (if (i32.eq (i32.and (local.get $r) (i32.const 15)) (i32.const 2)) (then
      (call $return (i64.sub (call $now) (i64.load (local.get $slot))))
      (return (i32.const 0))))
    (i32.store offset=8 (local.get $slot) (call $set-new))
    (call $join (i32.shr_u (local.get $r) (i32.const 4)) (i32.load offset=8 (local.get $slot)))
    (i32.or (i32.shl (i32.load offset=8 (local.get $slot)) (i32.const 4)) (i32.const 2)))
  (func (export "[callback][async-lift]acme:rest/nap@1.0.0#nap") (param $event i32) (param $subtask i32) (param $status i32) (result i32) (local $slot i32)
    (local.set $slot (call $ctx-get))
    (call $join (local.get $subtask) (i32.const 0))
    (call $subtask-drop (local.get $subtask))
    (call $set-drop (i32.load offset=8 (local.get $slot)))
    (call $return (i64.sub (call $now) (i64.load (local.get $slot))))
    (i32.const 0)))`,
};

/**
 * `doze: async func(ns: u64) -> u64`: calls the acme:rest/nap it imports
 * (a link makes it P3_NAP_SERVER's) with `ns`, lowered async (its task waits
 * on the subtask), and answers what that answered.
 */
export const P3_DOZER: ComponentSource = {
  kind: 'wat',
  world: 'dozer',
  wit: withWasi03(`package test:p3-dozer@0.1.0;
package acme:rest@1.0.0 {
  interface nap { nap: async func(ns: u64) -> u64; }
}
world dozer {
  import acme:rest/nap@1.0.0;
  export doze: async func(ns: u64) -> u64;
}`),
  wat: `(module
  (import "acme:rest/nap@1.0.0" "[async-lower]nap" (func $nap (param i64 i32) (result i32)))
  ${TASK_INTRINSICS}
  (import "[export]$root" "[task-return]doze" (func $return (param i64)))
  (memory (export "memory") 1)
  (global $calls (mut i32) (i32.const 0))
  ;; A task's slot, 16 bytes from 1024 (1,024 of them, reused in turn): +0 its set, +8 the nap's answer.
  (func (export "[async-lift]doze") (param $ns i64) (result i32) (local $r i32) (local $slot i32)
    (local.set $slot (i32.add (i32.const 1024) (i32.shl (i32.and (global.get $calls) (i32.const 1023)) (i32.const 4))))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (call $ctx-set (local.get $slot))
    (local.set $r (call $nap (local.get $ns) (i32.add (local.get $slot) (i32.const 8))))
    (if (i32.eq (i32.and (local.get $r) (i32.const 15)) (i32.const 2)) (then
      (call $return (i64.load offset=8 (local.get $slot)))
      (return (i32.const 0))))
    (i32.store (local.get $slot) (call $set-new))
    (call $join (i32.shr_u (local.get $r) (i32.const 4)) (i32.load (local.get $slot)))
    (i32.or (i32.shl (i32.load (local.get $slot)) (i32.const 4)) (i32.const 2)))
  (func (export "[callback][async-lift]doze") (param $event i32) (param $w i32) (param $p i32) (result i32) (local $slot i32)
    (local.set $slot (call $ctx-get))
    ;; SUBTASK (1) RETURNED (2): the answer is in the slot.
    (if (i32.and (i32.eq (local.get $event) (i32.const 1)) (i32.eq (local.get $p) (i32.const 2))) (then
      (call $join (local.get $w) (i32.const 0))
      (call $subtask-drop (local.get $w))
      (call $set-drop (i32.load (local.get $slot)))
      (call $return (i64.load offset=8 (local.get $slot)))
      (return (i32.const 0))))
    (i32.or (i32.shl (i32.load (local.get $slot)) (i32.const 4)) (i32.const 2))))`,
};

/**
 * WASI 0.3's wasi:filesystem through the async ABI, on the first directory
 * its sidecar grants (none: err(255)), one call at a time:
 * - `read-file: async func(path: string) -> result<list<u8>, u8>`: opens
 *   `path` (open-at, lowered async: its task waits on the subtask), reads it
 *   through read-via-stream 64 KiB a read, waiting on the stream while it
 *   has nothing, until the host drops it; err(the error-code's case index)
 *   when open-at fails, err(254) past 192 KiB;
 * - `touch: async func(path: string) -> result<_, u8>`: opens `path` with
 *   create, for writing, and drops it.
 */
export const P3_FILES: ComponentSource = {
  kind: 'wat',
  world: 'files',
  wit: withWasi03(`package test:p3-files@0.1.0;
world files {
  import wasi:filesystem/types@0.3.0;
  import wasi:filesystem/preopens@0.3.0;
  export read-file: async func(path: string) -> result<list<u8>, u8>;
  export touch: async func(path: string) -> result<_, u8>;
}`),
  wat: `(module
  (import "wasi:filesystem/preopens@0.3.0" "get-directories" (func $dirs (param i32)))
  (import "wasi:filesystem/types@0.3.0" "[async-lower][method]descriptor.open-at" (func $open-at (param i32 i32) (result i32)))
  (import "wasi:filesystem/types@0.3.0" "[method]descriptor.read-via-stream" (func $read-via-stream (param i32 i64 i32)))
  (import "wasi:filesystem/types@0.3.0" "[async-lower][stream-read-0][method]descriptor.read-via-stream" (func $stream-read (param i32 i32 i32) (result i32)))
  (import "wasi:filesystem/types@0.3.0" "[stream-drop-readable-0][method]descriptor.read-via-stream" (func $stream-drop (param i32)))
  (import "wasi:filesystem/types@0.3.0" "[future-drop-readable-1][method]descriptor.read-via-stream" (func $future-drop (param i32)))
  (import "wasi:filesystem/types@0.3.0" "[resource-drop]descriptor" (func $descriptor-drop (param i32)))
  (import "$root" "[waitable-set-new]" (func $set-new (result i32)))
  (import "$root" "[waitable-set-drop]" (func $set-drop (param i32)))
  (import "$root" "[waitable-join]" (func $join (param i32 i32)))
  (import "$root" "[subtask-drop]" (func $subtask-drop (param i32)))
  (import "[export]$root" "[task-return]read-file" (func $return-read (param i32 i32 i32)))
  (import "[export]$root" "[task-return]touch" (func $return-touch (param i32 i32)))
  (memory (export "memory") 4)
  ;; 64: get-directories' list; 128: open-at's parameters (20 bytes); 160: its result (20 bytes); 192: read-via-stream's
  ;; stream and future. The call's state from 256: +0 its waitable set, +4 the preopen, +8 the file, +12 the stream,
  ;; +16 bytes read, +20 touch (1) or read-file (0). The bytes read go from 65536 on; what the glue allocates, from 1024.
  (global $heap (mut i32) (i32.const 1024))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (global.set $heap (i32.add (local.get $p) (local.get 3)))
    (local.get $p))
  (func $wait-on (param $w i32) (result i32)
    (if (i32.eqz (i32.load (i32.const 256))) (then (i32.store (i32.const 256) (call $set-new))))
    (call $join (local.get $w) (i32.load (i32.const 256)))
    (i32.or (i32.shl (i32.load (i32.const 256)) (i32.const 4)) (i32.const 2)))
  ;; The call is over: its set goes, and what the glue allocated for it.
  (func $exit (result i32)
    (if (i32.load (i32.const 256)) (then (call $set-drop (i32.load (i32.const 256))) (i32.store (i32.const 256) (i32.const 0))))
    (global.set $heap (i32.const 1024))
    (i32.const 0))
  (func $fail (param $code i32) (result i32)
    (if (i32.load (i32.const 276))
      (then (call $return-touch (i32.const 1) (local.get $code)))
      (else (call $return-read (i32.const 1) (local.get $code) (i32.const 0))))
    (call $exit))
  (func $start (param $ptr i32) (param $len i32) (param $touch i32) (result i32) (local $r i32)
    (i32.store (i32.const 272) (i32.const 0))
    (i32.store (i32.const 276) (local.get $touch))
    (call $dirs (i32.const 64))
    (if (i32.eqz (i32.load (i32.const 68))) (then (return (call $fail (i32.const 255)))))
    (i32.store (i32.const 260) (i32.load (i32.load (i32.const 64))))
    ;; open-at(self, path-flags {symlink-follow}, path, open-flags, flags): create and write to touch, read to read.
    (i32.store (i32.const 128) (i32.load (i32.const 260)))
    (i32.store8 (i32.const 132) (i32.const 1))
    (i32.store (i32.const 136) (local.get $ptr))
    (i32.store (i32.const 140) (local.get $len))
    (i32.store8 (i32.const 144) (local.get $touch))
    (i32.store8 (i32.const 145) (select (i32.const 2) (i32.const 1) (local.get $touch)))
    (local.set $r (call $open-at (i32.const 128) (i32.const 160)))
    ;; RETURNED (2) at once, or a subtask to wait for.
    (if (i32.eq (i32.and (local.get $r) (i32.const 15)) (i32.const 2)) (then (return (call $opened))))
    (call $wait-on (i32.shr_u (local.get $r) (i32.const 4))))
  (func $opened (result i32)
    (call $descriptor-drop (i32.load (i32.const 260)))
    (if (i32.load8_u (i32.const 160)) (then (return (call $fail (i32.load8_u (i32.const 164))))))
    (i32.store (i32.const 264) (i32.load (i32.const 164)))
    (if (i32.load (i32.const 276)) (then
      (call $descriptor-drop (i32.load (i32.const 264)))
      (call $return-touch (i32.const 0) (i32.const 0))
      (return (call $exit))))
    (call $read-via-stream (i32.load (i32.const 264)) (i64.const 0) (i32.const 192))
    (i32.store (i32.const 268) (i32.load (i32.const 192)))
    (call $future-drop (i32.load (i32.const 196)))
    (call $pump))
  ;; Reads on until the host drops the stream (or it would overflow), waiting while it has nothing.
  (func $pump (result i32) (local $r i32)
    (loop $more
      (if (i32.gt_u (i32.load (i32.const 272)) (i32.const 131072)) (then (return (call $done (i32.const 254)))))
      (local.set $r (call $stream-read (i32.load (i32.const 268)) (i32.add (i32.const 65536) (i32.load (i32.const 272))) (i32.const 65536)))
      (if (i32.eq (local.get $r) (i32.const -1)) (then (return (call $wait-on (i32.load (i32.const 268))))))
      (br_if $more (call $progress (local.get $r))))
    (call $done (i32.const 0)))
  ;; A read's outcome: its bytes counted; whether to read on (COMPLETED: 0), or not (the host dropped the stream).
  (func $progress (param $r i32) (result i32)
    (i32.store (i32.const 272) (i32.add (i32.load (i32.const 272)) (i32.shr_u (local.get $r) (i32.const 4))))
    (i32.eqz (i32.and (local.get $r) (i32.const 15))))
  (func $done (param $code i32) (result i32)
    (call $stream-drop (i32.load (i32.const 268)))
    (call $descriptor-drop (i32.load (i32.const 264)))
    (if (local.get $code) (then (return (call $fail (local.get $code)))))
    (call $return-read (i32.const 0) (i32.const 65536) (i32.load (i32.const 272)))
    (call $exit))
  (func $callback (param $event i32) (param $w i32) (param $p i32) (result i32)
    ;; SUBTASK (1): open-at's; RETURNED (2) is its end.
    (if (i32.eq (local.get $event) (i32.const 1)) (then
      (if (i32.ne (local.get $p) (i32.const 2)) (then (return (i32.or (i32.shl (i32.load (i32.const 256)) (i32.const 4)) (i32.const 2)))))
      (call $join (local.get $w) (i32.const 0))
      (call $subtask-drop (local.get $w))
      (return (call $opened))))
    ;; STREAM_READ (2): the read that waited is done.
    (call $join (local.get $w) (i32.const 0))
    (if (call $progress (local.get $p)) (then (return (call $pump))))
    (call $done (i32.const 0)))
  (func (export "[async-lift]read-file") (param i32 i32) (result i32) (call $start (local.get 0) (local.get 1) (i32.const 0)))
  (func (export "[callback][async-lift]read-file") (param i32 i32 i32) (result i32) (call $callback (local.get 0) (local.get 1) (local.get 2)))
  (func (export "[async-lift]touch") (param i32 i32) (result i32) (call $start (local.get 0) (local.get 1) (i32.const 1)))
  (func (export "[callback][async-lift]touch") (param i32 i32 i32) (result i32) (call $callback (local.get 0) (local.get 1) (local.get 2))))`,
};
