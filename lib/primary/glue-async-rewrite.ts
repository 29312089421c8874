// What rt changes in the machinery jco's glue carries for the component
// model's async ABI (WASI 0.3: async functions, stream<T>, future<T>), as
// jco-transpile 0.15 writes it. Each group of changes is applied whole or
// not at all: a group whose every site is not found as expected (another
// jco) is left out, and the glue runs as jco wrote it, only slower or with
// the flaw the group mends (test/unit/glue-rewrite.test.ts fails then).
//
// - taskFailures: a task that traps after it returned (its callback, writing
//   the stream<T> it returned) fails in jco's driver loop, which only marks
//   the task errored. Nobody awaits the task any more, so the trap was lost
//   and a host reading its stream waited for ever. The failure becomes the
//   store's trap, is reported to rt's import (TASK_FAILED_IMPORT:
//   component-instance.ts), and wakes every wait below.
// - eventWaits: a host's blocked stream read or write polled for its event
//   on a 1 ms setInterval (for ever, once its writer had trapped), and the
//   scheduler resumed a waiting guest task on a timer (10 ms to start, 1 ms
//   between resumptions). Measured on a stream<u8> of 16 KiB writes read 64
//   KiB at a time, in process: 29 MiB/s, the process 81% idle. Now an
//   event set on any waitable wakes the waits at once (and so does the
//   store's trap: a blocked read or write then fails), and the scheduler
//   ticks on setImmediate after a resumption; its idle cadence stays 10 ms
//   but an event cuts it short. A guest's async call of a host import
//   (wasi:clocks' wait-for) was looked at on a timer of 0 ms, which Node
//   makes 1 ms: it is looked at on setImmediate. Measured, a guest starting
//   waits without awaiting them: 1.2 ms → 0.06 ms a call, in process.
// - taskExits: a task that exits is taken off its component's list of tasks
//   only if it is the last one on it; with tasks side by side (one ending
//   while a later one runs) the rest stayed for ever, and every lookup of a
//   task searched them all: a handler serving requests side by side slowed
//   from 2,000 requests in 5 s to 500 within 15 s, and memory grew with
//   every request. A task that exits is taken off wherever it is. Measured in
//   process, 50 requests at a time: 1.35 → 0.43 ms a request, no task left.
// - releases: every stream and future the glue makes (and every host view of
//   a guest's) goes into one of two global tables, FUTURES and STREAMS,
//   which nothing ever takes it out of; and an end stays in its component's
//   tables when the host drops it (only the guest's drops take an end out),
//   as does the host's writing end of a future or stream the host handed a
//   guest that dropped its reading end unread, and every copy's buffer (in a
//   map nothing reads, holding the guest's memory). With them stayed what they
//   reach: waitables, the lift and lower closures made for their call, and
//   through those the tasks. A 0.3 handler kept ~100 KiB per request: 2 GiB
//   within 20,000 requests. The global tables hold their entries weakly now
//   (a slot is freed once its entry is collected; a stream's or future's
//   ends keep it alive while either is in use), an end the host drops leaves
//   its component's tables, and so does the host's writer whose reader the
//   guest dropped.
// - byteCopies: a stream<u8>'s bytes went from the guest's memory into a
//   JS array of numbers, were concatenated into another, and were made a
//   Uint8Array again at the end. They stay a Uint8Array: one copy out of
//   the guest's memory (it reuses it), and one more only where two writes
//   are joined for one read. With eventWaits: 55 → 257 MiB/s in process.
//   The host's read takes a view of what it holds, not a copy, and writes
//   joined for one read fill one buffer of the read's size in place,
//   instead of each join copying all before it: a stream<u8> of 16 KiB
//   writes through rt (curl, 256 MiB, 1 worker): 2.3 → ~1.15 s (1.5 s with
//   the view alone).
// - givenBytes: the other way, bytes the host hands a guest (an async
//   iterable of Uint8Array: a request body, a stream<u8> parameter) went
//   into an array one number at a time, and every read of what was left
//   copied the rest; they stay a Uint8Array, read as views. A 0.3 echo of
//   1 MiB bodies (the body handed in and straight back out) in process:
//   66 → 142 MiB/s. A read that one chunk holds is a view of it, not a
//   copy (what the host hands in is never written again).
// - taskStarts: the task each call of an async export starts is told to rt's
//   import (TASK_STARTED_IMPORT), so that rt can ask for its cancellation
//   (the client left, its deadline passed): the glue delivers TASK_CANCELLED
//   to the guest's callback at its next wait, as the component model says,
//   and the call resolves once the guest acknowledges with task.cancel.

