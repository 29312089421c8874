// When an inline call must stop (lib/worker/execution/inline-budget.ts), with clocks the
// test moves: running calls stop at their budget, a worker that was not
// scheduled gets more time, and the hard end holds whatever happened.

import { expect } from 'chai';
import { InlineBudget } from '../../lib/worker/execution/inline-budget.js';

/** Wall and CPU clocks that advance only when told. */
function clocks() {
  const c = { wall: 1_000, cpu: 500 };
  return {
    c,
    clocks: { now: () => c.wall, cpu: () => c.cpu },
    /** `ms` pass; the process ran for `running` of them. */
    pass(ms: number, running = ms) {
      c.wall += ms;
      c.cpu += running;
    },
  };
}

describe('inline call budget', () => {
  it('lets a call run until its budget, then stops it when it was running all along', () => {
    const { clocks: k, pass } = clocks();
    const budget = new InlineBudget(k);
    budget.within(1_020, 1_080, () => {
      expect(budget.exhausted()).to.equal(false);
      pass(19);
      expect(budget.exhausted()).to.equal(false);
      pass(2);
      expect(budget.exhausted()).to.equal(true);
    });
  });

  it('gives a call that was not scheduled another budget, and stops it once it has run for one', () => {
    const { clocks: k, pass } = clocks();
    const budget = new InlineBudget(k);
    budget.within(1_020, 1_080, () => {
      expect(budget.exhausted()).to.equal(false);
      pass(30, 5); // the OS ran something else
      expect(budget.exhausted()).to.equal(false);
      pass(21); // now it really runs, past another 20 ms
      expect(budget.exhausted()).to.equal(true);
    });
  });

  it('reads the CPU clock only for a call that runs a while, and keeps each further budget as long as the first', () => {
    const { c, pass } = clocks();
    let reads = 0;
    const budget = new InlineBudget({ now: () => c.wall, cpu: () => (reads++, c.cpu) });
    budget.within(1_020, 1_200, () => {
      for (let i = 0; i < 10; i++) {
        expect(budget.exhausted()).to.equal(false);
        pass(0.1);
      }
    });
    expect(reads, 'a short call').to.equal(0);
    budget.within(c.wall + 20, c.wall + 200, () => {
      expect(budget.exhausted()).to.equal(false);
      pass(25, 1); // past the budget, not running: another budget
      expect(budget.exhausted()).to.equal(false);
      pass(19, 1);
      expect(budget.exhausted()).to.equal(false);
      pass(2, 1); // past the second budget, still not running: a third, as long
      expect(budget.exhausted()).to.equal(false);
      pass(19);
      expect(budget.exhausted()).to.equal(false);
      pass(2);
      expect(budget.exhausted()).to.equal(true);
    });
  });

  it('stops a call at its hard end, scheduled or not', () => {
    const { clocks: k, pass } = clocks();
    const budget = new InlineBudget(k);
    budget.within(1_020, 1_080, () => {
      budget.exhausted();
      pass(79, 0);
      expect(budget.exhausted()).to.equal(false);
      pass(1, 0);
      expect(budget.exhausted()).to.equal(true);
    });
  });

  it('restores the bounds outside a nested run, and has none outside any', () => {
    const { clocks: k, pass } = clocks();
    const budget = new InlineBudget(k);
    budget.within(1_020, 1_080, () => {
      budget.within(1_001, 1_001, () => {
        pass(2);
        expect(budget.exhausted()).to.equal(true);
      });
      expect(budget.exhausted()).to.equal(false);
    });
    pass(10_000);
    expect(budget.exhausted()).to.equal(false);
  });
});
