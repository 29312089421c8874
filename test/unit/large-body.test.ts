// Large JSON bodies as the instance thread decodes them (large-body.ts): the
// same arguments, and the same 400s, as the main thread gives small ones.

import { expect } from 'chai';
import { functionCodec } from '../../lib/wit/codec.js';
import type { WitFunction } from '../../lib/wit/types.js';
import { decodeJsonBody, LargeJsonBody } from '../../lib/worker/execution/large-body.js';

const lists: WitFunction = {
  name: 'lists',
  params: [{ name: 'x', type: { kind: 'list', element: { kind: 'list', element: { kind: 'primitive', name: 'u32' } } } }],
  result: null,
};
const codec = functionCodec(lists);
const bytes = (text: string) => new TextEncoder().encode(text);

describe('large JSON bodies', () => {
  it('decode to the arguments the codec gives', () => {
    const [x] = decodeJsonBody(codec, bytes('{"x": [[1, 2], []]}')) as [Uint32Array[]];
    expect(x.map((l) => [...l])).to.deep.equal([[1, 2], []]);
  });

  it('a body that is not JSON: 400 invalid JSON, with the parser\'s complaint', () => {
    const problem = decodeJsonBody(codec, bytes('{"x": [[1, 2], ['));
    expect(problem).to.have.property('code', 'RT_ERR_INVALID_JSON');
    expect(problem).to.have.property('details').that.is.a('string').with.length.above(0);
  });

  it('a body that does not fit the signature: 400 invalid arguments, naming the path', () => {
    expect(decodeJsonBody(codec, bytes('{"x": [[1], [2, -3]]}'))).to.deep.equal({ code: 'RT_ERR_INVALID_ARGUMENTS', details: 'x[1][1]: expected u32 (0..4294967295), got -3' });
    expect(decodeJsonBody(codec, bytes('{"y": []}'))).to.deep.include({ code: 'RT_ERR_INVALID_ARGUMENTS' });
  });

  it('keep bytes that are alone in their buffer, and copy those that share one (they are moved to the thread)', () => {
    const alone = bytes('[[[1]]]');
    expect(new LargeJsonBody(alone).bytes).to.equal(alone);
    const shared = Buffer.from('xx[[[1]]]xx').subarray(2, 9);
    const copied = new LargeJsonBody(shared).bytes;
    expect(copied).to.not.equal(shared);
    expect(copied.buffer).to.not.equal(shared.buffer);
    expect(Buffer.from(copied).toString()).to.equal('[[[1]]]');
  });
});
