import { expect } from 'chai';
import { NdjsonItems } from '../../lib/worker/execution/ndjson-items.js';
import type { WitType } from '../../lib/wit/types.js';

const u32: WitType = { kind: 'primitive', name: 'u32' };
const pair: WitType = { kind: 'tuple', elements: [u32, { kind: 'primitive', name: 'string' }] };

async function* pieces(...texts: string[]): AsyncGenerator<Uint8Array> {
  for (const text of texts) yield new TextEncoder().encode(text);
}

/** What the glue is given, step by step, and the failure once the steps are done. */
async function steps(items: NdjsonItems, source: AsyncIterable<Uint8Array>): Promise<unknown[]> {
  const given: unknown[] = [];
  for await (const step of items.items(source)) given.push(step);
  return given;
}

describe('NDJSON items of a stream<T> parameter', () => {
  it('decodes lines split across pieces, with CRLF, blank lines and no last newline; numbers go a piece at a time', async () => {
    const items = new NdjsonItems(u32, 'n');
    expect(await steps(items, pieces('1\n2', '\r\n\n 3', '0\n', '4'))).to.deep.equal([[1], [2], [30], [4]]);
    expect(await steps(new NdjsonItems(u32, 'n'), pieces('5\n6\n7', '\n'))).to.deep.equal([[5, 6], [7]]);
    expect(items.failure).to.equal(undefined);
  });

  it('gives other items one at a time, decoded as the glue takes them', async () => {
    const items = new NdjsonItems(pair, 'p');
    expect(await steps(items, pieces('[1, "a"]\n[2, "b"]\n'))).to.deep.equal([[1, 'a'], [2, 'b']]);
  });

  it('ends at the first line that is not JSON or not a T, naming it by its item index, once the items before it are taken', async () => {
    const notJson = new NdjsonItems(u32, 'n');
    const generator = notJson.items(pieces('1\n\n2\nthree\n4\n'));
    expect((await generator.next()).value).to.deep.equal([1, 2]);
    expect(notJson.failure, 'not yet: the guest has the items before it to take').to.equal(undefined);
    expect((await generator.next()).done).to.equal(true);
    expect(notJson.failure?.kind).to.equal('invalid-json');
    expect(notJson.failure?.details).to.match(/^n\[2\] is not JSON \(.+\): "three"$/);
    const unfit = new NdjsonItems(pair, 'p');
    expect(await steps(unfit, pieces('[1, "a"]\n', '[1, 2]\n[3, "c"]\n'))).to.deep.equal([[1, 'a']]);
    expect(unfit.failure?.kind).to.equal('invalid-arguments');
    expect(unfit.failure?.details).to.match(/^p\[1\]\[1\]: expected string/);
  });

  it('gives nothing for an empty body', async () => {
    const items = new NdjsonItems(u32, 'n');
    expect(await steps(items, pieces())).to.deep.equal([]);
    expect(await steps(items, pieces('\n\n'))).to.deep.equal([]);
    expect(items.failure).to.equal(undefined);
  });
});
