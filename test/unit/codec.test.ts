// The WIT⇄JSON codec (docs/api.md §6), table by table, with hand-built types.
// The JS side of each row is jco 1.12's convention; codec-jco.test.ts checks
// those conventions against real glue.

import { expect } from 'chai';
import { CodecError, functionCodec, typeCodec } from '../../lib/wit/codec.js';
import { HandleMismatch, handleExpected, withHandleScope, type HandleScope, type HandleType } from '../../lib/wit/handles.js';
import { printType } from '../../lib/wit/print.js';
import type { WitFunction, WitType } from '../../lib/wit/types.js';
import { borrow, enumOf, fixedList, flags, func, future, list, named, option, originIn, own, prim, record, result, stream, tuple, variant } from '../support/wit-types.js';

const origin = originIn('acme:demo/types@1.0.0');

const u8 = prim('u8');
const u32 = prim('u32');
const u64 = prim('u64');
const s64 = prim('s64');
const str = prim('string');

const person = named(origin('person'), record({ name: str, age: u8 }));
const contact = named(origin('contact'), record({ 'first-name': str, 'phone-numbers': list(str), 'is-HTTP-ok': prim('bool') }));
const color = named(origin('color'), enumOf('red', 'green', 'blue'));
const perms = named(origin('perms'), flags('read', 'write', 'exec-all'));
const shape = named(origin('shape'), variant({ circle: prim('f64'), rect: tuple(prim('f64'), prim('f64')), empty: null }));

const roundTrip = (type: WitType, json: unknown) => typeCodec(type).encode(typeCodec(type).decode(json, 'x'));

/** [what, type, JSON, jco value, JSON out (when not the JSON in)] */
type Row = [string, WitType, unknown, unknown, unknown?];

