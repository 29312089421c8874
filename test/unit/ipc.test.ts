import { expect } from 'chai';
import { Correlator } from '../../lib/ipc.js';
import { letTimePass } from '../support/eventually.js';

describe('IPC correlation', () => {
  it('settles each request with the reply carrying its id, whatever the order', async () => {
    const c = new Correlator<{ id: number; value: string }>();
    const a = c.request(1_000, 'a');
    const b = c.request(1_000, 'b');
    expect(a.id).to.not.equal(b.id);
    expect(c.settle({ id: b.id, value: 'B' })).to.equal(true);
    expect(c.settle({ id: a.id, value: 'A' })).to.equal(true);
    expect((await a.reply).value).to.equal('A');
    expect((await b.reply).value).to.equal('B');
  });

  it('rejects a request nobody answers in time, and ignores a late reply', async () => {
    const c = new Correlator<{ id: number }>();
    const { id, reply } = c.request(20, 'worker 3 loading components');
    let error: Error | undefined;
    await reply.catch((e: Error) => (error = e));
    expect(error?.message).to.equal('worker 3 loading components: no answer within 20 ms');
    expect(c.settle({ id })).to.equal(false);
  });

  it('lets a request without a timeout wait as long as it takes', async () => {
    const c = new Correlator<{ id: number }>();
    const { id, reply } = c.request(undefined, 'worker 1 draining');
    let settled = false;
    void reply.then(() => (settled = true));
    await letTimePass(50, 'a request with a timeout would have failed by now');
    expect(settled).to.equal(false);
    expect(c.settle({ id })).to.equal(true);
    expect(await reply).to.deep.equal({ id });
  });

  it('fails every pending request when the peer is gone', async () => {
    const c = new Correlator<{ id: number }>();
    const pending = [c.request(1_000, 'x').reply, c.request(undefined, 'y').reply];
    c.failAll(new Error('worker exited'));
    for (const p of pending) {
      let error: Error | undefined;
      await p.catch((e: Error) => (error = e));
      expect(error?.message).to.equal('worker exited');
    }
  });
});
