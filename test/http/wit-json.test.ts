// Every row of docs/api.md §6, both directions, through the real HTTP path of
// a worker served in process (test/support/in-process.ts). rt reads the types
// from the component binaries themselves; the echo functions send every value
// back, so JSON in must equal JSON out.

import { expect } from 'chai';
import type { ComponentSource } from '../../examples/builder.js';
import { repository } from '../support/fixtures.js';
import { COMPOUND_TYPES } from '../support/type-fixtures.js';
import { InProcessRt } from '../support/in-process.js';
import { call, invoke } from '../support/rt-process.js';

const SCALAR_TYPES = ['u8', 's8', 'u16', 's16', 'u32', 's32', 'u64', 's64', 'f32', 'f64'] as const;
const CORE: Record<string, string> = { u64: 'i64', s64: 'i64', f32: 'f32', f64: 'f64' };

/** Scalars in hand-written WAT: identity functions, so boundary values come back untouched. */
const SCALARS: ComponentSource = {
  kind: 'wat',
  world: 'scalars',
  wit: `package test:scalars@1.0.0;
interface api {
${SCALAR_TYPES.map((t) => `  echo-${t}: func(x: ${t}) -> ${t};`).join('\n')}
}
world scalars { export api; }`,
  wat: `(module
${SCALAR_TYPES.map((t) => `  (func (export "test:scalars/api@1.0.0#echo-${t}") (param ${CORE[t] ?? 'i32'}) (result ${CORE[t] ?? 'i32'}) local.get 0)`).join('\n')}
  (memory (export "memory") 1))`,
};

const U64_MAX = '18446744073709551615';
const S64_MIN = '-9223372036854775808';

/** [method, JSON in, JSON out (when it differs from JSON in)]. */
const ROUND_TRIPS: [string, unknown, unknown?][] = [
  ['scalars/echo-u8', 255],
  ['scalars/echo-u8', 0],
  ['scalars/echo-s8', -128],
  ['scalars/echo-s8', 127],
  ['scalars/echo-u16', 65535],
  ['scalars/echo-s16', -32768],
  ['scalars/echo-u32', 4294967295],
  ['scalars/echo-s32', -2147483648],
  ['scalars/echo-u64', U64_MAX],
  ['scalars/echo-u64', 9007199254740991],
  ['scalars/echo-u64', '9007199254740993'],
  ['scalars/echo-u64', '42', 42],
  ['scalars/echo-s64', S64_MIN],
  ['scalars/echo-s64', -9007199254740991],
  ['scalars/echo-f32', 1.5],
  ['scalars/echo-f32', 0.1],
  ['scalars/echo-f32', 'NaN'],
  ['scalars/echo-f32', '-Infinity'],
  ['scalars/echo-f64', 'Infinity'],
  ['scalars/echo-f64', 'NaN'],
  ['scalars/echo-f64', -0.000123],
  ['roundtrip/echo-bool', true],
  ['roundtrip/echo-bool', false],
  ['roundtrip/echo-char', 'é'],
  ['roundtrip/echo-char', '😀'],
  ['roundtrip/echo-string', ''],
  ['roundtrip/echo-string', 'Grüße 😀'],
  ['roundtrip/echo-person', { name: 'Ada', age: 36, 'nick-name': null }],
  ['roundtrip/echo-person', { name: 'Al', age: 255, 'nick-name': 'al' }],
  ['roundtrip/echo-shape', { tag: 'circle', val: 2.5 }],
  ['roundtrip/echo-shape', { tag: 'square', val: [3, 4] }],
  ['roundtrip/echo-shape', { tag: 'none' }],
  ['roundtrip/echo-color', 'light-blue'],
  ['roundtrip/echo-perms', ['write', 'read'], ['read', 'write']],
  ['roundtrip/echo-perms', []],
  ['roundtrip/echo-perms', ['exec-all']],
  ['roundtrip/echo-strings', []],
  ['roundtrip/echo-strings', ['a', '', 'c']],
  ['roundtrip/echo-tuple', [7, 'x', true]],
  ['roundtrip/echo-option', null],
  ['roundtrip/echo-option', 0],
  ['roundtrip/echo-option2', null],
  ['roundtrip/echo-option2', { some: null }],
  ['roundtrip/echo-option2', { some: 5 }],
  ['roundtrip/echo-option3', null],
  ['roundtrip/echo-option3', { some: null }],
  ['roundtrip/echo-option3', { some: { some: null } }],
  ['roundtrip/echo-option3', { some: { some: 'deep' } }],
  ['roundtrip/echo-results', [{ ok: 'yes' }, { err: 404 }]],
  ['roundtrip/echo-result-empty', { ok: null }],
  ['roundtrip/echo-result-empty', { err: 'no' }],
  ['roundtrip/echo-result-empty', null],
  ['roundtrip/echo-bytes', 'AAEC/w=='],
  ['roundtrip/echo-bytes', ''],
  ['roundtrip/echo-bytes', [0, 1, 2, 255], 'AAEC/w=='],
  ['roundtrip/echo-deep', [null, { name: 'B', age: 1, 'nick-name': null }, null]],
];

