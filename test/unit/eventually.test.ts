// The tests' one way to wait for a state (test/support/eventually.ts): it
// holds as soon as the probe does, and fails within its bound, naming what it
// waited for and what the last try saw.

import { expect } from 'chai';
import { always, eventually, letTimePass, StopWaiting, within } from '../support/eventually.js';

/** The error `promise` is rejected with (and a failed test if it is not). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (e) {
    expect(e).to.be.instanceOf(Error);
    return e as Error;
  }
  throw new Error('expected a rejection');
}

describe('eventually()', () => {
  it('resolves with the value of the first try that holds, at once when the state is there', async () => {
    let tries = 0;
    const started = performance.now();
    expect(await eventually(() => (++tries, 'there'), { what: 'a state already there', intervalMs: 1_000 })).to.equal('there');
    expect(tries).to.equal(1);
    expect(performance.now() - started).to.be.below(500);
  });

  it('tries again while the probe throws or returns false, and resolves as soon as the state holds', async () => {
    let tries = 0;
    const assertion = await eventually(
      () => {
        tries++;
        expect(tries).to.be.at.least(3);
      },
      { what: 'the third try', intervalMs: 10 },
    );
    expect(assertion).to.equal(undefined);
    expect(tries).to.equal(3);

    const readyAt = performance.now() + 100;
    const value = await eventually(async () => performance.now() >= readyAt && { at: performance.now() }, { what: 'a time 100 ms away', intervalMs: 10 });
    expect(value.at - readyAt, 'ms after the state came').to.be.within(0, 400);
  });

  it("fails within its bound when the state never comes, naming what it waited for and the last try's assertion", async () => {
    let tries = 0;
    const started = performance.now();
    const error = await rejection(
      eventually(
        () => {
          tries++;
          expect(tries, 'tries so far').to.equal(-1);
        },
        { what: 'a state that never comes', timeoutMs: 200, intervalMs: 20, context: () => 'what the process printed' },
      ),
    );
    const elapsed = performance.now() - started;
    expect(elapsed).to.be.at.least(195);
    expect(elapsed).to.be.below(1_000);
    expect(tries).to.be.at.least(3);
    expect(error.message).to.match(new RegExp(`^waited 200 ms \\(${tries} tries\\) for a state that never comes, in vain: tries so far: expected ${tries} to equal -1\\nwhat the process printed$`));
    expect(error).to.include({ actual: tries, expected: -1 });
    expect(error.cause).to.be.instanceOf(Error);
  });

  it('says so when the probe kept returning false', async () => {
    const error = await rejection(eventually(() => false, { what: 'false to be true', timeoutMs: 50, intervalMs: 10 }));
    expect(error.message).to.match(/^waited 50 ms \(\d+ tries\) for false to be true, in vain: the probe still returned false$/);
  });

  it('fails at its bound when a try never settles, not when the try would', async () => {
    const started = performance.now();
    const error = await rejection(eventually(() => new Promise<never>(() => {}), { what: 'a try that hangs', timeoutMs: 100 }));
    expect(performance.now() - started).to.be.below(1_000);
    expect(error.message).to.equal('waited 100 ms (1 try) for a try that hangs, in vain (the last try had not finished): no try finished');
  });

  it('gives up at once when the probe says the state can no longer come, or a check that must always hold fails', async () => {
    let tries = 0;
    const started = performance.now();
    const gone = await rejection(
      eventually(
        () => {
          if (++tries === 2) throw new StopWaiting(new Error('the process exited'));
          return false;
        },
        { what: 'a process to answer', timeoutMs: 10_000, intervalMs: 10 },
      ),
    );
    expect(performance.now() - started).to.be.below(5_000);
    expect(tries).to.equal(2);
    expect(gone.message).to.match(/^gave up waiting for a process to answer after \d+ ms: the process exited$/);

    const broken = await rejection(eventually(() => always(() => expect(1, 'a status').to.equal(2)), { what: 'anything', timeoutMs: 10_000 }));
    expect(broken.message).to.match(/^gave up waiting for anything after \d+ ms: a status: expected 1 to equal 2$/);
    expect(broken).to.include({ actual: 1, expected: 2 });
  });
});

describe('within()', () => {
  it('settles with the promise when it settles in time, and fails naming what took too long otherwise', async () => {
    expect(await within(Promise.resolve(7), 1_000, 'seven')).to.equal(7);
    const error = await rejection(within(new Promise(() => {}), 50, 'the server closing the connection'));
    expect(error.message).to.equal('the server closing the connection took longer than 50 ms');
  });
});

describe('letTimePass()', () => {
  it('lets the time pass, and wants to be told why', async () => {
    const started = performance.now();
    await letTimePass(50, 'the test shows that time passes');
    expect(performance.now() - started).to.be.at.least(45);
    expect((await rejection(letTimePass(1, ' '))).message).to.match(/say why/);
  });
});