import { TASK_FAILED_IMPORT, TASK_STARTED_IMPORT } from '../task-failed-import.js';

/** A change: `find` (a string, or a global regex) must occur `times` times (or any of them; `some`: once or more); each occurrence becomes `replace`. */
interface Patch {
  find: string | RegExp;
  replace: string;
  times: number | readonly number[] | 'some';
}

/** Where `instantiate` begins: the helpers go first in it, in scope of everything the glue defines there. */
const INSTANTIATE = /^export function instantiate\(getCoreModule, imports, instantiateCore = WebAssembly\.instantiate\) \{$/m;

/**
 * The waits of the eventWaits group. `rtEventSet` is called whenever the
 * glue sets a pending event on a waitable; `rtUntil(ready)` resolves once
 * `ready()` holds, checked at each; `rtSleep(ms)` resolves after `ms`, or
 * at the next event (0: on setImmediate).
 */
const HELPERS = `
  const RT_EVENT_WAITERS = new Set();
  function rtEventSet() { for (const waiter of RT_EVENT_WAITERS) waiter(); }
  function rtUntil(ready) {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = () => { if (!ready()) return; RT_EVENT_WAITERS.delete(waiter); resolve(); };
      RT_EVENT_WAITERS.add(waiter);
    });
  }
  function rtSleep(ms) {
    if (ms === 0) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => {
      const waiter = () => { RT_EVENT_WAITERS.delete(waiter); clearTimeout(timer); resolve(); };
      const timer = setTimeout(waiter, ms);
      RT_EVENT_WAITERS.add(waiter);
    });
  }`;

/**
 * The byteCopies group's join of bytes written to a buffer the host reads
 * (`held`, still unread) and the next `values`: a buffer of the host's read's
 * capacity at the first join, filled in place by the joins after it.
 * `buffer.rtOwned` is the one it made, whose bytes past `held` nobody else
 * sees: the host's reads took views of what came before.
 */
const BYTE_HELPERS = `
  function rtAppendBytes(buffer, held, values) {
    const length = held.length + values.length;
    const end = held.byteOffset + held.length;
    if (held.buffer === buffer.rtOwned && end + values.length <= held.buffer.byteLength) {
      new Uint8Array(held.buffer, end, values.length).set(values);
      return new Uint8Array(held.buffer, held.byteOffset, length);
    }
    const joined = new Uint8Array(Math.max(length, buffer.capacity));
    joined.set(held);
    joined.set(values, held.length);
    buffer.rtOwned = joined.buffer;
    return joined.subarray(0, length);
  }`;

/** Where an async-lowered host import is looked at after the call (in glue whose component has async imports). */
const IMPORT_LOOK = 'setTimeout(() => {\n        // NOTE: whether the import settled before this timer fires';

/**
 * The helpers of the releases group: `rtForget(end, tables)` takes a stream or
 * future end out of its component's tables (STREAM_TABLES or FUTURE_TABLES)
 * if it is still there; `rtForgetWriter(reader, tables)` does so for the
 * host's writing end of a reader the host handed in.
 */
const RELEASE_HELPERS = `
  function rtForget(end, tables) {
    try {
      const entry = tables[end.streamTableIdx?.() ?? end.futureTableIdx?.()];
      if (!entry) return;
      const handles = getOrCreateAsyncState(entry.componentIdx).handles;
      const idx = end.waitableIdx();
      if (idx > 0 && handles.get(idx) === end) handles.remove(idx);
      const handle = end.handle();
      if (handle > 0 && entry.table.get(handle) === end) entry.table.remove(handle);
    } catch {
      // An end in no table: nothing to take out.
    }
  }
  function rtForgetWriter(reader, tables) {
    if (reader.rtHostInjected && reader.rtKeeps) rtForget(reader.rtKeeps.writeEnd(), tables);
  }`;

/** A global table of the glue's (a RepTable) wrapped to hold its entries weakly: a slot is freed once its entry is collected. */
const weakTable = (table: string): string =>
  `((table) => { const registry = new FinalizationRegistry((rep) => table.remove(rep)); return { insert(value) { const rep = table.insert(new WeakRef(value)); registry.register(value, rep); return rep; }, get(rep) { return table.get(rep)?.deref(); } }; })(new RepTable({ target: '${table}' }))`;

const GROUPS: Record<'taskFailures' | 'eventWaits' | 'taskExits' | 'releases' | 'byteCopies' | 'givenBytes' | 'taskStarts', Patch[]> = {
  taskFailures: [
    {
      find: 'const handleError = (err) => {',
      replace: `const handleError = (err) => { if (STORE_TRAP.error === null) STORE_TRAP.error = err; imports?.[${JSON.stringify(TASK_FAILED_IMPORT)}]?.(err); rtEventSet();`,
      times: 1,
    },
  ],
  eventWaits: [
    { find: 'this.#pendingEventFn = fn;', replace: 'this.#pendingEventFn = fn; rtEventSet();', times: 1 },
    {
      find: /await new Promise\(\(resolve\) => \{\s*let waitInterval = setInterval\((?:async )?\(\) => \{\s*if \(!this\.hasPendingEvent\(\)\) \{ return; \}\s*clearInterval\(waitInterval\);\s*resolve\(\);\s*\}\);\s*\}\);/g,
      replace: 'await rtUntil(() => this.hasPendingEvent() || STORE_TRAP.error !== null);',
      // A host's blocked read and write of a stream, and of a future when the component has any; none in glue without
      // host-side streams or futures (a component whose async imports are all it has), where the other waits still tick.
      times: [0, 2, 4],
    },
    { find: 'await new Promise((resolve) => setTimeout(resolve, delay));', replace: 'await rtSleep(delay);', times: 1 },
    { find: /setTimeout\(async \(\) => \{(\s*let result = this\.tick\(\);[\s\S]*?this\.#tickLoop = null;\s*)\}, 10\);/g, replace: 'setImmediate(async () => {$1});', times: 1 },
    // A guest's async call of a host import looks at the import's state once a timer of 0 ms fires: Node's least is
    // 1 ms, for every call (what its setImmediate passes the callback, 0, goes unused).
    { find: IMPORT_LOOK, replace: IMPORT_LOOK.replace('setTimeout(', 'setImmediate('), times: [0, 1] },
  ],
  taskExits: [
    {
      find: /\/\/ throw new Error\('current task does not match expected task ID'\);(\s*)return;/g,
      replace:
        'const at = tasks.findIndex((meta) => meta.id === taskID); if (at >= 0) { tasks.splice(at, 1); const idAt = ASYNC_CURRENT_TASK_IDS.lastIndexOf(taskID); if (idAt >= 0) { ASYNC_CURRENT_TASK_IDS.splice(idAt, 1); ASYNC_CURRENT_COMPONENT_IDXS.splice(idAt, 1); } }$1return;',
      times: 1,
    },
  ],
  // Where the glue has no futures (or no streams), it has none of their sites.
  releases: [
    { find: "new RepTable({ target: 'global future map' })", replace: weakTable('global future map'), times: [0, 1] },
    { find: "new RepTable({ target: 'global stream map' })", replace: weakTable('global stream map'), times: [0, 1] },
    { find: 'this.#readEnd.setGlobalFutureMapRep(rep);', replace: 'this.#readEnd.setGlobalFutureMapRep(rep); this.#readEnd.rtKeeps = this; this.#writeEnd.rtKeeps = this;', times: [0, 1] },
    { find: 'this.#readEnd.setGlobalStreamMapRep(rep);', replace: 'this.#readEnd.setGlobalStreamMapRep(rep); this.#readEnd.rtKeeps = this; this.#writeEnd.rtKeeps = this;', times: [0, 1] },
    // In each end's drop, before its check for a second drop: a stream the host reads to its end was marked dropped when its writer went.
    { find: "_debugLog('[StreamEnd#drop()]');", replace: "rtForget(this, STREAM_TABLES); _debugLog('[StreamEnd#drop()]');", times: [0, 2] },
    // The host's read of a future (its promise) is the end of it: nothing drops a promise.
    { find: "() => this.hostRead({ stringEncoding: 'utf8' })", replace: "() => this.hostRead({ stringEncoding: 'utf8' }).finally(() => rtForget(this, FUTURE_TABLES))", times: [0, 2] },
    { find: "if (this.isDropped()) { throw new Error('future already dropped'); }", replace: "if (this.isDropped()) { throw new Error('future already dropped'); } rtForget(this, FUTURE_TABLES);", times: [0, 1] },
    { find: 'setHostInjectFn(f) {', replace: 'setHostInjectFn(f) { this.rtHostInjected = true;', times: [0, 2, 4] },
    { find: /(futureEnd\.drop\(\);)(\s*\}\s*function futureDropWritable\()/g, replace: '$1 rtForgetWriter(futureEnd, FUTURE_TABLES);$2', times: [0, 1] },
    { find: /(streamEnd\.drop\(\);)(\s*\}\s*function streamDropWritable\()/g, replace: '$1 rtForgetWriter(streamEnd, STREAM_TABLES);$2', times: [0, 1] },
    // Every copy's buffer went into a map nothing reads (and with it the guest's memory, past the instance's end).
    { find: 'instanceBuffers.set(nextBufID, buffer);', replace: '/* rt: not kept, nothing reads them (glue-async-rewrite.ts) */', times: [0, 1] },
    { find: 'BUFFER_MGR.getBuffer(', replace: 'BUFFER_MGR.getBuffer(', times: 0 },
  ],
  byteCopies: [
    { find: 'values = Array.from(new Uint8Array(this.#memory.buffer, this.#ptr, count));', replace: 'values = new Uint8Array(this.#memory.buffer, this.#ptr, count).slice();', times: 1 },
    // The host's read of bytes it holds: a view, not a copy (what it holds is never written into again: a write replaces it, joined or not).
    { find: 'values = this.#hostOnlyData.slice(0, count);', replace: 'values = this.#hostOnlyData instanceof Uint8Array ? this.#hostOnlyData.subarray(0, count) : this.#hostOnlyData.slice(0, count);', times: 1 },
    {
      find: "if (!Array.isArray(values)) { throw new TypeError('values input to write() must be an array'); }",
      replace: "if (!Array.isArray(values) && !(values instanceof Uint8Array)) { throw new TypeError('values input to write() must be an array'); }",
      times: 1,
    },
    {
      find: 'this.#hostOnlyData = this.#hostOnlyData.concat(values);',
      replace: 'this.#hostOnlyData = !(values instanceof Uint8Array) ? this.#hostOnlyData.concat(values) : this.#hostOnlyData.length === 0 ? values : rtAppendBytes(this, this.#hostOnlyData, values);',
      times: 1,
    },
    {
      find: 'const value = typedArray === undefined ? count === 1 ? values[0] : values : new typedArray(values);',
      replace: 'const value = typedArray === undefined ? count === 1 ? values[0] : values : values instanceof typedArray ? values : new typedArray(values);',
      times: 1,
    },
  ],
  // Bytes the host gives a guest (an async iterable of Uint8Array: a request body) stay bytes too. Only in glue
  // with host-given streams.
  givenBytes: [
    {
      find: /^( *)drainInto\(target, maxCount\) \{/gm,
      replace: `$1rtDrainBytes(maxCount) {
        if (this.#length === 0 || !(this.#chunks[0] instanceof Uint8Array)) return undefined;
        const first = this.#chunks[0];
        const wanted = Math.min(maxCount, this.#length);
        if (first.length - this.#offset >= wanted) {
          const view = first.subarray(this.#offset, this.#offset + wanted);
          this.#offset += wanted;
          this.#length -= wanted;
          if (this.#offset === first.length) { this.#chunks.shift(); this.#offset = 0; }
          return view;
        }
        const out = new Uint8Array(wanted);
        let filled = 0;
        while (filled < out.length && this.#chunks[0] instanceof Uint8Array) {
          const chunk = this.#chunks[0];
          const n = Math.min(out.length - filled, chunk.length - this.#offset);
          out.set(chunk.subarray(this.#offset, this.#offset + n), filled);
          filled += n;
          this.#offset += n;
          this.#length -= n;
          if (this.#offset === chunk.length) { this.#chunks.shift(); this.#offset = 0; }
        }
        return out.subarray(0, filled);
      }

$1drainInto(target, maxCount) {`,
      times: 1,
    },
    {
      find: /const values = \[\];(\s*const hasPendingReadBuffer = [^\n]*\s*const drainPendingValues = \(\) => \{)(\s*)count -= pendingValues\.drainInto\(values, count\);/g,
      replace:
        'let values = [];$1$2const bytes = values.length === 0 || values instanceof Uint8Array ? pendingValues.rtDrainBytes(count) : undefined;$2if (bytes) { values = values.length === 0 ? bytes : ((held) => { const joined = new Uint8Array(held.length + bytes.length); joined.set(held); joined.set(bytes, held.length); return joined; })(values); count -= bytes.length; return; }$2count -= pendingValues.drainInto(values, count);',
      times: 1,
    },
    { find: 'if (!Array.isArray(values)) { throw new TypeError("writeMany values must be an array"); }', replace: 'if (!Array.isArray(values) && !(values instanceof Uint8Array)) { throw new TypeError("writeMany values must be an array"); }', times: 1 },
    { find: "if (args.data !== undefined && !Array.isArray(args.data)) {", replace: 'if (args.data !== undefined && !Array.isArray(args.data) && !(args.data instanceof Uint8Array)) {', times: 1 },
    { find: 'this.#hostOnlyData = this.#hostOnlyData.slice(count);', replace: 'this.#hostOnlyData = this.#hostOnlyData instanceof Uint8Array ? this.#hostOnlyData.subarray(count) : this.#hostOnlyData.slice(count);', times: 1 },
  ],
  // An async export's call makes its task this way, synchronously, before its first await. A sync export's task
  // (the invoke path's) is never cancelled: its calls are not told.
  taskStarts: [
    {
      find: /(const \[task, _wasm_call_currentTaskID\] = createNewCurrentTask\(\{[^}]*isAsync: true,[^}]*callingWasmExport: true,\s*\}\);)/g,
      replace: `$1 imports?.[${JSON.stringify(TASK_STARTED_IMPORT)}]?.(task);`,
      times: 'some',
    },
  ],
};

export type AsyncPatchGroup = keyof typeof GROUPS;

/** `glue` with each group of changes whose sites are all found applied; which were. */
export function rewriteAsyncGlue(glue: string): { text: string; applied: AsyncPatchGroup[] } {
  if (!INSTANTIATE.test(glue)) return { text: glue, applied: [] };
  let text = glue;
  const applied: AsyncPatchGroup[] = [];
  for (const [group, patches] of Object.entries(GROUPS) as [AsyncPatchGroup, Patch[]][]) {
    if (!patches.every((p) => (p.times === 'some' ? occurrences(text, p.find) > 0 : [p.times].flat().includes(occurrences(text, p.find))))) continue;
    for (const p of patches) text = typeof p.find === 'string' ? text.split(p.find).join(p.replace) : text.replace(p.find, p.replace);
    applied.push(group);
  }
  if (applied.length > 0) text = text.replace(INSTANTIATE, (head) => head + HELPERS + (applied.includes('releases') ? RELEASE_HELPERS : '') + (applied.includes('byteCopies') ? BYTE_HELPERS : ''));
  return { text, applied };
}

function occurrences(text: string, find: string | RegExp): number {
  return typeof find === 'string' ? text.split(find).length - 1 : (text.match(find)?.length ?? 0);
}
