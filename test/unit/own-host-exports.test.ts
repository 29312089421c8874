// A WASI 0.3 component's own exports on rt's own host of the async ABI
// (lib/worker/execution/own-host.ts), in process, as an instance thread makes
// its instance (instance-spec.ts, component-instance.ts): async functions of
// the types invoke passes, their streams and futures both ways, plain
// functions beside them; each answer checked against jco's glue running the
// same component, so that the two hosts cannot disagree on a value.

import { expect } from 'chai';
import { hasJspi } from '../../lib/platform.js';
import { compileCoreModules } from '../../lib/worker/execution/compile-core-modules.js';
import { ComponentInstance, type CallOutcome } from '../../lib/worker/execution/component-instance.js';
import { instanceSpec } from '../../lib/worker/execution/instance-spec.js';
import { WrittenItems } from '../../lib/worker/execution/stream-items.js';
import type { ServiceDescriptor } from '../../lib/service.js';
import { catalog } from '../support/hosting.js';
import { letTimePass } from '../support/eventually.js';
import { P3_PRODUCER, P3_SLEEPER } from '../support/async-components.js';

const CAP = 64 << 20;

async function descriptor(name: string, source: typeof P3_PRODUCER): Promise<ServiceDescriptor> {
  const { services, failures } = await catalog({ [name]: source });
  expect(failures).to.deep.equal([]);
  return services[0];
}

/** An instance of `d` on rt's own host, or (`glue`) on jco's. */
async function instance(d: ServiceDescriptor, glue = false): Promise<ComponentInstance> {
  const spec = instanceSpec(d, await compileCoreModules(d.artifact, CAP, 'plain'), CAP);
  return ComponentInstance.create(glue ? { ...spec, own: undefined } : spec);
}

/** What a call of `name` comes to, awaited (a future's value too). */
async function call(d: ServiceDescriptor, on: ComponentInstance, name: string, args: unknown[]): Promise<CallOutcome> {
  const index = d.methods.findIndex((m) => m.name === name);
  const outcome = on.call(index, args);
  return outcome.kind === 'ok' ? on.settled(outcome.value) : outcome;
}

/** Every item of the stream a call of `name` answered with, read as an instance thread reads it (bytes lent until the next read: copied). */
async function written(d: ServiceDescriptor, on: ComponentInstance, name: string, args: unknown[], bytes: boolean): Promise<unknown[]> {
  const answered = await call(d, on, name, args);
  if (answered.kind !== 'ok') throw new Error(JSON.stringify(answered));
  const items = new WrittenItems(on, answered.value, bytes);
  const all: unknown[] = [];
  for (;;) {
    const next = items.nextNow() ?? (await items.next());
    if (next.kind !== 'ok') throw new Error(JSON.stringify(next));
    if (next.value === undefined) break;
    const got = next.value as unknown[];
    all.push(...(bytes ? got.map((b) => Uint8Array.from(b as Uint8Array)) : got));
  }
  items.done();
  return all;
}

async function* chunksOf(...chunks: (Uint8Array | number[])[]): AsyncGenerator<unknown> {
  for (const chunk of chunks) yield chunk;
}

