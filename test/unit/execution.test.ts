// Where a worker runs a service's calls (lib/worker/execution/execution.ts with the
// policy of placement.ts). With fake instances and clocks the test moves:
// slow calls move the service to threads and it comes back after its
// probation; a call past the inline budget is made again on a thread and
// moves the service only if it is long there too; a large body moves it at
// once; a call cut off by its deadline moves it only if it used the budget.
// In this process with a real component: an event-loop stall between fast
// calls leaves the service inline.

import { expect } from 'chai';
import { Execution, type Instances, type ThreadCalls } from '../../lib/worker/execution/execution.js';
import type { InlineCalls } from '../../lib/worker/execution/inline-place.js';
import type { InlineOutcome } from '../../lib/worker/execution/inline-instance.js';
import type { Arguments } from '../../lib/worker/execution/arguments.js';
import type { Outcome, Work } from '../../lib/worker/execution/work.js';
import type { HostedService } from '../../lib/worker/execution/hosted-service.js';
import { PLACEMENT, type Move } from '../../lib/worker/execution/placement.js';
import { ServiceRegistry } from '../../lib/worker/execution/registry.js';
import { FAULTY, SLOW } from '../support/fixtures.js';
import { catalog, invoke, silentLog } from '../support/hosting.js';

const TIMEOUT_MS = 5_000;
const PROBATION_MS = 300;

/** Holds the event loop for `ms`, as a GC pause or a slow request elsewhere in the worker does. */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('execution placement (in process)', function () {
  this.timeout(120_000);
  let registry: ServiceRegistry;
  let moves: Move[];
  let slow: HostedService;

  beforeEach(async () => {
    moves = [];
    registry = new ServiceRegistry({
      timeoutMs: TIMEOUT_MS,
      memoryCapBytes: 16 << 20,
      threadHeapMb: 128,
      log: silentLog,
      moved: (_, move) => moves.push(move),
      placement: { ...PLACEMENT, probationMs: PROBATION_MS },
    });
    await registry.load((await catalog({ slow: SLOW })).services, []);
    slow = registry.get('acme', 'slow')!;
  });

  afterEach(async () => {
    await registry.load([], []);
  });

  const spin = (n: number) => invoke(slow, 'spin', { n }, TIMEOUT_MS);

  it('keeps a fast service inline while the event loop stalls between its calls and their answers', async () => {
    for (let i = 0; i < 200; i++) {
      const answer = spin(10);
      // The call has run; before its answer is taken up, the event loop is held (a GC pause, another request's work).
      if (i % 20 === 0) stall(15);
      expect(await answer).to.equal(10);
    }
    expect(slow.placement).to.equal('inline');
    expect(moves).to.deep.equal([]);
  });
});

/** Wall and CPU clocks that move only when a fake call says. */
class FakeClocks {
  wall = 1_000;
  cpu = 500;
  readonly now = () => this.wall;
  readonly cpuNow = () => this.cpu;
  get clocks() {
    return { now: this.now, cpu: this.cpuNow };
  }
  /** A call's run: `ms` of wall time, as much CPU. */
  run(ms: number): void {
    this.wall += ms;
    this.cpu += ms;
  }
}

/**
 * Instances whose calls cost what the test says: inline, `inlineMs` a call
 * (interrupted at its budget, as the fuel check does); on a thread,
 * `threadMs` (reported as the thread's clock would).
 */
class FakeInstances implements Instances {
  inlineRefusal: string | undefined = undefined;
  inlineMs = 0.1;
  threadMs = 0.1;
  readonly made: ('inline' | 'threads')[] = [];
  /** Where each call ran, and the deadline it was given. */
  readonly calls: { where: 'inline' | 'threads'; deadline: number }[] = [];

  constructor(private readonly clock: FakeClocks) {}

