// A service's instance threads (lib/worker/execution/instance-pool.ts), in this
// process, through the service that owns them (hosted-service.ts,
// execution.ts): real components, real threads, no CLI and no HTTP. Which
// thread a call ran on shows in RUNAWAY's per-instance call counter.

import { getEventListeners } from 'node:events';
import { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { publishedBytes } from '../../lib/byte-ring.js';
import type { HostedService } from '../../lib/worker/execution/hosted-service.js';
import { compileCoreModules } from '../../lib/worker/execution/compile-core-modules.js';
import { handleKey } from '../../lib/worker/execution/handle-ids.js';
import { InstancePool } from '../../lib/worker/execution/instance-pool.js';
import type { StreamFailure, StreamControl, StreamSink } from '../../lib/worker/execution/invocation.js';
import { ServiceRegistry } from '../../lib/worker/execution/registry.js';
import { eventually, letTimePass } from '../support/eventually.js';
import { NESTED, RUNAWAY, SLOW } from '../support/fixtures.js';
import { catalog, invoke, invokeJson, refusal, silentLog } from '../support/hosting.js';
import { DROPS } from '../support/streaming-fixtures.js';

const TIMEOUT_MS = 1_000;
const HEAP_MB = 64;
const UNLOADED = [500, 'RT_ERR_INSTANCE_LOST', 'the service was unloaded'];

/** A stream's sink that keeps what it is given. */
class Collected implements StreamSink {
  readonly chunks: string[] = [];
  ended = false;
  readonly #arrivals: (() => void)[] = [];
  readonly done: Promise<StreamFailure | undefined>;
  #end!: (failure: StreamFailure | undefined) => void;

  constructor() {
    this.done = new Promise((resolve) => (this.#end = resolve));
  }

  chunk(bytes: Uint8Array, _items: number): void {
    this.chunks.push(Buffer.from(bytes).toString());
    for (const wake of this.#arrivals.splice(0)) wake();
  }

  end(failure?: StreamFailure): void {
    this.ended = true;
    this.#end(failure);
  }

  /** Resolves once `count` chunks have come. */
  async until(count: number): Promise<void> {
    while (this.chunks.length < count) await new Promise<void>((resolve) => this.#arrivals.push(resolve));
  }
}

describe('instance pool (in process, real threads)', function () {
  this.timeout(120_000);
  let registry: ServiceRegistry;

  /** The service `name` of a repository made of `entries`, loaded. */
  async function host(entries: Parameters<typeof catalog>[0], name: string): Promise<HostedService> {
    const { services, failures } = await catalog(entries);
    expect(failures).to.deep.equal([]);
    await registry.load(services, []);
    const hosted = registry.get('acme', name);
    if (!hosted) throw new Error(`acme.${name} was not loaded`);
    return hosted;
  }

  /** RUNAWAY on threads: `pool_size` instances, `max_queue` calls waiting at most. */
  const runaway = (sidecar: string): Promise<HostedService> => host({ runaway: RUNAWAY, 'runaway.toml': { raw: sidecar } }, 'runaway');

  beforeEach(() => {
    registry = new ServiceRegistry({ timeoutMs: TIMEOUT_MS, memoryCapBytes: 16 << 20, threadHeapMb: HEAP_MB, log: silentLog });
  });

  afterEach(async () => {
    await registry.load([], []);
  });

  it('runs on threads, one instance per thread, each keeping its own state', async () => {
    const pool = await runaway('pool_size = 2\n');
    expect(pool.placement).to.equal('threads');
    expect(pool.liveInstances()).to.equal(2);
    // Two overlapping calls land on different instances: each counts its first call.
    const counts = await Promise.all([invoke(pool, 'busy-count', { spins: 20_000_000 }, TIMEOUT_MS), invoke(pool, 'busy-count', { spins: 20_000_000 }, TIMEOUT_MS)]);
    expect(counts).to.deep.equal([1, 1]);
  });

  it("tells how long a call ran by the thread's clock, not counting the time its answer waited for the main thread", async () => {
    const d = (await catalog({ slow: SLOW })).services[0];
    const modules = await compileCoreModules(d.artifact, 16 << 20, 'plain');
    const pool = new InstancePool({ descriptor: d, modules, memoryCapBytes: 16 << 20, issuer: { workerId: 1, key: handleKey(), scope: 'test.slow' } }, { size: 1, maxQueue: 4, timeoutMs: TIMEOUT_MS, heapMb: HEAP_MB, onOutput: () => {} });
    try {
      await pool.start();
      const spin = d.methods.findIndex((m) => m.name === 'spin');
      const runs: number[] = [];
      for (let i = 0; i < 3; i++) {
        const outcome = pool.run({ kind: 'call', method: spin, args: { kind: 'arguments', args: [10] } }, performance.now() + TIMEOUT_MS, { onRun: (ms) => runs.push(ms) });
        // The thread answers meanwhile; its answer waits, as behind other requests' work in a loaded worker.
        const end = performance.now() + 100;
        while (performance.now() < end);
        expect(await outcome).to.deep.equal({ kind: 'ok', value: 10 });
      }
      expect(runs).to.have.length(3);
      for (const ms of runs) expect(ms).to.be.below(50);
    } finally {
      await pool.close();
    }
  });

  it('gives each idle thread a call, queues the next for the first thread free, and refuses one beyond max_queue (503, Retry-After)', async () => {
    const pool = await runaway('pool_size = 2\nmax_queue = 1\n');
    const running = [invoke(pool, 'busy-count', { spins: 1000 }, TIMEOUT_MS), invoke(pool, 'busy-count', { spins: 1000 }, TIMEOUT_MS)];
    const queued = invoke(pool, 'count', {}, TIMEOUT_MS);
    const refused = await refusal(invoke(pool, 'count', {}, TIMEOUT_MS));
    expect([refused.status, refused.code, refused.headers]).to.deep.equal([503, 'RT_ERR_SERVICE_OVERLOADED', { 'Retry-After': '1' }]);
    // The queued call ran after one of the others, on the same instance: its second call.
    expect(await Promise.all([...running, queued])).to.deep.equal([1, 1, 2]);
  });

  it('answers a waiting call 504 at its deadline, serves the next from an extra thread while every thread is stuck, and cuts the stuck calls off at theirs', async () => {
    const pool = await runaway('pool_size = 2\n');
    const settled: string[] = [];
    const track = <T>(name: string, promise: Promise<T>): Promise<T> => promise.finally(() => settled.push(name));
    const stuck = [track('stuck', refusal(invoke(pool, 'forever', {}, 3 * TIMEOUT_MS))), track('stuck', refusal(invoke(pool, 'forever', {}, 3 * TIMEOUT_MS)))];
    // Expires while it waits: before any thread is counted stuck (100 ms), so no extra thread can take it.
    const expired = await refusal(invoke(pool, 'count', {}, 50));
    expect([expired.status, expired.code]).to.deep.equal([504, 'RT_ERR_CALL_TIMEOUT']);
    expect(await track('served', invoke(pool, 'count', {}, 3 * TIMEOUT_MS))).to.equal(1);
    for (const cut of await Promise.all(stuck)) expect([cut.status, cut.code]).to.deep.equal([504, 'RT_ERR_CALL_TIMEOUT']);
    expect(settled).to.deep.equal(['served', 'stuck', 'stuck']);
    // Fresh threads replaced the cut ones; the extra one stays until it has been idle for 10 s.
    expect(pool.liveInstances()).to.equal(3);
    expect(await invoke(pool, 'count', {}, TIMEOUT_MS)).to.be.a('number');
  });

  it('never runs a waiting call whose client left: it is answered 499 at once, and the next call is served in its place', async () => {
    const pool = await runaway('pool_size = 2\n');
    // 0.7–7 s of spinning on the 2-core VM, by its speed at the time: their deadline only has to outlast that.
    const holding = [0, 1].map(() => invoke(pool, 'busy-count', { spins: 300_000_000 }, 30 * TIMEOUT_MS));
    let threadFree = false;
    for (const call of holding) void call.then(() => (threadFree = true));
    // Leaves before any thread is counted stuck (100 ms), so no extra thread can take the call.
    const client = new AbortController();
    const left = refusal(invoke(pool, 'count', {}, 30 * TIMEOUT_MS, client.signal));
    // Waiting once the pool listens for its client leaving.
    await eventually(() => getEventListeners(client.signal, 'abort').length > 0, { what: 'the call to wait for a thread', intervalMs: 1 });
    const leftAt = performance.now();
    client.abort();
    const refused = await left;
    expect([refused.status, refused.code]).to.deep.equal([499, 'RT_ERR_CLIENT_CLOSED_REQUEST']);
    // An order, not a time (a 50 ms bound measured 79 ms on a loaded machine): both threads still spin.
    expect(threadFree, 'answered when its client left, not when a thread was free').to.equal(false);
    expect(performance.now() - leftAt, 'answered at once').to.be.below(500);
    // The instances' counters: the holding calls were their first, and two overlapping calls (one on each) their second.
    expect(await Promise.all(holding)).to.deep.equal([1, 1]);
    const next = [0, 1].map(() => invoke(pool, 'busy-count', { spins: 20_000_000 }, TIMEOUT_MS));
    expect(await Promise.all(next), 'the call that left never ran').to.deep.equal([2, 2]);
  });

  it('answers the call of a thread that died (its JS heap limit) 500 RT_ERR_INSTANCE_LOST, and replaces the thread', async () => {
    const pool = await host({ nested: NESTED, 'nested.toml': { raw: 'pool_size = 2\n' } }, 'nested');
    // Decoded on the thread (a large body), ~900,000 nested lists outgrow its heap.
    const items = new Array<string>(900_000).fill('[1]').join(',');
    const lost = await refusal(invokeJson(pool, 'lists', `{"x":[${items}]}`, 30_000));
    expect([lost.status, lost.code, lost.details]).to.deep.equal([
      500,
      'RT_ERR_INSTANCE_LOST',
      `the instance was lost: its thread reached its JS heap limit (runtime.max_thread_heap_mb: ${HEAP_MB} MiB) during this call`,
    ]);
    expect(pool.liveInstances()).to.equal(2);
    expect(await Promise.all([invoke(pool, 'ok', {}, TIMEOUT_MS), invoke(pool, 'ok', {}, TIMEOUT_MS)])).to.deep.equal([1, 1]);
  });

  describe('streams', function () {
    // A stream that stops short hangs its test: fail it sooner than the suite's bound.
    this.timeout(30_000);
    let drops: HostedService;

    beforeEach(async () => {
      drops = await host({ drops: DROPS }, 'drops');
    });

    const open = async (sink: Collected, n: number, window: number): Promise<StreamControl> => {
      const input = { kind: 'json', bytes: Buffer.from(JSON.stringify({ n, 'delay-ms': 0 })) } as const;
      const invocation = { method: drops.method('start')!, input, deadline: performance.now() + TIMEOUT_MS, answer: 'json' } as const;
      const opening = await drops.openStream(invocation, { framing: 'ndjson', window, streamDeadline: performance.now() + 10 * TIMEOUT_MS, sink });
      if (opening.kind !== 'open') throw new Error(`the stream did not open: ${opening.kind}`);
      return opening.control;
    };

    it('makes items as far as the window goes, and ends once next answers none', async () => {
      const sink = new Collected();
      const handle = await open(sink, 3, 2);
      await sink.until(1);
      // The first item filled the window: nothing more comes until the reader grants it back.
      await letTimePass(100, 'an item made beyond the window would have come by now');
      expect(sink.chunks).to.deep.equal(['0\n']);
      handle.grant(2);
      await sink.until(2);
      handle.grant(2);
      await sink.until(3);
      // The third item filled it again: `next` is called once more, and answers none, only once it is read.
      await letTimePass(100, 'an end found without room would have come by now');
      expect(sink.ended).to.equal(false);
      handle.grant(2);
      expect(await sink.done).to.equal(undefined);
      expect(sink.chunks).to.deep.equal(['0\n', '1\n', '2\n']);
    });

    it('gives the sink views of one shared ring, many items at a time, with no message or copy per item', async () => {
      const n = 1_000;
      const text = Array.from({ length: n }, (_, i) => `${i}\n`).join('');
      const buffers = new Set<ArrayBufferLike>();
      let threadMessages = 0;
      const emit = Worker.prototype.emit;
      Worker.prototype.emit = function (this: Worker, event: string | symbol, ...args: unknown[]) {
        if (event === 'message') threadMessages++;
        return emit.call(this, event, ...args);
      };
      try {
        const sink = new (class extends Collected {
          override chunk(bytes: Uint8Array, items: number): void {
            buffers.add(bytes.buffer);
            if (this.chunks.length === 0) {
              // The main thread busy with something else: the thread makes every item meanwhile, unasked.
              const ring = bytes.buffer as SharedArrayBuffer;
              const until = performance.now() + 5_000;
              while (publishedBytes(ring) < text.length && performance.now() < until);
            }
            super.chunk(bytes, items);
          }
        })();
        const handle = await open(sink, n, 64 * 1024);
        const afterOpen = threadMessages;
        expect(await sink.done).to.equal(undefined);
        handle.grant(text.length);
        expect(sink.chunks.join('')).to.equal(text);
        expect([...buffers].every((b) => b instanceof SharedArrayBuffer), 'views of shared memory, not copies').to.equal(true);
        expect(buffers.size, 'one ring').to.equal(1);
        expect(sink.chunks.length, 'deliveries: the first item, then the rest at once').to.be.at.most(3);
        // Its doorbell and its end, where a message per item would be a thousand.
        expect(threadMessages - afterOpen, 'messages from the thread once the stream was open').to.be.at.most(3);
      } finally {
        Worker.prototype.emit = emit;
      }
    });

    it('a cancelled stream drops its resource and tells its sink nothing more; the thread serves the next call', async () => {
      const sink = new Collected();
      const handle = await open(sink, 1_000, 2);
      await sink.until(1);
      handle.cancel();
      // pool_size 1: these wait for the thread to have dropped the stream's resource.
      expect(await invoke(drops, 'live', {}, TIMEOUT_MS)).to.equal(0);
      expect(await invoke(drops, 'dropped', {}, TIMEOUT_MS)).to.equal(1);
      expect(sink.ended).to.equal(false);
      expect(sink.chunks).to.deep.equal(['0\n']);
    });

    it('a cancelled stream calls next no more, though its thread is in the middle of a run of items', async () => {
      // Five times: a cancel may also land between two runs, where the thread reads its messages anyway.
      for (let attempt = 0; attempt < 5; attempt++) {
        let ring: SharedArrayBuffer | undefined;
        // Set once the stream opens; the sink's chunks, made before that, read it when they come.
        const opened: { handle?: StreamControl } = {};
        // A reader that takes every item at once: the thread makes items in runs of PUMP_SLICE_MS, reading no message.
        const sink = new (class extends Collected {
          override chunk(bytes: Uint8Array, items: number): void {
            ring ??= bytes.buffer as SharedArrayBuffer;
            super.chunk(bytes, items);
            opened.handle?.grant(bytes.length);
          }
        })();
        const handle = (opened.handle = await open(sink, 100_000_000, 1024 * 1024));
        handle.grant(sink.chunks.join('').length);
        await sink.until(50);
        handle.cancel();
        const atCancel = publishedBytes(ring!);
        expect(await invoke(drops, 'live', {}, TIMEOUT_MS)).to.equal(0);
        // At most the item it was making. Without the ring closing, it made items to the end of its run (~2 ms of
        // them: the first or second attempt failed so in 5 runs of 5), the bytes delivered meanwhile released at once.
        expect(publishedBytes(ring!) - atCancel, `bytes published after the cancel, attempt ${attempt + 1}`).to.be.at.most(16);
      }
    });
  });

  describe('shutdown', () => {
    it('drain: the calls made finish, then the threads end and later calls are answered as unloaded', async () => {
      const pool = await runaway('pool_size = 2\n');
      const running = invoke(pool, 'busy-count', { spins: 20_000_000 }, TIMEOUT_MS);
      await pool.drain();
      expect(await running).to.equal(1);
      expect(pool.liveInstances()).to.equal(0);
      const late = await refusal(invoke(pool, 'count', {}, TIMEOUT_MS));
      expect([late.status, late.code, late.details]).to.deep.equal(UNLOADED);
    });

    it('close: running and waiting calls are answered as unloaded at once, not at their deadline', async () => {
      const pool = await runaway('pool_size = 2\n');
      const started = performance.now();
      const calls = [invoke(pool, 'forever', {}, 10 * TIMEOUT_MS), invoke(pool, 'forever', {}, 10 * TIMEOUT_MS), invoke(pool, 'count', {}, 10 * TIMEOUT_MS)].map(refusal);
      await pool.close();
      for (const refused of await Promise.all(calls)) expect([refused.status, refused.code, refused.details]).to.deep.equal(UNLOADED);
      expect(performance.now() - started).to.be.below(10 * TIMEOUT_MS);
    });
  });
});
