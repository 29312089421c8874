// Transpiling a component's hollow twin (lib/primary/hollow-component.ts):
// for every test fixture (WAT, componentize-js, C, nested components), jco's
// glue and imports from the hollow twin are those of the component itself,
// and the core module files, refilled, are the component's own.

import { expect } from 'chai';
import { transpileBytes as transpile } from '@bytecodealliance/jco-transpile';
import { buildComponent, type ComponentSource } from '../../examples/builder.js';
import { hollow, refill } from '../../lib/primary/hollow-component.js';
import * as fixtures from '../support/fixtures.js';
import * as streaming from '../support/streaming-fixtures.js';
import { compile, TRANSPILE_OPTIONS } from '../../lib/primary/compile-job.js';
import { rewriteGlue } from '../../lib/primary/glue-rewrite.js';
import { P3_HANDLER } from '../support/async-components.js';
import { hasJspi } from '../../lib/platform.js';
import { p3, type HandlerRequest } from '../../lib/worker/wasi-host/index.js';
import type { ResponseParts } from '../../lib/worker/wasi-host/p3/http-types.js';
import { byteReader } from '../../lib/worker/wasi-host/p3/bodies.js';
import { TASK_FAILED_IMPORT } from '../../lib/task-failed-import.js';
import { wasi03Interfaces } from '../../lib/worker/sandbox/wasi-p3.js';
import { loadTranspiled } from '../support/jco-instance.js';
import { eventually } from '../support/eventually.js';

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

describe('hollow component: not for the async ABI', function () {
  this.timeout(120_000);
  const asyncExports = ['wasi:http/handler@0.3.0#handle'];
  const options = { ...TRANSPILE_OPTIONS, asyncMode: 'jspi' as const, asyncExports };
  const glueOf = (files: Record<string, Uint8Array>) => new TextDecoder().decode(files['component.js']);

  it("is not used for a component of the async ABI: jco's glue for it depends on which callbacks may suspend on an import, which no hollow one does", async () => {
    const bytes = await buildComponent(P3_HANDLER);
    const whole = await transpile(bytes, { ...options, asyncExports: [...asyncExports] });
    const fromHollow = await transpile(hollow(bytes)!.bytes, { ...options, asyncExports: [...asyncExports] });
    // A check that can fail: the hollow twin's glue runs the callback as a call that may not suspend.
    expect(glueOf(fromHollow.files)).to.match(/callback_0 = Object\.assign\(exports\d+\['\[callback\][^']*'\], \{ _jcoMaySuspend: false \}\)/);
    expect(glueOf(whole.files)).to.match(/callback_0 = WebAssembly\.promising\(exports\d+\['\[callback\]/);
    const compiled = await compile(bytes, () => {}, { asyncExports, uninstrumented: 'a handler' });
    expect(new TextDecoder().decode(compiled.glue)).to.equal(rewriteGlue(glueOf(whole.files)).text);
  });

  // Instances of a WASI 0.3 component need JSPI (Node 24, 26).
  if (hasJspi) {
    it('so a callback may call an async host import (a wait after a wait), which traps in the hollow twin’s glue', async () => {
      const bytes = await buildComponent(P3_HANDLER);
      const hollowed = hollow(bytes)!;
      const fromHollow = await transpile(hollowed.bytes, { ...options, asyncExports: [...asyncExports] });
      const asHollow = { files: refill(fromHollow.files, hollowed)!, imports: fromHollow.imports };
      const { Request } = p3.httpTypes['wasi:http/types@0.3'] as { Request: new (head: HandlerRequest, contents: AsyncIterable<Uint8Array>, trailers: Promise<unknown>) => object };
      const exit = (): never => {
        throw new Error('exit');
      };
      // PURGE: the guest writes its body, then (in the callback that hears the write done) naps 300 ms through wait-for, then traps.
      const purge = async (transpiled: { files: Record<string, Uint8Array>; imports: string[] }): Promise<{ body: string; failure: string; ms: number }> => {
        const failures: unknown[] = [];
        const imports = { [TASK_FAILED_IMPORT]: (e: unknown) => failures.push(e), 'wasi:http/types': p3.httpTypes['wasi:http/types@0.3'], 'wasi:clocks/monotonic-clock': wasi03Interfaces({ env: [], exit })['wasi:clocks/monotonic-clock@0.3'] };
        const component = await loadTranspiled(transpiled, imports, 'component', (text) => rewriteGlue(text).text);
        const handle = ((await component.instantiate()).handler as { handle: (request: object) => Promise<{ parts(): ResponseParts }> }).handle;
        const began = performance.now();
        const head: HandlerRequest = { method: 'PURGE', pathWithQuery: '/', scheme: 'http', authority: 'localhost', headers: [] };
        const parts = (await handle(new Request(head, (async function* () {})(), Promise.resolve({ tag: 'ok', val: undefined })))).parts();
        const reader = byteReader(parts.contents!);
        let body = '';
        const next = () => reader.read(65_536).catch(() => undefined);
        for (let bytes = await next(); bytes; bytes = await next()) body += Buffer.from(bytes).toString();
        await eventually(() => failures.length > 0, { what: 'the task to fail', timeoutMs: 5_000, intervalMs: 10 });
        return { body, failure: String(failures[0]), ms: performance.now() - began };
      };
      const whole = await purge(await transpile(bytes, { ...options, asyncExports: [...asyncExports] }));
      expect(whole.body).to.equal('Hello, world!\n');
      expect(whole.failure, 'the trap it means to make, after its nap').to.match(/unreachable/);
      expect(whole.ms).to.be.at.least(300);
      expect((await purge(asHollow)).failure).to.match(/trying to suspend without WebAssembly\.promising/);
    });
  }
});