  inline(measure: <T>(run: () => T) => T): Promise<InlineCalls> {
    this.made.push('inline');
    return Promise.resolve({
      call: (_index: number, _args: unknown[], budgetEnd: number, hardEnd: number): Promise<InlineOutcome> => {
        this.calls.push({ where: 'inline', deadline: hardEnd });
        if (this.clock.wall + this.inlineMs > budgetEnd) {
          this.clock.run(budgetEnd - this.clock.wall);
          return Promise.resolve({ kind: 'interrupted' });
        }
        return Promise.resolve(measure(() => (this.clock.run(this.inlineMs), { kind: 'ok', value: 'inline' })));
      },
      callHandles: () => Promise.reject(new Error('no handles here')),
      holdsHandles: false,
      close: () => {},
    });
  }

  threads(): Promise<ThreadCalls> {
    this.made.push('threads');
    let first = true;
    return Promise.resolve({
      name: 'threads',
      takes: () => true,
      live: 1,
      waiting: 0,
      start: () => Promise.resolve(),
      run: <W extends Work>(work: W, deadline: number, options: { onRun?: (ms: number, first: boolean) => void }): Promise<Outcome<W>> => {
        if (work.kind !== 'call') return Promise.reject(new Error(`no ${work.kind} work here`));
        this.calls.push({ where: 'threads', deadline });
        options.onRun?.(this.threadMs, first);
        first = false;
        return Promise.resolve({ kind: 'ok', value: 'threads' } as Outcome<W>);
      },
      drain: () => Promise.resolve(),
      close: () => Promise.resolve(),
    });
  }
}

describe('inline calls that wait together (in process)', function () {
  this.timeout(60_000);
  let registry: ServiceRegistry;

  afterEach(async () => {
    await registry?.load([], []);
  });

  it('a call that waited behind one that trapped runs on a fresh instance, not on the trapped one', async () => {
    registry = new ServiceRegistry({ timeoutMs: TIMEOUT_MS, memoryCapBytes: 16 << 20, threadHeapMb: 128, log: silentLog });
    await registry.load((await catalog({ faulty: FAULTY })).services, []);
    const faulty = registry.get('acme', 'faulty')!;
    expect(await invoke(faulty, 'ok', {}, TIMEOUT_MS)).to.equal(7);
    expect(faulty.placement).to.equal('inline');
    // Issued in one turn: all wait for the same instance, and the first to run traps it.
    const [trap, ...after] = await Promise.allSettled([invoke(faulty, 'boom', {}, TIMEOUT_MS), ...Array.from({ length: 5 }, () => invoke(faulty, 'ok', {}, TIMEOUT_MS))]);
    expect(trap.status).to.equal('rejected');
    expect(((trap as PromiseRejectedResult).reason as { code: string }).code).to.equal('RT_ERR_COMPONENT_TRAPPED');
    expect(after.map((r) => (r.status === 'fulfilled' ? r.value : String((r.reason as Error).message)))).to.deep.equal([7, 7, 7, 7, 7]);
  });
});

