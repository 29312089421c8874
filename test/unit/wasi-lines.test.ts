// Imports bind by interface and version line: a guest built against any 0.2.x
// gets the 0.2 hosts, one of 0.3 rt's 0.3 interfaces where it has them, and
// any other import a trapping stub from every host, which the listing names
// unsatisfied.

import * as preview2 from '@bytecodealliance/preview2-shim';
import { expect } from 'chai';
import { isServedWasiImport, WASI_0_3_SERVED } from '../../lib/wasi-lines.js';
import { OutgoingChannel, p3, threadCells } from '../../lib/worker/wasi-host/index.js';
import { MessageChannel } from 'node:worker_threads';
import { MAX_RANDOM_BYTES, wasi03Interfaces } from '../../lib/worker/sandbox/wasi-p3.js';
import { interfaceKey, unversioned, versionLine } from '../../lib/wit/interface-key.js';
import type { ImportedItem } from '../../lib/wit/types.js';
import { capturing, OutputCapture, writeCaptured } from '../../lib/worker/sandbox/output-capture.js';
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

  it("gives a 0.3 import rt's own 0.3 implementation where it has one, else a stub that traps naming it, never the 0.2 implementation", () => {
    const object = hostImports(['wasi:random/random', 'wasi:io/streams'], [imported('wasi:random/random@0.3.0', 'get-random-u64'), imported('wasi:io/streams@0.3.0', 'read')]);
    expect(object['wasi:random/random']).to.not.equal(shim.random.random);
    expect(typeof (object['wasi:random/random'] as { getRandomU64: () => unknown }).getRandomU64()).to.equal('bigint');
    const stub = object['wasi:io/streams'] as { read: () => unknown };
    expect(() => stub.read()).to.throw(UnsatisfiedImportError, 'wasi:io/streams@0.3.0#read');
  });

  it('serves each 0.3 interface it lists as served, and gives no more random bytes at once than its most', () => {
    const exit = (): never => {
      throw new Error('exit');
    };
    // The sandbox's, and the handler host's http types and client, which every 0.3 instance on a thread gets (instance-spec.ts).
    const table = { ...wasi03Interfaces({ env: [['A', 'b']], exit }), ...p3.httpTypes, ...p3.clientImports(new OutgoingChannel(new MessageChannel().port1, threadCells())) };
    expect(Object.keys(table).sort()).to.deep.equal(WASI_0_3_SERVED.map((name) => `${name}@0.3`).sort());
    const random = table['wasi:random/random@0.3'] as { getRandomBytes: (n: bigint) => Uint8Array };
    expect(random.getRandomBytes(5n)).to.have.length(5);
    expect(random.getRandomBytes(2n ** 64n - 1n)).to.have.length(MAX_RANDOM_BYTES);
    expect((table['wasi:cli/environment@0.3'] as { getEnvironment: () => unknown }).getEnvironment()).to.deep.equal([['A', 'b']]);
  });

  it("sends what a guest writes after its call (a 0.3 stream read on) to the capture running, never to the process's own stdout", () => {
    const capture = new OutputCapture();
    const written: unknown[] = [];
    const original = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: unknown) => written.push(chunk) > 0);
    try {
      capturing(capture, () => writeCaptured('stdout', new TextEncoder().encode('in a call\n')));
      writeCaptured('stdout', new TextEncoder().encode('after it\n'));
    } finally {
      process.stdout.write = original;
    }
    expect(capture.take()).to.deep.equal([{ stream: 'stdout', text: 'in a call\n', dropped: 0 }]);
    expect(written, "the process's own stdout: rt's log").to.deep.equal([]);
  });

  it('waits at least as long as a guest asks by the monotonic clock it reads (a timer may fire up to a millisecond early)', async () => {
    const exit = (): never => {
      throw new Error('exit');
    };
    const clock = wasi03Interfaces({ env: [], exit })['wasi:clocks/monotonic-clock@0.3'] as { now: () => bigint; waitFor: (ns: bigint) => Promise<void>; waitUntil: (mark: bigint) => Promise<void> };
    for (const ns of [1_000_000n, 2_500_000n, 7_000_000n]) {
      const start = clock.now();
      await clock.waitFor(ns);
      expect(clock.now() - start >= ns, `${ns} ns`).to.equal(true);
    }
    const mark = clock.now() + 3_000_000n;
    await clock.waitUntil(mark);
    expect(clock.now() >= mark).to.equal(true);
    // A mark already past, or no time at all: at once.
    await clock.waitUntil(0n);
    await clock.waitFor(0n);
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
    expect(isServedWasiImport('wasi:http/types@0.3.0')).to.equal(true);
    expect(isServedWasiImport('wasi:http/client@0.3.0')).to.equal(true);
    expect(isServedWasiImport('wasi:sockets/types@0.3.0')).to.equal(false);
    expect(isServedWasiImport('wasi:random/random@0.3.0')).to.equal(true);
    expect(isServedWasiImport('wasi:io/streams')).to.equal(false);
    expect(isServedWasiImport('acme:faulty/host@1.0.0')).to.equal(false);
  });
});
