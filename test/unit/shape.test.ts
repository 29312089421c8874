// The shape language (lib/shape.ts) that configuration values, sidecars,
// repository indexes and rt's own state files are declared and checked in.

import { expect } from 'chai';
import { boolean, check, describe as describeShape, integer, list, misfitLine, nullable, oneOf, record, string, strings, table, urls, type Static } from '../../lib/shape.js';

describe('shapes', () => {
  it('takes integers as each source writes them: bigint from config files and variables, whole numbers from data files', () => {
    const port = integer(1, 65535);
    expect(check(port, 80n, 'file')).to.deep.equal({ ok: true, value: 80 });
    expect(check(port, 80, 'file')).to.deep.include({ ok: false, at: '', expected: 'an integer between 1 and 65535', got: 80 });
    expect(check(port, 80, 'data')).to.deep.equal({ ok: true, value: 80 });
    expect(check(port, 1.5, 'data')).to.deep.include({ ok: false });
    expect(check(port, 0n, 'env')).to.deep.include({ ok: false });
    expect(describeShape(integer(1), 'file')).to.equal('an integer of at least 1');
  });

  it('describes booleans as the source can write them, unless told otherwise', () => {
    expect(describeShape(boolean(), 'env')).to.equal('a boolean (true/false/1/0)');
    expect(describeShape(boolean(), 'file')).to.equal('a boolean (true or false)');
    expect(check(boolean('true or false'), 'yes', 'data')).to.deep.include({ expected: 'true or false', got: 'yes' });
  });

  it('checks strings: non-empty unless allowed, and a test when given', () => {
    expect(check(string(), '', 'data')).to.deep.include({ ok: false, expected: 'a non-empty string' });
    expect(check(string({ empty: true }), '', 'data')).to.deep.equal({ ok: true, value: '' });
    const name = string({ test: (s) => /^[a-z]+$/.test(s), expected: 'a lower-case name' });
    expect(check(name, 'abc', 'data').ok).to.equal(true);
    expect(check(name, 'A', 'data')).to.deep.include({ expected: 'a lower-case name', got: 'A' });
    expect(check(oneOf(['a', 'b']), 'c', 'data')).to.deep.include({ expected: 'one of a, b' });
  });

  it('names the item of a list that does not fit, and copies lists', () => {
    const input = ['file:///a', 'ftp://b'];
    expect(check(urls('file:', 'https:'), input, 'file')).to.deep.include({ at: '[1]', expected: 'a file: or https: URL (a file: URL with its path: file:///srv/components)', got: 'ftp://b' });
    // A file URL that names no path fits no list of URLs.
    for (const empty of ['file:', 'file://', 'file://host']) expect(check(urls('file:'), [empty], 'file').ok, empty).to.equal(false);
    const ok = check(strings(), ['x'], 'file');
    expect(ok).to.deep.equal({ ok: true, value: ['x'] });
    const numbers = list(integer(0, 9), 'digits');
    expect(check(numbers, [1, 2, 30], 'data')).to.deep.include({ at: '[2]', expected: 'an integer between 0 and 9', got: 30 });
    expect(check(numbers, 'nope', 'data')).to.deep.include({ at: '', expected: 'digits', got: 'nope' });
  });

  it('checks tables key by key, with a problem for a key that is not allowed', () => {
    const env = table(string({ empty: true }), 'a table of NAME = "value"', { test: (k) => /^[A-Z]+$/.test(k), problem: (k) => `${JSON.stringify(k)} is not a variable name` });
    expect(check(env, { A: '1' }, 'data')).to.deep.equal({ ok: true, value: { A: '1' } });
    expect(check(env, { a: '1' }, 'data')).to.deep.equal({ ok: false, at: '', problem: '"a" is not a variable name' });
    expect(check(env, { A: 1 }, 'data')).to.deep.include({ at: '.A', expected: 'a non-empty string' });
    expect(check(env, ['A'], 'data')).to.deep.include({ at: '', expected: 'a table of NAME = "value"' });
  });

  it('checks records: unknown keys named with the known ones (or left out when open), required ones missing, paths into nested values', () => {
    const grant = record({ host: string(), writable: boolean() }, 'a grant', ['host']);
    const sidecar = record({ paths: list(grant, 'grants'), size: integer(1, 4) }, 'a table');
    expect(check(sidecar, { colour: 'red' }, 'data')).to.deep.equal({ ok: false, at: '', problem: 'unknown key "colour" (known: paths, size)' });
    expect(check(sidecar, { paths: [{ writable: true }] }, 'data')).to.deep.include({ at: 'paths[0].host', expected: 'a non-empty string', got: undefined });
    expect(check(sidecar, { paths: [{ host: 'h', mode: 'ro' }] }, 'data')).to.deep.equal({ ok: false, at: 'paths[0]', problem: 'unknown key "mode" (known: host, writable)' });
    const open = record({ path: string() }, 'an entry', ['path'], true);
    expect(check(open, { path: 'a', note: 'kept for other tools' }, 'data')).to.deep.equal({ ok: true, value: { path: 'a' } });
  });

  it('takes null for a nullable shape', () => {
    const names = nullable(list(string(), 'names'));
    expect(check(names, null, 'data')).to.deep.equal({ ok: true, value: null });
    expect(check(names, [''], 'data')).to.deep.include({ at: '[0]' });
    expect(describeShape(names, 'data')).to.equal('null or names');
  });

  it('words a misfit as one line: where, then the problem or what was expected and what was found', () => {
    const paths = list(record({ host: string({ expected: 'a directory path' }) }, 'a table', ['host']), 'an array of tables');
    const show = (got: unknown) => JSON.stringify(got) ?? 'nothing';
    const misfit = (value: unknown) => {
      const checked = check(paths, value, 'data');
      if (checked.ok) throw new Error('expected a misfit');
      return checked;
    };
    expect(misfitLine(misfit([{ host: 7 }]), { show })).to.equal('[0].host: expected a directory path, got 7');
    expect(misfitLine(misfit([{}]), { show })).to.equal('[0].host: expected a directory path, got nothing');
    expect(misfitLine(misfit([{ host: 'a', mode: 'ro' }]))).to.equal('[0]: unknown key "mode" (known: host)');
    expect(misfitLine(misfit('x'), { show })).to.equal('expected an array of tables, got "x"');
    expect(misfitLine(misfit('x'), { whole: 'the file' })).to.equal('the file: expected an array of tables');
    expect(misfitLine(misfit([{}]), { whole: 'the file' })).to.equal('[0].host: expected a directory path');
  });

  it('gives the checked value the type its shape declares', () => {
    const shape = record({ name: string(), size: integer(0), tags: list(string(), 'tags') }, 'a thing', ['name']);
    const checked = check(shape, { name: 'x', size: 3n }, 'file');
    if (!checked.ok) throw new Error('expected the value to fit');
    const value: Static<typeof shape> = checked.value;
    const name: string = value.name;
    const size: number | undefined = value.size;
    expect([name, size, value.tags]).to.deep.equal(['x', 3, undefined]);
  });
});