const ROWS: Row[] = [
  // bool
  ['bool true', prim('bool'), true, true],
  ['bool false', prim('bool'), false, false],
  // small integers: bounds
  ['u8 0', u8, 0, 0],
  ['u8 255', u8, 255, 255],
  ['s8 -128', prim('s8'), -128, -128],
  ['s8 127', prim('s8'), 127, 127],
  ['u16 65535', prim('u16'), 65535, 65535],
  ['s16 -32768', prim('s16'), -32768, -32768],
  ['u32 max', u32, 4294967295, 4294967295],
  ['s32 min', prim('s32'), -2147483648, -2147483648],
  ['s32 max', prim('s32'), 2147483647, 2147483647],
  // 64-bit: numbers while exact, decimal strings beyond
  ['u64 0', u64, 0, 0n],
  ['u64 safe max', u64, 9007199254740991, 9007199254740991n],
  ['u64 2^53 as a string', u64, '9007199254740992', 9007199254740992n],
  ['u64 max as a string', u64, '18446744073709551615', 18446744073709551615n],
  ['u64 small as a string → number', u64, '42', 42n, 42],
  ['s64 min as a string', s64, '-9223372036854775808', -9223372036854775808n],
  ['s64 max as a string', s64, '9223372036854775807', 9223372036854775807n],
  ['s64 safe min', s64, -9007199254740991, -9007199254740991n],
  ['s64 -1', s64, -1, -1n],
  // floats
  ['f64', prim('f64'), 0.1, 0.1],
  ['f64 integer', prim('f64'), 3, 3],
  ['f64 max', prim('f64'), 1.7976931348623157e308, 1.7976931348623157e308],
  ['f64 "NaN"', prim('f64'), 'NaN', NaN],
  ['f64 "Infinity"', prim('f64'), 'Infinity', Infinity],
  ['f64 "-Infinity"', prim('f64'), '-Infinity', -Infinity],
  ['f32', prim('f32'), 1.5, 1.5],
  ['f32 "NaN"', prim('f32'), 'NaN', NaN],
  ['f32 "Infinity"', prim('f32'), 'Infinity', Infinity],
  ['f32 "-Infinity"', prim('f32'), '-Infinity', -Infinity],
  // char and string
  ['char ASCII', prim('char'), 'a', 'a'],
  ['char outside the BMP', prim('char'), '😀', '😀'],
  ['char NUL', prim('char'), '\u0000', '\u0000'],
  ['string empty', str, '', ''],
  ['string with a surrogate pair', str, 'a😀b', 'a😀b'],
  // list<u8>
  ['list<u8> empty', list(u8), '', new Uint8Array()],
  ['list<u8> base64', list(u8), 'aGVsbG8=', new Uint8Array([104, 101, 108, 108, 111])],
  ['list<u8> base64 without padding', list(u8), 'aGk', new Uint8Array([104, 105]), 'aGk='],
  ['list<u8> URL-safe base64', list(u8), '-_8=', new Uint8Array([0xfb, 0xff]), '+/8='],
  ['list<u8> as an array', list(u8), [0, 255], new Uint8Array([0, 255]), 'AP8='],
  ['list<u8> as an empty array', list(u8), [], new Uint8Array(), ''],
  // numeric lists are typed arrays in jco
  ['list<u32>', list(u32), [0, 4294967295], new Uint32Array([0, 4294967295])],
  ['list<u32> empty', list(u32), [], new Uint32Array()],
  ['list<s8>', list(prim('s8')), [-128, 127], new Int8Array([-128, 127])],
  ['list<u16>', list(prim('u16')), [65535], new Uint16Array([65535])],
  ['list<s16>', list(prim('s16')), [-32768], new Int16Array([-32768])],
  ['list<s32>', list(prim('s32')), [-1], new Int32Array([-1])],
  ['list<u64>', list(u64), ['18446744073709551615', 1], new BigUint64Array([18446744073709551615n, 1n])],
  ['list<s64>', list(s64), ['-9223372036854775808', -1], new BigInt64Array([-9223372036854775808n, -1n])],
  ['list<f32>', list(prim('f32')), [1.5, 'NaN', '-Infinity'], new Float32Array([1.5, NaN, -Infinity])],
  ['list<f64>', list(prim('f64')), [0.1, 'Infinity'], new Float64Array([0.1, Infinity])],
  ['list<id> (an alias of u32)', list(named(origin('id'), prim('u32'))), [7], new Uint32Array([7])],
  // other lists are arrays
  ['list<string>', list(str), ['a', ''], ['a', '']],
  ['list<string> empty', list(str), [], []],
  ['list<bool>', list(prim('bool')), [true, false], [true, false]],
  ['list<char>', list(prim('char')), ['a', '😀'], ['a', '😀']],
  ['list<list<u8>>', list(list(u8)), ['AQ==', ''], [new Uint8Array([1]), new Uint8Array()]],
  ['list<person>', list(person), [{ name: 'a', age: 1 }], [{ name: 'a', age: 1 }]],
  // fixed-length lists and tuples
  ['list<u8, 2>', fixedList(u8, 2), [1, 2], [1, 2]],
  ['list<u64, 2>', fixedList(u64, 2), ['18446744073709551615', 0], [18446744073709551615n, 0n]],
  ['tuple<u32, string, bool>', tuple(u32, str, prim('bool')), [1, 'x', true], [1, 'x', true]],
  ['tuple<u64, list<u8>>', tuple(u64, list(u8)), ['18446744073709551615', 'AQ=='], [18446744073709551615n, new Uint8Array([1])]],
  // records: kebab-case in JSON, camelCase in jco
  ['record person', person, { name: 'Ada', age: 36 }, { name: 'Ada', age: 36 }],
  [
    'record with kebab-case fields',
    contact,
    { 'first-name': 'Ada', 'phone-numbers': [], 'is-HTTP-ok': true },
    { firstName: 'Ada', phoneNumbers: [], isHttpOk: true },
  ],
  ['record with an option field', named(origin('r'), record({ nick: option(str) })), { nick: null }, { nick: null }],
  ['empty record', named(origin('nothing'), record({})), {}, {}],
  // options
  ['option<u32> none', option(u32), null, null],
  ['option<u32> some', option(u32), 0, 0],
  ['option<string> some("")', option(str), '', ''],
  ['option<list<u8>>', option(list(u8)), 'AQ==', new Uint8Array([1])],
  ['option<option<u32>> none', option(option(u32)), null, { tag: 'none' }],
  ['option<option<u32>> some(none)', option(option(u32)), { some: null }, { tag: 'some', val: null }],
  ['option<option<u32>> some(some(7))', option(option(u32)), { some: 7 }, { tag: 'some', val: 7 }],
  ['option<option<option<string>>> none', option(option(option(str))), null, null],
  ['option<option<option<string>>> some(none)', option(option(option(str))), { some: null }, { tag: 'none' }],
  ['option<option<option<string>>> some(some(none))', option(option(option(str))), { some: { some: null } }, { tag: 'some', val: null }],
  ['option<option<option<string>>> some(some(some(x)))', option(option(option(str))), { some: { some: 'x' } }, { tag: 'some', val: 'x' }],
  ['option<option<u64>> some(some(max))', option(option(u64)), { some: '18446744073709551615' }, { tag: 'some', val: 18446744073709551615n }],
  // nested results
  ['result<string, u32> ok', result(str, u32), { ok: 'yes' }, { tag: 'ok', val: 'yes' }],
  ['result<string, u32> err', result(str, u32), { err: 4 }, { tag: 'err', val: 4 }],
  ['result<_, string> ok', result(null, str), { ok: null }, { tag: 'ok', val: undefined }],
  ['result ok', result(null, null), { ok: null }, { tag: 'ok', val: undefined }],
  ['result err', result(null, null), { err: null }, { tag: 'err', val: undefined }],
  ['result<option<u32>, u8> ok(none)', result(option(u32), u8), { ok: null }, { tag: 'ok', val: null }],
  ['result<u64, list<u8>> err', result(u64, list(u8)), { err: 'AQ==' }, { tag: 'err', val: new Uint8Array([1]) }],
  ['result<result<u8, u8>, u8>', result(result(u8, u8), u8), { ok: { err: 1 } }, { tag: 'ok', val: { tag: 'err', val: 1 } }],
  // variants, enums, flags
  ['variant case with payload', shape, { tag: 'circle', val: 1.5 }, { tag: 'circle', val: 1.5 }],
  ['variant case with a tuple payload', shape, { tag: 'rect', val: [1, 2] }, { tag: 'rect', val: [1, 2] }],
  ['variant case without payload', shape, { tag: 'empty' }, { tag: 'empty' }],
  ['variant case without payload, "val": null', shape, { tag: 'empty', val: null }, { tag: 'empty' }, { tag: 'empty' }],
  [
    'variant with a u64 payload',
    variant({ big: u64 }),
    { tag: 'big', val: '18446744073709551615' },
    { tag: 'big', val: 18446744073709551615n },
  ],
  ['enum', color, 'green', 'green'],
  ['flags none', perms, [], { read: false, write: false, execAll: false }],
  ['flags some', perms, ['read', 'exec-all'], { read: true, write: false, execAll: true }],
  ['flags out of order → declaration order', perms, ['exec-all', 'read'], { read: true, write: false, execAll: true }, ['read', 'exec-all']],
  ['flags repeated', perms, ['write', 'write'], { read: false, write: true, execAll: false }, ['write']],
];

