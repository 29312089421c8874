;; A WASI 0.3 component written by hand in component WAT: the component
;; model's async ABI, with no bindings generator. What it exports, in WIT
;; (its package names the service: example/primes):
;;
;;   package example:primes@0.1.0;
;;   interface api {
;;     /// Whether n is a prime.
;;     is-prime: async func(n: u32) -> bool;
;;     /// The first `count` primes, found as the reader takes them.
;;     primes: async func(count: u32) -> stream<u32>;
;;   }
;;   world primes { export api; }
;;
;; `primes` returns the readable end of a stream at once and goes on writing
;; to it from its task: each write (up to 256 primes) waits until the reader
;; has taken the last one, so a slow reader slows the search, and a reader
;; that leaves ends it. Up to 8 streams at once per instance, each task's
;; state in a slot of memory that the task's context points to.
(component
  (core module $Memory (memory (export "memory") 1))
  (core instance $memory (instantiate $Memory))
  (alias core export $memory "memory" (core memory $mem))
  (type $primes (stream u32))
  (core func $stream-new (canon stream.new $primes))
  (core func $stream-write (canon stream.write $primes async (memory $mem)))
  (core func $stream-drop (canon stream.drop-writable $primes))
  (core func $return-stream (canon task.return (result $primes)))
  (core func $return-bool (canon task.return (result bool)))
  (core func $set-new (canon waitable-set.new))
  (core func $join (canon waitable.join))
  (core func $ctx-get (canon context.get i32 0))
  (core func $ctx-set (canon context.set i32 0))
  (core module $M
    (import "" "memory" (memory 1))
    (import "" "stream-new" (func $stream-new (result i64)))
    (import "" "stream-write" (func $stream-write (param i32 i32 i32) (result i32)))
    (import "" "stream-drop" (func $stream-drop (param i32)))
    (import "" "return-stream" (func $return-stream (param i32)))
    (import "" "return-bool" (func $return-bool (param i32)))
    (import "" "set-new" (func $set-new (result i32)))
    (import "" "join" (func $join (param i32 i32)))
    (import "" "ctx-get" (func $ctx-get (result i32)))
    (import "" "ctx-set" (func $ctx-set (param i32)))
    ;; A task's slot: 16 bytes from 1024 on: [0] the stream's writable end, [4] primes still to write,
    ;; [8] the next number to try, [12] its waitable set. Its primes are written from 4096 + slot * 1 KiB.
    (global $tasks (mut i32) (i32.const 0))
    (func $is-prime (param $n i32) (result i32) (local $d i64)
      (if (i32.lt_u (local.get $n) (i32.const 2)) (then (return (i32.const 0))))
      (local.set $d (i64.const 2))
      (block $done (loop $try
        (br_if $done (i64.gt_u (i64.mul (local.get $d) (local.get $d)) (i64.extend_i32_u (local.get $n))))
        (if (i64.eqz (i64.rem_u (i64.extend_i32_u (local.get $n)) (local.get $d))) (then (return (i32.const 0))))
        (local.set $d (i64.add (local.get $d) (i64.const 1)))
        (br $try)))
      (i32.const 1))
    ;; Each returns 0 (EXIT): its task has returned and has nothing left to do.
    (func (export "is-prime") (param $n i32) (result i32)
      (call $return-bool (call $is-prime (local.get $n)))
      (i32.const 0))
    (func (export "primes") (param $count i32) (result i32) (local $st i32) (local $ends i64)
      (local.set $st (i32.add (i32.const 1024) (i32.shl (i32.and (global.get $tasks) (i32.const 7)) (i32.const 4))))
      (global.set $tasks (i32.add (global.get $tasks) (i32.const 1)))
      (call $ctx-set (local.get $st))
      ;; The readable end in the low 32 bits, the writable end in the high ones.
      (local.set $ends (call $stream-new))
      (i32.store (local.get $st) (i32.wrap_i64 (i64.shr_u (local.get $ends) (i64.const 32))))
      (i32.store offset=4 (local.get $st) (local.get $count))
      (i32.store offset=8 (local.get $st) (i32.const 2))
      (i32.store offset=12 (local.get $st) (call $set-new))
      (call $join (i32.load (local.get $st)) (i32.load offset=12 (local.get $st)))
      (call $return-stream (i32.wrap_i64 (local.get $ends)))
      (call $pump (local.get $st)))
    (func $buffer (param $st i32) (result i32)
      (i32.add (i32.const 4096) (i32.shl (i32.sub (local.get $st) (i32.const 1024)) (i32.const 6))))
    ;; Finds the task's next primes (256 at most) from [8] on into its buffer: how many. Past the largest u32, none are left.
    (func $fill (param $st i32) (result i32) (local $n i32) (local $found i32) (local $next i32)
      (local.set $n (i32.load offset=4 (local.get $st)))
      (if (i32.gt_u (local.get $n) (i32.const 256)) (then (local.set $n (i32.const 256))))
      (local.set $next (i32.load offset=8 (local.get $st)))
      (block $done (loop $search
        (br_if $done (i32.ge_u (local.get $found) (local.get $n)))
        (if (i32.eqz (local.get $next)) (then (i32.store offset=4 (local.get $st) (local.get $found)) (br $done)))
        (if (call $is-prime (local.get $next)) (then
          (i32.store (i32.add (call $buffer (local.get $st)) (i32.shl (local.get $found) (i32.const 2))) (local.get $next))
          (local.set $found (i32.add (local.get $found) (i32.const 1)))))
        (local.set $next (i32.add (local.get $next) (i32.const 1)))
        (br $search)))
      (local.get $found))
    ;; A write came back (count << 4 | status): what went is counted, and the search goes on after the last prime
    ;; that went (a write the reader took in part leaves the rest to be found again); 0 once the reader has gone.
    (func $wrote (param $st i32) (param $r i32) (result i32) (local $went i32)
      (local.set $went (i32.shr_u (local.get $r) (i32.const 4)))
      (i32.store offset=4 (local.get $st) (i32.sub (i32.load offset=4 (local.get $st)) (local.get $went)))
      (if (local.get $went) (then
        (i32.store offset=8 (local.get $st)
          (i32.add (i32.load (i32.add (call $buffer (local.get $st)) (i32.shl (i32.sub (local.get $went) (i32.const 1)) (i32.const 2)))) (i32.const 1)))))
      (if (i32.eqz (i32.and (local.get $r) (i32.const 15))) (then (return (i32.const 1))))
      (call $stream-drop (i32.load (local.get $st)))
      (i32.const 0))
    ;; Writes until a write waits for the reader (then WAIT (2) on the task's set) or the primes are out (the stream ends).
    (func $pump (param $st i32) (result i32) (local $r i32) (local $n i32)
      (loop $write
        (if (i32.eqz (i32.load offset=4 (local.get $st))) (then
          (call $stream-drop (i32.load (local.get $st)))
          (return (i32.const 0))))
        (local.set $n (call $fill (local.get $st)))
        (if (i32.eqz (local.get $n)) (then (br $write)))
        (local.set $r (call $stream-write (i32.load (local.get $st)) (call $buffer (local.get $st)) (local.get $n)))
        (if (i32.ne (local.get $r) (i32.const -1)) (then
          (if (i32.eqz (call $wrote (local.get $st) (local.get $r))) (then (return (i32.const 0))))
          (br $write))))
      (i32.or (i32.shl (i32.load offset=12 (local.get $st)) (i32.const 4)) (i32.const 2)))
    ;; STREAM_WRITE (3), the one event a task's set gives: the write that waited went, whole or in part.
    (func (export "callback") (param $event i32) (param $w i32) (param $r i32) (result i32) (local $st i32)
      (local.set $st (call $ctx-get))
      (if (i32.eq (local.get $event) (i32.const 3)) (then
        (if (i32.eqz (call $wrote (local.get $st) (local.get $r))) (then (return (i32.const 0))))))
      (call $pump (local.get $st))))
  (core instance $host
    (export "memory" (memory $mem))
    (export "stream-new" (func $stream-new)) (export "stream-write" (func $stream-write)) (export "stream-drop" (func $stream-drop))
    (export "return-stream" (func $return-stream)) (export "return-bool" (func $return-bool))
    (export "set-new" (func $set-new)) (export "join" (func $join))
    (export "ctx-get" (func $ctx-get)) (export "ctx-set" (func $ctx-set)))
  (core instance $i (instantiate $M (with "" (instance $host))))
  (type $is-prime-t (func async (param "n" u32) (result bool)))
  (type $primes-t (func async (param "count" u32) (result $primes)))
  (func $is-prime (type $is-prime-t) (canon lift (core func $i "is-prime") async (callback (core func $i "callback"))))
  (func $primes (type $primes-t) (canon lift (core func $i "primes") async (callback (core func $i "callback"))))
  (instance $api (export "is-prime" (func $is-prime)) (export "primes" (func $primes)))
  (export "example:primes/api@0.1.0" (instance $api)))
