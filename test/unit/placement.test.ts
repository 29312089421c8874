// Where a service's calls run (lib/worker/execution/placement.ts), with clocks the test
// moves: a GC pause, a descheduled worker or a busy thread elsewhere never
// moves a service; a truly slow method moves; a method slow 1 % of the time
// stays; every move is on probation and comes back, the probation doubling.

import { expect } from 'chai';
import { PlacementPolicy, PLACEMENT, type Move } from '../../lib/worker/execution/placement.js';

/** Wall and CPU clocks that advance only when a call says. */
function clocks() {
  const c = { wall: 1_000, cpu: 500 };
  return { c, clocks: { now: () => c.wall, cpu: () => c.cpu } };
}

type Clocked = ReturnType<typeof clocks>;

/**
 * `n` inline calls, the i-th taking `cost(i)` = [wall ms, CPU ms] (CPU
 * defaults to wall: it ran all along); stops at the first move and returns it
 * with the number of calls made.
 */
function calls(policy: PlacementPolicy, { c }: Clocked, n: number, cost: (i: number) => number | [number, number]): { move: Move | undefined; made: number } {
  for (let i = 0; i < n; i++) {
    const spent = cost(i);
    const [wall, cpu] = typeof spent === 'number' ? [spent, spent] : spent;
    policy.measure(() => {
      c.wall += wall;
      c.cpu += cpu;
    });
    // Between calls: the rest of the request, the event loop.
    c.wall += 0.05;
    c.cpu += 0.05;
    const move = policy.verdict();
    if (move) return { move, made: i + 1 };
  }
  return { move: undefined, made: n };
}

const FAST = 0.002;

