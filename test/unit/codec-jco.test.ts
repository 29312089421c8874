// The codec against the real thing: a componentize-js component whose exports
// echo every kind of WIT type, called through the glue jco-transpile makes (the
// version the runtime uses). JSON → decodeArgs → the export → encodeResult
// must give the JSON back; and the JS conventions the codec assumes are
// checked on the glue directly.

import { expect } from 'chai';
import { buildComponent, type WatSource } from '../../examples/builder.js';
import { CodecError, functionCodec } from '../../lib/wit/codec.js';
import type { WitFunction, WitType } from '../../lib/wit/types.js';
import { loadWithJco, type JcoComponent, type JcoExports } from '../support/jco-instance.js';
import { ECHO_EVERY_TYPE, MANY_FLAGS } from '../support/type-fixtures.js';
import { enumOf, flags, func, list, named, option, originIn, prim, record, result, tuple, variant } from '../support/wit-types.js';


// componentize-js 0.18.5 mangles some scalars on the guest side (a u32
// parameter ≥ 2^31 comes back wrong, a negative s64 parameter traps), which
// would hide what jco does with boundary values. Scalars are therefore also
// echoed by a component written in WAT, where identity really is identity.
const SCALAR_TYPES: [string, string][] = [
  ['bool', 'i32'],
  ['u8', 'i32'],
  ['u16', 'i32'],
  ['u32', 'i32'],
  ['u64', 'i64'],
  ['s8', 'i32'],
  ['s16', 'i32'],
  ['s32', 'i32'],
  ['s64', 'i64'],
  ['f32', 'f32'],
  ['f64', 'f64'],
  ['char', 'i32'],
];

const SCALARS: WatSource = {
  kind: 'wat',
  world: 'scalars',
  wit: `package test:echo@0.1.0;
interface api {
${SCALAR_TYPES.map(([t]) => `  echo-${t}: func(x: ${t}) -> ${t};`).join('\n')}
}
world scalars { export api; }
`,
  wat: `(module
${SCALAR_TYPES.map(([t, core]) => `  (func (export "test:echo/api@0.1.0#echo-${t}") (param ${core}) (result ${core}) local.get 0)`).join('\n')}
  (memory (export "memory") 1))`,
};

// --- the WIT types, by hand (as the component reader will produce them) -------

const origin = originIn('test:echo/api@0.1.0');

const person = named(origin('person'), record({ name: prim('string'), age: prim('u8'), 'first-name': prim('string'), tags: list(prim('string')) }));
const tricky = named(origin('tricky'), record({ type: prim('u8'), class: prim('string'), list: prim('bool'), 'get-HTTP-status': prim('u16'), 'a1-b2': prim('u8') }));
const blob = named(origin('blob'), record({ data: list(prim('u8')), nums: list(prim('u16')), big: list(prim('s64')) }));
const profile = named(origin('profile'), record({ nick: option(prim('string')), scores: list(prim('f32')), when: option(prim('u64')) }));
const color = named(origin('color'), enumOf('red', 'green', 'light-blue'));
const perms = named(origin('perms'), flags('read', 'write', 'exec-all'));
const trickyFlags = named(origin('tricky-flags'), flags('type', 'get-HTTP', 'x1'));
const many = named(origin('many'), flags(...MANY_FLAGS));
const shape = named(origin('shape'), variant({ circle: prim('f64'), rect: tuple(prim('f64'), prim('f64')), empty: null, 'named-point': person }));
const maybe = named(origin('maybe'), variant({ 'some-val': option(prim('u32')), nothing: null, nested: option(option(prim('u8'))) }));
const id = named(origin('id'), prim('u32'));
const outcome = named(origin('outcome'), result(prim('string'), prim('string')));

/** `echo-x: func(x: T) -> T` */
const echo = (name: string, param: string, type: WitType): WitFunction => func(name, { [param]: type }, type);

