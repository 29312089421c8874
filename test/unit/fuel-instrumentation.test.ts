// Fuel instrumentation (lib/primary/fuel-instrumentation.ts) on real modules, run by V8: what
// it adds (a check every FUEL_INTERVAL ticks, loop iterations and function
// entries alike, whose exception ends the call), what it keeps (results,
// imports, exports, memory, tables, start functions), what it refuses
// (exception handling, bytes that are no valid module), and a componentize-js
// component run through jco's glue on its instrumented core modules.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { transpileBytes as transpile } from '@bytecodealliance/jco-transpile';
import { TRANSPILE_OPTIONS } from '../../lib/primary/compile-job.js';
import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import binaryen from 'binaryen';
import { buildComponent } from '../../examples/builder.js';
import { FUEL_IMPORT_MODULE, FUEL_IMPORT_NAME, FUEL_INTERVAL } from '../../lib/fuel-import.js';
import { instrumentFuel } from '../../lib/primary/fuel-instrumentation.js';
import { readComponentInterface } from '../../lib/wit/component-reader.js';
import { hostImports } from '../../lib/worker/sandbox/wasi-imports.js';
import { HOSTILE } from '../support/fixtures.js';

/** Thrown by the tests' checks: the error a call must end with. */
class Stop extends Error {}

function instrumented(bytes: Uint8Array): Uint8Array {
  const outcome = instrumentFuel(bytes);
  if (!outcome.ok) throw new Error(`instrumentFuel refused: ${outcome.reason}`);
  return outcome.bytes;
}

/** A check that counts its calls and throws a Stop on call `throwAt`. */
function counter(throwAt = Infinity) {
  const state = {
    calls: 0,
    check: () => {
      if (++state.calls >= throwAt) throw new Stop(`stopped at check ${state.calls}`);
    },
  };
  return state;
}

async function instantiate<T>(bytes: Uint8Array, imports: WebAssembly.Imports = {}, check?: () => void): Promise<T> {
  const all = check ? { ...imports, [FUEL_IMPORT_MODULE]: { [FUEL_IMPORT_NAME]: check } } : imports;
  return (await WebAssembly.instantiate(bytes as Uint8Array<ArrayBuffer>, all)).instance.exports as T;
}