/** jco values whose JSON form is not simply the one decoded above. */
const ENCODE_ONLY: [string, WitType, unknown, unknown][] = [
  ['u64 beyond 2^53 → string', u64, 9007199254740993n, '9007199254740993'],
  ['u64 within 2^53 → number', u64, 9007199254740991n, 9007199254740991],
  ['s64 below -(2^53-1) → string', s64, -9007199254740992n, '-9007199254740992'],
  ['f32 0.1 as jco returns it → 0.1', prim('f32'), Math.fround(0.1), 0.1],
  ['f32 max → shortest', prim('f32'), Math.fround(3.4028234663852886e38), 3.4028235e38],
  ['f32 smallest subnormal', prim('f32'), Math.fround(1e-45), 1e-45],
  ['f32 2^24', prim('f32'), 16777216, 16777216],
  ['f32 NaN', prim('f32'), NaN, 'NaN'],
  ['f64 -Infinity', prim('f64'), -Infinity, '-Infinity'],
  ['list<f64> non-finite', list(prim('f64')), new Float64Array([NaN, Infinity, 1]), ['NaN', 'Infinity', 1]],
  ['option<u32> undefined → null', option(u32), undefined, null],
  ['option<option<u32>> some(undefined)', option(option(u32)), { tag: 'some', val: undefined }, { some: null }],
  ['option<option<option<string>>> undefined', option(option(option(str))), undefined, null],
  ['flags: every flag present as jco returns them', perms, { read: false, write: true, execAll: false }, ['write']],
  ['variant without payload, as jco returns it', shape, { tag: 'empty' }, { tag: 'empty' }],
  ['list<u8> as a plain array', list(u8), [1, 2], 'AQI='],
  ['list<u32> as a plain array', list(u32), [1, 2], [1, 2]],
];

/** [type, JSON, the exact message (the path starts at "x" unless the row says otherwise)] */
type ErrorRow = [WitType, unknown, string, string?];

