;; The calculator example: a core module written by hand, whose exports follow
;; the canonical ABI names for the `calculator` world (see calculator.wit).
(module
  (func (export "example:calculator/ops@1.0.0#add") (param i32 i32) (result i32)
    (i32.add (local.get 0) (local.get 1)))
  (func (export "example:calculator/ops@1.0.0#subtract") (param i32 i32) (result i32)
    (i32.sub (local.get 0) (local.get 1)))
  (func (export "example:calculator/ops@1.0.0#multiply") (param i32 i32) (result i32)
    (i32.mul (local.get 0) (local.get 1)))
  ;; i32.div_s traps on a zero divisor: the example's way to show trap handling.
  (func (export "example:calculator/ops@1.0.0#divide") (param i32 i32) (result i32)
    (i32.div_s (local.get 0) (local.get 1)))
  (func (export "example:calculator/ops@1.0.0#square-root") (param f64) (result f64)
    (f64.sqrt (local.get 0)))
  (memory (export "memory") 1)
)