const FUNCTIONS: Record<string, WitFunction> = Object.fromEntries(
  [
    echo('echo-bool', 'x', prim('bool')),
    ...(['u8', 'u16', 'u32', 'u64', 's8', 's16', 's32', 's64', 'f32', 'f64', 'char', 'string'] as const).map((t) => echo(`echo-${t}`, 'x', prim(t))),
    echo('echo-bytes', 'b', list(prim('u8'))),
    ...(['s8', 'u16', 's16', 'u32', 's32', 'u64', 's64', 'f32', 'f64', 'bool', 'char', 'string'] as const).map((t) =>
      echo(`echo-list-${t}`, 'x', list(prim(t))),
    ),
    echo('echo-list-list', 'x', list(list(prim('u8')))),
    echo('echo-ids', 'x', list(id)),
    echo('echo-tuple', 'x', tuple(prim('u32'), prim('string'), prim('bool'))),
    echo('echo-record', 'p', person),
    echo('echo-tricky', 't', tricky),
    echo('echo-blob', 'b', blob),
    echo('echo-profile', 'p', profile),
    echo('echo-enum', 'c', color),
    echo('echo-flags', 'f', perms),
    echo('echo-tricky-flags', 'f', trickyFlags),
    echo('echo-many', 'f', many),
    echo('echo-variant', 's', shape),
    echo('echo-maybe', 'm', maybe),
    echo('echo-opt', 'x', option(prim('u32'))),
    echo('echo-opt-opt', 'x', option(option(prim('u32')))),
    echo('echo-opt3', 'x', option(option(option(prim('string'))))),
    echo('echo-opt-bytes', 'x', option(list(prim('u8')))),
    echo('echo-result', 'r', result(prim('string'), prim('u32'))),
    echo('echo-nested-result', 'r', list(result(prim('string'), prim('u32')))),
    echo('echo-result-unit', 'r', option(result(null, prim('string')))),
    echo('echo-result-bare', 'r', list(result(null, null))),
    echo('echo-result-opt', 'r', option(result(option(prim('u64')), list(prim('u8'))))),
    func('fail-if', { s: prim('string') }, result(prim('string'), prim('string'))),
    func('aliased', { s: prim('string') }, outcome),
    func('unit-err', { fail: prim('bool') }, result(prim('u32'), null)),
    func('check', { ok: prim('bool') }, result(null, prim('string'))),
    func('validate', { p: person }, result(person, list(prim('string')))),
    func('mix', { a: prim('u8'), b: prim('string'), c: list(prim('u16')) }, tuple(prim('u8'), prim('string'), list(prim('u16')))),
    func('nothing', {}, null),
    func('add', { a: prim('u32'), b: prim('u32') }, prim('u32')),
  ].map((f) => [f.name, f]),
);

const jsName = (wit: string) => wit.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

type Outcome = { result: unknown } | { error: unknown };

/** One call over the invoke path, as the runtime makes it: decode, call, encode. */
function invoke(exports: JcoExports, name: string, body: unknown): Outcome {
  const fn = FUNCTIONS[name];
  if (!fn) throw new Error(`no WIT type for ${name}`);
  const codec = functionCodec(fn);
  const container = name === 'add' ? exports : (exports.api as Record<string, unknown>);
  const f = container[jsName(name)] as ((...args: unknown[]) => unknown) | undefined;
  if (!f) throw new Error(`the component does not export ${name}`);
  // decodeArgs takes its body over (it reuses its arrays); the tables are used more than once.
  const args = codec.decodeArgs(structuredClone(body));
  let value: unknown;
  try {
    value = f(...args);
  } catch (e) {
    if (fn.result?.kind === 'result' && e instanceof Error && e.constructor.name === 'ComponentError' && 'payload' in e) {
      return jsonSafe({ error: codec.encodeError(e.payload) });
    }
    throw e;
  }
  return jsonSafe({ result: codec.encodeResult(value) });
}

/** Fails on what JSON cannot carry (BigInt throws in stringify; undefined and typed arrays change shape). */
function jsonSafe<T>(value: T): T {
  const text = JSON.stringify(value);
  expect(JSON.parse(text)).to.deep.equal(value);
  return value;
}

/** [function, JSON argument, JSON result (defaults to the argument)] */
type RoundTrip = [string, unknown, unknown?];

const PERSON = { name: 'Ada', age: 255, 'first-name': 'Augusta', tags: ['math', '😀'] };