/** [method, JSON in, start of `details`]. */
const REJECTED: [string, unknown, string][] = [
  ['scalars/echo-u8', 256, 'x: expected u8 (0..255), got 256'],
  ['scalars/echo-u8', -1, 'x: expected u8 (0..255), got -1'],
  ['scalars/echo-s8', -129, 'x: expected s8 (-128..127), got -129'],
  ['scalars/echo-u32', 1.5, 'x: expected u32'],
  ['scalars/echo-u32', '1', 'x: expected u32'],
  ['scalars/echo-u64', '-1', 'x: expected u64'],
  // 2^64 - 1 as a JSON number: it parses to 2^64, one past the range.
  ['scalars/echo-u64', 18446744073709551616, 'x: expected u64'],
  ['scalars/echo-f64', 'nan', 'x: expected f64'],
  ['roundtrip/echo-char', 'ab', 'c: expected char'],
  ['roundtrip/echo-char', '', 'c: expected char'],
  ['roundtrip/echo-bool', 1, 'b: expected bool'],
  ['roundtrip/echo-person', { name: 'A', age: 1 }, 'p: missing field "nick-name"'],
  ['roundtrip/echo-person', { name: 'A', age: 1, 'nick-name': null, x: 1 }, 'p: unknown field "x"'],
  ['roundtrip/echo-person', { name: 'A', age: 300, 'nick-name': null }, 'p.age: expected u8 (0..255), got 300'],
  ['roundtrip/echo-shape', { tag: 'hexagon' }, 's:'],
  ['roundtrip/echo-color', 'purple', 'c: expected one of the enum cases'],
  ['roundtrip/echo-perms', ['fly'], 'p'],
  ['roundtrip/echo-tuple', [1, 'x'], 't: expected tuple<u8, string, bool>'],
  ['roundtrip/echo-strings', ['a', 2], 'l[1]: expected string, got 2'],
  ['roundtrip/echo-bytes', 'not base64!', 'b: expected list<u8>'],
  ['roundtrip/echo-deep', [null, { name: 'B', age: -1, 'nick-name': null }], 'd[1].age: expected u8 (0..255), got -1'],
  ['roundtrip/echo-results', [{ ok: 'a', err: 1 }], 'r[0]'],
  ['roundtrip/echo-results', [{ ok: 5 }], 'r[0].ok: expected string, got 5'],
];

describe('WIT ⇄ JSON through HTTP (in process)', function () {
  this.timeout(240_000);
  let rt: InProcessRt;
  const param: Record<string, string> = {};

  before(async () => {
    const dir = await repository({ scalars: SCALARS, roundtrip: COMPOUND_TYPES });
    rt = await InProcessRt.start({ configToml: `repo_urls = ["file://${dir}"]` });
    // Parameter names as rt read them from the binaries.
    for (const service of ['scalars', 'roundtrip']) {
      const described = await call(`${rt.url}/api/services/test/${service}`, { method: 'GET' });
      for (const m of described.body.methods as { name: string; signature: string }[]) {
        param[`${service}/${m.name}`] = /^func\(([a-z-]+):/.exec(m.signature)?.[1] ?? '';
      }
    }
  });

  after(async () => {
    await rt?.stop();
  });

  const send = (method: string, body: unknown, headers: Record<string, string> = { accept: 'application/json' }) =>
    call(`${rt.url}/api/services/test/${method.replace('/', '/invoke/')}`, { body: JSON.stringify(body), contentType: 'application/json', headers });

  for (const [method, input, output] of ROUND_TRIPS) {
    it(`${method} ${JSON.stringify(input)}`, async () => {
      const expected = { result: output === undefined ? input : output };
      const byName = await send(method, { [param[method]]: input });
      expect(byName.status, byName.text).to.equal(200);
      expect(byName.body).to.deep.equal(expected);
      const inOrder = await send(method, [input]);
      expect(inOrder.body).to.deep.equal(expected);
    });
  }

  for (const [method, input, details] of REJECTED) {
    it(`400 for ${method} ${JSON.stringify(input)}`, async () => {
      const res = await send(method, { [param[method]]: input });
      expect(res.status, res.text).to.equal(400);
      expect(res.body).to.include({ error: 'invalid arguments', code: 'RT_ERR_INVALID_ARGUMENTS', service: `test.${method.split('/')[0]}`, method: method.split('/')[1] });
      expect(res.body.details).to.satisfy((d: string) => d.startsWith(details), String(res.body.details));
    });
  }

  it('400 for a string with a lone surrogate', async () => {
    const res = await call(`${rt.url}/api/services/test/roundtrip/invoke/echo-string`, { body: '{"s": "\\ud800"}', contentType: 'application/json' });
    expect(res.status).to.equal(400);
    expect(res.body.details).to.match(/^s: expected string/);
  });

  it('400 for the wrong number of arguments, and for an unknown parameter name', async () => {
    const tooMany = await send('scalars/echo-u8', [1, 2]);
    expect(tooMany.status).to.equal(400);
    const unknown = await send('scalars/echo-u8', { y: 1 });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.details).to.include('"y"');
  });

  it('a top-level result: ok answers 200 with T, err answers 500 with E as details and value', async () => {
    expect((await invoke(rt, 'test/roundtrip/invoke/checked', { fail: false })).body).to.deep.equal({ result: 'fine' });
    const err = await invoke(rt, 'test/roundtrip/invoke/checked', { fail: true });
    expect(err.status).to.equal(500);
    expect(err.body).to.deep.include({ error: 'method returned an error', code: 'RT_ERR_METHOD_RETURNED_ERROR', details: 'it failed', value: 'it failed', service: 'test.roundtrip', method: 'checked' });
  });
});
