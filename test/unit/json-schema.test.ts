// The JSON Schemas must describe exactly what the codec accepts: for each
// sample, the codec's verdict and a real JSON Schema validator's agree.

import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CodecError, functionCodec, typeCodec } from '../../lib/wit/codec.js';
import { requestSchema, responseSchema, typeSchema } from '../../lib/wit/json-schema.js';
import type { WitType } from '../../lib/wit/types.js';
import { enumOf, flags, func, list, named, option, prim, record, result, tuple, variant } from '../support/wit-types.js';

const ajv = new Ajv2020({ strict: false });

const person = named({ interface: 'acme:x/y', name: 'person' }, record({ 'full-name': prim('string'), age: prim('u8') }));

const samples: [string, WitType, unknown[]][] = [
  ['u8', prim('u8'), [0, 255, 256, -1, 1.5, '1', null]],
  ['s8', prim('s8'), [-128, 127, -129]],
  ['u64', prim('u64'), [0, '18446744073709551615', '-1', 'x', 2 ** 60]],
  ['s64', prim('s64'), ['-9223372036854775808', -5, '1.5']],
  ['f64', prim('f64'), [1.5, 'NaN', 'Infinity', '-Infinity', 'nan', null]],
  ['char', prim('char'), ['a', '😀', 'ab', '']],
  ['bool', prim('bool'), [true, false, 0]],
  ['list<u8>', list(prim('u8')), ['AAEC', [0, 1, 255], [256], 5]],
  ['list<string>', list(prim('string')), [[], ['a'], [1]]],
  ['tuple', tuple(prim('u8'), prim('string')), [[1, 'a'], [1], [1, 'a', 2], ['a', 1]]],
  ['record', person, [{ 'full-name': 'A', age: 3 }, { 'full-name': 'A' }, { 'full-name': 'A', age: 3, x: 1 }, { fullName: 'A', age: 3 }]],
  ['option<u8>', option(prim('u8')), [null, 3, 300]],
  ['option<option<u8>>', option(option(prim('u8'))), [null, { some: null }, { some: 3 }, 3, { some: 300 }]],
  ['result<u8, string>', result(prim('u8'), prim('string')), [{ ok: 1 }, { err: 'x' }, { ok: 'x' }, { ok: 1, err: 'x' }]],
  ['result<_, string>', result(null, prim('string')), [{ ok: null }, { err: 'e' }, {}]],
  [
    'variant',
    named({ interface: '', name: 'shape' }, variant({ circle: prim('f64'), none: null })),
    [{ tag: 'circle', val: 1 }, { tag: 'none' }, { tag: 'square' }, { tag: 'circle' }],
  ],
  ['enum', enumOf('red', 'green'), ['red', 'blue', 1]],
  ['flags', flags('read', 'write'), [[], ['read', 'write'], ['exec']]],
];

function accepts(t: WitType, json: unknown): boolean {
  try {
    typeCodec(t).decode(json, 'x');
    return true;
  } catch (e) {
    if (e instanceof CodecError) return false;
    throw e;
  }
}

describe('JSON Schema of WIT types', () => {
  for (const [name, type, values] of samples) {
    it(`${name}: the request schema accepts exactly what the codec accepts`, () => {
      const validate = ajv.compile(typeSchema(type, 'request'));
      for (const value of values) {
        expect(validate(value), `${JSON.stringify(value)}`).to.equal(accepts(type, value));
      }
    });

    it(`${name}: what the codec outputs fits the response schema`, () => {
      const validate = ajv.compile(typeSchema(type, 'response'));
      const codec = typeCodec(type);
      for (const value of values.filter((v) => accepts(type, v))) {
        const out = codec.encode(codec.decode(value, 'x'));
        expect(validate(out), `${JSON.stringify(out)}: ${JSON.stringify(validate.errors)}`).to.equal(true);
      }
    });
  }

  it('names named types by their WIT name', () => {
    expect(typeSchema(person, 'request').title).to.equal('person');
  });

  it('describes request bodies by name and in order, and the response', () => {
    const fn = func('greet', { p: person }, prim('string'));
    const request = ajv.compile(requestSchema(fn));
    expect(request({ p: { 'full-name': 'A', age: 1 } })).to.equal(true);
    expect(request([{ 'full-name': 'A', age: 1 }])).to.equal(true);
    expect(request({ q: 1 })).to.equal(false);
    const response = ajv.compile(responseSchema(fn));
    expect(response({ result: 'hi' })).to.equal(true);
    expect(response({ result: 1 })).to.equal(false);
    // The codec agrees on the same bodies.
    expect(() => functionCodec(fn).decodeArgs({ q: 1 })).to.throw(CodecError);
  });

  it('describes the body of a function without parameters by a schema that is valid 2020-12', () => {
    const schema = requestSchema(func('tick', {}, null));
    expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).to.equal(true);
    const request = ajv.compile(schema);
    expect([request({}), request([]), request([1]), request({ a: 1 })]).to.deep.equal([true, true, false, false]);
  });
});
