// A client's address (lib/client-address.ts, docs/api.md §5.10): the peer,
// or behind trusted proxies the nearest X-Forwarded-For entry that is not
// one; never an entry a client could have written itself.

import { expect } from 'chai';
import { isAddressOrRange, TrustedProxies } from '../../lib/client-address.js';

describe('client address', () => {
  const proxies = new TrustedProxies(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);

  it('is the peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    const none = new TrustedProxies([]);
    expect(none.client('203.0.113.9', '198.51.100.1')).to.equal('203.0.113.9');
    expect(none.client('::ffff:203.0.113.9', undefined)).to.equal('203.0.113.9');
  });

  it('is the peer when the peer is not a trusted proxy: a client cannot name itself another', () => {
    expect(proxies.client('203.0.113.9', '198.51.100.1')).to.equal('203.0.113.9');
  });

  it('is the nearest untrusted entry behind trusted proxies, read from the right', () => {
    expect(proxies.client('10.1.2.3', '198.51.100.1')).to.equal('198.51.100.1');
    // The client wrote the first entry itself; the ingress appended the real one.
    expect(proxies.client('10.1.2.3', '1.2.3.4, 198.51.100.1')).to.equal('198.51.100.1');
    expect(proxies.client('::ffff:10.1.2.3', '198.51.100.1, 192.168.1.7, 10.9.9.9')).to.equal('198.51.100.1');
    expect(proxies.client('fd00::1', '2001:db8::5')).to.equal('2001:db8::5');
  });

  it('stops at the proxy that appended an entry that is not an address, and leaves the first of a chain of trusted ones', () => {
    expect(proxies.client('10.1.2.3', 'unknown, 198.51.100.1')).to.equal('198.51.100.1');
    expect(proxies.client('10.1.2.3', '198.51.100.1, garbage')).to.equal('10.1.2.3');
    expect(proxies.client('10.1.2.3', '10.4.4.4, 192.168.1.7')).to.equal('10.4.4.4');
    expect(proxies.client('10.1.2.3', undefined)).to.equal('10.1.2.3');
    expect(proxies.client('10.1.2.3', '')).to.equal('10.1.2.3');
  });

  it('tells a trusted proxy among peers (its connections carry many clients), an IPv4 one on a dual-stack socket too', () => {
    expect(proxies.isProxy('10.1.2.3')).to.equal(true);
    expect(proxies.isProxy('::ffff:192.168.1.7')).to.equal(true);
    expect(proxies.isProxy('192.168.1.8')).to.equal(false);
    expect(new TrustedProxies([]).isProxy('10.1.2.3')).to.equal(false);
  });

  it('takes addresses and CIDR ranges of both families, and nothing else', () => {
    for (const ok of ['10.0.0.0/8', '127.0.0.1', '0.0.0.0/0', '::1', 'fd00::/8', '::/0', '10.0.0.0/32', 'fd00::/128']) expect(isAddressOrRange(ok), ok).to.equal(true);
    for (const bad of ['10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/1', '10.0.0.0/', '10.0.0.0/x', 'proxy.internal', '10.0.0', '', '10.0.0.0/-1']) expect(isAddressOrRange(bad), bad).to.equal(false);
  });
});
