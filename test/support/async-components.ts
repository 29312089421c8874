// Components that use the component model's async ABI (WASI 0.3), written in
// component WAT: jco's `parse` builds them without any other toolchain.

import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';

/**
 * World-level `answer: async func() -> u32`, lifted with the async option and
 * a callback, returning 42 through `task.return`; and a plain `plain: func() -> u32`.
 */
export function asyncAnswer(): Promise<Uint8Array> {
  return parse(`(component
    (core module $m
      (import "" "task.return" (func $return (param i32)))
      (func (export "answer") (result i32) i32.const 42 call $return i32.const 0)
      (func (export "answer-cb") (param i32 i32 i32) (result i32) i32.const 0)
      (func (export "plain") (result i32) i32.const 2))
    (core func $return (canon task.return (result u32)))
    (core instance $host (export "task.return" (func $return)))
    (core instance $i (instantiate $m (with "" (instance $host))))
    (type $t (func (result u32)))
    (func $answer (type $t) (canon lift (core func $i "answer") async (callback (core func $i "answer-cb"))))
    (func $plain (type $t) (canon lift (core func $i "plain")))
    (export "answer" (func $answer))
    (export "plain" (func $plain)))`);
}
