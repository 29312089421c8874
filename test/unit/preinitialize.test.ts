// Pre-initializing on V8 (examples/preinitialize.ts) through wizer's command
// line (examples/preinitialize-cli.ts), against wizer itself: for a module
// whose initialization is deterministic, both write the same bytes; what the
// V8 path does not take goes to wizer, and a failed initialization is
// reported as wizer reports it. Every componentize-js fixture and example is
// built through it too (builder.ts), and the e2e tests run them.

import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import wizer from '@bytecodealliance/wizer';
import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';

const CLI = fileURLToPath(new URL('../../examples/preinitialize-cli.js', import.meta.url));

/**
 * Reads stdin and the environment, writes memory (a grown page too, runs 4
 * bytes apart, which are merged, and further apart, which are not), sets
 * every kind of global; its start function and `_initialize` run first.
 */
const DETERMINISTIC = `(module $deterministic
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes (param i32 i32) (result i32)))
  (memory (export "memory") 2 10)
  (global $count (mut i32) (i32.const 0))
  (global $big (mut i64) (i64.const 0))
  (global $ratio (mut f32) (f32.const 0))
  (global $precise (mut f64) (f64.const 0))
  (global $fixed i32 (i32.const 7))
  (data (i32.const 16) "hello")
  (data (i32.const 70000) "second page")
  (func $start (i32.store8 (i32.const 100) (i32.const 1)))
  (start $start)
  (func (export "_initialize") (global.set $count (i32.const 1)))
  (func (export "init")
    (i32.store (i32.const 200) (i32.const 1024))
    (i32.store (i32.const 204) (i32.const 64))
    (drop (call $fd_read (i32.const 0) (i32.const 200) (i32.const 1) (i32.const 208)))
    (drop (call $environ_sizes (i32.const 300) (i32.const 304)))
    (drop (memory.grow (i32.const 1)))
    (i32.store (i32.const 131080) (i32.const 0xdeadbeef))
    (i32.store8 (i32.const 500) (i32.const 9))
    (i32.store8 (i32.const 505) (i32.const 9))
    (i32.store8 (i32.const 520) (i32.const 9))
    (i32.store8 (i32.const 16) (i32.const 0))
    (global.set $count (i32.add (global.get $count) (i32.const 41)))
    (global.set $big (i64.const -5000000000))
    (global.set $ratio (f32.const 1.5))
    (global.set $precise (f64.const -0.1)))
  (func (export "count") (result i32) (global.get $count))
  (func (export "big") (result i64) (global.get $big)))`;

interface Run {
  status: number | null;
  stderr: string;
  output: Uint8Array<ArrayBuffer> | undefined;
}

