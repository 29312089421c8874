// Path confinement for granted directories (lib/worker/sandbox/path-confinement.ts),
// on real directories and symlinks in a temp dir.

import { expect } from 'chai';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { confined, guestSegments } from '../../lib/worker/sandbox/path-confinement.js';
import { tempDir } from '../support/rt-process.js';

describe('path confinement', () => {
  describe('guest paths', () => {
    it('normalises . and empty segments and .. within the descriptor', () => {
      expect(guestSegments('')).to.deep.equal([]);
      expect(guestSegments('.')).to.deep.equal([]);
      expect(guestSegments('a//b/./c')).to.deep.equal(['a', 'b', 'c']);
      expect(guestSegments('a/b/../c')).to.deep.equal(['a', 'c']);
      expect(guestSegments('a/..')).to.deep.equal([]);
    });

    it('refuses absolute paths, backslashes and .. above the descriptor', () => {
      expect(guestSegments('/etc/passwd')).to.equal(undefined);
      expect(guestSegments('a\\..\\..')).to.equal(undefined);
      expect(guestSegments('..')).to.equal(undefined);
      expect(guestSegments('a/../../b')).to.equal(undefined);
    });
  });

  describe('host paths', () => {
    let root: string;
    let outside: string;

    before(async () => {
      const dir = await realpath(await tempDir('rt-confine-'));
      root = join(dir, 'grant');
      outside = join(dir, 'outside');
      await mkdir(join(root, 'sub'), { recursive: true });
      await mkdir(outside);
      await writeFile(join(root, 'sub', 'file.txt'), 'in');
      await writeFile(join(outside, 'secret.txt'), 'out');
      await symlink(outside, join(root, 'escape'));
      await symlink(join(root, 'sub'), join(root, 'inner'));
      await symlink(join(root, 'nowhere'), join(root, 'dangling'));
      await symlink(join(outside, 'secret.txt'), join(root, 'secret-link'));
    });

    it('keeps files, directories and paths not created yet inside the grant', () => {
      expect(confined(root, root, true)).to.equal(true);
      expect(confined(root, join(root, 'sub', 'file.txt'), true)).to.equal(true);
      expect(confined(root, join(root, 'sub', 'new', 'deeper.txt'), false)).to.equal(true);
    });

    it('follows symlinks that stay inside', () => {
      expect(confined(root, join(root, 'inner', 'file.txt'), true)).to.equal(true);
    });

    it('refuses symlinks that lead out, through a directory or as the last segment', () => {
      expect(confined(root, join(root, 'escape', 'secret.txt'), true)).to.equal(false);
      expect(confined(root, join(root, 'escape', 'new.txt'), false)).to.equal(false);
      expect(confined(root, join(root, 'secret-link'), true)).to.equal(false);
    });

    it('does not follow the last segment unless asked (a symlink itself may be removed or stat-ed)', () => {
      expect(confined(root, join(root, 'secret-link'), false)).to.equal(true);
    });

    it('refuses a dangling symlink to be followed (creating through it would land anywhere)', () => {
      expect(confined(root, join(root, 'dangling'), true)).to.equal(false);
    });

    it('does not take a sibling whose name starts like the root for the root', () => {
      expect(confined(root, `${root}-other/file`, false)).to.equal(false);
    });
  });
});
