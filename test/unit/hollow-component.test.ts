// Transpiling a component's hollow twin (lib/primary/hollow-component.ts):
// for every test fixture (WAT, componentize-js, C, nested components), jco's
// glue and imports from the hollow twin are those of the component itself,
// and the core module files, refilled, are the component's own.

import { expect } from 'chai';
import { transpileBytes as transpile } from '@bytecodealliance/jco-transpile';
import { TRANSPILE_OPTIONS } from '../../lib/primary/compile-job.js';
import { buildComponent, type ComponentSource } from '../../examples/builder.js';
import { hollow, refill } from '../../lib/primary/hollow-component.js';
import * as fixtures from '../support/fixtures.js';
import * as streaming from '../support/streaming-fixtures.js';

function isSource(value: unknown): value is ComponentSource {
  return typeof value === 'object' && value !== null && 'kind' in value && 'wit' in value;
}

const sources = Object.entries({ ...fixtures, ...streaming }).filter((entry): entry is [string, ComponentSource] => isSource(entry[1]));

describe('hollow component (transpiling without the core modules’ code)', function () {
  this.timeout(600_000);

  it('covers fixtures of every kind', () => {
    expect(new Set(sources.map(([, s]) => s.kind))).to.deep.equal(new Set(['wat', 'js', 'c']));
  });

  for (const [name, source] of sources) {
    it(`${name} (${source.kind}): the glue, imports and core modules are those of the component itself`, async () => {
      const bytes = await buildComponent(source);
      const whole = await transpile(bytes, { ...TRANSPILE_OPTIONS });
      const hollowed = hollow(bytes)!;
      expect(hollowed.modules.length).to.be.greaterThan(0);
      const fromHollow = await transpile(hollowed.bytes, { ...TRANSPILE_OPTIONS });
      const refilled = refill(fromHollow.files, hollowed);
      expect(refilled, 'refilled').to.not.equal(undefined);
      expect(Object.keys(refilled!).sort()).to.deep.equal(Object.keys(whole.files).sort());
      for (const [file, content] of Object.entries(whole.files)) expect(Buffer.compare(Buffer.from(refilled![file]), Buffer.from(content)), file).to.equal(0);
      expect(fromHollow.imports).to.deep.equal(whole.imports);
    });
  }

  it('refuses output whose core modules are not the hollow ones it made', async () => {
    const bytes = await buildComponent(fixtures.SLOW);
    const whole = await transpile(bytes, { ...TRANSPILE_OPTIONS });
    expect(refill(whole.files, hollow(bytes)!)).to.equal(undefined);
  });

  it('leaves bytes that are not sections to jco, which reports them', () => {
    expect(hollow(new Uint8Array([0, 0x61, 0x73, 0x6d]))).to.equal(undefined);
    expect(hollow(Uint8Array.from([0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0, 1, 0xff]))).to.equal(undefined);
  });
});
