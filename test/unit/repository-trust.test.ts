// Which repositories may grant host access (docs/api.md §8).

import { expect } from 'chai';
import { mayGrant } from '../../lib/primary/repository-trust.js';

describe('repository trust', () => {
  it('lets file: repositories grant, and https: ones only when repositories.trusted lists them', () => {
    expect(mayGrant('file:///srv/components', [])).to.equal(true);
    expect(mayGrant('file:./components', [])).to.equal(true);
    expect(mayGrant('https://repo.example/components/', [])).to.equal(false);
    expect(mayGrant('https://repo.example/components/', ['https://other.example/components/'])).to.equal(false);
    expect(mayGrant('https://repo.example/components/', ['https://repo.example/'])).to.equal(false);
    expect(mayGrant('https://repo.example/components/', ['https://repo.example/components/'])).to.equal(true);
  });

  it('takes a trailing slash and the case of the host as the same repository', () => {
    expect(mayGrant('https://repo.example/components', ['https://REPO.example/components/'])).to.equal(true);
    expect(mayGrant('https://repo.example/components/', ['https://repo.example/components'])).to.equal(true);
    expect(mayGrant('https://repo.example/c.wasm', ['https://repo.example/c.wasm'])).to.equal(true);
  });
});
