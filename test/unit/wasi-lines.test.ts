// Imports bind by interface and version line: a guest built against any 0.2.x
// gets the 0.2 hosts, and an import of another line (0.3) gets a trapping
// stub from every host, and the listing names it unsatisfied.

import * as preview2 from '@bytecodealliance/preview2-shim';
import { expect } from 'chai';
import { isServedWasiImport } from '../../lib/wasi-lines.js';
import { interfaceKey, unversioned, versionLine } from '../../lib/wit/interface-key.js';
import type { ImportedItem } from '../../lib/wit/types.js';
import { OutputCapture } from '../../lib/worker/sandbox/output-capture.js';
import { hostImports, UnsatisfiedImportError } from '../../lib/worker/sandbox/wasi-imports.js';
import { p2 } from '../../lib/worker/wasi-host/index.js';

const shim = preview2 as unknown as Record<string, Record<string, object>>;

/** An imported instance named `name` with one function, `fn`. */
function imported(name: string, fn = 'get-thing'): ImportedItem {
  return { name, kind: 'instance', functions: [{ name: fn, params: [], result: null }], types: [] };
}

describe('WASI version lines', () => {
  it('reads a version line as the semver-compatible part: the major, or the minor on 0.x', () => {
    expect(versionLine('0.2.3')).to.equal('0.2');
    expect(versionLine('0.2.0-draft')).to.equal('0.2');
    expect(versionLine('0.3.0-rc-2026-03-15')).to.equal('0.3');
    expect(versionLine('1.4.0')).to.equal('1');
    expect(versionLine('0.0.5')).to.equal('0.0.5');
    expect(interfaceKey('wasi:io/streams@0.2.3')).to.equal('wasi:io/streams@0.2');
    expect(interfaceKey('wasi:http/types@0.3.0')).to.equal('wasi:http/types@0.3');
    expect(interfaceKey('local:thing/api')).to.equal('local:thing/api');
    expect(unversioned('wasi:io/streams@0.2.3')).to.equal('wasi:io/streams');
  });

  it('gives any 0.2.x import the 0.2 implementation', () => {
    const object = hostImports(['wasi:random/random', 'wasi:io/streams'], [imported('wasi:random/random@0.2.9'), imported('wasi:io/streams@0.2.0')]);
    expect(object['wasi:random/random']).to.equal(shim.random.random);
    expect(object['wasi:io/streams']).to.equal(shim.io.streams);
  });

  it('gives a 0.3 import a stub that traps naming it, never the 0.2 implementation', () => {
    const object = hostImports(['wasi:random/random'], [imported('wasi:random/random@0.3.0', 'get-random-u64')]);
    expect(object['wasi:random/random']).to.not.equal(shim.random.random);
    const stub = object['wasi:random/random'] as { getRandomU64: () => unknown };
    expect(() => stub.getRandomU64()).to.throw(UnsatisfiedImportError, 'wasi:random/random@0.3.0#get-random-u64');
  });

  it('refuses a wasi:http/types@0.3.0 import the 0.2 handler host, and gives a 0.2.x one its classes', () => {
    const host = p2.handlerImports(new OutputCapture());
    const v3 = hostImports(['wasi:http/types'], [imported('wasi:http/types@0.3.0', 'http-error-code')], undefined, host);
    const v2 = hostImports(['wasi:http/types'], [imported('wasi:http/types@0.2.6', 'http-error-code')], undefined, host);
    expect(v2['wasi:http/types']).to.equal(host['wasi:http/types@0.2']);
    expect(v3['wasi:http/types']).to.not.equal(host['wasi:http/types@0.2']);
    expect(() => (v3['wasi:http/types'] as { httpErrorCode: () => unknown }).httpErrorCode()).to.throw(UnsatisfiedImportError, 'wasi:http/types@0.3.0');
  });

  it('lists as unsatisfied every import no host serves: other packages, and WASI of another line', () => {
    expect(isServedWasiImport('wasi:io/streams@0.2.3')).to.equal(true);
    expect(isServedWasiImport('wasi:config/store@0.2.0-draft')).to.equal(true);
    expect(isServedWasiImport('wasi:io/streams@0.3.0')).to.equal(false);
    expect(isServedWasiImport('wasi:io/streams')).to.equal(false);
    expect(isServedWasiImport('acme:faulty/host@1.0.0')).to.equal(false);
  });
});
