// Inline calls wait for the check phase of their event-loop turn and run
// there together (lib/worker/execution/inline-turn.ts): every call made in one turn
// runs before the first of them goes on to its answer.

import { expect } from 'chai';
import { inlineTurn } from '../../lib/worker/execution/inline-turn.js';

describe('inline turn', () => {
  it("runs a turn's calls back to back at its check phase, in the order they were made, before any of them goes on", async () => {
    const log: string[] = [];
    // Queued before the calls: runs first if they wait for the check phase, after them if they do not wait at all.
    setImmediate(() => log.push('check phase'));
    const call = async (name: string) => {
      await inlineTurn();
      log.push(`${name} runs`);
      await Promise.resolve();
      log.push(`${name} answers`);
    };
    await Promise.all([call('a'), call('b'), call('c')]);
    expect(log).to.deep.equal(['check phase', 'a runs', 'b runs', 'c runs', 'a answers', 'b answers', 'c answers']);
  });

  it('gives a call made in a later turn a later check phase', async () => {
    const first = inlineTurn();
    await first;
    const second = inlineTurn();
    expect(second).to.not.equal(first);
    await second;
  });
});
