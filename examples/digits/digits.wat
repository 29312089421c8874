;; The digits example: a core module written by hand, whose exports follow the
;; canonical ABI names for the `digits` world (see digits.wit), including an
;; exported resource. A handle is made from a "rep" (here: the address of the
;; stream's state) by the [resource-new] import; `next` receives the rep of
;; the borrowed `self`, and the destructor the rep of a dropped handle.
;;
;; e - 2 = 1/2! + 1/3! + ... = 1/2 (1 + 1/3 (1 + 1/4 (1 + ...))): in the mixed
;; radix whose i-th digit weighs 1/i!, the fraction of e is 0.1111...
;; Multiplying every digit by 10^4 and carrying from the last one to the
;; first moves the next four decimals out of the fraction (Sale's spigot).
(module
  (import "[export]example:digits/constants@1.0.0" "[resource-new]chunks" (func $resource_new (param i32) (result i32)))
  (memory (export "memory") 1)

  ;; Bytes 0..11: the return area of `next` (option tag, list address, length).
  ;; Streams' states are allocated from 1024 up, and all freed at once when
  ;; the last one is dropped.
  (global $heap (mut i32) (i32.const 1024))
  (global $live (mut i32) (i32.const 0))

  ;; A stream's state, at its rep:
  ;;   +0 decimals still to write   +4 terms of the series (n)
  ;;   +8 whether "2." went out      +16 the chunk (4096 bytes)
  ;;   +4112 the mixed-radix digits, digit i at +4112 + 4i (i = 2..n)
  (func $alloc (param $size i32) (result i32)
    (local $p i32) (local $end i32) (local $have i32)
    (local.set $p (global.get $heap))
    (local.set $end (i32.add (local.get $p) (local.get $size)))
    (local.set $have (i32.mul (memory.size) (i32.const 65536)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (local.get $have)) (i32.const 16)) (i32.const 1)))
                    (i32.const -1))
          (then unreachable))))
    (global.set $heap (local.get $end))
    (local.get $p))

  ;; The number of terms for `count` correct decimals: the first n with
  ;; n! > 10^(count + 10), the 10 a margin for the truncated tail.
  (func $terms (param $count i32) (result i32)
    (local $n i32) (local $mantissa f64) (local $exponent i32)
    (local.set $n (i32.const 1))
    (local.set $mantissa (f64.const 1))
    (block $done (loop $more
      (br_if $done (i32.gt_u (local.get $exponent) (i32.add (local.get $count) (i32.const 10))))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (local.set $mantissa (f64.mul (local.get $mantissa) (f64.convert_i32_u (local.get $n))))
      (block $normal (loop $shift
        (br_if $normal (f64.lt (local.get $mantissa) (f64.const 10)))
        (local.set $mantissa (f64.div (local.get $mantissa) (f64.const 10)))
        (local.set $exponent (i32.add (local.get $exponent) (i32.const 1)))
        (br $shift)))
      (br $more)))
    (local.get $n))

  (func (export "example:digits/constants@1.0.0#e") (param $count i32) (result i32)
    (local $n i32) (local $rep i32) (local $i i32)
    (local.set $n (call $terms (local.get $count)))
    (local.set $rep (call $alloc (i32.add (i32.const 4112) (i32.mul (i32.add (local.get $n) (i32.const 1)) (i32.const 4)))))
    (i32.store offset=0 (local.get $rep) (local.get $count))
    (i32.store offset=4 (local.get $rep) (local.get $n))
    (i32.store offset=8 (local.get $rep) (i32.const 0))
    ;; The fraction of e: every digit 1.
    (local.set $i (i32.const 2))
    (block $done (loop $fill
      (br_if $done (i32.gt_u (local.get $i) (local.get $n)))
      (i32.store offset=4112 (i32.add (local.get $rep) (i32.shl (local.get $i) (i32.const 2))) (i32.const 1))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $fill)))
    (global.set $live (i32.add (global.get $live) (i32.const 1)))
    (call $resource_new (local.get $rep)))

  ;; The next four decimals, as a number below 10000. The digits stay below
  ;; their radix i, so every product fits in 32 bits for the u16 count.
  (func $next_group (param $rep i32) (result i32)
    (local $i i32) (local $at i32) (local $x i32) (local $carry i32)
    (local.set $i (i32.load offset=4 (local.get $rep)))
    (block $done (loop $digit
      (br_if $done (i32.lt_u (local.get $i) (i32.const 2)))
      (local.set $at (i32.add (local.get $rep) (i32.shl (local.get $i) (i32.const 2))))
      (local.set $x (i32.add (i32.mul (i32.load offset=4112 (local.get $at)) (i32.const 10000)) (local.get $carry)))
      (local.set $carry (i32.div_u (local.get $x) (local.get $i)))
      (i32.store offset=4112 (local.get $at) (i32.sub (local.get $x) (i32.mul (local.get $carry) (local.get $i))))
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (br $digit)))
    (local.get $carry))

  (func (export "example:digits/constants@1.0.0#[method]chunks.next") (param $rep i32) (result i32)
    (local $left i32) (local $chunk i32) (local $len i32) (local $group i32) (local $j i32) (local $take i32)
    (local.set $left (i32.load offset=0 (local.get $rep)))
    (if (i32.and (i32.load offset=8 (local.get $rep)) (i32.eqz (local.get $left)))
      (then
        (i32.store8 (i32.const 0) (i32.const 0))
        (return (i32.const 0))))
    (local.set $chunk (i32.add (local.get $rep) (i32.const 16)))
    (if (i32.eqz (i32.load offset=8 (local.get $rep)))
      (then
        (i32.store8 (local.get $chunk) (i32.const 0x32)) ;; "2"
        (local.set $len (i32.const 1))
        (if (local.get $left)
          (then
            (i32.store8 offset=1 (local.get $chunk) (i32.const 0x2e)) ;; "."
            (local.set $len (i32.const 2))))
        (i32.store offset=8 (local.get $rep) (i32.const 1))))
    ;; Whole groups only, so a chunk may end a few bytes short of 4096.
    (block $full (loop $groups
      (br_if $full (i32.eqz (local.get $left)))
      (br_if $full (i32.gt_u (i32.add (local.get $len) (i32.const 4)) (i32.const 4096)))
      (local.set $group (call $next_group (local.get $rep)))
      ;; All four digits are written; the last group keeps only those asked for.
      (local.set $j (i32.const 3))
      (block $written (loop $write
        (i32.store8 (i32.add (i32.add (local.get $chunk) (local.get $len)) (local.get $j))
          (i32.add (i32.const 0x30) (i32.rem_u (local.get $group) (i32.const 10))))
        (local.set $group (i32.div_u (local.get $group) (i32.const 10)))
        (br_if $written (i32.eqz (local.get $j)))
        (local.set $j (i32.sub (local.get $j) (i32.const 1)))
        (br $write)))
      (local.set $take (select (local.get $left) (i32.const 4) (i32.lt_u (local.get $left) (i32.const 4))))
      (local.set $len (i32.add (local.get $len) (local.get $take)))
      (local.set $left (i32.sub (local.get $left) (local.get $take)))
      (br $groups)))
    (i32.store offset=0 (local.get $rep) (local.get $left))
    (i32.store8 (i32.const 0) (i32.const 1))
    (i32.store (i32.const 4) (local.get $chunk))
    (i32.store (i32.const 8) (local.get $len))
    (i32.const 0))

  (func (export "example:digits/constants@1.0.0#[dtor]chunks") (param $rep i32)
    (global.set $live (i32.sub (global.get $live) (i32.const 1)))
    (if (i32.eqz (global.get $live))
      (then (global.set $heap (i32.const 1024)))))
)
