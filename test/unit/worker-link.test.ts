// How the primary talks to one worker (lib/primary/worker-link.ts), with the
// worker played by the test: what it is sent, and when it answers.

import { expect } from 'chai';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { MetricsSnapshot, PrimaryMessage } from '../../lib/ipc.js';
import { WorkerLink } from '../../lib/primary/worker-link.js';

/** A full garbage collection, on demand: V8's flag set at run time reaches a new context's globals. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('worker link', () => {
  let sent: PrimaryMessage[];
  let link: WorkerLink;

  beforeEach(() => {
    sent = [];
    link = new WorkerLink('7', (m) => sent.push(m));
  });

  /** Asks `n` metrics requests, each answered with a snapshot of its own; weak references to the snapshots. */
  async function answered(n: number): Promise<WeakRef<object>[]> {
    const replies: WeakRef<object>[] = [];
    for (let i = 0; i < n; i++) {
      const asked = link.ask({ type: 'collect-metrics' }, 10_000);
      const request = sent.at(-1) as Extract<PrimaryMessage, { type: 'collect-metrics' }>;
      const snapshot = [{ name: `metric_${i}`, help: 'x'.repeat(1_000) }] as unknown as MetricsSnapshot;
      replies.push(new WeakRef(snapshot));
      link.settle({ type: 'metrics', id: request.id, snapshot });
      await asked;
    }
    return replies;
  }

  it('holds what it is given until the worker listens, then sends it in order, a request made as it goes out', async () => {
    let services = 0;
    const loaded = link.ask(() => ({ type: 'load', services: new Array(services), failures: [] }));
    link.post({ type: 'shutdown' });
    services = 2;
    expect(sent).to.deep.equal([]);
    link.started();
    expect(sent.map((m) => m.type)).to.deep.equal(['load', 'shutdown']);
    const load = sent[0] as Extract<PrimaryMessage, { type: 'load' }>;
    expect(load.services).to.have.length(2);
    link.settle({ type: 'loaded', id: load.id, failures: [] });
    expect(await loaded).to.deep.equal({ type: 'loaded', id: load.id, failures: [] });
  });

  it('fails the requests still waiting when the worker exits, and any asked later', async () => {
    link.started();
    const waiting = [link.ask({ type: 'quiesce', service: { domain: 'acme', service: 'a' } }), link.ask({ type: 'collect-metrics' }, 1_000)];
    link.exited();
    for (const reply of [...waiting, link.ask({ type: 'collect-metrics' })]) {
      const error = await reply.then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error?.message).to.equal('worker 7 exited');
    }
  });

  it('keeps no reply once its request is answered, however many requests a live worker is asked', async function () {
    this.timeout(30_000);
    link.started();
    const replies = await answered(200);
    // WeakRef targets stay alive until the current job ends.
    await tick();
    collectGarbage();
    await tick();
    const kept = replies.filter((r) => r.deref() !== undefined).length;
    expect(kept, 'replies still reachable after their requests were answered').to.equal(0);
  });
});
