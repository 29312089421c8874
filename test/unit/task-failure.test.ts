// Awaiting a guest's promises against its instance's failure
// (lib/worker/execution/task-failure.ts): each promise's outcome, or the
// failure when it comes first; and nothing kept of a promise once it has
// settled, however many an instance awaits in its life.

import { expect } from 'chai';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { TaskFailure } from '../../lib/worker/execution/task-failure.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function retainedHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('task failure', () => {
  it("answers each promise's own outcome, then rejects those still waiting with the failure, and any awaited after it at once", async () => {
    const failure = new TaskFailure();
    expect(await failure.guard(Promise.resolve(7))).to.equal(7);
    await failure.guard(Promise.reject(new Error('its own'))).then(
      () => expect.fail('rejected'),
      (e: unknown) => expect((e as Error).message).to.equal('its own'),
    );
    const waiting = failure.guard(new Promise(() => {}));
    const trap = new Error('unreachable');
    failure.fail(trap);
    failure.fail(new Error('a second, ignored'));
    expect(await waiting.catch((e: unknown) => e)).to.equal(trap);
    expect(await failure.guard(Promise.resolve(1)).catch((e: unknown) => e)).to.equal(trap);
  });

  it('observes a promise it is handed after the failure, so that its rejection is nobody’s unhandled one (which ends an instance thread)', async () => {
    const failure = new TaskFailure();
    const trap = new Error('unreachable');
    failure.fail(trap);
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const late = Promise.reject(new Error('the call that trapped'));
      expect(await failure.guard(late).catch((e: unknown) => e)).to.equal(trap);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', record);
    }
    expect(unhandled).to.deep.equal([]);
  });

  it('keeps nothing of the promises it awaited once they settled, where a race against the failure kept a reaction for each', async () => {
    const failure = new TaskFailure();
    const never = new Promise<never>(() => {});
    const retainedBy = async (awaitOne: () => Promise<unknown>) => {
      for (let i = 0; i < 1_000; i++) await awaitOne();
      const before = retainedHeap();
      for (let i = 0; i < 50_000; i++) await awaitOne();
      return retainedHeap() - before;
    };
    const guarded = await retainedBy(() => failure.guard(Promise.resolve(i++)));
    const raced = await retainedBy(() => Promise.race([Promise.resolve(i++), never]));
    expect(guarded, 'guarded').to.be.below(1_048_576);
    // The check can fail: the race's reactions stayed with the promise that never settles.
    expect(raced, 'raced').to.be.above(4 * 1_048_576);
  });
});

let i = 0;