describe('fuel instrumentation', () => {
  describe('ticks and checks', () => {
    const WAT = `(module
      (func (export "spin") (loop $l (br $l)))
      (func $fib (export "fib") (param $n i32) (result i32)
        (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
          (then (local.get $n))
          (else (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1))) (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
      (func $down (export "down") (call $down))
      (func (export "burn") (param $n i32) (local $i i32)
        (block $done (loop $next
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $next)))))`;
    type Exports = { spin(): void; fib(n: number): number; down(): void; burn(n: number): void };
    let plain: Uint8Array;
    let fueled: Uint8Array;

    before(async () => {
      plain = await parse(WAT);
      fueled = instrumented(plain);
    });

    it('interrupts an endless loop with the check’s own error, on the check that throws', async () => {
      const c = counter(5);
      const m = await instantiate<Exports>(fueled, {}, c.check);
      expect(() => m.spin()).to.throw(Stop, 'stopped at check 5');
      expect(c.calls).to.equal(5);
    });

    it('counts function entries: loopless recursion reaches the check once per FUEL_INTERVAL calls', async () => {
      const c = counter();
      const m = await instantiate<Exports>(fueled, {}, c.check);
      expect(m.fib(25)).to.equal(75_025);
      // fib(n) makes 2·fib(n+1) − 1 calls, one tick each (its body has no loop and no `return`); the counter starts full.
      const calls = 2 * 121_393 - 1;
      expect(c.calls).to.equal(Math.floor(calls / FUEL_INTERVAL));
    });

    it('interrupts endless recursion with the check’s error, not a stack overflow', async () => {
      const plainDown = await instantiate<Exports>(plain);
      expect(() => plainDown.down()).to.throw(RangeError);
      const c = counter(1);
      const m = await instantiate<Exports>(fueled, {}, c.check);
      // Spends all but ~100 ticks of the counter (an entry, and a tick per loop header: n + 1), so the
      // recursion reaches the check about 100 frames deep, whatever the engine's stack size.
      m.burn(FUEL_INTERVAL - 100);
      expect(c.calls).to.equal(0);
      expect(() => m.down()).to.throw(Stop, 'stopped at check 1');
      expect(c.calls).to.equal(1);
    });

    it('calls the check once per FUEL_INTERVAL loop iterations', async () => {
      const c = counter();
      const m = await instantiate<Exports>(fueled, {}, c.check);
      m.burn(FUEL_INTERVAL * 50);
      expect(c.calls).to.equal(50);
    });
  });

  describe('what it keeps', () => {
    const WAT = `(module
      (import "env" "seed" (global $seed i32))
      (import "env" "twice" (func $twice (param i32) (result i32)))
      (memory (export "memory") 1)
      (data (i32.const 16) "\\2a")
      (table $t (export "table") 3 funcref)
      (elem (i32.const 0) $double $square)
      (elem declare func $negate)
      (type $unary (func (param i32) (result i32)))
      (global $started (mut i32) (i32.const 0))
      (global (export "answer") i32 (i32.const 42))
      (func $init (global.set $started (i32.add (global.get $seed) (i32.load8_u (i32.const 16)))))
      (start $init)
      (func $double (param i32) (result i32) (i32.mul (local.get 0) (i32.const 2)))
      (func $square (param i32) (result i32) (i32.mul (local.get 0) (local.get 0)))
      (func $negate (param i32) (result i32) (i32.sub (i32.const 0) (local.get 0)))
      (func (export "started") (result i32) (global.get $started))
      (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1)))
      (func (export "apply") (param i32 i32) (result i32) (call_indirect (type $unary) (local.get 1) (local.get 0)))
      (func (export "viaRef") (param i32) (result i32)
        (table.set $t (i32.const 2) (ref.func $negate))
        (call_indirect (type $unary) (local.get 0) (i32.const 2)))
      (func (export "callImport") (param i32) (result i32) (call $twice (call $double (local.get 0))))
      (func (export "sum") (param $n i32) (result i32) (local $i i32) (local $s i32)
        (block $done (loop $next
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (local.set $s (i32.add (local.get $s) (local.get $i)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $next)))
        (local.get $s))
      (func $depth (export "depth") (param $n i32) (result i32)
        (if (result i32) (i32.eqz (local.get $n))
          (then (i32.const 0))
          (else (i32.add (i32.const 1) (call $depth (i32.sub (local.get $n) (i32.const 1)))))))
      (func (export "early") (param i32) (result i32)
        (if (local.get 0) (then (return (i32.const 7))))
        (i32.const 8)))`;
    type Exports = {
      memory: WebAssembly.Memory;
      table: WebAssembly.Table;
      answer: WebAssembly.Global;
      started(): number;
      add(a: number, b: number): number;
      apply(index: number, x: number): number;
      viaRef(x: number): number;
      callImport(x: number): number;
      sum(n: number): number;
      depth(n: number): number;
      early(x: number): number;
    };
    const imports = () => ({ env: { seed: 100, twice: (x: number) => x * 2 } });
    let plain: Uint8Array;
    let fueled: Uint8Array;

    before(async () => {
      plain = await parse(WAT);
      fueled = instrumented(plain);
    });

    it('adds exactly one import, the check (no parameters, no results), and keeps the exports', () => {
      const before = new WebAssembly.Module(plain as Uint8Array<ArrayBuffer>);
      const after = new WebAssembly.Module(fueled as Uint8Array<ArrayBuffer>);
      expect(WebAssembly.Module.exports(after)).to.deep.equal(WebAssembly.Module.exports(before));
      // binaryen writes imports grouped by kind (functions first): the same imports, maybe in another order.
      const sorted = (list: WebAssembly.ModuleImportDescriptor[]) => list.map((i) => `${i.module}.${i.name}: ${i.kind}`).sort();
      expect(sorted(WebAssembly.Module.imports(after))).to.deep.equal(
        sorted([...WebAssembly.Module.imports(before), { module: FUEL_IMPORT_MODULE, name: FUEL_IMPORT_NAME, kind: 'function' }]),
      );
      const module = binaryen.readBinary(fueled);
      try {
        const check = binaryen.getFunctionInfo(module.getFunctionByIndex(1));
        expect([check.module, check.base, check.params, check.results]).to.deep.equal([FUEL_IMPORT_MODULE, FUEL_IMPORT_NAME, binaryen.none, binaryen.none]);
      } finally {
        module.dispose();
      }
    });

    it('keeps every result: start function, data, globals, table, call_indirect, ref.func, imports, loops, recursion', async () => {
      const a = await instantiate<Exports>(plain, imports());
      const b = await instantiate<Exports>(fueled, imports(), () => {});
      expect(b.started()).to.equal(a.started()).and.equal(142);
      expect(b.add(20, 22)).to.equal(a.add(20, 22)).and.equal(42);
      expect(b.add(-1, 0x7fffffff)).to.equal(a.add(-1, 0x7fffffff));
      expect([b.apply(0, 7), b.apply(1, 7)]).to.deep.equal([a.apply(0, 7), a.apply(1, 7)]).and.deep.equal([14, 49]);
      expect(b.viaRef(5)).to.equal(a.viaRef(5)).and.equal(-5);
      expect(b.callImport(3)).to.equal(a.callImport(3)).and.equal(12);
      expect(b.sum(100_000)).to.equal(a.sum(100_000));
      expect(b.depth(1_000)).to.equal(1_000);
      expect([b.early(1), b.early(0)]).to.deep.equal([7, 8]);
      expect(b.answer.value).to.equal(42);
      expect(b.table.length).to.equal(3);
      expect(new Uint8Array(b.memory.buffer)[16]).to.equal(0x2a);
    });

    it('keeps a module without functions of its own valid, with the check import all the same', async () => {
      const bytes = instrumented(await parse('(module (memory (export "memory") 1) (global (export "g") i32 (i32.const 3)))'));
      const module = new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
      expect(WebAssembly.Module.imports(module)).to.deep.equal([{ module: FUEL_IMPORT_MODULE, name: FUEL_IMPORT_NAME, kind: 'function' }]);
      expect(WebAssembly.Module.exports(module).map((e) => e.name)).to.deep.equal(['memory', 'g']);
    });
  });

  describe('what it refuses', () => {
    function refusal(bytes: Uint8Array): string {
      const outcome = instrumentFuel(bytes);
      if (outcome.ok) throw new Error('instrumentFuel accepted the module');
      expect(outcome.reason).to.be.a('string').and.not.include('\n');
      return outcome.reason;
    }

    function legacyExceptions(): Uint8Array {
      // jco's parser no longer reads the legacy try/catch syntax; binaryen's does.
      const text = binaryen.parseText('(module (tag $t) (func (export "f") (try (do (throw $t)) (catch_all))))');
      try {
        text.setFeatures(binaryen.Features.All);
        return text.emitBinary();
      } finally {
        text.dispose();
      }
    }

    it('refuses exception handling (a catch could swallow the interrupt): try/catch_all, try_table, throw', async () => {
      expect(refusal(legacyExceptions())).to.match(/exception/);
      expect(refusal(await parse('(module (tag $t) (func (export "f") (block $h (try_table (catch_all $h) (throw $t)))))'))).to.match(/exception/);
      expect(refusal(await parse('(module (tag $t) (func (export "f") (throw $t)))'))).to.match(/exception/);
    });

    it('refuses bytes that are no module, and a module that does not validate, without throwing', async () => {
      expect(refusal(new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7]))).to.match(/cannot read/);
      expect(refusal(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5]))).to.match(/cannot read/);
      // jco's parse does not type-check: an i64 where the result is an i32.
      expect(refusal(await parse('(module (func (export "f") (result i32) (i64.const 1)))'))).to.match(/does not validate/);
      // binaryen is still usable after those failures.
      expect(instrumentFuel(await parse('(module (func (export "f")))')).ok).to.equal(true);
    });
  });

  describe('a componentize-js component through jco’s glue', function () {
    // A first build of the component with componentize-js takes ~20 s (cached afterwards); instrumenting its ~11 MB core ~5 s.
    this.timeout(180_000);
    type Api = { env(): string[]; spin(): number };
    type Instantiate = (
      getCoreModule: (name: string) => WebAssembly.Module,
      imports: Record<string, unknown>,
      instantiateCore: (module: WebAssembly.Module, imports?: WebAssembly.Imports) => Promise<WebAssembly.Instance>,
    ) => Promise<{ api: Api }>;
    let glue: Instantiate;
    let importObject: Record<string, unknown>;
    const plainModules = new Map<string, WebAssembly.Module>();
    const fuelModules = new Map<string, WebAssembly.Module>();
    let largest: [name: string, size: number] = ['', 0];

    before(async function () {
      this.timeout(180_000);
      const bytes = await buildComponent(HOSTILE);
      const { files, imports } = await transpile(bytes, { ...TRANSPILE_OPTIONS });
      const cores = Object.entries<Uint8Array>(files).filter(([name]) => /\.core\d*\.wasm$/.test(name));
      const [name, core] = cores.reduce((a, b) => (b[1].length > a[1].length ? b : a));
      largest = [name, core.length];
      for (const [name, core] of cores) {
        plainModules.set(name, await WebAssembly.compile(core as Uint8Array<ArrayBuffer>));
        fuelModules.set(name, await WebAssembly.compile(instrumented(core) as Uint8Array<ArrayBuffer>));
      }
      const iface = readComponentInterface(bytes);
      importObject = hostImports(imports, iface.imports, { env: [['GREETING', 'hi']], config: [], paths: [], outboundHosts: [] });
      // The glue is an ES module with a .js suffix; once imported it lives in memory and its folder can go.
      const dir = await mkdtemp(join(tmpdir(), 'rt-fuel-test-'));
      try {
        await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
        for (const [file, content] of Object.entries(files)) {
          if (!file.endsWith('.js')) continue;
          await mkdir(dirname(join(dir, file)), { recursive: true });
          await writeFile(join(dir, file), content);
        }
        glue = ((await import(pathToFileURL(join(dir, 'component.js')).href)) as { instantiate: Instantiate }).instantiate;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    function instance(modules: Map<string, WebAssembly.Module>, check: () => void): Promise<{ api: Api }> {
      return glue(
        (name) => modules.get(name)!,
        importObject,
        // As rt's inline instances do: every core module gets the check besides the glue's imports.
        (module, imports) => WebAssembly.instantiate(module, { ...imports, [FUEL_IMPORT_MODULE]: { [FUEL_IMPORT_NAME]: check } }),
      );
    }

    it('has a core module of several megabytes (SpiderMonkey), which it instruments', () => {
      expect(largest[1]).to.be.above(5_000_000);
    });

    it('answers as the uninstrumented component does', async () => {
      const plain = await instance(plainModules, () => {});
      const c = counter();
      const fueled = await instance(fuelModules, c.check);
      expect(fueled.api.env()).to.deep.equal(plain.api.env()).and.deep.equal(['GREETING=hi']);
    });

    it('interrupts a JavaScript loop that never ends with the check’s error', async () => {
      let c = counter();
      const fueled = await instance(fuelModules, () => c.check());
      c = counter(3);
      expect(() => fueled.api.spin()).to.throw(Stop, 'stopped at check 3');
      expect(c.calls).to.equal(3);
    });
  });
});
