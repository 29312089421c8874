// Where a worker runs a service's calls (lib/worker/execution/execution.ts with the
// policy of placement.ts), in this process with a real component: an
// event-loop stall between fast calls leaves the service inline, truly slow
// calls move it to instance threads, and after its probation it comes back
// inline, each move reported.

import { expect } from 'chai';
import type { HostedService } from '../../lib/worker/execution/hosted-service.js';
import { PLACEMENT } from '../../lib/worker/execution/placement.js';
import type { Move } from '../../lib/worker/execution/placement.js';
import { ServiceRegistry } from '../../lib/worker/execution/registry.js';
import { SLOW } from '../support/fixtures.js';
import { catalog, invoke, silentLog } from '../support/hosting.js';

const TIMEOUT_MS = 5_000;
const PROBATION_MS = 300;

/** Holds the event loop for `ms`, as a GC pause or a slow request elsewhere in the worker does. */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('execution placement (in process)', function () {
  this.timeout(120_000);
  let registry: ServiceRegistry;
  let moves: Move[];
  let slow: HostedService;

  beforeEach(async () => {
    moves = [];
    registry = new ServiceRegistry({
      timeoutMs: TIMEOUT_MS,
      memoryCapBytes: 16 << 20,
      threadHeapMb: 128,
      log: silentLog,
      moved: (_, move) => moves.push(move),
      placement: { ...PLACEMENT, probationMs: PROBATION_MS },
    });
    await registry.load((await catalog({ slow: SLOW })).services, []);
    slow = registry.get('acme', 'slow')!;
  });

  afterEach(async () => {
    await registry.load([], []);
  });

  const spin = (n: number) => invoke(slow, 'spin', { n }, TIMEOUT_MS);

  it('keeps a fast service inline while the event loop stalls between its calls and their answers', async () => {
    for (let i = 0; i < 200; i++) {
      const answer = spin(10);
      // The call has run; before its answer is taken up, the event loop is held (a GC pause, another request's work).
      if (i % 20 === 0) stall(15);
      expect(await answer).to.equal(10);
    }
    expect(slow.placement).to.equal('inline');
    expect(moves).to.deep.equal([]);
  });

  it('moves a service whose calls are truly slow, and brings it back inline after its probation', async () => {
    // Over 1 ms each, instrumented, on this machine.
    for (let i = 0; i < 4 * PLACEMENT.blockCalls && slow.placement === 'inline'; i++) expect(await spin(3_000_000)).to.equal(3_000_000);
    expect(slow.placement).to.equal('threads');
    expect(moves).to.have.length(1);
    expect(moves[0]).to.include({ to: 'threads' });
    // On a machine starved of CPU one call may run past the inline budget first (the policy's own test pins slow_calls).
    expect(moves[0].reason).to.be.oneOf(['slow_calls', 'over_budget']);
    // Still answering on a thread.
    expect(await spin(5)).to.equal(5);

    await new Promise((resolve) => setTimeout(resolve, PROBATION_MS + 50));
    // The first call after the probation starts the inline instance; calls go to the thread meanwhile.
    const deadline = performance.now() + 5_000;
    while (slow.placement !== 'inline' && performance.now() < deadline) {
      expect(await spin(5)).to.equal(5);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(slow.placement).to.equal('inline');
    expect(moves[1]).to.include({ to: 'inline', reason: 'probation_over' });
    for (let i = 0; i < 100; i++) expect(await spin(10)).to.equal(10);
    expect(slow.placement).to.equal('inline');
    expect(moves).to.have.length(2);
  });
});
