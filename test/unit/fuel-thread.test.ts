// Fuel instrumentation on its thread (lib/primary/fuel-thread.ts): the thread
// ends once idle, and a component that asks just then is instrumented all the
// same. Its outcome is cached with the component's transpile: a failure that
// came from the thread and not from the module would keep the component off
// the inline path for as long as that build is cached.

import { expect } from 'chai';
import { parse } from '@bytecodealliance/jco';
import { IDLE_MS, instrumentFuelOffThread } from '../../lib/primary/fuel-thread.js';

describe('fuel instrumentation thread', () => {
  it('instruments a module that arrives as the idle thread is ending', async function () {
    this.timeout(60_000);
    const core: Uint8Array = await parse('(module (func (export "f") (result i32) (i32.const 1)) (memory (export "memory") 1))');
    expect((await instrumentFuelOffThread(core)).ok).to.equal(true);
    // Set after the thread's idle timer, so it fires just after it: the thread is being terminated.
    const outcome = await new Promise<Awaited<ReturnType<typeof instrumentFuelOffThread>>>((resolve) => setTimeout(() => resolve(instrumentFuelOffThread(core)), IDLE_MS));
    expect(outcome.ok ? 'instrumented' : outcome.reason).to.equal('instrumented');
  });
});