/** Scalars, on the WAT component (see SCALARS). */
const SCALAR_TRIPS: RoundTrip[] = [
  ['echo-bool', true],
  ['echo-bool', false],
  ['echo-u8', 0],
  ['echo-u8', 255],
  ['echo-u16', 65535],
  ['echo-u32', 0],
  ['echo-u32', 2147483648],
  ['echo-u32', 4294967295],
  ['echo-s8', -128],
  ['echo-s8', 127],
  ['echo-s16', -32768],
  ['echo-s16', 32767],
  ['echo-s32', -2147483648],
  ['echo-s32', 2147483647],
  ['echo-u64', 0],
  ['echo-u64', 9007199254740991],
  ['echo-u64', '9007199254740992'],
  ['echo-u64', '18446744073709551615'],
  ['echo-u64', '42', 42],
  ['echo-s64', '-9223372036854775808'],
  ['echo-s64', '9223372036854775807'],
  ['echo-s64', -9007199254740991],
  ['echo-s64', '-9007199254740992'],
  ['echo-s64', -1],
  ['echo-s64', 0],
  ['echo-f32', 1.5],
  ['echo-f32', 0.1],
  ['echo-f32', -3.4028234663852886e38, -3.4028235e38],
  ['echo-f32', 16777216],
  ['echo-f32', 1e-45],
  ['echo-f32', 'NaN'],
  ['echo-f32', 'Infinity'],
  ['echo-f32', '-Infinity'],
  ['echo-f64', 0.1],
  ['echo-f64', 1.7976931348623157e308],
  ['echo-f64', 5e-324],
  ['echo-f64', 'NaN'],
  ['echo-f64', 'Infinity'],
  ['echo-f64', '-Infinity'],
  ['echo-char', 'a'],
  ['echo-char', 'é'],
  ['echo-char', '😀'],
  ['echo-char', '\u0000'],
];

/** Everything else, on the componentize-js component. */
const ROUND_TRIPS: RoundTrip[] = [
  ['echo-string', ''],
  ['echo-string', 'héllo, wörld 😀\u0000\n'],
  ['echo-bytes', ''],
  ['echo-bytes', 'aGVsbG8='],
  ['echo-bytes', 'AP8='],
  ['echo-bytes', [104, 105], 'aGk='],
  ['echo-bytes', [], ''],
  ['echo-bytes', '-_8', '+/8='],
  ['echo-list-s8', [-128, 0, 127]],
  ['echo-list-u16', [0, 65535]],
  ['echo-list-s16', [-32768, 32767]],
  ['echo-list-u32', [0, 4294967295]],
  ['echo-list-u32', []],
  ['echo-list-s32', [-2147483648, 2147483647]],
  ['echo-list-u64', ['18446744073709551615', 0, 9007199254740991]],
  ['echo-list-s64', ['-9223372036854775808', -1, '9223372036854775807']],
  ['echo-list-f32', [0.1, 'NaN', '-Infinity', 2.5]],
  ['echo-list-f64', ['Infinity', 1.5, 'NaN', 0.1]],
  ['echo-list-bool', [true, false]],
  ['echo-list-char', ['a', '😀']],
  ['echo-list-string', ['', 'x', '😀']],
  ['echo-list-list', ['', 'AQI=', [255]], ['', 'AQI=', '/w==']],
  ['echo-ids', [1, 2, 4294967295]],
  ['echo-tuple', [4294967295, 'x', true]],
  ['echo-record', PERSON],
  ['echo-record', { name: '', age: 0, 'first-name': '', tags: [] }],
  ['echo-tricky', { type: 1, class: 'c', list: true, 'get-HTTP-status': 404, 'a1-b2': 2 }],
  ['echo-blob', { data: 'AAEC', nums: [1, 65535], big: ['-9223372036854775808', 1] }],
  ['echo-profile', { nick: null, scores: [], when: null }],
  ['echo-profile', { nick: 'x', scores: [0.1, 'Infinity'], when: '18446744073709551615' }],
  ['echo-enum', 'red'],
  ['echo-enum', 'light-blue'],
  ['echo-flags', []],
  ['echo-flags', ['read', 'write', 'exec-all']],
  ['echo-flags', ['exec-all', 'read'], ['read', 'exec-all']],
  ['echo-tricky-flags', ['type', 'get-HTTP', 'x1']],
  ['echo-many', ['flag1', 'flag32']],
  ['echo-many', MANY_FLAGS],
  ['echo-variant', { tag: 'circle', val: 1.5 }],
  ['echo-variant', { tag: 'circle', val: 'NaN' }],
  ['echo-variant', { tag: 'rect', val: [1, 2] }],
  ['echo-variant', { tag: 'empty' }],
  ['echo-variant', { tag: 'named-point', val: PERSON }],
  ['echo-maybe', { tag: 'some-val', val: null }],
  ['echo-maybe', { tag: 'some-val', val: 3 }],
  ['echo-maybe', { tag: 'nothing' }],
  ['echo-maybe', { tag: 'nested', val: null }],
  ['echo-maybe', { tag: 'nested', val: { some: null } }],
  ['echo-maybe', { tag: 'nested', val: { some: 255 } }],
  ['echo-opt', null],
  ['echo-opt', 0],
  ['echo-opt', 4294967295],
  ['echo-opt-opt', null],
  ['echo-opt-opt', { some: null }],
  ['echo-opt-opt', { some: 7 }],
  ['echo-opt-opt', { some: 0 }],
  ['echo-opt3', null],
  ['echo-opt3', { some: null }],
  ['echo-opt3', { some: { some: null } }],
  ['echo-opt3', { some: { some: 'x' } }],
  ['echo-opt3', { some: { some: '' } }],
  ['echo-opt-bytes', null],
  ['echo-opt-bytes', ''],
  ['echo-opt-bytes', 'AQID'],
  ['echo-nested-result', [{ ok: 'a' }, { err: 4294967295 }, { ok: '' }]],
  ['echo-result-unit', null],
  ['echo-result-unit', { ok: null }],
  ['echo-result-unit', { err: 'e' }],
  ['echo-result-bare', [{ ok: null }, { err: null }]],
  ['echo-result-opt', null],
  ['echo-result-opt', { ok: null }],
  ['echo-result-opt', { ok: '18446744073709551615' }],
  ['echo-result-opt', { ok: 0 }],
  ['echo-result-opt', { err: 'AQI=' }],
];