// jco's glue runs a WASI 0.3 component only through JSPI: without it, rt does not load one (platform.test.ts).
if (hasJspi) {
  describe("rt's own host: a WASI 0.3 component's own exports (in process, against jco's glue)", function () {
    this.timeout(120_000);
    let producer: ServiceDescriptor;
    let own: ComponentInstance;
    let glue: ComponentInstance;

    before(async () => {
      producer = await descriptor('p3-producer', P3_PRODUCER);
      own = await instance(producer);
      glue = await instance(producer, true);
    });

    it('serves the component on its own host, and jco’s glue the same component when asked', () => {
      expect(own.host).to.equal('rt');
      expect(glue.host).to.equal('jco');
    });

    const SHAPES = [
      { name: 'ünïcode', sizes: Uint32Array.of(1, 2, 4_000_000_000), tag: { tag: 'some', val: 7 }, weight: { tag: 'heavy', val: -5n } },
      { name: '', sizes: new Uint32Array(0), tag: { tag: 'some', val: undefined }, weight: { tag: 'light' } },
      { name: 'x', sizes: Uint32Array.of(0), tag: { tag: 'none' }, weight: { tag: 'heavy', val: 9_007_199_254_740_993n } },
    ];

    it('lowers records, lists, options of options and variants into the guest, and lifts them back as the glue does', async () => {
      for (const shape of SHAPES) {
        const mine = await call(producer, own, 'mirror', [shape]);
        expect(mine, JSON.stringify(shape, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))).to.deep.equal(await call(producer, glue, 'mirror', [shape]));
        expect(mine.kind).to.equal('ok');
      }
    });

    it('answers the err of a top-level result as the component’s error, as the glue does', async () => {
      const mine = await call(producer, own, 'refuse', ['not today']);
      expect(mine).to.deep.equal({ kind: 'component-error', payload: 'not today' });
      expect(mine).to.deep.equal(await call(producer, glue, 'refuse', ['not today']));
    });

    it('awaits a future the guest writes after it returned, and fails a call whose future the guest drops unwritten', async () => {
      expect(await call(producer, own, 'later', [41])).to.deep.equal({ kind: 'ok', value: 42 });
      expect(await call(producer, own, 'later', [41])).to.deep.equal(await call(producer, glue, 'later', [41]));
      const dropped = await call(producer, own, 'later', [0]);
      expect(dropped).to.include({ kind: 'trap', message: 'the guest dropped a future it had not written' });
    });

    it('calls plain functions beside the async ones: a result by pointer, then the guest’s post-return', async () => {
      expect(await call(producer, own, 'plain', [])).to.deep.equal({ kind: 'ok', value: 5 });
      const posts = Number((await call(producer, own, 'posts', []) as { value: number }).value);
      expect(await call(producer, own, 'greet', ['grüß dich'])).to.deep.equal({ kind: 'ok', value: 'grüß dich' });
      expect(await call(producer, own, 'posts', [])).to.deep.equal({ kind: 'ok', value: posts + 1 });
    });

    it('reads a stream<u8> the guest writes, 16 KiB at a time, and a stream<u32> item by item, as the glue does', async () => {
      const chunks = (await written(producer, own, 'bytes', [100_000], true)) as Uint8Array[];
      expect(chunks.length, 'a chunk a write of the guest’s (16 KiB)').to.equal(Math.ceil(100_000 / 16_384));
      const all = Buffer.concat(chunks);
      expect(all.length).to.equal(100_000);
      expect(all.every((b, i) => b === (i & 255))).to.equal(true);
      const numbers = await written(producer, own, 'numbers', [1_000], false);
      expect(numbers).to.deep.equal(Array.from({ length: 1_000 }, (_, i) => i));
      expect(numbers).to.deep.equal(await written(producer, glue, 'numbers', [1_000], false));
      // A guest that traps after its items: the read that waits for more fails with the trap.
      const broken = await written(producer, await instance(producer), 'broken', [300], false).catch((e: Error) => e.message);
      expect(broken).to.match(/"kind":"trap".*unreachable/);
    });

    it('hands the guest a stream<u8> and a stream<u32> from what rt reads (a request body, NDJSON items)', async () => {
      expect(await call(producer, own, 'length', [chunksOf(new Uint8Array(5_000), new Uint8Array(3), new Uint8Array(70_000))])).to.deep.equal({ kind: 'ok', value: 75_003n });
      expect(await call(producer, own, 'length', [chunksOf()])).to.deep.equal({ kind: 'ok', value: 0n });
      // Numbers come in arrays, a chunk's lines at a time (ndjson-items.ts).
      const items = Array.from({ length: 3_000 }, (_, i) => i);
      const batches = () => chunksOf(items.slice(0, 1), items.slice(1, 2_500), items.slice(2_500));
      expect(await call(producer, own, 'total', [batches()])).to.deep.equal({ kind: 'ok', value: BigInt((2_999 * 3_000) / 2) });
      expect(await call(producer, own, 'total', [batches()])).to.deep.equal(await call(producer, glue, 'total', [batches()]));
    });

    it('tells a task waiting on the body that rt gave up on it (TASK_CANCELLED): the guest acknowledges, the call ends with nothing', async () => {
      const index = producer.methods.findIndex((m) => m.name === 'length');
      let release: () => void = () => {};
      const stalled = (async function* () {
        yield new Uint8Array(10);
        await new Promise<void>((resolve) => (release = resolve));
      })();
      const [called, task] = own.started(() => own.call(index, [stalled]));
      expect(called.kind).to.equal('ok');
      await letTimePass(20, 'the guest waits for more of the body');
      task!.cancel();
      expect(await own.settled((called as { value: unknown }).value, task)).to.deep.equal({ kind: 'ok', value: undefined });
      release();
      expect(await call(producer, own, 'plain', [])).to.deep.equal({ kind: 'ok', value: 5 });
    });

    it('serves a component with a wasi:clocks import and a sync export beside its async ones (the sleeper) on its own host', async () => {
      const sleeper = await descriptor('p3-sleeper', P3_SLEEPER);
      const instance_ = await instance(sleeper);
      expect(instance_.host).to.equal('rt');
      const napped = await call(sleeper, instance_, 'nap', [20_000_000n]);
      expect(napped.kind).to.equal('ok');
      expect(Number((napped as { value: bigint }).value)).to.be.within(15_000_000, 2_000_000_000);
      expect(await call(sleeper, instance_, 'plain', [])).to.deep.equal({ kind: 'ok', value: 7 });
      expect(await call(sleeper, instance_, 'boom', [])).to.include({ kind: 'trap', code: 'RT_ERR_COMPONENT_TRAPPED' });
    });
  });
}
