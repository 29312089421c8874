// WASI 0.3's wasi:filesystem as rt's host serves it (lib/worker/sandbox/wasi-p3-filesystem.ts),
// called as jco's glue calls it, without a component: async functions resolve to a result,
// bytes and directory entries come as a stream with a future of how it ended, a guest's
// stream is read as it writes it; the grant's bounds (preopens.ts) hold as for WASI 0.2.

import { expect } from 'chai';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { grantedDirectories } from '../../lib/worker/sandbox/preopens.js';
import { Descriptor, filesystem03 } from '../../lib/worker/sandbox/wasi-p3-filesystem.js';
import { tempDir } from '../support/rt-process.js';

type Result = { tag: 'ok' | 'err'; val?: unknown };

/** A stream<u8> the guest writes, as the glue hands it to the host: `chunks` one read at a time. */
function guestWrites(...chunks: string[]): { read(count: number): Promise<{ done: boolean; value?: Uint8Array }> } {
  const queue = chunks.map((c) => new TextEncoder().encode(c));
  return { read: async () => (queue.length > 0 ? { done: false, value: queue.shift()! } : { done: true }) };
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

function preopen(host: string, writable: boolean): Descriptor {
  const { getDirectories } = filesystem03(grantedDirectories([{ host, guest: '/d', writable }]))['wasi:filesystem/preopens'] as { getDirectories: () => [Descriptor, string][] };
  const [[root, guest]] = getDirectories();
  expect(guest).to.equal('/d');
  return root;
}

const ok = <T>(result: Result): T => {
  expect(result.tag, result.tag === 'err' ? JSON.stringify(result.val) : '').to.equal('ok');
  return result.val as T;
};

describe('WASI 0.3 filesystem host', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await tempDir('rt-p3-fs-');
    await mkdir(join(dir, 'ro'));
    await writeFile(join(dir, 'ro', 'hello.txt'), 'hello');
    await mkdir(join(dir, 'rw'));
    await writeFile(join(dir, 'outside.txt'), 'secret');
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a file from a guest stream, appends to it, reads it back as a stream and lists the directory', async () => {
    const root = preopen(join(dir, 'rw'), true);
    const file = ok<Descriptor>(await root.openAt({ symlinkFollow: true }, 'a.txt', { create: true }, { read: true, write: true }));
    ok(await file.writeViaStream(guestWrites('hel', 'lo'), 0n));
    ok(await file.appendViaStream(guestWrites(' world')));
    expect(await readFile(join(dir, 'rw', 'a.txt'), 'utf8')).to.equal('hello world');
    const [bytes, ended] = file.readViaStream(6n);
    expect(Buffer.concat(await collect(bytes)).toString()).to.equal('world');
    expect(await ended).to.deep.equal({ tag: 'ok', val: undefined });
    const stat = ok<{ type: unknown; size: bigint }>(await file.stat());
    expect([stat.type, stat.size]).to.deep.equal([{ tag: 'regular-file' }, 11n]);
    expect(ok(await root.getType())).to.deep.equal({ tag: 'directory' });
    ok(await root.createDirectoryAt('sub'));
    const [entries, listed] = root.readDirectory();
    expect((await collect(entries)).map((e) => [e.name, e.type]).sort()).to.deep.equal([
      ['a.txt', { tag: 'regular-file' }],
      ['sub', { tag: 'directory' }],
    ]);
    expect(await listed).to.deep.equal({ tag: 'ok', val: undefined });
    file[Symbol.dispose]();
  });

  it("answers the grant's bounds as error-codes: no-entry, not-permitted out of the grant, read-only for a write to a read-only grant", async () => {
    const root = preopen(join(dir, 'ro'), false);
    expect(await root.statAt({ symlinkFollow: true }, 'missing')).to.deep.equal({ tag: 'err', val: { tag: 'no-entry' } });
    expect(await root.openAt({ symlinkFollow: true }, '../outside.txt', {}, { read: true })).to.deep.equal({ tag: 'err', val: { tag: 'not-permitted' } });
    expect(await root.openAt({ symlinkFollow: true }, 'new.txt', { create: true }, { write: true })).to.deep.equal({ tag: 'err', val: { tag: 'read-only' } });
    expect(await root.unlinkFileAt('hello.txt')).to.deep.equal({ tag: 'err', val: { tag: 'read-only' } });
    expect(await root.symlinkAt('/etc', 'link')).to.deep.equal({ tag: 'err', val: { tag: 'read-only' } });
    // A read-only file: its write stream's future says so, and the file is as it was.
    const file = ok<Descriptor>(await root.openAt({ symlinkFollow: true }, 'hello.txt', {}, { read: true }));
    expect(await file.writeViaStream(guestWrites('x'), 0n)).to.deep.equal({ tag: 'err', val: { tag: 'read-only' } });
    expect(await readFile(join(dir, 'ro', 'hello.txt'), 'utf8')).to.equal('hello');
  });

  it('keeps a granted directory open when a guest drops its handle: the next get-directories hands out the same one', async () => {
    const root = preopen(join(dir, 'ro'), false);
    root[Symbol.dispose]();
    const [bytes] = ok<Descriptor>(await root.openAt({ symlinkFollow: true }, 'hello.txt', {}, { read: true })).readViaStream(0n);
    expect(Buffer.concat(await collect(bytes)).toString()).to.equal('hello');
  });
});