const ERRORS: ErrorRow[] = [
  [prim('bool'), 'true', 'x: expected bool, got "true"'],
  [prim('bool'), 0, 'x: expected bool, got 0'],
  [u8, 256, 'x: expected u8 (0..255), got 256'],
  [u8, -1, 'x: expected u8 (0..255), got -1'],
  [u8, 1.5, 'x: expected u8 (0..255), got 1.5'],
  [u8, '1', 'x: expected u8 (0..255), got "1"'],
  [u8, null, 'x: expected u8 (0..255), got null'],
  [prim('s8'), -129, 'x: expected s8 (-128..127), got -129'],
  [prim('s8'), 128, 'x: expected s8 (-128..127), got 128'],
  [prim('u16'), 65536, 'x: expected u16 (0..65535), got 65536'],
  [prim('s16'), -32769, 'x: expected s16 (-32768..32767), got -32769'],
  [u32, 4294967296, 'x: expected u32 (0..4294967295), got 4294967296'],
  [u32, -1, 'x: expected u32 (0..4294967295), got -1'],
  [prim('s32'), 2147483648, 'x: expected s32 (-2147483648..2147483647), got 2147483648'],
  [
    u64,
    2 ** 53,
    'x: expected u64 (0..18446744073709551615), got 9007199254740992 (a number beyond ±(2^53−1) is not exact in JSON: send it as a decimal string)',
  ],
  [
    s64,
    -(2 ** 60),
    'x: expected s64 (-9223372036854775808..9223372036854775807), got -1152921504606847000 (a number beyond ±(2^53−1) is not exact in JSON: send it as a decimal string)',
  ],
  [u64, -1, 'x: expected u64 (0..18446744073709551615), got -1'],
  [u64, '-1', 'x: expected u64 (0..18446744073709551615), got "-1"'],
  [u64, '18446744073709551616', 'x: expected u64 (0..18446744073709551615), got "18446744073709551616"'],
  [s64, '9223372036854775808', 'x: expected s64 (-9223372036854775808..9223372036854775807), got "9223372036854775808"'],
  [s64, '-9223372036854775809', 'x: expected s64 (-9223372036854775808..9223372036854775807), got "-9223372036854775809"'],
  [u64, 1.5, 'x: expected u64 (0..18446744073709551615), got 1.5'],
  [u64, '1.5', 'x: expected u64 (0..18446744073709551615), got "1.5"'],
  [u64, '', 'x: expected u64 (0..18446744073709551615), got ""'],
  [u64, ' 1', 'x: expected u64 (0..18446744073709551615), got " 1"'],
  [u64, '0x10', 'x: expected u64 (0..18446744073709551615), got "0x10"'],
  [prim('f64'), 'nan', 'x: expected f64, got "nan" (a number, or "NaN", "Infinity", "-Infinity")'],
  [prim('f64'), null, 'x: expected f64, got null'],
  [prim('f32'), 1e39, 'x: expected f32, got 1e+39 (beyond the range of f32)'],
  [prim('char'), 'ab', 'x: expected char (one Unicode scalar value), got "ab"'],
  [prim('char'), '', 'x: expected char (one Unicode scalar value), got ""'],
  [prim('char'), '\ud800', 'x: expected char (one Unicode scalar value), got "\\ud800"'],
  [prim('char'), '\udc00\ud800', 'x: expected char (one Unicode scalar value), got "\\udc00\\ud800"'],
  [prim('char'), '😀a', 'x: expected char (one Unicode scalar value), got "😀a"'],
  [prim('char'), 97, 'x: expected char (one Unicode scalar value), got 97'],
  [str, 5, 'x: expected string, got 5'],
  [str, 'a\udc00', 'x: expected string, got "a\\udc00" (contains a lone surrogate, which is not a Unicode scalar value)'],
  [list(str), ['a', 'b', 5], 'tags[2]: expected string, got 5', 'tags'],
  [list(str), 'abc', 'x: expected list<string>, got "abc"'],
  [list(u8), 'aGVsbG8!', 'x: expected list<u8>, got "aGVsbG8!" (not valid base64)'],
  [list(u8), 'a', 'x: expected list<u8>, got "a" (not valid base64)'],
  [list(u8), 'aGk=x', 'x: expected list<u8>, got "aGk=x" (not valid base64)'],
  [list(u8), 'aG+_', 'x: expected list<u8>, got "aG+_" (not valid base64)'],
  [list(u8), [1, 256], 'x[1]: expected u8 (0..255), got 256'],
  [list(u8), [1, '2'], 'x[1]: expected u8 (0..255), got "2"'],
  [list(u8), 5, 'x: expected list<u8>, got 5 (base64 text or an array of numbers 0..255)'],
  [list(u32), [0, -1], 'x[1]: expected u32 (0..4294967295), got -1'],
  [list(u64), [2 ** 53], 'x[0]: expected u64 (0..18446744073709551615), got 9007199254740992 (a number beyond ±(2^53−1) is not exact in JSON: send it as a decimal string)'],
  [list(prim('f32')), [1, 'x'], 'x[1]: expected f32, got "x" (a number, or "NaN", "Infinity", "-Infinity")'],
  [list(list(u32)), [[1], [2, 3.5]], 'x[1][1]: expected u32 (0..4294967295), got 3.5'],
  [fixedList(u8, 2), [1], 'x: expected list<u8, 2>, got [1] (1 item instead of 2)'],
  [tuple(u32, str), [1], 'x: expected tuple<u32, string>, got [1] (1 item instead of 2)'],
  [tuple(u32, str), [1, 'a', true], 'x: expected tuple<u32, string>, got [1,"a",true] (3 items instead of 2)'],
  [tuple(u32, str), [1, 2], 'x[1]: expected string, got 2'],
  [tuple(u32, str), { 0: 1, 1: 'a' }, 'x: expected tuple<u32, string>, got {"0":1,"1":"a"}'],
  [person, { name: 'a', age: 300 }, 'p.age: expected u8 (0..255), got 300', 'p'],
  [person, { nmae: 'a', age: 3 }, 'p: unknown field "nmae" in record person (fields: name, age)', 'p'],
  [person, { name: 'a', age: 3, extra: 1 }, 'p: unknown field "extra" in record person (fields: name, age)', 'p'],
  [person, { name: 'a' }, 'p: missing field "age" in record person', 'p'],
  [person, { name: 'a', age: null }, 'p.age: expected u8 (0..255), got null', 'p'],
  [person, ['a', 3], 'p: expected record person, got ["a",3]', 'p'],
  [person, null, 'p: expected record person, got null', 'p'],
  [contact, { first_name: 'a' }, 'x: unknown field "first_name" in record contact (fields: first-name, phone-numbers, is-HTTP-ok)'],
  [contact, { firstName: 'a' }, 'x: unknown field "firstName" in record contact (fields: first-name, phone-numbers, is-HTTP-ok)'],
  [named(origin('r'), record({ a: u8 })), { a: 1, ['__proto__']: 1 }, 'x: unknown field "__proto__" in record r (fields: a)'],
  [option(u32), 'x', 'x: expected u32 (0..4294967295), got "x"'],
  [option(option(u32)), 7, 'x: expected option<option<u32>>, got 7 (null or {"some": ...})'],
  [option(option(u32)), { some: 'x' }, 'x.some: expected u32 (0..4294967295), got "x"'],
  [option(option(u32)), { some: 1, other: 2 }, 'x: expected option<option<u32>>, got {"some":1,"other":2} (null or {"some": ...})'],
  [option(option(option(str))), { some: { some: 5 } }, 'x.some.some: expected string, got 5'],
  [option(option(option(str))), { some: 'a' }, 'x.some: expected option<option<string>>, got "a" (null or {"some": ...})'],
  [result(str, u32), 'ok', 'x: expected result<string, u32>, got "ok" ({"ok": ...} or {"err": ...})'],
  [result(str, u32), { ok: 'a', err: 1 }, 'x: expected result<string, u32>, got {"ok":"a","err":1} ({"ok": ...} or {"err": ...})'],
  [result(str, u32), { tag: 'ok', val: 'a' }, 'x: expected result<string, u32>, got {"tag":"ok","val":"a"} ({"ok": ...} or {"err": ...})'],
  [result(str, u32), { ok: 5 }, 'x.ok: expected string, got 5'],
  [result(str, u32), { err: -1 }, 'x.err: expected u32 (0..4294967295), got -1'],
  [result(null, str), { ok: 1 }, 'x.ok: expected null (no payload), got 1'],
  [shape, { tag: 'triangle' }, 's: unknown case "triangle" in variant shape (cases: circle, rect, empty)', 's'],
  [shape, { tag: 'circle' }, 's: missing "val" for case "circle" of variant shape', 's'],
  [shape, { tag: 'circle', val: 'x' }, 's.val: expected f64, got "x" (a number, or "NaN", "Infinity", "-Infinity")', 's'],
  [shape, { tag: 'rect', val: [1] }, 's.val: expected tuple<f64, f64>, got [1] (1 item instead of 2)', 's'],
  [shape, { tag: 'empty', val: 1 }, 's: case "empty" of variant shape has no payload, got "val": 1', 's'],
  [shape, { tag: 'circle', val: 1, colour: 'red' }, 's: unknown field "colour" in variant shape (expected {"tag": "<case>", "val": ...})', 's'],
  [shape, 'circle', 's: expected variant shape, got "circle" ({"tag": "<case>", "val": ...})', 's'],
  [shape, { circle: 1 }, 's: expected variant shape, got {"circle":1} ({"tag": "<case>", "val": ...})', 's'],
  [color, 'purple', 'color: expected one of the enum cases red, green, blue, got "purple"', 'color'],
  [color, 0, 'color: expected one of the enum cases red, green, blue, got 0', 'color'],
  [perms, ['read', 'admin'], 'f[1]: unknown flag "admin" in flags perms (flags: read, write, exec-all)', 'f'],
  [perms, [1], 'f[0]: expected a flag name of flags perms, got 1', 'f'],
  [perms, 'read', 'f: expected flags perms, got "read" (an array of flag names)', 'f'],
  [perms, { read: true }, 'f: expected flags perms, got {"read":true} (an array of flag names)', 'f'],
];

