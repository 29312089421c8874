// The sandbox grants of docs/api.md §8 as a component's imports see them, with
// real preview2-shim objects: preopened directories (escapes, read-only
// grants) and the outbound host filter.

import { mkdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as preview2 from '@bytecodealliance/preview2-shim';
import type * as wasiHttp from '@bytecodealliance/preview2-shim/interfaces/wasi-http-types';
import { expect } from 'chai';
import { allowsRequest, parseHostPattern } from '../../lib/outbound-hosts.js';
import { grantedOutgoingHandler } from '../../lib/worker/sandbox/outbound.js';
import { Descriptor, grantedDirectories, grantedFilesystem } from '../../lib/worker/sandbox/preopens.js';
import { eventually } from '../support/eventually.js';
import { loopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { tempDir } from '../support/rt-process.js';

function errorOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail');
}

describe('grants', () => {
  describe('preopened directories', () => {
    let dir: string;
    let ro: Descriptor;
    let rw: Descriptor;
    const READ = { read: true };
    const FOLLOW = { symlinkFollow: true };

    before(async () => {
      dir = await realpath(await tempDir('rt-grants-'));
      await mkdir(join(dir, 'ro', 'sub'), { recursive: true });
      await mkdir(join(dir, 'rw'));
      await writeFile(join(dir, 'ro', 'hello.txt'), 'hello');
      await writeFile(join(dir, 'secret.txt'), 'outside');
      await symlink('/etc', join(dir, 'ro', 'etc'));
      await symlink('../../secret.txt', join(dir, 'ro', 'sub', 'out'));
      await symlink('../hello.txt', join(dir, 'ro', 'sub', 'in'));
      await symlink('/nonexistent/file', join(dir, 'rw', 'dangling'));
      const fs = grantedFilesystem(
        grantedDirectories([
          { host: join(dir, 'ro'), guest: '/data', writable: false },
          { host: join(dir, 'rw'), guest: '/scratch', writable: true },
        ]),
      );
      const directories = (fs['wasi:filesystem/preopens'] as { getDirectories(): [Descriptor, string][] }).getDirectories();
      expect(directories.map(([, name]) => name)).to.deep.equal(['/data', '/scratch']);
      expect((fs['wasi:filesystem/types'] as { Descriptor: unknown }).Descriptor).to.equal(Descriptor);
      [[ro], [rw]] = directories as [[Descriptor, string], [Descriptor, string]];
    });

    function text(d: Descriptor, path: string): string {
      const [bytes] = d.openAt(FOLLOW, path, {}, READ).read(100n, 0n);
      return new TextDecoder().decode(bytes);
    }

    it('are exactly the granted ones, and none without a grant', () => {
      const none = grantedFilesystem(grantedDirectories([]))['wasi:filesystem/preopens'] as { getDirectories(): unknown[] };
      expect(none.getDirectories()).to.deep.equal([]);
    });

    it('read files beneath them, through symlinks that stay inside', () => {
      expect(text(ro, 'hello.txt')).to.equal('hello');
      expect(text(ro, './sub/../hello.txt')).to.equal('hello');
      expect(text(ro, 'sub/in')).to.equal('hello');
    });

    it('answer not-permitted to .., absolute paths and symlinks leading out', () => {
      expect(errorOf(() => text(ro, '../secret.txt'))).to.equal('not-permitted');
      expect(errorOf(() => text(ro, 'sub/../../secret.txt'))).to.equal('not-permitted');
      expect(errorOf(() => text(ro, '/etc/passwd'))).to.equal('not-permitted');
      expect(errorOf(() => text(ro, 'etc/passwd'))).to.equal('not-permitted');
      expect(errorOf(() => text(ro, 'sub/out'))).to.equal('not-permitted');
      expect(errorOf(() => ro.statAt(FOLLOW, 'etc'))).to.equal('not-permitted');
      const sub = ro.openAt(FOLLOW, 'sub', { directory: true }, READ);
      expect(errorOf(() => text(sub, '../hello.txt'))).to.equal('not-permitted');
    });

    it('refuse to create through a dangling symlink, which could point anywhere', () => {
      expect(errorOf(() => rw.openAt(FOLLOW, 'dangling', { create: true }, { write: true }))).to.equal('not-permitted');
    });

    it('answer read-only to every change in a read-only grant', async () => {
      const file = ro.openAt(FOLLOW, 'hello.txt', {}, READ);
      const changes: [string, () => unknown][] = [
        ['open for writing', () => ro.openAt(FOLLOW, 'hello.txt', {}, { read: true, write: true })],
        ['create', () => ro.openAt(FOLLOW, 'new.txt', { create: true }, READ)],
        ['truncate', () => ro.openAt(FOLLOW, 'hello.txt', { truncate: true }, READ)],
        ['write', () => file.write(new TextEncoder().encode('x'), 0n)],
        ['write via stream', () => file.writeViaStream(0n)],
        ['append', () => file.appendViaStream()],
        ['set size', () => file.setSize(0n)],
        ['set times', () => file.setTimes({ tag: 'now' }, { tag: 'now' })],
        ['set times at', () => ro.setTimesAt(FOLLOW, 'hello.txt', { tag: 'now' }, { tag: 'now' })],
        ['mkdir', () => ro.createDirectoryAt('d')],
        ['rmdir', () => ro.removeDirectoryAt('sub')],
        ['unlink', () => ro.unlinkFileAt('hello.txt')],
        ['rename', () => ro.renameAt('hello.txt', ro, 'moved.txt')],
        ['rename out', () => ro.renameAt('hello.txt', rw, 'moved.txt')],
        ['hard link out', () => ro.linkAt({}, 'hello.txt', rw, 'linked.txt')],
        ['symlink', () => ro.symlinkAt('hello.txt', 'l')],
      ];
      for (const [what, change] of changes) expect(errorOf(change), what).to.equal('read-only');
      expect(await readFile(join(dir, 'ro', 'hello.txt'), 'utf8')).to.equal('hello');
      expect(ro.getFlags()).to.deep.equal({ read: true, mutateDirectory: false });
    });

    it('write in a writable grant, but never create symlinks', async () => {
      const file = rw.openAt(FOLLOW, 'note.txt', { create: true, truncate: true }, { read: true, write: true });
      expect(file.write(new TextEncoder().encode('noted'), 0n)).to.equal(5n);
      expect(await readFile(join(dir, 'rw', 'note.txt'), 'utf8')).to.equal('noted');
      rw.createDirectoryAt('made');
      rw.renameAt('note.txt', rw, 'made/note.txt');
      expect(text(rw, 'made/note.txt')).to.equal('noted');
      expect(errorOf(() => rw.symlinkAt('../../secret.txt', 'escape'))).to.equal('not-permitted');
      expect(errorOf(() => rw.createDirectoryAt('../outside'))).to.equal('not-permitted');
      expect(rw.getFlags()).to.deep.equal({ read: true, mutateDirectory: true });
    });

    it('list and stat the preopened directory itself', () => {
      const entries = ro.readDirectory();
      const names: string[] = [];
      for (let e = entries.readDirectoryEntry(); e; e = entries.readDirectoryEntry()) names.push(e.name);
      expect(names.sort()).to.deep.equal(['etc', 'hello.txt', 'sub']);
      expect(ro.stat().type).to.equal('directory');
      expect(ro.getType()).to.equal('directory');
    });
  });

  describe('outbound hosts', () => {
    it('match host, port (default: the scheme\'s) and scheme when given', () => {
      const patterns = ['api.example.com', 'https://secure.example.com', '127.0.0.1:8080', 'http://plain.example:8000'].map((e) => parseHostPattern(e)!);
      const cases: [scheme: string, authority: string, allowed: boolean][] = [
        ['https', 'api.example.com', true],
        ['http', 'API.example.com:80', true],
        ['https', 'api.example.com:8443', false],
        ['https', 'other.example.com', false],
        ['https', 'sub.api.example.com', false],
        ['https', 'secure.example.com', true],
        ['http', 'secure.example.com', false],
        ['http', 'secure.example.com:443', false],
        ['http', '127.0.0.1:8080', true],
        ['https', '127.0.0.1:8080', true],
        ['http', '127.0.0.1', false],
        ['http', '127.0.0.1:8081', false],
        ['http', 'plain.example:8000', true],
        ['https', 'plain.example:8000', false],
        ['ftp', 'api.example.com', false],
      ];
      for (const [scheme, authority, allowed] of cases) expect(allowsRequest(patterns, scheme, authority), `${scheme}://${authority}`).to.equal(allowed);
    });

    describe('the wrapped outgoing handler', () => {
      let server: LoopbackServer;
      let port: number;

      before(async () => {
        server = await loopbackServer();
        port = server.port;
      });

      after(async () => {
        await server.close();
      });

      const types = (preview2 as unknown as { http: { types: typeof wasiHttp } }).http.types;

      function request(authority: string): { req: wasiHttp.OutgoingRequest; finish: () => void } {
        const req = new types.OutgoingRequest(new types.Fields());
        req.setScheme({ tag: 'HTTP' });
        req.setAuthority(authority);
        req.setPathWithQuery('/');
        const body = req.body();
        return { req, finish: () => types.OutgoingBody.finish(body, undefined) };
      }

      it('refuses a host not on the list with HTTP-request-denied, connecting nowhere', async () => {
        const handler = grantedOutgoingHandler([`127.0.0.1:${port + 1}`, 'localhost']);
        const before = await server.connections();
        const { req } = request(`127.0.0.1:${port}`);
        expect(errorOf(() => handler.handle(req, undefined))).to.deep.equal({ tag: 'HTTP-request-denied' });
        expect(await server.connections()).to.equal(before);
      });

      it('sends a request to a listed host', async () => {
        const handler = grantedOutgoingHandler([`127.0.0.1:${port}`]);
        const { req, finish } = request(`127.0.0.1:${port}`);
        const future = handler.handle(req, undefined);
        finish();
        const answer = await eventually(() => future.get() ?? false, { what: 'the answer', timeoutMs: 2_000, intervalMs: 10 });
        expect(answer.tag === 'ok' && answer.val.tag === 'ok' && answer.val.val.status()).to.equal(200);
        expect(await server.connections()).to.be.above(0);
      });
    });
  });
});
