// The JSON Schemas must describe exactly what the codec accepts: for each
// sample, the codec's verdict and a real JSON Schema validator's agree.

import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CodecError, functionCodec, typeCodec } from '../../lib/wit/codec.js';
import { requestSchema, responseSchema, typeSchema } from '../../lib/wit/json-schema.js';
import type { WitType } from '../../lib/wit/types.js';

const ajv = new Ajv2020({ strict: false });
const p = (name: 'u8' | 's8' | 'u32' | 'u64' | 's64' | 'f32' | 'f64' | 'char' | 'string' | 'bool'): WitType => ({ kind: 'primitive', name });

const person: WitType = {
  kind: 'record',
  origin: { interface: 'acme:x/y', name: 'person' },
  fields: [
    { name: 'full-name', type: p('string') },
    { name: 'age', type: p('u8') },
  ],
};

const samples: [string, WitType, unknown[]][] = [
  ['u8', p('u8'), [0, 255, 256, -1, 1.5, '1', null]],
  ['s8', p('s8'), [-128, 127, -129]],
  ['u64', p('u64'), [0, '18446744073709551615', '-1', 'x', 2 ** 60]],
  ['s64', p('s64'), ['-9223372036854775808', -5, '1.5']],
  ['f64', p('f64'), [1.5, 'NaN', 'Infinity', '-Infinity', 'nan', null]],
  ['char', p('char'), ['a', '😀', 'ab', '']],
  ['bool', p('bool'), [true, false, 0]],
  ['list<u8>', { kind: 'list', element: p('u8') }, ['AAEC', [0, 1, 255], [256], 5]],
  ['list<string>', { kind: 'list', element: p('string') }, [[], ['a'], [1]]],
  ['tuple', { kind: 'tuple', elements: [p('u8'), p('string')] }, [[1, 'a'], [1], [1, 'a', 2], ['a', 1]]],
  ['record', person, [{ 'full-name': 'A', age: 3 }, { 'full-name': 'A' }, { 'full-name': 'A', age: 3, x: 1 }, { fullName: 'A', age: 3 }]],
  ['option<u8>', { kind: 'option', inner: p('u8') }, [null, 3, 300]],
  ['option<option<u8>>', { kind: 'option', inner: { kind: 'option', inner: p('u8') } }, [null, { some: null }, { some: 3 }, 3, { some: 300 }]],
  ['result<u8, string>', { kind: 'result', ok: p('u8'), err: p('string') }, [{ ok: 1 }, { err: 'x' }, { ok: 'x' }, { ok: 1, err: 'x' }]],
  ['result<_, string>', { kind: 'result', ok: null, err: p('string') }, [{ ok: null }, { err: 'e' }, {}]],
  [
    'variant',
    { kind: 'variant', origin: { interface: '', name: 'shape' }, cases: [{ name: 'circle', type: p('f64') }, { name: 'none', type: null }] },
    [{ tag: 'circle', val: 1 }, { tag: 'none' }, { tag: 'square' }, { tag: 'circle' }],
  ],
  ['enum', { kind: 'enum', cases: ['red', 'green'] }, ['red', 'blue', 1]],
  ['flags', { kind: 'flags', flags: ['read', 'write'] }, [[], ['read', 'write'], ['exec']]],
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
    const fn = { name: 'greet', params: [{ name: 'p', type: person }], result: p('string') };
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
});
