// Components written for the benchmarks, as sources for buildComponent
// (hand-written WAT, like the fixtures in test/support/fixtures.ts).

import type { WatSource } from '../examples/builder.js';

/**
 * `spin(n)`: n steps of an LCG mixed with the loop counter, whose result is
 * returned, so the loop can be neither folded nor dropped.
 */
export const COMPUTE: WatSource = {
  kind: 'wat',
  world: 'compute',
  wit: `package bench:compute@1.0.0;
interface api { spin: func(n: u32) -> u32; }
world compute { export api; }`,
  wat: `(module
  (func (export "bench:compute/api@1.0.0#spin") (param $n i32) (result i32) (local $i i32) (local $x i32)
    (local.set $x (i32.const 1))
    (block $done (loop $step
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      ;; x = (x * 1664525 + 1013904223) xor i
      (local.set $x (i32.xor (i32.add (i32.mul (local.get $x) (i32.const 1664525)) (i32.const 1013904223)) (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $step)))
    (local.get $x))
  (memory (export "memory") 1))`,
};

export const COMPUTE_EXPORT = 'bench:compute/api@1.0.0#spin';

/**
 * The i-th of many small distinct services (start-up and memory with many
 * components): the calculator's shape under its own package, `bench:svc<i>`,
 * whose `id()` answers i, so no two build to the same bytes.
 */
export function numbered(i: number): WatSource {
  const pkg = `bench:svc${i}@1.0.0`;
  return {
    kind: 'wat',
    world: `svc${i}`,
    wit: `package ${pkg};
interface ops {
  add: func(a: s32, b: s32) -> s32;
  id: func() -> u32;
}
world svc${i} { export ops; }`,
    wat: `(module
  (func (export "${pkg.replace('@', '/ops@')}#add") (param i32 i32) (result i32)
    (i32.add (local.get 0) (local.get 1)))
  (func (export "${pkg.replace('@', '/ops@')}#id") (result i32) (i32.const ${i}))
  (memory (export "memory") 1))`,
  };
}