describe('pre-initializing on V8 (wizer’s command line)', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rt-preinitialize-test-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `command` (this CLI or wizer) on `wat` with wizer's arguments, as componentize-js does. */
  async function run(command: 'v8' | 'wizer', wat: string, extra: string[] = []): Promise<Run> {
    const input = join(dir, `${command}-in.wasm`);
    const output = join(dir, `${command}-out.wasm`);
    await writeFile(input, await parse(wat));
    const args = ['--allow-wasi', '--init-func', 'init', '--inherit-env=true', '--wasm-bulk-memory=true', ...extra, `-o=${output}`, input];
    const [file, argv] = command === 'v8' ? [process.execPath, ['--disable-warning=ExperimentalWarning', CLI, ...args]] : [wizer, args];
    const done = spawnSync(file, argv, { input: 'the arguments', env: { ONE: '1', TWO: '2' }, encoding: 'utf8' });
    const bytes = await readFile(output).catch(() => undefined);
    return { status: done.status, stderr: done.stderr, output: bytes && new Uint8Array(bytes) };
  }

  const identical = {
    'with data segments': DETERMINISTIC,
    // Its data section is new, written before the name section.
    'without data segments': DETERMINISTIC.replace(/\(data [^\n]*\n/g, '').replace('(i32.store8 (i32.const 16) (i32.const 0))', ''),
  };
  for (const [name, wat] of Object.entries(identical)) {
    it(`writes the bytes wizer writes: a module ${name}`, async () => {
      const [ours, theirs] = [await run('v8', wat), await run('wizer', wat)];
      expect(ours.stderr).to.equal('');
      expect(ours.status).to.equal(0);
      expect(theirs.status).to.equal(0);
      expect(Buffer.compare(Buffer.from(ours.output!), Buffer.from(theirs.output!))).to.equal(0);
    });
  }

  it('writes a module that starts where initialization left it', async () => {
    const { output } = await run('v8', DETERMINISTIC);
    const module = new WebAssembly.Module(output!);
    expect(WebAssembly.Module.exports(module).map((e) => e.name)).to.deep.equal(['memory', 'count', 'big']);
    const trap = () => {
      throw new Error('no import is called after initialization');
    };
    const { exports } = new WebAssembly.Instance(module, { wasi_snapshot_preview1: { fd_read: trap, environ_sizes_get: trap } });
    expect((exports.count as () => number)()).to.equal(42);
    expect((exports.big as () => bigint)()).to.equal(-5_000_000_000n);
    const memory = new Uint8Array((exports.memory as WebAssembly.Memory).buffer);
    expect(memory.length).to.equal(3 * 65_536);
    expect(Buffer.from(memory.subarray(1024, 1024 + 13)).toString()).to.equal('the arguments');
    expect(new DataView(memory.buffer).getUint32(300, true)).to.equal(2);
    expect(Buffer.from(memory.subarray(16, 21)).toString()).to.equal('\0ello');
    expect(new DataView(memory.buffer).getUint32(131080, true)).to.equal(0xdeadbeef);
  });

  it('reports an initialization that traps as wizer does, and writes nothing', async () => {
    const trapping = DETERMINISTIC.replace('(global.set $count (i32.add', '(unreachable) (global.set $count (i32.add');
    const ours = await run('v8', trapping);
    expect(ours.status).to.equal(1);
    expect(ours.stderr).to.match(/^Error: the `init` function trapped: unreachable/);
    expect(ours.output).to.equal(undefined);
    expect((await run('wizer', trapping)).status).to.equal(1);
  });

  it('traps a call to an import that is not WASI, as wizer does', async () => {
    const calling = DETERMINISTIC.replace('(memory (export', '(import "host" "log" (func $log))\n  (memory (export').replace('(drop (memory.grow', '(call $log) (drop (memory.grow');
    const ours = await run('v8', calling);
    expect(ours.status).to.equal(1);
    expect(ours.stderr).to.contain('host#log was called during initialization');
    expect((await run('wizer', calling)).status).to.equal(1);
  });

  it('hands wizer what it does not take, with the same arguments and stdin', async () => {
    // A float global left holding a NaN: JavaScript cannot say which NaN.
    const nan = DETERMINISTIC.replace('(global.set $ratio (f32.const 1.5))', '(global.set $ratio (f32.const nan:0x200000))');
    const ours = await run('v8', nan);
    expect(ours.stderr).to.equal('pre-initializing with wizer: global 2 holds a NaN, whose bits JavaScript does not keep\n');
    expect(ours.status).to.equal(0);
    const theirs = await run('wizer', nan);
    expect(Buffer.compare(Buffer.from(ours.output!), Buffer.from(theirs.output!))).to.equal(0);
  });

  it('hands wizer an argument it does not know', async () => {
    const ours = await run('v8', DETERMINISTIC, ['--rename-func', 'start=count']);
    expect(ours.stderr).to.equal('pre-initializing with wizer: the argument --rename-func\n');
    const theirs = await run('wizer', DETERMINISTIC, ['--rename-func', 'start=count']);
    expect(ours.status).to.equal(theirs.status);
    expect(Buffer.compare(Buffer.from(ours.output!), Buffer.from(theirs.output!))).to.equal(0);
  });

  it('refuses a module without the initialization function, as wizer does', async () => {
    const nameless = DETERMINISTIC.replace('(export "init")', '');
    const ours = await run('v8', nameless);
    expect(ours.status).to.equal(1);
    expect(ours.stderr).to.contain('does not have a `init` function export');
    expect((await run('wizer', nameless)).status).to.not.equal(0);
  });
});
