// Bytes read up to a bound (lib/capped-bytes.ts), as request bodies and repository downloads are.

import { expect } from 'chai';
import { CappedBytes } from '../../lib/capped-bytes.js';

describe('capped bytes', () => {
  it('refuses a declared length over the bound, and takes one at it or without one', () => {
    const body = new CappedBytes(10);
    expect(body.refuses(11)).to.equal(true);
    expect(body.refuses(10)).to.equal(false);
    expect(body.refuses(undefined)).to.equal(false);
  });

  it('keeps chunks up to the bound and stops at the first that goes past it', () => {
    const body = new CappedBytes(10);
    expect(body.add(Buffer.from('hello'))).to.equal(true);
    expect(body.add(Buffer.from('world'))).to.equal(true);
    expect(body.bytes().toString()).to.equal('helloworld');
    expect(body.add(Buffer.from('!'))).to.equal(false);
  });

  it('answers a single chunk as it is, without copying it', () => {
    const chunk = Buffer.from('one');
    const body = new CappedBytes(100);
    body.add(chunk);
    expect(body.bytes()).to.equal(chunk);
    expect(new CappedBytes(1).bytes()).to.have.length(0);
  });
});