describe('codec against jco\'s glue', function () {
  this.timeout(180_000);
  let component: JcoComponent;
  let exports: JcoExports;
  let api: Record<string, (...args: unknown[]) => unknown>;
  let scalars: JcoComponent;
  let scalarExports: JcoExports;
  let exact: Record<string, (...args: unknown[]) => unknown>;

  before(async function () {
    this.timeout(180_000);
    const bytes = await buildComponent(ECHO_EVERY_TYPE, (m) => process.stderr.write(`      ${m}\n`), 'codec echo component');
    component = await loadWithJco(bytes, 'echo');
    expect(component.imports, 'the component imports nothing (all WASI features disabled)').to.deep.equal([]);
    scalars = await loadWithJco(await buildComponent(SCALARS), 'scalars');
  });

  // A trap poisons a jco instance; a fresh one per test keeps a failure from spreading.
  beforeEach(async () => {
    exports = await component.instantiate();
    api = exports.api as typeof api;
    scalarExports = await scalars.instantiate();
    exact = scalarExports.api as typeof exact;
  });

  describe('scalar round trips (WAT echo): JSON → decodeArgs → export → encodeResult', () => {
    for (const [name, json, expected] of SCALAR_TRIPS) {
      const want = expected === undefined ? json : expected;
      it(`${name}(${JSON.stringify(json)}) → ${JSON.stringify(want)}`, () => {
        expect(invoke(scalarExports, name, { x: json })).to.deep.equal({ result: want });
        expect(invoke(scalarExports, name, [json]), 'the array form of the body').to.deep.equal({ result: want });
      });
    }
  });

  describe('round trips: JSON → decodeArgs → export → encodeResult', () => {
    for (const [name, json, expected] of ROUND_TRIPS) {
      const want = expected === undefined ? json : expected;
      it(`${name}(${JSON.stringify(json)}) → ${JSON.stringify(want)}`, () => {
        const param = FUNCTIONS[name].params[0].name;
        expect(invoke(exports, name, { [param]: json })).to.deep.equal({ result: want });
        expect(invoke(exports, name, [json]), 'the array form of the body').to.deep.equal({ result: want });
      });
    }

    it('several parameters, by name and in order', () => {
      expect(invoke(exports, 'mix', { a: 255, b: 's', c: [1, 65535] })).to.deep.equal({ result: [255, 's', [1, 65535]] });
      expect(invoke(exports, 'mix', [0, '', []])).to.deep.equal({ result: [0, '', []] });
      expect(invoke(exports, 'add', { a: 1, b: 2 })).to.deep.equal({ result: 3 });
      expect(invoke(exports, 'add', [4294967295, 1])).to.deep.equal({ result: 0 });
    });

    it('a function without parameters or result: empty body, {} or [] → null', () => {
      expect(invoke(exports, 'nothing', undefined)).to.deep.equal({ result: null });
      expect(invoke(exports, 'nothing', {})).to.deep.equal({ result: null });
      expect(invoke(exports, 'nothing', [])).to.deep.equal({ result: null });
    });
  });

  describe('top-level result<T, E>: ok is T, err is a ComponentError with E', () => {
    it('result<string, u32> taken as a parameter (nested form) and returned (top-level)', () => {
      expect(invoke(exports, 'echo-result', { r: { ok: 'yes' } })).to.deep.equal({ result: 'yes' });
      expect(invoke(exports, 'echo-result', { r: { err: 4294967295 } })).to.deep.equal({ error: 4294967295 });
    });

    it('result<string, string>', () => {
      expect(invoke(exports, 'fail-if', { s: 'fine' })).to.deep.equal({ result: 'fine' });
      expect(invoke(exports, 'fail-if', { s: 'fail now' })).to.deep.equal({ error: 'failed: fail now' });
    });

    it('a type alias of a result throws too', () => {
      expect(invoke(exports, 'aliased', { s: 'fine' })).to.deep.equal({ result: 'fine' });
      expect(invoke(exports, 'aliased', { s: 'fail' })).to.deep.equal({ error: 'failed: fail' });
    });

    it('result<u32> (no error payload) and result<_, string> (no ok payload)', () => {
      expect(invoke(exports, 'unit-err', { fail: false })).to.deep.equal({ result: 7 });
      expect(invoke(exports, 'unit-err', { fail: true })).to.deep.equal({ error: null });
      expect(invoke(exports, 'check', { ok: true })).to.deep.equal({ result: null });
      expect(invoke(exports, 'check', { ok: false })).to.deep.equal({ error: 'not ok' });
    });

    it('result<person, list<string>>', () => {
      expect(invoke(exports, 'validate', { p: PERSON })).to.deep.equal({ error: ['age: too old', 'name: Ada'] });
      const young = { ...PERSON, age: 36 };
      expect(invoke(exports, 'validate', { p: young })).to.deep.equal({ result: young });
    });
  });

  describe('values jco would mangle are refused before the call', () => {
    const refused: [string, unknown, string][] = [
      ['echo-u8', 300, 'x: expected u8 (0..255), got 300'],
      ['echo-s8', -129, 'x: expected s8 (-128..127), got -129'],
      ['echo-u32', -1, 'x: expected u32 (0..4294967295), got -1'],
      ['echo-u64', '18446744073709551616', 'x: expected u64 (0..18446744073709551615), got "18446744073709551616"'],
      ['echo-char', 'ab', 'x: expected char (one Unicode scalar value), got "ab"'],
      ['echo-string', '\ud800', 'x: expected string, got "\\ud800" (contains a lone surrogate, which is not a Unicode scalar value)'],
      ['echo-list-u32', [1, 2.5], 'x[1]: expected u32 (0..4294967295), got 2.5'],
      ['echo-f32', 1e39, 'x: expected f32, got 1e+39 (beyond the range of f32)'],
    ];
    for (const [name, json, message] of refused) {
      it(`${name}(${JSON.stringify(json)})`, () => {
        expect(() => invoke(exports, name, [json]))
          .to.throw(CodecError)
          .with.property('message', message);
      });
    }
  });

  // The conventions the codec is written against, observed on the glue itself.
  describe('jco\'s JS conventions', () => {
    it('integers are numbers; jco wraps out-of-range ones silently (so the codec must check)', () => {
      expect(exact.echoU8(255)).to.equal(255);
      expect(exact.echoU8(300)).to.equal(44);
      expect(exact.echoS8(128)).to.equal(-128);
      expect(exact.echoU32(-1)).to.equal(4294967295);
      expect(exact.echoU16(1.5)).to.equal(1);
    });

    it('u64/s64 are BigInt', () => {
      expect(exact.echoU64(18446744073709551615n)).to.equal(18446744073709551615n);
      expect(exact.echoS64(-9223372036854775808n)).to.equal(-9223372036854775808n);
      expect(exact.echoU64(-1n), 'wrapped too').to.equal(18446744073709551615n);
      expect(exact.echoU64(5), 'a number is taken too').to.equal(5n);
    });

    it('f32 comes back as the f32 value widened to a double', () => {
      expect(exact.echoF32(0.1)).to.equal(Math.fround(0.1));
      expect(exact.echoF32(1e39)).to.equal(Infinity);
      expect(Number.isNaN(exact.echoF64(NaN))).to.equal(true);
    });

    it('char is a one-character string; jco reads only the first code point of a longer one, and a missing one as NUL', () => {
      expect(exact.echoChar('😀')).to.equal('😀');
      expect(exact.echoChar('ab')).to.equal('a');
      expect(exact.echoChar(''), 'and takes an empty one as U+0000').to.equal('\u0000');
    });

    it('string: a lone surrogate becomes U+FFFD', () => {
      expect(api.echoString('a\ud800')).to.equal('a\ufffd');
    });

    it('list<u8> is a Uint8Array both ways', () => {
      const out = api.echoBytes(new Uint8Array([1, 2, 3]));
      expect(out).to.be.instanceOf(Uint8Array);
      expect([...(out as Uint8Array)]).to.deep.equal([1, 2, 3]);
    });

    it('other numeric lists are typed arrays both ways (also through an alias and inside records)', () => {
      expect(api.echoListS8(new Int8Array([-1]))).to.be.instanceOf(Int8Array);
      expect(api.echoListU16(new Uint16Array([1]))).to.be.instanceOf(Uint16Array);
      expect(api.echoListS16(new Int16Array([1]))).to.be.instanceOf(Int16Array);
      expect(api.echoListU32(new Uint32Array([1]))).to.be.instanceOf(Uint32Array);
      expect(api.echoListS32(new Int32Array([1]))).to.be.instanceOf(Int32Array);
      expect(api.echoListU64(new BigUint64Array([1n]))).to.be.instanceOf(BigUint64Array);
      expect(api.echoListS64(new BigInt64Array([1n]))).to.be.instanceOf(BigInt64Array);
      expect(api.echoListF32(new Float32Array([1]))).to.be.instanceOf(Float32Array);
      expect(api.echoListF64(new Float64Array([1]))).to.be.instanceOf(Float64Array);
      expect(api.echoIds(new Uint32Array([7]))).to.be.instanceOf(Uint32Array);
      const b = api.echoBlob({ data: new Uint8Array([1]), nums: new Uint16Array([2]), big: new BigInt64Array([3n]) }) as Record<string, unknown>;
      expect(b.nums).to.be.instanceOf(Uint16Array);
      expect(b.big).to.be.instanceOf(BigInt64Array);
    });

    it('a plain array given for list<u32> is read as its numbers (jco 1.12 read it as bytes; the codec makes typed arrays all the same)', () => {
      expect([...(api.echoListU32([1, 2, 3]) as Uint32Array)]).to.deep.equal([1, 2, 3]);
    });

    it('list<bool>, list<char>, list<string> are plain arrays', () => {
      expect(api.echoListBool([true])).to.be.an('array');
      expect(api.echoListChar(['a'])).to.be.an('array');
      expect(api.echoListString(['a'])).to.be.an('array');
    });

    it('tuples are arrays', () => {
      expect(api.echoTuple([1, 'x', true])).to.deep.equal([1, 'x', true]);
    });

    it('record fields are lowerCamelCase properties (keywords kept, acronyms lowered)', () => {
      const rec = { name: 'n', age: 1, firstName: 'f', tags: [] };
      expect(api.echoRecord(rec)).to.deep.equal(rec);
      const t = { type: 1, class: 'c', list: true, getHttpStatus: 2, a1B2: 3 };
      expect(api.echoTricky(t)).to.deep.equal(t);
    });

    it('flags are an object of booleans keyed by lowerCamelCase names, every flag present on output', () => {
      expect(api.echoFlags({ execAll: true })).to.deep.equal({ read: false, write: false, execAll: true });
      expect(api.echoTrickyFlags({ type: true, getHttp: true })).to.deep.equal({ type: true, getHttp: true, x1: false });
      const out = api.echoMany({ flag32: true }) as Record<string, boolean>;
      expect(Object.keys(out)).to.have.length(32);
      expect(out.flag32).to.equal(true);
    });

    it('enum cases are their WIT names', () => {
      expect(api.echoEnum('light-blue')).to.equal('light-blue');
      expect(() => api.echoEnum('purple')).to.throw(TypeError);
    });

    it('variants are {tag, val} with WIT case names; no val key for a case without payload', () => {
      expect(api.echoVariant({ tag: 'named-point', val: { name: 'n', age: 1, firstName: 'f', tags: [] } })).to.deep.equal({
        tag: 'named-point',
        val: { name: 'n', age: 1, firstName: 'f', tags: [] },
      });
      const empty = api.echoVariant({ tag: 'empty' }) as object;
      expect(empty).to.deep.equal({ tag: 'empty' });
      expect(Object.keys(empty)).to.deep.equal(['tag']);
    });

    it('option<T> is undefined or the value; null is taken for none', () => {
      expect(api.echoOpt(undefined)).to.equal(undefined);
      expect(api.echoOpt(null)).to.equal(undefined);
      expect(api.echoOpt(5)).to.equal(5);
      expect(api.echoOptBytes(new Uint8Array([1]))).to.be.instanceOf(Uint8Array);
    });

    it('option<option<T>>: the outer option is tagged, the inner one nullable', () => {
      expect(api.echoOptOpt({ tag: 'none' })).to.deep.equal({ tag: 'none' });
      expect(api.echoOptOpt({ tag: 'some', val: undefined })).to.deep.equal({ tag: 'some', val: undefined });
      expect(api.echoOptOpt({ tag: 'some', val: 3 })).to.deep.equal({ tag: 'some', val: 3 });
    });

    it('option<option<option<T>>>: nullable, tagged, nullable (they alternate)', () => {
      expect(api.echoOpt3(undefined)).to.equal(undefined);
      expect(api.echoOpt3({ tag: 'none' })).to.deep.equal({ tag: 'none' });
      expect(api.echoOpt3({ tag: 'some', val: undefined })).to.deep.equal({ tag: 'some', val: undefined });
      expect(api.echoOpt3({ tag: 'some', val: 'x' })).to.deep.equal({ tag: 'some', val: 'x' });
    });

    it('nested results are {tag: ok|err, val}; val is undefined for _', () => {
      expect(api.echoNestedResult([{ tag: 'ok', val: 'a' }, { tag: 'err', val: 1 }])).to.deep.equal([
        { tag: 'ok', val: 'a' },
        { tag: 'err', val: 1 },
      ]);
      expect(api.echoResultBare([{ tag: 'ok' }])).to.deep.equal([{ tag: 'ok', val: undefined }]);
    });

    it('a top-level result returns T or throws a ComponentError whose payload is E', () => {
      expect(api.failIf('x')).to.equal('x');
      try {
        api.failIf('fail');
        expect.fail('should have thrown');
      } catch (e) {
        expect((e as Error).constructor.name).to.equal('ComponentError');
        expect((e as { payload: unknown }).payload).to.equal('failed: fail');
      }
      expect(api.check(true)).to.equal(undefined);
    });

    it('world-level functions are top-level exports; interfaces appear under their short and full names', () => {
      expect((exports.add as (a: number, b: number) => number)(2, 3)).to.equal(5);
      expect(exports['test:echo/api@0.1.0']).to.equal(exports.api);
    });
  });

  describe('the test loader', () => {
    it('serves WASI imports from preview2-shim', async () => {
      const bytes = await buildComponent({
        kind: 'wat',
        world: 'dice',
        wit: `package test:dice@0.1.0;
package wasi:random@0.2.3 { interface random { get-random-u64: func() -> u64; } }
world dice { import wasi:random/random@0.2.3; export roll: func() -> u64; }
`,
        wat: `(module
  (import "wasi:random/random@0.2.3" "get-random-u64" (func $random (result i64)))
  (func (export "roll") (result i64) (call $random))
  (memory (export "memory") 1))`,
      });
      const dice = await loadWithJco(bytes, 'dice');
      expect(dice.imports).to.deep.equal(['wasi:random/random']);
      const roll = (await dice.instantiate()).roll as () => bigint;
      expect(roll()).to.be.a('bigint');
      expect(roll()).to.not.equal(roll());
    });
  });
});
