// The component type reader against real components: built from WIT by
// wasm-tools (jco's componentEmbed with a dummy core module, and
// componentNew), by componentize-js, and written by hand in the component
// text format.

import { expect } from 'chai';
import { componentEmbed, componentNew, parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { buildComponent } from '../../examples/builder.js';
import { ComponentFormatError, readComponentInterface } from '../../lib/wit/component-reader.js';
import { printComponentWit } from '../../lib/wit/print.js';
import { serviceExports } from '../../lib/primary/addressing.js';
import { resourceFunctionName, type ComponentInterface, type WitFunction, type WitInterface, type WitType } from '../../lib/wit/types.js';
import { examples } from '../../examples/index.js';
import { borrow, enumOf, flags, func, list, named, option, originIn, own, prim, record, result, tuple } from '../support/wit-types.js';

/** A component for `world` whose core module wasm-tools makes up: the reader only looks at types. */
async function fromWit(wit: string, world: string): Promise<Uint8Array> {
  const embedded = await componentEmbed({ dummy: true, witSource: wit, world });
  return componentNew(embedded, []);
}

const TYPES_WIT = `package acme:shapes@2.1.0;

interface types {
  type id = u64;
  record point { x-coord: f64, y-coord: f64 }
  enum color { red, light-blue }
  flags perms { read, write, exec-all }
  variant shape { circle(f32), square(point), none }
  resource canvas {
    constructor(width: u32);
    draw: func(s: shape) -> result<_, string>;
    open: static func(name: string) -> option<canvas>;
  }
}

interface api {
  use types.{id, point, shape, color, perms};
  area: func(s: shape) -> f64;
  label: func(id: id, c: color, p: perms) -> string;
  nested: func(x: option<option<list<tuple<u8, s8, char>>>>) -> result<list<u8>, tuple<s16, u16>>;
  numbers: func(a: u32, b: s32, c: s64, d: bool, e: f64) -> list<point>;
  nothing: func();
}

interface log { write: func(msg: string); }

world shapes {
  import log;
  import now: func() -> u64;
  export types;
  export api;
  export version: func() -> string;
}`;

describe('component type reader', () => {
  let shapes: ComponentInterface;
  let types: WitInterface;
  let api: WitInterface;

  before(async () => {
    shapes = readComponentInterface(await fromWit(TYPES_WIT, 'shapes'));
    types = shapes.interfaces.find((i) => i.interfaceName === 'types')!;
    api = shapes.interfaces.find((i) => i.interfaceName === 'api')!;
  });

  describe('a component built by wasm-tools from WIT', () => {
    it('lists the exported interfaces with their package, and world-level functions', () => {
      expect(shapes.interfaces.map((i) => i.name)).to.deep.equal(['acme:shapes/types@2.1.0', 'acme:shapes/api@2.1.0']);
      expect(api.package).to.deep.equal({ namespace: 'acme', name: 'shapes', version: '2.1.0' });
      expect(shapes.functions).to.deep.equal([func('version', {}, prim('string'))]);
    });

    it('decodes the type definitions of an interface, in order, with their names and origins', () => {
      expect(types.types.map((t) => t.name)).to.deep.equal(['id', 'point', 'color', 'perms', 'shape', 'canvas']);
      const origin = originIn('acme:shapes/types@2.1.0');
      expect(types.types[0].type).to.deep.equal(named(origin('id'), prim('u64')));
      expect(types.types[1].type).to.deep.equal(named(origin('point'), record({ 'x-coord': prim('f64'), 'y-coord': prim('f64') })));
      expect(types.types[2].type).to.deep.equal(named(origin('color'), enumOf('red', 'light-blue')));
      expect(types.types[3].type).to.deep.equal(named(origin('perms'), flags('read', 'write', 'exec-all')));
      const shape = types.types[4].type as Extract<WitType, { kind: 'variant' }>;
      expect(shape.kind).to.equal('variant');
      expect(shape.cases.map((c) => c.name)).to.deep.equal(['circle', 'square', 'none']);
      expect(shape.cases[1].type).to.include({ kind: 'record' });
      expect(shape.cases[2].type).to.equal(null);
      expect(types.types[5].type).to.deep.equal({ kind: 'resource', origin: origin('canvas') });
    });

    it('keeps resource functions with their decorated names and handle types', () => {
      const names = types.functions.map((f) => f.name);
      expect(names).to.deep.equal(['[constructor]canvas', '[method]canvas.draw', '[static]canvas.open']);
      const [ctor, draw, open] = types.functions;
      const canvas = originIn('acme:shapes/types@2.1.0')('canvas');
      expect(ctor.result).to.deep.equal(named(canvas, own('canvas')));
      expect(draw.params[0]).to.deep.equal({ name: 'self', type: named(canvas, borrow('canvas')) });
      expect(draw.result).to.deep.equal(result(null, prim('string')));
      expect(open.result).to.deep.equal(option(named(canvas, own('canvas'))));
    });

    it('gives types used from another interface the origin of the interface that defines them', () => {
      const label = api.functions.find((f) => f.name === 'label')!;
      expect(label.params.map((x) => x.type.origin)).to.deep.equal([
        { interface: 'acme:shapes/types@2.1.0', name: 'id' },
        { interface: 'acme:shapes/types@2.1.0', name: 'color' },
        { interface: 'acme:shapes/types@2.1.0', name: 'perms' },
      ]);
      expect(api.types.map((t) => t.name)).to.deep.equal(['id', 'point', 'shape', 'color', 'perms']);
    });

    it('decodes structural types at any depth, with parameter names', () => {
      const nested = api.functions.find((f) => f.name === 'nested')!;
      expect(nested.params).to.deep.equal([{ name: 'x', type: option(option(list(tuple(prim('u8'), prim('s8'), prim('char'))))) }]);
      expect(nested.result).to.deep.equal(result(list(prim('u8')), tuple(prim('s16'), prim('u16'))));
      const numbers = api.functions.find((f) => f.name === 'numbers')!;
      expect(numbers.params.map((x) => [x.name, (x.type as { name: string }).name])).to.deep.equal([
        ['a', 'u32'],
        ['b', 's32'],
        ['c', 's64'],
        ['d', 'bool'],
        ['e', 'f64'],
      ]);
      expect(api.functions.find((f) => f.name === 'nothing')).to.deep.equal({ name: 'nothing', params: [], result: null });
    });

    it('lists imports with the functions and types an instance import needs', () => {
      const log = shapes.imports.find((i) => i.name === 'acme:shapes/log@2.1.0')!;
      expect(log.kind).to.equal('instance');
      expect(log.functions).to.deep.equal([func('write', { msg: prim('string') }, null)]);
      const now = shapes.imports.find((i) => i.name === 'now')!;
      expect(now).to.deep.include({ kind: 'function', function: func('now', {}, prim('u64')) });
    });

    it('prints back as WIT that names every type', () => {
      const wit = printComponentWit(shapes, 'shapes');
      expect(wit).to.include('package acme:shapes@2.1.0;');
      expect(wit).to.include('record point {\n    x-coord: f64,\n    y-coord: f64,\n  }');
      expect(wit).to.include('use types.{id, point, shape, color, perms};');
      expect(wit).to.include('draw: func(s: shape) -> result<_, string>;');
      expect(wit).to.include('open: static func(name: string) -> option<canvas>;');
      expect(wit).to.include('label: func(id: id, c: color, p: perms) -> string;');
      expect(wit).to.include('import now: func() -> u64;');
      expect(wit).to.include('export version: func() -> string;');
    });

    it('reads the WASI imports of a component that uses them, resources included', async () => {
      const wit = `package acme:io@1.0.0;
        package wasi:io@0.2.3 { interface error { resource error; } interface streams { use error.{error}; resource output-stream { blocking-write-and-flush: func(contents: list<u8>) -> result<_, stream-error>; } variant stream-error { last-operation-failed(error), closed } } }
        package wasi:cli@0.2.3 { interface stdout { use wasi:io/streams@0.2.3.{output-stream}; get-stdout: func() -> output-stream; } }
        world w { import wasi:cli/stdout@0.2.3; export hello: func() -> string; }`;
      const c = readComponentInterface(await fromWit(wit, 'w'));
      const stdout = c.imports.find((i) => i.name === 'wasi:cli/stdout@0.2.3')!;
      expect(stdout.functions).to.deep.equal([func('get-stdout', {}, named({ interface: 'wasi:io/streams@0.2.3', name: 'output-stream' }, own('output-stream')))]);
      const streams = c.imports.find((i) => i.name === 'wasi:io/streams@0.2.3')!;
      expect(streams.types!.map((t) => t.name)).to.include('output-stream');
    });
  });

  describe('components from the other toolchains', () => {
    it('reads a componentize-js component (the greeter example)', async function () {
      this.timeout(180_000);
      const source = await examples.find((e) => e.name === 'greeter')!.source();
      const c = readComponentInterface(await buildComponent(source, (m) => process.stderr.write(`      ${m}\n`), 'greeter'));
      const greeter = c.interfaces.find((i) => i.name === 'example:greeter/greeter@1.0.0')!;
      expect(greeter.functions.map((f) => f.name)).to.deep.equal(['init', 'greet', 'greet-person']);
      expect(greeter.functions[2].params[0].type).to.deep.equal(named({ interface: 'example:greeter/greeter@1.0.0', name: 'person' }, record({ name: prim('string'), age: prim('u8') })));
    });

    it('reads a component written by hand in the component text format', async () => {
      const bytes = await parse(`(component
        (type $log-type (instance
          (export "level" (type (sub resource)))
          (type $level-handle (own 0))
          (export "write" (func (param "msg" string)))))
        (import "acme:host/log@0.1.0" (instance $log (type $log-type)))
        (alias export $log "write" (func $write))
        (core module $m
          (func (export "double") (param i32) (result i32) local.get 0 local.get 0 i32.add))
        (core instance $i (instantiate $m))
        (type $double-type (func (param "n" u32) (result u32)))
        (func $double (type $double-type) (canon lift (core func $i "double")))
        (type $count (record (field "n" u32)))
        (export $count-export "count" (type $count))
        (export "double" (func $double) (func (type $double-type))))`);
      const c = readComponentInterface(bytes);
      expect(c.imports).to.have.length(1);
      expect(c.imports[0]).to.deep.include({ name: 'acme:host/log@0.1.0', kind: 'instance' });
      expect(c.imports[0].types).to.deep.equal([{ name: 'level', type: { kind: 'resource', origin: { interface: 'acme:host/log@0.1.0', name: 'level' } } }]);
      expect(c.functions).to.deep.equal([func('double', { n: prim('u32') }, prim('u32'))]);
      expect(c.types).to.deep.equal([{ name: 'count', type: named({ interface: '', name: 'count' }, record({ n: prim('u32') })) }]);
    });

    it('marks a function lifted with the async option as async, through a shim and its ascribed type too, and rt does not call it', async () => {
      // The shape of jco's p3 test components (p3-context-async) and of wit-bindgen's `[async]` exports
      // (async-error-context): the function type is a plain one; only `canon lift ... async` says the
      // callee follows the async ABI (task.return and a callback).
      const bytes = await parse(`(component
        (core module $m
          (import "" "task.return" (func $return (param i32)))
          (func (export "pull") (result i32) i32.const 1)
          (func (export "pull-cb") (param i32 i32 i32) (result i32) i32.const 7 call $return i32.const 0)
          (func (export "plain") (result i32) i32.const 2))
        (core func $return (canon task.return (result u32)))
        (core instance $host (export "task.return" (func $return)))
        (core instance $i (instantiate $m (with "" (instance $host))))
        (type $t (func (result u32)))
        (func $pull (type $t) (canon lift (core func $i "pull") async (callback (core func $i "pull-cb"))))
        (func $plain (type $t) (canon lift (core func $i "plain")))
        (component $shim
          (import "f" (func $f (type $t)))
          (export "[async]pull" (func $f) (func (type $t))))
        (instance $run (instantiate $shim (with "f" (func $pull))))
        (export "acme:p3/run@0.1.0" (instance $run))
        (export "pull" (func $pull))
        (export "plain" (func $plain) (func (type $t))))`);
      const c = readComponentInterface(bytes);
      const asyncFn = (name: string): WitFunction => ({ ...func(name, {}, prim('u32')), async: true });
      expect(c.functions).to.deep.equal([asyncFn('pull'), func('plain', {}, prim('u32'))]);
      expect(c.interfaces[0].functions).to.deep.equal([asyncFn('[async]pull')]);
      expect(printComponentWit(c, 'p3')).to.include('export pull: async func() -> u32;');
      const methods = serviceExports(c).methods;
      const verdict = (name: string) => methods.find((m) => m.function.name === name)!;
      // Async functions are methods like any other (docs/api.md §5.9).
      expect(verdict('plain')).to.include({ invocable: true });
      expect(verdict('pull')).to.include({ invocable: true });
    });
  });

  it('notes a string encoding other than UTF-8 that a canonical definition uses (rt’s own host reads UTF-8 only), and none for UTF-8', async () => {
    const component = (encoding: string) =>
      parse(`(component
        (core module $m
          (memory (export "memory") 1)
          (func (export "realloc") (param i32 i32 i32 i32) (result i32) i32.const 8)
          (func (export "echo") (param i32 i32) (result i32) i32.const 0))
        (core instance $i (instantiate $m))
        (type $t (func (param "s" string) (result string)))
        (func (export "echo") (type $t) (canon lift (core func $i "echo") (memory (core memory $i "memory")) (realloc (core func $i "realloc")) ${encoding})))`);
    expect(readComponentInterface(await component('string-encoding=utf16')).stringEncoding).to.equal('utf16');
    expect(readComponentInterface(await component('string-encoding=latin1+utf16')).stringEncoding).to.equal('latin1+utf16');
    expect(readComponentInterface(await component('')).stringEncoding).to.equal(undefined);
  });

  describe('what is not a component', () => {
    const cases: [string, () => Promise<Uint8Array> | Uint8Array, RegExp][] = [
      ['an empty file', () => new Uint8Array(0), /not a WebAssembly component: the file is empty/],
      ['text', () => new TextEncoder().encode('this is not wasm at all'), /does not start with the \\0asm magic number/],
      ['a core module', () => parse('(module (func (export "f")))'), /this is a core module \(version 1\)/],
    ];
    for (const [name, bytes, message] of cases) {
      it(`rejects ${name} with a clear message`, async () => {
        const input = await bytes();
        expect(() => readComponentInterface(input)).to.throw(ComponentFormatError, message);
      });
    }

    it('rejects a truncated component, naming the offset', async () => {
      const whole = await fromWit(TYPES_WIT, 'shapes');
      for (const cut of [9, 40, Math.floor(whole.length / 2), whole.length - 3]) {
        expect(() => readComponentInterface(whole.subarray(0, cut))).to.throw(ComponentFormatError, /offset \d+/);
      }
    });
  });
});

describe('resource function names', () => {
  it('reads the decorated names of constructors, methods and static functions, and not plain names', () => {
    expect(resourceFunctionName('[constructor]blob')).to.deep.equal({ kind: 'constructor', resource: 'blob' });
    expect(resourceFunctionName('[method]blob.read-all')).to.deep.equal({ kind: 'method', resource: 'blob', member: 'read-all' });
    expect(resourceFunctionName('[static]blob.open')).to.deep.equal({ kind: 'static', resource: 'blob', member: 'open' });
    expect(resourceFunctionName('read')).to.equal(undefined);
    expect(resourceFunctionName('[resource-drop]blob')).to.equal(undefined);
  });
});
