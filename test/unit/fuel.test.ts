// Fuel instrumentation (lib/primary/fuel.ts) on real modules: what it adds
// (a check every FUEL_INTERVAL ticks, loops and function entries alike), what
// it keeps (results, memory, tables, start functions), what it refuses.

import { expect } from 'chai';
import { parse } from '@bytecodealliance/jco';
import binaryen from 'binaryen';
import { FUEL_IMPORT_MODULE, FUEL_IMPORT_NAME, FUEL_INTERVAL } from '../../lib/fuel.js';
import { instrumentFuel } from '../../lib/primary/fuel.js';

const MODULE = `(module
  (import "env" "seed" (global $seed i32))
  (memory (export "memory") 1)
  (data (i32.const 16) "\\2a")
  (table 2 funcref)
  (elem (i32.const 0) $double $square)
  (type $unary (func (param i32) (result i32)))
  (global $started (mut i32) (i32.const 0))
  (func $init (global.set $started (i32.add (global.get $seed) (i32.load8_u (i32.const 16)))))
  (start $init)
  (func $double (param i32) (result i32) (i32.mul (local.get 0) (i32.const 2)))
  (func $square (param i32) (result i32) (i32.mul (local.get 0) (local.get 0)))
  (func (export "started") (result i32) (global.get $started))
  (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1)))
  (func (export "apply") (param i32 i32) (result i32) (call_indirect (type $unary) (local.get 1) (local.get 0)))
  (func (export "sum") (param $n i32) (result i32) (local $i i32) (local $s i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $s (i32.add (local.get $s) (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (local.get $s))
  (func $depth (export "depth") (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n)) (then (i32.const 0)) (else (i32.add (i32.const 1) (call $depth (i32.sub (local.get $n) (i32.const 1)))))))
  (func (export "forever") (loop $again (br $again))))`;

type Exports = Record<'started' | 'forever', () => number> & Record<'add' | 'apply', (a: number, b: number) => number> & Record<'sum' | 'depth', (n: number) => number>;

class Stop extends Error {}

async function instantiate(bytes: Uint8Array, check?: () => void): Promise<Exports> {
  const imports: WebAssembly.Imports = { env: { seed: 100 } };
  if (check) imports[FUEL_IMPORT_MODULE] = { [FUEL_IMPORT_NAME]: check };
  return (await WebAssembly.instantiate(bytes as Uint8Array<ArrayBuffer>, imports)).instance.exports as unknown as Exports;
}

describe('fuel instrumentation', () => {
  let plain: Uint8Array;
  let fueled: Uint8Array;

  before(async () => {
    plain = await parse(MODULE);
    const outcome = instrumentFuel(plain);
    if (!outcome.ok) throw new Error(outcome.reason);
    fueled = outcome.bytes;
  });

  it('keeps every result: start function, data, table and call_indirect, loops, recursion', async () => {
    const a = await instantiate(plain);
    const b = await instantiate(fueled, () => {});
    expect(b.started()).to.equal(a.started()).and.equal(142);
    expect(b.add(20, 22)).to.equal(42);
    expect([b.apply(0, 7), b.apply(1, 7)]).to.deep.equal([a.apply(0, 7), a.apply(1, 7)]).and.deep.equal([14, 49]);
    expect(b.sum(100_000)).to.equal(a.sum(100_000));
    expect(b.depth(1_000)).to.equal(1_000);
  });

  it('adds exactly one import, the check, and keeps the exports', () => {
    const module = binaryen.readBinary(fueled);
    try {
      const imports = [];
      for (let i = 0; i < module.getNumFunctions(); i++) {
        const info = binaryen.getFunctionInfo(module.getFunctionByIndex(i));
        if (info.module) imports.push(`${info.module}.${info.base}`);
      }
      expect(imports).to.deep.equal([`${FUEL_IMPORT_MODULE}.${FUEL_IMPORT_NAME}`]);
      expect(module.getNumExports()).to.equal(7);
    } finally {
      module.dispose();
    }
  });

  it('calls the check about once per FUEL_INTERVAL loop iterations', async () => {
    let checks = 0;
    const b = await instantiate(fueled, () => void checks++);
    b.sum(FUEL_INTERVAL * 50);
    expect(checks).to.be.within(49, 51);
  });

  it('counts function entries too: recursion without a loop reaches the check', async () => {
    let checks = 0;
    const b = await instantiate(fueled, () => void checks++);
    // The counter lives in the instance: calls of bounded depth add up.
    for (let i = 0; i < 30; i++) b.depth(1_000);
    expect(checks).to.be.at.least(2);
  });

  it('lets a throwing check interrupt an endless loop, with the check’s own error', async () => {
    let checks = 0;
    const b = await instantiate(fueled, () => {
      if (++checks === 5) throw new Stop('budget used');
    });
    expect(() => b.forever()).to.throw(Stop, 'budget used');
    expect(checks).to.equal(5);
  });

  it('refuses a module that uses exception handling (a catch could swallow the interrupt), and bytes that are no module', () => {
    const text = binaryen.parseText('(module (tag $t) (func (export "f") (try (do (throw $t)) (catch_all))))');
    text.setFeatures(binaryen.Features.All);
    const withCatch = text.emitBinary();
    text.dispose();
    const refused = instrumentFuel(withCatch);
    expect(refused).to.deep.include({ ok: false });
    expect((refused as { reason: string }).reason).to.match(/exception handling/);
    const garbage = instrumentFuel(new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7]));
    expect(garbage.ok).to.equal(false);
  });
});