describe('execution placement (fake instances and clocks)', () => {
  const settings = { ...PLACEMENT, probationMs: 30_000 };
  const ARGS: Arguments = { kind: 'arguments', args: [] };
  let clock: FakeClocks;
  let instances: FakeInstances;
  let moves: Move[];

  beforeEach(() => {
    clock = new FakeClocks();
    instances = new FakeInstances(clock);
    moves = [];
  });

  const start = () => Execution.start(instances, { log: silentLog, placement: settings, clocks: clock.clocks, onMove: (move) => moves.push(move) });
  const call = (execution: Execution, args: Arguments = ARGS) => execution.run({ kind: 'call', method: 0, args }, clock.wall + 5_000);
  /** Lets a move back inline (its instance made asynchronously) complete. */
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('keeps fast calls inline, and never starts threads for them', async () => {
    const execution = await start();
    for (let i = 0; i < 10 * settings.blockCalls; i++) expect(await call(execution)).to.deep.equal({ kind: 'ok', value: 'inline' });
    expect([execution.placement, moves, instances.made]).to.deep.equal(['inline', [], ['inline']]);
  });

  it('moves calls slow on wall and CPU clocks to threads, and brings the service back inline after its probation', async () => {
    const execution = await start();
    instances.inlineMs = 3;
    // One block makes the policy suspicious, the next (on the CPU clock too) confirms.
    for (let i = 0; i < 2 * settings.blockCalls; i++) expect(await call(execution)).to.deep.equal({ kind: 'ok', value: 'inline' });
    expect(execution.placement).to.equal('threads');
    expect(moves.map((m) => [m.to, m.reason])).to.deep.equal([['threads', 'slow_calls']]);
    expect(await call(execution)).to.deep.equal({ kind: 'ok', value: 'threads' });

    clock.wall += settings.probationMs - 1;
    expect(await call(execution)).to.deep.equal({ kind: 'ok', value: 'threads' });
    expect(execution.placement).to.equal('threads');
    clock.wall += 1;
    // The first call after the probation goes to the threads while the inline instance is made.
    expect(await call(execution)).to.deep.equal({ kind: 'ok', value: 'threads' });
    await settle();
    expect(execution.placement).to.equal('inline');
    expect(moves.map((m) => [m.to, m.reason])).to.deep.equal([['threads', 'slow_calls'], ['inline', 'probation_over']]);
    instances.inlineMs = 0.1;
    expect(await call(execution)).to.deep.equal({ kind: 'ok', value: 'inline' });
  });

  it('makes a call past the inline budget again on a thread with the time left, and moves only if it is long there too', async () => {
    const execution = await start();
    instances.inlineMs = settings.budgetMs + 1;
    instances.threadMs = 0.5;
    const deadline = clock.wall + 5_000;
    expect(await execution.run({ kind: 'call', method: 0, args: ARGS }, deadline)).to.deep.equal({ kind: 'ok', value: 'threads' });
    expect(instances.calls.map((c) => c.where)).to.deep.equal(['inline', 'threads']);
    expect(instances.calls[1].deadline, 'the thread has the time left before the same deadline').to.equal(deadline);
    // Short on the thread (after its first call, which compiles): the service stays inline.
    expect(await call(execution)).to.deep.equal({ kind: 'ok', value: 'threads' });
    expect([execution.placement, moves]).to.deep.equal(['inline', []]);

    instances.threadMs = settings.overrunConfirmMs;
    expect(await call(execution)).to.deep.equal({ kind: 'ok', value: 'threads' });
    expect(execution.placement).to.equal('threads');
    expect(moves.map((m) => [m.to, m.reason])).to.deep.equal([['threads', 'over_budget']]);
  });

  it('moves the service to threads at once for a large JSON body, made there', async () => {
    const execution = await start();
    const large: Arguments = { kind: 'large-json', bytes: new Uint8Array(100_000) };
    expect(await call(execution, large)).to.deep.equal({ kind: 'ok', value: 'threads' });
    expect(instances.calls.map((c) => c.where)).to.deep.equal(['threads']);
    expect(moves.map((m) => [m.to, m.reason])).to.deep.equal([['threads', 'large_body']]);
  });

  it('answers a call cut off inline by its deadline 504, moving the service only if it used the whole budget', async () => {
    const execution = await start();
    instances.inlineMs = 1_000;
    expect(await execution.run({ kind: 'call', method: 0, args: ARGS }, clock.wall + settings.budgetMs / 2)).to.deep.equal({ kind: 'timeout', what: 'call' });
    expect([execution.placement, moves]).to.deep.equal(['inline', []]);
    expect(await execution.run({ kind: 'call', method: 0, args: ARGS }, clock.wall + settings.budgetMs)).to.deep.equal({ kind: 'timeout', what: 'call' });
    expect(moves.map((m) => [m.to, m.reason])).to.deep.equal([['threads', 'over_budget']]);
  });

  it('runs a service that cannot run inline on threads from the start, and never moves it', async () => {
    instances.inlineRefusal = 'it has streaming methods';
    const execution = await start();
    instances.inlineMs = 3;
    clock.wall += 10 * settings.probationMs;
    for (let i = 0; i < 3 * settings.blockCalls; i++) expect(await call(execution)).to.deep.equal({ kind: 'ok', value: 'threads' });
    expect([execution.placement, moves, instances.made]).to.deep.equal(['threads', [], ['threads']]);
  });
});
