// Files written whole or not at all (lib/write-atomically.ts).

import { expect } from 'chai';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeAtomically } from '../../lib/write-atomically.js';
import { tempDir } from '../support/rt-process.js';

describe('writeAtomically', () => {
  it('creates the directories, writes the file and leaves nothing else', async () => {
    const dir = await tempDir('rt-atomic-');
    const path = join(dir, 'a', 'b', 'file.txt');
    await writeAtomically(path, 'first');
    await writeAtomically(path, 'second');
    expect(await readFile(path, 'utf8')).to.equal('second');
    expect(await readdir(join(dir, 'a', 'b'))).to.deep.equal(['file.txt']);
  });

  it('gives the file the mode asked for (a private key readable by its owner only)', async () => {
    const path = join(await tempDir('rt-atomic-'), 'key.pem');
    await writeAtomically(path, 'secret', 0o600);
    expect((await stat(path)).mode & 0o777).to.equal(0o600);
  });

  it('leaves one whole version when writers race', async () => {
    const dir = await tempDir('rt-atomic-');
    const path = join(dir, 'shared.bin');
    const versions = Array.from({ length: 8 }, (_, i) => Buffer.alloc(256 * 1024, i));
    await Promise.all(versions.map((v) => writeAtomically(path, v)));
    const written = await readFile(path);
    expect(versions.some((v) => v.equals(written))).to.equal(true);
    expect(await readdir(dir)).to.deep.equal(['shared.bin']);
  });
});
