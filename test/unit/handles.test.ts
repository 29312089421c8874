// Handle ids and a worker's directory of live handles (docs/api.md §5.1.2):
// the pure bookkeeping under the routes, apart from any component.

import { expect } from 'chai';
import { EndedHandles, HandleDirectory, HandleHolder, type HandleChange, type LiveHandle } from '../../lib/worker/execution/handle-directory.js';
import { handleKey, handleOwner, mintHandleId, redactHandleId, redactHandleIds } from '../../lib/worker/execution/handle-ids.js';
import { eventually } from '../support/eventually.js';

describe('handles', () => {
  describe('ids', () => {
    const key = handleKey();
    const issuer = { workerId: 3, key, scope: 'acme.counters' };
    const scope = { key, scope: 'acme.counters' };

    it('name the worker that issued them, and carry 128 random bits', () => {
      const id = mintHandleId(issuer);
      const [worker, random, tag] = id.split('.');
      expect(worker).to.equal('3');
      expect(Buffer.from(random, 'base64url')).to.have.length(16);
      expect(tag).to.have.length(11);
      expect(handleOwner(id, scope)).to.equal(3);
      expect(new Set(Array.from({ length: 1000 }, () => mintHandleId(issuer))).size).to.equal(1000);
    });

    it('are told from ids rt never issued without any state: another run\'s key, another service\'s, a changed worker or random part, garbage', () => {
      const id = mintHandleId(issuer);
      const [worker, random, tag] = id.split('.');
      expect(handleOwner(id, { ...scope, key: handleKey() })).to.equal(undefined);
      expect(handleOwner(id, { ...scope, scope: 'acme.other' })).to.equal(undefined);
      expect(handleOwner(`4.${random}.${tag}`, scope)).to.equal(undefined);
      const flipped = random.slice(0, -1) + (random.endsWith('A') ? 'B' : 'A');
      expect(handleOwner(`${worker}.${flipped}.${tag}`, scope)).to.equal(undefined);
      for (const garbage of ['', 'x', `${id}.`, `${id}x`, id.replace(/\./g, '-'), '../../etc/passwd']) expect(handleOwner(garbage, scope), garbage).to.equal(undefined);
    });

    it('are shown in logs only in part, in paths too', () => {
      const id = mintHandleId(issuer);
      expect(redactHandleId(id)).to.equal(`${id.slice(0, 8)}…`);
      expect(redactHandleId('nodots')).to.equal('…');
      const url = `/api/services/acme/counters/handles/${id}/invoke/add?x=1`;
      expect(redactHandleIds(url)).to.equal(`/api/services/acme/counters/handles/${redactHandleId(id)}/invoke/add?x=1`);
      expect(redactHandleIds(url)).to.not.include(id);
      expect(redactHandleIds('/api/services/acme/counters/invoke/add')).to.equal('/api/services/acme/counters/invoke/add');
    });
  });

  describe('directory', () => {
    let now: number;
    let changes: [HandleChange, number][];
    let dropped: string[];
    let ended: EndedHandles;
    const holder = () =>
      new HandleHolder(
        () => Promise.reject(new Error('not called here')),
        (id) => {
          dropped.push(id);
          return Promise.resolve();
        },
      );
    const issuer = { workerId: 1, key: handleKey(), scope: 'acme.counters' };
    const named = new Map<string, string>();
    /** The id minted for the handle a test calls `name`. */
    const id = (name: string) => named.get(name) ?? named.set(name, mintHandleId(issuer)).get(name)!;
    /** The live handle `name`, or why it ended. */
    const find = (d: HandleDirectory, name: string): LiveHandle | { ended: string } | undefined => {
      const where = d.locate(id(name));
      return where.kind === 'live' ? where.handle : where.kind === 'ended' ? { ended: where.why } : undefined;
    };
    const empty: string[] = [];
    const directory = (options: { idleMs?: number; max?: number; maxScopes?: number } = {}) =>
      new HandleDirectory({
        issuer,
        idleMs: options.idleMs ?? 60_000,
        max: options.max ?? 10,
        maxScopes: options.maxScopes ?? 4,
        ended,
        onChange: (change, n) => changes.push([change, n]),
        onScopeEmpty: (scope) => empty.push(scope),
        now: () => now,
      });
    /** A reservation that must be granted. */
    const room = (d: HandleDirectory, scope?: string, client?: string) => {
      const got = d.reserve(scope, client);
      if ('full' in got) throw new Error(`no room: ${got.full} at ${got.max}`);
      return got;
    };
    /** Which bound a reservation meets, if any (one granted is released at once). */
    const full = (d: HandleDirectory, scope?: string, client?: string) => {
      const got = d.reserve(scope, client);
      if ('full' in got) return got.full;
      got.release();
      return undefined;
    };
    const issued = (...names: string[]) => names.map((name) => ({ id: id(name), key: 'acme:c/c#counter' }));

    beforeEach(() => {
      now = 1_000_000;
      changes = [];
      empty.length = 0;
      dropped = [];
      ended = new EndedHandles();
    });

    it('records the handles a call made, where they live, and when each was last used', () => {
      const d = directory();
      const h = holder();
      d.record(h, issued('a', 'b'), [], []);
      now += 500;
      d.record(h, [], [], [id('a')]);
      expect(d.size).to.equal(2);
      expect(find(d, 'a')).to.include({ holder: h, created: 1_000_000, lastUsed: 1_000_500, key: 'acme:c/c#counter' });
      expect(d.expires(find(d, 'b') as LiveHandle)).to.equal(1_060_000);
      expect(d.locate(mintHandleId({ ...issuer, workerId: 2 }))).to.deep.include({ kind: 'other-worker', worker: 2 });
      expect(d.locate(mintHandleId({ ...issuer, key: handleKey() }))).to.deep.equal({ kind: 'unknown' });
      expect(d.locate(mintHandleId({ ...issuer, scope: 'acme.other' })), 'another service\'s').to.deep.equal({ kind: 'unknown' });
      expect(find(d, 'never made')).to.deep.equal({ ended: ended.why('?') }, 'an id this worker issued but never recorded has ended');
      expect(changes).to.deep.equal([['created', 2]]);
      d.endAll('test over');
    });

    it('ends a handle moved into a call (own), and one dropped (its destructor asked for), each with its reason', async () => {
      const d = directory();
      const h = holder();
      d.record(h, issued('a', 'b'), [], []);
      d.record(h, [], [id('a')], []);
      expect(find(d, 'a')).to.deep.equal({ ended: 'it was passed as an own<T> parameter, which moved it into that call' });
      expect(await d.drop(id('b'))).to.equal(true);
      expect(dropped).to.deep.equal([id('b')]);
      expect(find(d, 'b')).to.deep.equal({ ended: 'it was dropped' });
      expect(await d.drop(id('b'))).to.equal(false);
      expect(changes).to.deep.equal([
        ['created', 2],
        ['moved', 1],
        ['dropped', 1],
      ]);
    });

    it('gives room to calls that make handles up to max, counting the calls under way with the live handles', () => {
      const d = directory({ max: 3 });
      d.record(holder(), issued('a'), [], []);
      const [first, second] = [room(d), room(d)];
      expect(full(d), 'one live and two under way').to.equal('scope');
      second.release();
      second.release();
      const third = room(d);
      expect(full(d), 'released once, however often it is called').to.equal('scope');
      first.release();
      d.record(holder(), issued('b'), [], []);
      expect(full(d), 'two live and one under way').to.equal('scope');
      third.release();
      room(d).release();
      d.endAll('test over');
    });

    it('bounds each named scope by max apart, and tells when a named scope has no handle left', () => {
      const d = directory({ max: 2 });
      const [h1, h2] = [holder(), holder()];
      d.record(h1, issued('s1', 's2'), [], [], 'scope-one');
      expect(full(d, 'scope-one')).to.equal('scope');
      room(d, 'scope-two').release();
      room(d).release();
      d.record(h2, issued('t1'), [], [], 'scope-two');
      expect(d.inUse('scope-two')).to.equal(true);
      expect(find(d, 's1')).to.include({ scope: 'scope-one' });
      d.record(h2, [], [id('t1')], [], 'scope-two');
      expect(empty).to.deep.equal(['scope-two']);
      expect(d.inUse('scope-two')).to.equal(false);
      h1.end('trapped');
      expect(empty).to.deep.equal(['scope-two', 'scope-one']);
      room(d, 'scope-one').release();
      d.endAll('test over');
    });

    it("bounds each client's share of the default scope by max, and the scope by max × maxScopes", async () => {
      const d = directory({ max: 2, maxScopes: 2 });
      const h = holder();
      d.record(h, issued('a1', 'a2'), [], [], '', '198.51.100.1');
      expect(full(d, '', '198.51.100.1'), 'the first client has its share').to.equal('client');
      const other = room(d, '', '198.51.100.2');
      expect(full(d, '', '198.51.100.2'), 'a call under way counts in its share').to.equal(undefined);
      d.record(h, issued('b1'), [], [], '', '198.51.100.2');
      other.release();
      d.record(h, issued('c1'), [], [], '', '198.51.100.3');
      expect(full(d, '', '198.51.100.4'), 'four handles: 2 × 2 in all').to.equal('scope');
      expect(await d.drop(id('a1'))).to.equal(true);
      expect(full(d, '', '198.51.100.1'), 'a dropped handle frees its client share and the scope').to.equal(undefined);
      expect(empty, 'the default scope is never reported empty').to.deep.equal([]);
      d.endAll('test over');
    });

    it('ends every handle of an instance that ended, with its reason, and only those', () => {
      const d = directory();
      const [h1, h2] = [holder(), holder()];
      d.record(h1, issued('a', 'b'), [], []);
      d.record(h2, issued('c'), [], []);
      h1.end('the component trapped: unreachable');
      expect(find(d, 'a')).to.deep.equal({ ended: 'its instance ended: the component trapped: unreachable' });
      expect(find(d, 'c')).to.include({ holder: h2 });
      d.endAll('the service was quiesced');
      expect(find(d, 'c')).to.deep.equal({ ended: 'its instance ended: the service was quiesced' });
      expect(changes.slice(2)).to.deep.equal([
        ['instance-ended', 2],
        ['instance-ended', 1],
      ]);
      expect(dropped, 'an ended instance has no destructors to run').to.deep.equal([]);
    });

    it('never makes live the handles of an instance that ended while its answer came back', () => {
      const d = directory();
      const h = holder();
      h.end('timed out');
      d.record(h, issued('a'), [], []);
      expect(d.size).to.equal(0);
      expect(find(d, 'a')).to.deep.equal({ ended: 'its instance ended: timed out' });
    });

    it('expires handles unused for the idle time, and runs their destructors', async () => {
      const d = directory({ idleMs: 1_000 });
      const h = holder();
      d.record(h, issued('old', 'used'), [], []);
      now += 900;
      d.record(h, [], [], [id('used')]);
      now += 200;
      await eventually(() => d.size === 1, { what: 'the sweeper to expire the unused handle' });
      expect(find(d, 'old')).to.deep.equal({ ended: 'it expired: unused for handle_idle_seconds (1 s)' });
      expect(dropped).to.deep.equal([id('old')]);
      now += 1_000;
      await eventually(() => d.size === 0, { what: 'the other to expire in turn' });
      expect(changes).to.deep.equal([
        ['created', 2],
        ['expired', 1],
        ['expired', 1],
      ]);
    });

    it('remembers why handles ended for the last 10,000 of them, per worker, and then says only that they ended', () => {
      for (let i = 0; i < 10_001; i++) ended.remember(i === 5000 ? id('h5000') : `h${i}`, `reason ${i}`);
      expect(ended.knows('h0')).to.equal(undefined);
      expect(ended.why('h0')).to.match(/dropped, moved, expired, or its instance ended/);
      expect(ended.why('h10000')).to.equal('reason 10000');
      // A new service (after a restart) shares the worker's memory of ended handles.
      expect(find(directory(), 'h5000')).to.deep.equal({ ended: 'reason 5000' });
    });
  });
});
