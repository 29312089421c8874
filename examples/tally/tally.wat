;; The tally example: a core module written by hand whose imports and exports
;; follow the canonical ABI names for the `tally-world` world (tally.wit). The
;; builder (examples/builder.ts) embeds the WIT and wraps the module into a
;; component with wit-component, which matches these names to the WIT.
;;
;; How a resource looks from inside a core module:
;; - The component keeps each tally's state in its own memory, and calls the
;;   address of that state the tally's "rep" (representation): here, the
;;   address of one i32, its count.
;; - Callers never see a rep. They hold a "handle": an index into a table
;;   the component model keeps for the resource. `[resource-new]` makes a
;;   handle for a rep; a function that returns a tally (`own<tally>`)
;;   returns such a handle.
;; - A method's `self` and a `borrow<tally>` parameter arrive as the rep
;;   itself: the component model looks the handle up before the call, since
;;   the resource is this component's own. (An `own<tally>` parameter would
;;   arrive as a handle, to be turned into its rep by `[resource-rep]` and
;;   dropped by `[resource-drop]`; this example has none.)
;; - When a tally's handle is dropped (rt's DELETE, a handle left idle too
;;   long), the component model calls the exported destructor `[dtor]tally`
;;   with its rep, here to free its memory.
;;
;; Names: `<interface>#<function>` for exports, where the interface is
;; `example:tally/tallies@1.0.0`, and a resource's functions are
;; `[constructor]tally`, `[method]tally.<name>`, `[static]tally.<name>`. The
;; imports come from the module `[export]<interface>`: resources this
;; component exports, as opposed to imported ones.
;;
;; WIT types in core wasm: u32 is an i32 (signedness is the WIT's business),
;; a handle is an i32.
(module
  (import "[export]example:tally/tallies@1.0.0" "[resource-new]tally" (func $resource_new (param $rep i32) (result i32)))

  (memory (export "memory") 1)

  ;; Memory: tallies are 4-byte cells from address 1024 up. A dropped
  ;; tally's cell goes on a list of free cells (each free cell holds the
  ;; address of the next one, 0 ending the list), which new tallies take
  ;; first: memory grows only with the number of live tallies.
  (global $next_fresh (mut i32) (i32.const 1024))
  (global $free (mut i32) (i32.const 0))
  (global $dropped (mut i32) (i32.const 0))

  ;; A cell for a new tally: a free one, else a fresh one (growing the memory
  ;; by a page when it is full; a memory that cannot grow traps).
  (func $alloc (result i32)
    (local $cell i32)
    (if (global.get $free)
      (then
        (local.set $cell (global.get $free))
        (global.set $free (i32.load (local.get $cell)))
        (return (local.get $cell))))
    (local.set $cell (global.get $next_fresh))
    (global.set $next_fresh (i32.add (local.get $cell) (i32.const 4)))
    (if (i32.gt_u (global.get $next_fresh) (i32.mul (memory.size) (i32.const 65536)))
      (then
        (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1))
          (then unreachable))))
    (local.get $cell))

  ;; A new tally counting `count`: its cell (the rep), then a handle to it.
  (func $new_tally (param $count i32) (result i32)
    (local $rep i32)
    (local.set $rep (call $alloc))
    (i32.store (local.get $rep) (local.get $count))
    (call $resource_new (local.get $rep)))

  ;; constructor(start: u32): returns the handle of the new tally.
  (func (export "example:tally/tallies@1.0.0#[constructor]tally") (param $start i32) (result i32)
    (call $new_tally (local.get $start)))

  ;; mark: func(n: u32) -> u32. `self` comes first, as a rep.
  (func (export "example:tally/tallies@1.0.0#[method]tally.mark") (param $self i32) (param $n i32) (result i32)
    (i32.store (local.get $self) (i32.add (i32.load (local.get $self)) (local.get $n)))
    (i32.load (local.get $self)))

  ;; count: func() -> u32.
  (func (export "example:tally/tallies@1.0.0#[method]tally.count") (param $self i32) (result i32)
    (i32.load (local.get $self)))

  ;; sum: static func(a: borrow<tally>, b: borrow<tally>) -> tally. No `self`;
  ;; the borrowed tallies arrive as reps, the new one leaves as a handle.
  (func (export "example:tally/tallies@1.0.0#[static]tally.sum") (param $a i32) (param $b i32) (result i32)
    (call $new_tally (i32.add (i32.load (local.get $a)) (i32.load (local.get $b)))))

  ;; The destructor: the tally's cell goes on the free list, and the drop is counted.
  (func (export "example:tally/tallies@1.0.0#[dtor]tally") (param $rep i32)
    (i32.store (local.get $rep) (global.get $free))
    (global.set $free (local.get $rep))
    (global.set $dropped (i32.add (global.get $dropped) (i32.const 1))))

  ;; dropped: func() -> u32, a plain function of the interface.
  (func (export "example:tally/tallies@1.0.0#dropped") (result i32)
    (global.get $dropped))
)