describe('placement policy', () => {
  it('keeps a fast method inline', () => {
    const k = clocks();
    const policy = new PlacementPolicy(k.clocks);
    expect(calls(policy, k, 10_000, () => FAST).move).to.equal(undefined);
    expect(policy.placement).to.equal('inline');
  });

  it('moves a truly slow method after two blocks of calls, its CPU time confirming its wall time', () => {
    const k = clocks();
    const policy = new PlacementPolicy(k.clocks);
    const { move, made } = calls(policy, k, 1_000, () => 3);
    expect(made).to.equal(2 * PLACEMENT.blockCalls);
    expect(move).to.include({ to: 'threads', reason: 'slow_calls' });
    expect(move!.detail).to.match(/3\.0 ms of CPU each/);
    expect(policy.placement).to.equal('threads');
  });

  it('does not move a service for one GC pause, nor for two in one block', () => {
    const k = clocks();
    const policy = new PlacementPolicy(k.clocks);
    // A 40 ms pause (CPU: the collector runs on this thread) in each of three blocks in a row, twice in a row once, and every 500 calls.
    const pauses = new Set([7, 20, 39, 40, 507, 1_007, 1_507]);
    expect(calls(policy, k, 2_000, (i) => (pauses.has(i) ? 40 : FAST)).move).to.equal(undefined);
    expect(policy.placement).to.equal('inline');
  });

  it('does not move a service while its worker is descheduled: wall time passes, CPU time does not', () => {
    const k = clocks();
    const policy = new PlacementPolicy(k.clocks);
    // A long stretch in which every call's wall time is inflated by the OS running something else.
    expect(calls(policy, k, 500, () => [4, FAST]).move).to.equal(undefined);
    expect(policy.placement).to.equal('inline');
  });

  it('does not move a service for CPU other threads of the process used meanwhile', () => {
    const k = clocks();
    const policy = new PlacementPolicy(k.clocks);
    // A busy instance thread adds CPU to the process clock during each call; wall time shows the call was short.
    expect(calls(policy, k, 500, (i) => (i < PLACEMENT.blockCalls ? [2, 2] : [0.2, 2])).move).to.equal(undefined);
  });

  it('keeps a method that is slow 1 % of the time inline', () => {
    const k = clocks();
    const policy = new PlacementPolicy(k.clocks);
    expect(calls(policy, k, 20_000, (i) => (i % 100 === 37 ? 15 : 0.05)).move).to.equal(undefined);
  });

  it('moves a method that is slow most of the time', () => {
    const k = clocks();
    const policy = new PlacementPolicy(k.clocks);
    expect(calls(policy, k, 1_000, (i) => (i % 4 === 0 ? FAST : 2)).move).to.include({ to: 'threads', reason: 'slow_calls' });
  });

  it('moves a service for a call past the inline budget only when the call is long on a thread too', () => {
    const k = clocks();
    const policy = new PlacementPolicy(k.clocks);
    // The inline attempt overran (a pause); made again on a thread, it took its usual time.
    expect(policy.overran({ ms: 0.05, first: false }, 'a call ran past the inline budget')).to.equal(undefined);
    expect(policy.overran({ ms: PLACEMENT.overrunConfirmMs - 0.1, first: false }, 'again')).to.equal(undefined);
    expect(policy.placement).to.equal('inline');
    // A thread's first call compiles what it reaches: it confirms only with the whole budget.
    expect(policy.overran({ ms: 12, first: true }, 'a first call on a fresh thread')).to.equal(undefined);
    // Long on the thread as well: the work is long.
    expect(policy.overran({ ms: 12, first: false }, 'a call ran past the inline budget')).to.include({ to: 'threads', reason: 'over_budget' });
    k.c.wall += PLACEMENT.probationMs;
    expect(policy.mayReturn()).to.include({ to: 'inline' });
    expect(policy.overran({ ms: PLACEMENT.budgetMs + 1, first: true }, 'long on a fresh thread too')).to.include({ to: 'threads', reason: 'over_budget' });
    k.c.wall += PLACEMENT.probationMs * 2;
    expect(policy.mayReturn()).to.include({ to: 'inline' });
    // Cut off at its deadline on the thread (or lost there): it did not finish, so it is long.
    expect(policy.overran(undefined, 'a call ran to its deadline')).to.include({ to: 'threads', reason: 'over_budget' });
  });

  it('brings a moved service back after its probation, and doubles the probation on each further move', () => {
    const k = clocks();
    const policy = new PlacementPolicy(k.clocks);
    expect(policy.leave('over_budget', 'a call ran past the inline budget')).to.include({ to: 'threads', reason: 'over_budget' });
    // Moved already: another overrun on a thread is no new move.
    expect(policy.leave('over_budget', 'again')).to.equal(undefined);
    k.c.wall += PLACEMENT.probationMs - 1;
    expect(policy.mayReturn()).to.equal(undefined);
    k.c.wall += 1;
    expect(policy.mayReturn()).to.include({ to: 'inline', reason: 'probation_over' });
    expect(policy.placement).to.equal('inline');
    expect(policy.mayReturn()).to.equal(undefined);

    // Judged anew inline: fast calls keep it there.
    expect(calls(policy, k, 1_000, () => FAST).move).to.equal(undefined);
    // A second move: twice the probation.
    expect(calls(policy, k, 1_000, () => 3).move).to.include({ to: 'threads', reason: 'slow_calls' });
    k.c.wall += PLACEMENT.probationMs * 2 - 1;
    expect(policy.mayReturn()).to.equal(undefined);
    k.c.wall += 1;
    expect(policy.mayReturn()).to.include({ to: 'inline' });
  });

  it('never holds a service on threads longer than the longest probation', () => {
    const k = clocks();
    const policy = new PlacementPolicy(k.clocks);
    for (let i = 0; i < 20; i++) {
      expect(policy.leave('large_body', 'a large body')).to.include({ to: 'threads', reason: 'large_body' });
      k.c.wall += PLACEMENT.maxProbationMs;
      expect(policy.mayReturn(), `move ${i + 1}`).to.include({ to: 'inline' });
    }
  });
});
