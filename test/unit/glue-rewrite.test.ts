// rt's treatment of jco's glue (lib/primary/glue-rewrite.ts): the debug
// switch is read from the environment once, when the glue loads, not on every
// call. Checked on text, and on the glue the current jco-transpile makes for
// a real component, by counting the glue's reads of `process.env`.

import { expect } from 'chai';
import { buildComponent, type WatSource } from '../../examples/builder.js';
import { examples } from '../../examples/index.js';
import { rewriteGlue } from '../../lib/primary/glue-rewrite.js';
import { loadWithJco } from '../support/jco-instance.js';

const READ = 'globalThis?.process?.env?.JCO_DEBUG';

/** Runs `fn` while counting reads of properties of `process.env`. */
function countingEnvReads(fn: () => void): number {
  const env = process.env;
  let reads = 0;
  process.env = new Proxy(env, {
    get(target, key) {
      reads++;
      return Reflect.get(target, key) as unknown;
    },
  });
  try {
    fn();
  } finally {
    process.env = env;
  }
  return reads;
}

describe('glue rewrite', function () {
  this.timeout(60_000);

  it('hoists every read of the debug switch into one constant after the directive', () => {
    const glue = `"use components";\nexport function instantiate() {\n  const a = () => { if (!${READ}) { return; } };\n  const b = () => ${READ};\n}\n`;
    const { text, debugReads } = rewriteGlue(glue);
    expect(debugReads).to.equal(2);
    expect(text.split('\n')[0]).to.equal('"use components";');
    expect(text.split('\n')[1]).to.equal(`const RT_JCO_DEBUG_AT_LOAD = ${READ};`);
    expect(text.split(READ).length - 1).to.equal(1);
    expect(text).to.include('if (!RT_JCO_DEBUG_AT_LOAD) { return; }');
  });

  it('leaves glue without the read as it is', () => {
    const glue = 'export function instantiate() {}\n';
    expect(rewriteGlue(glue)).to.deep.equal({ text: glue, debugReads: 0 });
  });

  it('the current jco-transpile’s glue reads the environment on every call; rewritten, never, and it answers the same', async () => {
    const source = (await examples.find((e) => e.name === 'calculator')!.source()) as WatSource;
    const bytes = await buildComponent(source);
    let found = 0;
    const rewritten = await loadWithJco(bytes, 'component', (glue) => {
      const out = rewriteGlue(glue);
      found = out.debugReads;
      return out.text;
    });
    // A jco that reads the switch some other way fails here: the rewrite would have nothing left to do.
    expect(found, 'reads of the debug switch in the glue').to.be.at.least(1);
    const plain = await loadWithJco(bytes);
    const addOf = async (component: typeof plain) => ((await component.instantiate())['example:calculator/ops@1.0.0'] as { add(a: number, b: number): number }).add;
    const [plainAdd, rewrittenAdd] = [await addOf(plain), await addOf(rewritten)];
    expect(countingEnvReads(() => expect(plainAdd(20, 22)).to.equal(42))).to.be.at.least(1);
    expect(countingEnvReads(() => expect(rewrittenAdd(20, 22)).to.equal(42))).to.equal(0);
  });
});