describe('WIT ⇄ JSON codec', () => {
  describe('both directions, every row of docs/api.md §6', () => {
    for (const [what, type, json, js, out] of ROWS) {
      it(`${what}: ${JSON.stringify(json)}`, () => {
        const codec = typeCodec(type);
        // decode takes its JSON over (it reuses its arrays): give it a copy.
        expect(codec.decode(structuredClone(json), 'x'), 'decode').to.deep.equal(js);
        const encoded = codec.encode(js);
        expect(encoded, 'encode').to.deep.equal(out === undefined ? json : out);
        expect(JSON.parse(JSON.stringify(encoded)), 'JSON-ready').to.deep.equal(encoded);
      });
    }
  });

  describe('encode only (jco values whose JSON differs from what came in)', () => {
    for (const [what, type, js, json] of ENCODE_ONLY) {
      it(what, () => expect(typeCodec(type).encode(js)).to.deep.equal(json));
    }
  });

  describe('error messages', () => {
    for (const [type, json, message, path = 'x'] of ERRORS) {
      it(message, () => {
        expect(() => typeCodec(type).decode(json, path))
          .to.throw(CodecError)
          .with.property('message', message);
      });
    }

    it('carries the path and the expected WIT type', () => {
      try {
        typeCodec(person).decode({ name: 'a', age: 300 }, 'p');
        expect.fail('should have thrown');
      } catch (e) {
        expect(e).to.be.instanceOf(CodecError);
        expect(e).to.be.instanceOf(Error);
        expect((e as CodecError).path).to.equal('p.age');
        expect((e as CodecError).expected).to.equal('u8 (0..255)');
        expect((e as CodecError).name).to.equal('CodecError');
      }
    });

    it('names deep paths: a.b[3].c', () => {
      const inner = named(origin('inner'), record({ c: u64 }));
      const outer = named(origin('outer'), record({ b: list(inner) }));
      expect(() => typeCodec(outer).decode({ b: [{ c: 1 }, { c: '2' }, { c: 3 }, { c: 'x' }] }, 'a'))
        .to.throw(CodecError)
        .with.property('path', 'a.b[3].c');
    });

    it('names paths through options, results and variants', () => {
      const t = list(option(option(result(named(origin('r'), record({ v: shape })), str))));
      expect(() => typeCodec(t).decode([null, { some: { ok: { v: { tag: 'rect', val: [1, 'y'] } } } }], 'x'))
        .to.throw(CodecError)
        .with.property('path', 'x[1].some.ok.v.val[1]');
    });

    it('shows at most about 60 characters of the offending value', () => {
      const long = 'x'.repeat(200);
      let message = '';
      try {
        typeCodec(u8).decode(long, 'x');
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).to.equal(`x: expected u8 (0..255), got "${'x'.repeat(56)}...`);
      const big = Array.from({ length: 100_000 }, (_, i) => i);
      expect(() => typeCodec(str).decode(big, 'x'))
        .to.throw(CodecError)
        .with.property('message')
        .that.matches(/^x: expected string, got \[0,1,2,.{40,60}\.\.\.$/);
    });

    it('does not cut a surrogate pair in half', () => {
      const emoji = '😀'.repeat(40);
      try {
        typeCodec(u8).decode(emoji, 'x');
      } catch (e) {
        expect((e as Error).message).to.satisfy((m: string) => (m as string & { isWellFormed(): boolean }).isWellFormed());
      }
    });

    it('a field that Object.prototype also has is read only from the JSON itself', () => {
      const t = named(origin('r'), record({ constructor: u8 }));
      expect(typeCodec(t).decode({ constructor: 1 }, 'x')).to.deep.equal({ constructor: 1 });
      expect(() => typeCodec(t).decode({}, 'x'))
        .to.throw(CodecError)
        .with.property('message', 'x: missing field "constructor" in record r');
    });
  });

  describe('round trips keep values exact', () => {
    it('u64 max and s64 min', () => {
      expect(roundTrip(u64, '18446744073709551615')).to.equal('18446744073709551615');
      expect(roundTrip(s64, '-9223372036854775808')).to.equal('-9223372036854775808');
      expect(roundTrip(s64, '-9007199254740992')).to.equal('-9007199254740992');
      expect(roundTrip(s64, -9007199254740991)).to.equal(-9007199254740991);
    });

    it('nested options at three levels', () => {
      const t = option(option(option(u8)));
      for (const json of [null, { some: null }, { some: { some: null } }, { some: { some: 0 } }]) {
        expect(roundTrip(t, json)).to.deep.equal(json);
      }
    });
  });

  describe('hands JSON over without copying where jco takes it as is', () => {
    it('list<string>, records whose fields jco spells alike, variants, enums', () => {
      const strings = ['a', 'b'];
      expect(typeCodec(list(str)).decode(strings, 'x')).to.equal(strings);
      const ada = { name: 'Ada', age: 36 };
      expect(typeCodec(person).decode(ada, 'x')).to.equal(ada);
      const identity = variant({ id: u32, name: str, anonymous: null });
      const id = { tag: 'id', val: 7 };
      expect(typeCodec(identity).decode(id, 'x')).to.equal(id);
      expect(typeCodec(color).decode('red', 'x')).to.equal('red');
      const people = [ada];
      expect(typeCodec(list(person)).decode(people, 'x')).to.equal(people);
    });

    it('copies where the JS form differs', () => {
      const c = { 'first-name': 'a', 'phone-numbers': [], 'is-HTTP-ok': false };
      expect(typeCodec(contact).decode(c, 'x')).to.not.equal(c);
      const bigs = ['1'];
      expect(typeCodec(list(u64)).decode(bigs, 'x')).to.be.instanceOf(BigUint64Array);
    });

    it('decodes a list whose items convert in place: its JSON array holds the values afterwards', () => {
      const json = [[1], [2, 3]];
      const decoded = typeCodec(list(list(u32))).decode(json, 'x') as Uint32Array[];
      expect(decoded).to.equal(json);
      expect(decoded.map((l) => [l.constructor.name, ...l])).to.deep.equal([['Uint32Array', 1], ['Uint32Array', 2, 3]]);
    });

    it('answers jco values as is where JSON takes them', () => {
      const strings = ['a'];
      expect(typeCodec(list(str)).encode(strings)).to.equal(strings);
    });
  });

  describe('types JSON cannot carry', () => {
    const cases: [string, WitType, RegExp][] = [
      ['stream', stream(u8), /stream<u8>: a stream cannot be carried in JSON/],
      ['future', future(null), /future: a future cannot be carried in JSON/],
      ['error-context', prim('error-context'), /error-context/],
      ['a stream deep inside', list(named(origin('holder'), record({ h: stream(u8) }))), /stream<u8>: a stream/],
    ];
    for (const [what, type, message] of cases) {
      it(what, () => {
        expect(() => typeCodec(type)).to.throw(Error, message);
        expect(() => typeCodec(type)).to.not.throw(CodecError);
        expect(() => functionCodec(func('f', { x: type }, null))).to.throw(Error, message);
        expect(() => functionCodec(func('f', {}, type))).to.throw(Error, message);
      });
    }
  });

  describe('handles', () => {
    // A scope as a handle table would be: ids it issued resolve to their objects, others are unknown, `gone` ended.
    class Scope implements HandleScope {
      readonly objects = new Map<string, unknown>([['h1', { n: 1 }]]);
      readonly resolved: [string, string][] = [];
      resolve(id: string, t: HandleType): unknown {
        this.resolved.push([id, t.kind]);
        if (id === 'gone') throw new HandleMismatch('ended', handleExpected(t), `handle ${id} was dropped`);
        if (!this.objects.has(id)) throw new HandleMismatch('unknown', handleExpected(t), `no handle ${id}`);
        return this.objects.get(id);
      }
      issue(value: unknown): string {
        const id = `h${this.objects.size + 1}`;
        this.objects.set(id, value);
        return id;
      }
    }
    const blob = own('blob');
    const holder = named(origin('holder'), record({ h: borrow('blob'), more: option(own('blob')) }));

    it('decodes {"$handle": id} at any depth to what the scope resolves, own and borrow alike', () => {
      const scope = new Scope();
      const decoded = withHandleScope(scope, () => typeCodec(list(holder)).decode([{ h: { $handle: 'h1' }, more: { $handle: 'h1' } }], ''));
      expect(decoded).to.deep.equal([{ h: { n: 1 }, more: { n: 1 } }]);
      expect(scope.resolved).to.deep.equal([
        ['h1', 'borrow'],
        ['h1', 'own'],
      ]);
    });

    it('encodes a returned resource as a new handle the scope issues', () => {
      const scope = new Scope();
      const encoded = withHandleScope(scope, () => typeCodec(tuple(blob, option(blob))).encode([{ n: 2 }, { n: 3 }]));
      expect(encoded).to.deep.equal([{ $handle: 'h2' }, { $handle: 'h3' }]);
      expect(scope.objects.get('h3')).to.deep.equal({ n: 3 });
    });

    const shapes: [string, unknown][] = [
      ['a bare id', 'h1'],
      ['null', null],
      ['an array', ['h1']],
      ['a number id', { $handle: 1 }],
      ['another key beside', { $handle: 'h1', x: 1 }],
      ['another key alone', { handle: 'h1' }],
    ];
    for (const [what, json] of shapes) {
      it(`refuses ${what} where a handle goes, with the path (400, not a handle problem)`, () => {
        try {
          withHandleScope(new Scope(), () => functionCodec(func('f', { carts: list(blob) }, null)).decodeArgs([[json]]));
          expect.fail('decoded');
        } catch (e) {
          expect(e).to.be.instanceOf(CodecError);
          expect((e as CodecError).path).to.equal('carts[0]');
          expect((e as CodecError).message).to.include('a handle {"$handle": "<id>"} to a blob');
          expect((e as CodecError).handle).to.equal(undefined);
        }
      });
    }

    it('marks an unknown or ended handle, with its path, for a 404 or a 410', () => {
      const codec = functionCodec(func('f', { a: blob, b: holder }, null));
      const fail = (args: unknown[]) => {
        try {
          withHandleScope(new Scope(), () => codec.decodeArgs(args));
        } catch (e) {
          return e as CodecError;
        }
        throw new Error('decoded');
      };
      expect(fail([{ $handle: 'nope' }, { h: { $handle: 'h1' } }])).to.include({ path: 'a', handle: 'unknown' });
      expect(fail([{ $handle: 'h1' }, { h: { $handle: 'gone' } }])).to.include({ path: 'b.h', handle: 'ended' });
    });

    it('needs a scope: a handle met outside one is a programming error, not a client\'s', () => {
      expect(() => typeCodec(blob).decode({ $handle: 'h1' }, '')).to.throw(Error, /outside a handle scope/);
      expect(() => typeCodec(blob).encode({})).to.throw(Error, /outside a handle scope/);
    });
  });

  describe('printType', () => {
    const names: [WitType, string][] = [
      [u8, 'u8'],
      [list(u8), 'list<u8>'],
      [fixedList(u32, 4), 'list<u32, 4>'],
      [option(person), 'option<person>'],
      [result(null, str), 'result<_, string>'],
      [result(u32, null), 'result<u32>'],
      [result(null, null), 'result'],
      [tuple(u8, str), 'tuple<u8, string>'],
      [named(origin('id'), prim('u32')), 'id'],
      [borrow('blob'), 'borrow<blob>'],
      // An exported resource's handles carry the resource's origin, which names no type of theirs.
      [named(origin('blob'), borrow('blob')), 'borrow<blob>'],
      [list(named(origin('blob'), own('blob'))), 'list<blob>'],
      [stream(u8), 'stream<u8>'],
      [enumOf('a', 'b'), 'enum { a, b }'],
    ];
    for (const [type, name] of names) it(name, () => expect(printType(type)).to.equal(name));
  });

  describe('functionCodec', () => {
    const add = func('add', { a: u32, b: u32 }, u32);
    const nothing = func('nothing', {}, null);

    it('takes an object keyed by parameter names, or an array in order', () => {
      const codec = functionCodec(add);
      expect(codec.decodeArgs({ a: 1, b: 2 })).to.deep.equal([1, 2]);
      expect(codec.decodeArgs({ b: 2, a: 1 })).to.deep.equal([1, 2]);
      expect(codec.decodeArgs([1, 2])).to.deep.equal([1, 2]);
    });

    it('converts each argument', () => {
      const codec = functionCodec(func('f', { n: u64, p: contact }, null));
      expect(codec.decodeArgs({ n: '18446744073709551615', p: { 'first-name': 'a', 'phone-numbers': ['1'], 'is-HTTP-ok': true } })).to.deep.equal([
        18446744073709551615n,
        { firstName: 'a', phoneNumbers: ['1'], isHttpOk: true },
      ]);
    });

    const argErrors: [WitFunction, unknown, string, string][] = [
      [add, { a: 1 }, 'b', 'b: missing parameter "b" (u32)'],
      [add, { a: 1, b: 2, c: 3 }, 'c', 'c: unknown parameter "c" (parameters: a, b)'],
      [add, { a: 1, bb: 2 }, 'bb', 'bb: unknown parameter "bb" (parameters: a, b)'],
      [add, { a: 1, b: 300.5 }, 'b', 'b: expected u32 (0..4294967295), got 300.5'],
      [add, [1], '', 'expected 2 arguments (a: u32, b: u32), got 1'],
      [add, [1, 2, 3], '', 'expected 2 arguments (a: u32, b: u32), got 3'],
      [add, [1, -2], 'b', 'b: expected u32 (0..4294967295), got -2'],
      [add, undefined, '', 'expected an object keyed by the parameter names (a, b) or an array of the 2 arguments, got nothing'],
      [add, 'a=1', '', 'expected an object keyed by the parameter names (a, b) or an array of the 2 arguments, got "a=1"'],
      [add, null, '', 'expected an object keyed by the parameter names (a, b) or an array of the 2 arguments, got null'],
      [nothing, { x: 1 }, 'x', 'x: unknown parameter "x" (nothing takes no parameters)'],
      [nothing, [1], '', 'expected no arguments, got 1'],
      [nothing, 5, '', 'expected no body, {} or [], got 5'],
    ];
    for (const [fn, body, path, message] of argErrors) {
      it(`${fn.name}(${JSON.stringify(body) ?? 'no body'}): ${message}`, () => {
        expect(() => functionCodec(fn).decodeArgs(body))
          .to.throw(CodecError)
          .that.satisfies((e: CodecError) => e.message === message && e.path === path);
      });
    }

    it('a function without parameters takes no body, {} or []', () => {
      const codec = functionCodec(nothing);
      expect(codec.decodeArgs(undefined)).to.deep.equal([]);
      expect(codec.decodeArgs({})).to.deep.equal([]);
      expect(codec.decodeArgs([])).to.deep.equal([]);
    });

    it('a function without result answers null', () => {
      const codec = functionCodec(nothing);
      expect(codec.encodeResult(undefined)).to.equal(null);
    });

    it('encodes the result', () => {
      expect(functionCodec(func('f', {}, u64)).encodeResult(2n ** 64n - 1n)).to.equal('18446744073709551615');
      expect(functionCodec(func('f', {}, option(str))).encodeResult(undefined)).to.equal(null);
      expect(functionCodec(func('f', {}, list(u8))).encodeResult(new Uint8Array([1, 2]))).to.equal('AQI=');
    });

    it('a top-level result<T, E>: T from the return value, E from the ComponentError payload', () => {
      const codec = functionCodec(func('f', {}, result(u64, list(str))));
      expect(codec.encodeResult(2n ** 60n)).to.equal('1152921504606846976');
      expect(codec.encodeError(['a', 'b'])).to.deep.equal(['a', 'b']);
    });

    it('result<_, E> and result<T>: null for the missing side', () => {
      const unitOk = functionCodec(func('f', {}, result(null, str)));
      expect(unitOk.encodeResult(undefined)).to.equal(null);
      expect(unitOk.encodeError('bad')).to.equal('bad');
      const unitErr = functionCodec(func('f', {}, result(person, null)));
      expect(unitErr.encodeResult({ name: 'a', age: 1 })).to.deep.equal({ name: 'a', age: 1 });
      expect(unitErr.encodeError(undefined)).to.equal(null);
    });

    it('a result nested in the top-level type is not thrown', () => {
      const codec = functionCodec(func('f', {}, option(result(str, str))));
      expect(codec.encodeResult({ tag: 'err', val: 'e' })).to.deep.equal({ err: 'e' });
    });
  });
});
