// Component repositories for end-to-end tests, built from real sources.

import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildComponent, type ComponentSource } from '../../examples/builder.js';
import { buildExamples } from '../../examples/index.js';
import { tempDir } from './rt-process.js';

/** A component that imports an interface no host provides, and traps on demand. */
export const FAULTY: ComponentSource = {
  kind: 'wat',
  world: 'faulty',
  wit: `package acme:faulty@1.0.0;
interface host { log: func(code: u32); }
interface api {
  call-host: func();
  boom: func();
  ok: func() -> u32;
  noop: func();
}
world faulty { import host; export api; }`,
  wat: `(module
  (import "acme:faulty/host@1.0.0" "log" (func $log (param i32)))
  (func (export "acme:faulty/api@1.0.0#call-host") (call $log (i32.const 1)))
  (func (export "acme:faulty/api@1.0.0#boom") unreachable)
  (func (export "acme:faulty/api@1.0.0#ok") (result i32) (i32.const 7))
  (func (export "acme:faulty/api@1.0.0#noop"))
  (memory (export "memory") 1))`,
};

/**
 * list<u8> in and out, in hand-written WAT: a bump allocator for the canonical
 * ABI (reset after each call by the post-return function) and `reverse`.
 */
export const BYTES: ComponentSource = {
  kind: 'wat',
  world: 'bytes',
  wit: `package acme:bytes@1.0.0;
interface api {
  reverse: func(data: list<u8>) -> list<u8>;
  size: func(data: list<u8>) -> u32;
}
world bytes { export api; }`,
  wat: `(module
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))
  (func $alloc (param $align i32) (param $size i32) (result i32)
    (local $p i32) (local $end i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
                           (i32.sub (i32.const 0) (local.get $align))))
    (local.set $end (i32.add (local.get $p) (local.get $size)))
    (if (i32.gt_u (local.get $end) (i32.mul (memory.size) (i32.const 65536)))
      (then (drop (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (i32.mul (memory.size) (i32.const 65536))) (i32.const 16)) (i32.const 1))))))
    (global.set $heap (local.get $end))
    (local.get $p))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (call $alloc (local.get 2) (local.get 3)))
  (func (export "acme:bytes/api@1.0.0#reverse") (param $ptr i32) (param $len i32) (result i32)
    (local $out i32) (local $i i32)
    (local.set $out (call $alloc (i32.const 1) (local.get $len)))
    (block $done (loop $copy
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (i32.store8 (i32.add (local.get $out) (local.get $i))
        (i32.load8_u (i32.sub (i32.add (local.get $ptr) (local.get $len)) (i32.add (local.get $i) (i32.const 1)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $copy)))
    (i32.store (i32.const 16) (local.get $out))
    (i32.store (i32.const 20) (local.get $len))
    (i32.const 16))
  (func (export "cabi_post_acme:bytes/api@1.0.0#reverse") (param i32) (global.set $heap (i32.const 1024)))
  (func (export "acme:bytes/api@1.0.0#size") (param $ptr i32) (param $len i32) (result i32)
    (global.set $heap (i32.const 1024))
    (local.get $len)))`,
};

/** A call that takes as long as asked: `spin(n)` counts to n. */
export const SLOW: ComponentSource = {
  kind: 'wat',
  world: 'slow',
  wit: `package acme:slow@1.0.0;
interface api { spin: func(n: u32) -> u32; }
world slow { export api; }`,
  wat: `(module
  (func (export "acme:slow/api@1.0.0#spin") (param $n i32) (result i32) (local $i i32)
    (block $done (loop $count
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $count)))
    (local.get $i))
  (memory (export "memory") 1))`,
};

/**
 * Hostile and stateful calls in WAT: a loop that never ends, a memory bomb,
 * and a per-instance call counter (which shows which instance a call ran on),
 * also after a busy loop of a given length (calls that overlap).
 */
export const RUNAWAY: ComponentSource = {
  kind: 'wat',
  world: 'runaway',
  wit: `package acme:runaway@1.0.0;
interface api {
  forever: func() -> u32;
  bomb: func() -> u32;
  count: func() -> u32;
  busy-count: func(spins: u32) -> u32;
}
world runaway { export api; }`,
  wat: `(module
  (global $calls (mut i32) (i32.const 0))
  (func (export "acme:runaway/api@1.0.0#forever") (result i32) (loop $again (br $again)) (i32.const 0))
  (func (export "acme:runaway/api@1.0.0#bomb") (result i32)
    (loop $grow (br_if $grow (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
    unreachable)
  (func (export "acme:runaway/api@1.0.0#count") (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (global.get $calls))
  (func (export "acme:runaway/api@1.0.0#busy-count") (param $n i32) (result i32) (local $i i32)
    (block $done (loop $spin
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $spin)))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (global.get $calls))
  (memory (export "memory") 1))`,
};

/**
 * A componentize-js component that reaches for the host: its environment,
 * the network, the process (exit), the log (huge stdout), and the CPU (a JS
 * loop that never ends). WASI packages it imports are spelled out whole:
 * componentize-js merges them with its engine's own copies.
 */
export const HOSTILE: ComponentSource = {
  kind: 'js',
  world: 'hostile',
  disableFeatures: ['random', 'clocks', 'fetch-event'],
  wit: `package acme:hostile@1.0.0;
interface api {
  env: func() -> list<string>;
  shout: func(bytes: u32) -> u32;
  fetch-url: func(url: string) -> string;
  spin: func() -> u32;
  quit: func() -> u32;
}
world hostile { import wasi:cli/environment@0.2.3; import wasi:cli/exit@0.2.3; export api; }
package wasi:cli@0.2.3 {
  interface environment {
    get-environment: func() -> list<tuple<string, string>>;
    get-arguments: func() -> list<string>;
    initial-cwd: func() -> option<string>;
  }
  interface exit { exit: func(status: result); }
}`,
  js: `
import { getEnvironment } from 'wasi:cli/environment@0.2.3';
import { exit } from 'wasi:cli/exit@0.2.3';
export const api = {
  env() { return getEnvironment().map(([k, v]) => k + '=' + v); },
  shout(bytes) { const line = 'x'.repeat(1023); let written = 0; while (written < bytes) { console.log(line); written += 1024; } return written; },
  fetchUrl(url) { let out = 'pending'; fetch(url).then((r) => r.text()).then((t) => { out = t; }, (e) => { out = 'error: ' + e; }); return out; },
  spin() { let i = 0; for (;;) { i++; } return i; },
  quit() { exit({ tag: 'err' }); return 1; },
};`,
};

/**
 * Configuration (docs/api.md §5.2): `init` keeps the configuration it is given
 * (and refuses one that says "fail"); `setting`/`settings` read it through
 * wasi:config/store; `inits` counts the init calls on this instance.
 */
export const CONFIGURED: ComponentSource = {
  kind: 'js',
  world: 'configured',
  disableFeatures: ['random', 'clocks', 'fetch-event'],
  wit: `package acme:configured@1.0.0;
interface api {
  init: func(config: list<u8>) -> result<_, string>;
  config-text: func() -> string;
  setting: func(key: string) -> option<string>;
  settings: func() -> list<tuple<string, string>>;
  inits: func() -> u32;
}
world configured { import wasi:config/store@0.2.0-draft; export api; }
package wasi:config@0.2.0-draft {
  interface store {
    variant error { upstream(string), io(string) }
    get: func(key: string) -> result<option<string>, error>;
    get-all: func() -> result<list<tuple<string, string>>, error>;
  }
}`,
  js: `
import { get, getAll } from 'wasi:config/store@0.2.0-draft';
let text = '';
let inits = 0;
export const api = {
  init(config) {
    inits++;
    text = new TextDecoder().decode(config);
    if (text.includes('fail')) throw 'refused: ' + text;
  },
  configText() { return text; },
  setting(key) { return get(key); },
  settings() { return getAll(); },
  inits() { return inits; },
};`,
};

/**
 * An effect, then work: `work(tag, spins)` prints `effect <tag>` to stdout
 * (an import with an effect outside the instance: the log), then loops
 * `spins` times. Long enough, it runs past the inline budget and is made again
 * on a thread: the effect must still happen once.
 */
export const EFFECTFUL: ComponentSource = {
  kind: 'js',
  world: 'effectful',
  disableFeatures: ['random', 'clocks', 'http', 'fetch-event'],
  wit: `package acme:effectful@1.0.0;
interface api { work: func(tag: string, spins: u32) -> u32; }
world effectful { export api; }`,
  js: `
export const api = {
  work(tag, spins) {
    console.log('effect ' + tag);
    let x = 0;
    for (let i = 0; i < spins; i++) x = (x * 31 + i) % 1000003;
    return x;
  },
};`,
};

/** A component whose `init` traps: it can never be instantiated. */
export const TRAPPING_INIT: ComponentSource = {
  kind: 'wat',
  world: 'trapping-init',
  wit: `package acme:trapping-init@1.0.0;
interface api {
  init: func(config: list<u8>) -> result<_, string>;
  ok: func() -> u32;
}
world trapping-init { export api; }`,
  wat: `(module
  (memory (export "memory") 1)
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (i32.const 1024))
  (func (export "acme:trapping-init/api@1.0.0#init") (param i32 i32) (result i32) unreachable)
  (func (export "acme:trapping-init/api@1.0.0#ok") (result i32) (i32.const 1)))`,
};

/**
 * Nested lists in (WAT, a bump allocator reset by each call): each method
 * answers how many items its outer list had.
 */
export const NESTED: ComponentSource = {
  kind: 'wat',
  world: 'nested',
  wit: `package acme:nested@1.0.0;
interface api {
  lists: func(x: list<list<u32>>) -> u32;
  lists3: func(x: list<list<list<u32>>>) -> u32;
  ok: func() -> u32;
}
world nested { export api; }`,
  wat: `(module
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (local $p i32) (local $end i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.sub (local.get 2) (i32.const 1)))
                           (i32.sub (i32.const 0) (local.get 2))))
    (local.set $end (i32.add (local.get $p) (local.get 3)))
    (if (i32.gt_u (local.get $end) (i32.mul (memory.size) (i32.const 65536)))
      (then (if (i32.eq (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (i32.mul (memory.size) (i32.const 65536))) (i32.const 16)) (i32.const 1))) (i32.const -1))
        (then unreachable))))
    (global.set $heap (local.get $end))
    (local.get $p))
  (func $count (param i32 i32) (result i32) (global.set $heap (i32.const 1024)) (local.get 1))
  (func (export "acme:nested/api@1.0.0#lists") (param i32 i32) (result i32) (call $count (local.get 0) (local.get 1)))
  (func (export "acme:nested/api@1.0.0#lists3") (param i32 i32) (result i32) (call $count (local.get 0) (local.get 1)))
  (func (export "acme:nested/api@1.0.0#ok") (result i32) (i32.const 1)))`,
};

/** A component whose core module's start function never returns. */
export const ENDLESS_START: ComponentSource = {
  kind: 'wat',
  world: 'endless-start',
  wit: `package acme:endless-start@1.0.0;
interface api { ok: func() -> u32; }
world endless-start { export api; }`,
  wat: `(module
  (func $forever (loop $again (br $again)))
  (start $forever)
  (func (export "acme:endless-start/api@1.0.0#ok") (result i32) (i32.const 1))
  (memory (export "memory") 1))`,
};

/**
 * `version()` answers `n`: a component to replace with another version of
 * itself. `trapsAtStart`: a version that compiles but cannot be instantiated.
 * `salt` makes bytes no earlier run compiled (a reload that must take a while).
 */
export function versioned(n: number, service = 'versioned', trapsAtStart = false, salt?: number): ComponentSource {
  return {
    kind: 'wat',
    world: service,
    wit: `package acme:${service}@1.0.0;
interface api { version: func() -> u32; }
world ${service} { export api; }`,
    wat: `(module
  (func (export "acme:${service}/api@1.0.0#version") (result i32) (i32.const ${n}))${trapsAtStart ? '\n  (func $start unreachable)\n  (start $start)' : ''}${salt === undefined ? '' : `\n  (global i32 (i32.const ${salt}))`}
  (memory (export "memory") 1))`,
  };
}

/**
 * A componentize-js component that uses what a sidecar may grant: files in
 * preopened directories (through wasi:filesystem, spelled out whole with the
 * wasi:io and wasi:clocks types it uses, as componentize-js asks) and outbound HTTP (through fetch, in an async export:
 * componentize-js runs the event loop until the promise settles).
 * Failures come back as text, `error: <code>`, so a test sees what the guest saw.
 */
export const GRANTEE: ComponentSource = {
  kind: 'js',
  world: 'grantee',
  disableFeatures: ['random', 'fetch-event'],
  wit: `package acme:grantee@1.0.0;
interface api {
  preopens: func() -> list<string>;
  read-file: func(dir: string, path: string) -> string;
  write-file: func(dir: string, path: string, text: string) -> string;
  fetch-url: func(url: string) -> string;
}
world grantee { import wasi:filesystem/preopens@0.2.3; export api; }
package wasi:io@0.2.3 {
  interface error { resource error { to-debug-string: func() -> string; } }
  interface poll {
    resource pollable { ready: func() -> bool; block: func(); }
    poll: func(in: list<borrow<pollable>>) -> list<u32>;
  }
  interface streams {
    use error.{error};
    use poll.{pollable};
    variant stream-error { last-operation-failed(error), closed }
    resource input-stream {
      read: func(len: u64) -> result<list<u8>, stream-error>;
      blocking-read: func(len: u64) -> result<list<u8>, stream-error>;
      skip: func(len: u64) -> result<u64, stream-error>;
      blocking-skip: func(len: u64) -> result<u64, stream-error>;
      subscribe: func() -> pollable;
    }
    resource output-stream {
      check-write: func() -> result<u64, stream-error>;
      write: func(contents: list<u8>) -> result<_, stream-error>;
      blocking-write-and-flush: func(contents: list<u8>) -> result<_, stream-error>;
      flush: func() -> result<_, stream-error>;
      blocking-flush: func() -> result<_, stream-error>;
      subscribe: func() -> pollable;
      write-zeroes: func(len: u64) -> result<_, stream-error>;
      blocking-write-zeroes-and-flush: func(len: u64) -> result<_, stream-error>;
      splice: func(src: borrow<input-stream>, len: u64) -> result<u64, stream-error>;
      blocking-splice: func(src: borrow<input-stream>, len: u64) -> result<u64, stream-error>;
    }
  }
}
package wasi:clocks@0.2.3 {
  interface wall-clock {
    record datetime { seconds: u64, nanoseconds: u32 }
    now: func() -> datetime;
    resolution: func() -> datetime;
  }
}
package wasi:filesystem@0.2.3 {
  interface types {
    use wasi:io/streams@0.2.3.{input-stream, output-stream, error};
    use wasi:clocks/wall-clock@0.2.3.{datetime};
    type filesize = u64;
    enum descriptor-type { unknown, block-device, character-device, directory, fifo, symbolic-link, regular-file, socket }
    flags descriptor-flags { read, write, file-integrity-sync, data-integrity-sync, requested-write-sync, mutate-directory }
    flags path-flags { symlink-follow }
    flags open-flags { create, directory, exclusive, truncate }
    type link-count = u64;
    record descriptor-stat {
      %type: descriptor-type, link-count: link-count, size: filesize,
      data-access-timestamp: option<datetime>, data-modification-timestamp: option<datetime>, status-change-timestamp: option<datetime>,
    }
    variant new-timestamp { no-change, now, timestamp(datetime) }
    record directory-entry { %type: descriptor-type, name: string }
    enum error-code {
      access, would-block, already, bad-descriptor, busy, deadlock, quota, exist, file-too-large,
      illegal-byte-sequence, in-progress, interrupted, invalid, io, is-directory, loop, too-many-links,
      message-size, name-too-long, no-device, no-entry, no-lock, insufficient-memory, insufficient-space,
      not-directory, not-empty, not-recoverable, unsupported, no-tty, no-such-device, overflow,
      not-permitted, pipe, read-only, invalid-seek, text-file-busy, cross-device,
    }
    enum advice { normal, sequential, random, will-need, dont-need, no-reuse }
    record metadata-hash-value { lower: u64, upper: u64 }
    resource descriptor {
      read-via-stream: func(offset: filesize) -> result<input-stream, error-code>;
      write-via-stream: func(offset: filesize) -> result<output-stream, error-code>;
      append-via-stream: func() -> result<output-stream, error-code>;
      advise: func(offset: filesize, length: filesize, advice: advice) -> result<_, error-code>;
      sync-data: func() -> result<_, error-code>;
      get-flags: func() -> result<descriptor-flags, error-code>;
      get-type: func() -> result<descriptor-type, error-code>;
      set-size: func(size: filesize) -> result<_, error-code>;
      set-times: func(data-access-timestamp: new-timestamp, data-modification-timestamp: new-timestamp) -> result<_, error-code>;
      read: func(length: filesize, offset: filesize) -> result<tuple<list<u8>, bool>, error-code>;
      write: func(buffer: list<u8>, offset: filesize) -> result<filesize, error-code>;
      read-directory: func() -> result<directory-entry-stream, error-code>;
      sync: func() -> result<_, error-code>;
      create-directory-at: func(path: string) -> result<_, error-code>;
      stat: func() -> result<descriptor-stat, error-code>;
      stat-at: func(path-flags: path-flags, path: string) -> result<descriptor-stat, error-code>;
      set-times-at: func(path-flags: path-flags, path: string, data-access-timestamp: new-timestamp, data-modification-timestamp: new-timestamp) -> result<_, error-code>;
      link-at: func(old-path-flags: path-flags, old-path: string, new-descriptor: borrow<descriptor>, new-path: string) -> result<_, error-code>;
      open-at: func(path-flags: path-flags, path: string, open-flags: open-flags, %flags: descriptor-flags) -> result<descriptor, error-code>;
      readlink-at: func(path: string) -> result<string, error-code>;
      remove-directory-at: func(path: string) -> result<_, error-code>;
      rename-at: func(old-path: string, new-descriptor: borrow<descriptor>, new-path: string) -> result<_, error-code>;
      symlink-at: func(old-path: string, new-path: string) -> result<_, error-code>;
      unlink-file-at: func(path: string) -> result<_, error-code>;
      is-same-object: func(other: borrow<descriptor>) -> bool;
      metadata-hash: func() -> result<metadata-hash-value, error-code>;
      metadata-hash-at: func(path-flags: path-flags, path: string) -> result<metadata-hash-value, error-code>;
    }
    resource directory-entry-stream {
      read-directory-entry: func() -> result<option<directory-entry>, error-code>;
    }
    filesystem-error-code: func(err: borrow<error>) -> option<error-code>;
  }
  interface preopens {
    use types.{descriptor};
    get-directories: func() -> list<tuple<descriptor, string>>;
  }
}`,
  js: `
import { getDirectories } from 'wasi:filesystem/preopens@0.2.3';
const failure = (e) => 'error: ' + (e && e.payload !== undefined ? (e.payload.tag ?? e.payload) : e);
function open(dir, path, flags, openFlags) {
  const found = getDirectories().find(([, name]) => name === dir);
  if (!found) throw { payload: 'no preopen ' + dir };
  return found[0].openAt({ symlinkFollow: true }, path, openFlags, flags);
}
export const api = {
  preopens() { return getDirectories().map(([, name]) => name); },
  readFile(dir, path) {
    try {
      const [bytes] = open(dir, path, { read: true }, {}).read(65536n, 0n);
      return new TextDecoder().decode(bytes);
    } catch (e) { return failure(e); }
  },
  writeFile(dir, path, text) {
    try {
      const written = open(dir, path, { write: true }, { create: true, truncate: true }).write(new TextEncoder().encode(text), 0n);
      return 'wrote ' + written;
    } catch (e) { return failure(e); }
  },
  async fetchUrl(url) {
    try {
      const res = await fetch(url);
      return res.status + ' ' + (await res.text());
    } catch (e) { return 'error: ' + e; }
  },
};`,
};

/**
 * A C component built the way real toolchains build them: clang and wasi-libc
 * (malloc behind cabi_realloc, post-return functions freeing results), WASI
 * through the preview1 adapter. Exercises strings, lists, a record, an option
 * and a result through the canonical ABI, and libc's view of the sandbox:
 * fopen, getenv and stderr.
 */
export const C_LIBC: ComponentSource = {
  kind: 'c',
  world: 'libc',
  wit: `package acme:libc@1.0.0;
interface api {
  record summary { count: u32, mean: f64 }
  shout: func(text: string) -> string;
  sum: func(values: list<u32>) -> u64;
  stats: func(values: list<f64>) -> summary;
  read-file: func(path: string) -> result<string, string>;
  env: func(name: string) -> option<string>;
}
world libc { export api; }`,
  c: `#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT(name) __attribute__((export_name("acme:libc/api@1.0.0#" name)))
#define POST_RETURN(name) __attribute__((export_name("cabi_post_acme:libc/api@1.0.0#" name)))

__attribute__((export_name("cabi_realloc")))
void *cabi_realloc(void *ptr, size_t old_size, size_t align, size_t new_size) {
  (void)old_size; (void)align;
  return realloc(ptr, new_size);
}

/* One return area: results are read by the host before the next call. */
static _Alignas(8) uint8_t ret[16];

static char *copy(const char *ptr, size_t len) {
  char *s = malloc(len + 1);
  memcpy(s, ptr, len);
  s[len] = 0;
  return s;
}

static void set_string(size_t at, char *text) {
  *(uint32_t *)(ret + at) = (uint32_t)text;
  *(uint32_t *)(ret + at + 4) = strlen(text);
}

EXPORT("shout") uint8_t *shout(char *ptr, size_t len) {
  char *out = malloc(len + 2);
  for (size_t i = 0; i < len; i++) out[i] = (ptr[i] >= 'a' && ptr[i] <= 'z') ? ptr[i] - 32 : ptr[i];
  out[len] = '!';
  out[len + 1] = 0;
  free(ptr);
  fprintf(stderr, "shouted %zu bytes\\n", len);
  set_string(0, out);
  return ret;
}
POST_RETURN("shout") void shout_post(uint8_t *r) { free((void *)*(uint32_t *)r); }

EXPORT("sum") uint64_t sum(uint32_t *values, size_t len) {
  uint64_t total = 0;
  for (size_t i = 0; i < len; i++) total += values[i];
  free(values);
  return total;
}

EXPORT("stats") uint8_t *stats(double *values, size_t len) {
  double total = 0;
  for (size_t i = 0; i < len; i++) total += values[i];
  free(values);
  *(uint32_t *)ret = len;
  *(double *)(ret + 8) = len ? total / len : 0;
  return ret;
}

EXPORT("read-file") uint8_t *read_file(char *ptr, size_t len) {
  char *path = copy(ptr, len);
  free(ptr);
  FILE *f = fopen(path, "r");
  free(path);
  if (!f) {
    ret[0] = 1;
    set_string(4, strdup(strerror(errno)));
    return ret;
  }
  char *text = calloc(4097, 1);
  fread(text, 1, 4096, f);
  fclose(f);
  ret[0] = 0;
  set_string(4, text);
  return ret;
}
POST_RETURN("read-file") void read_file_post(uint8_t *r) { free((void *)*(uint32_t *)(r + 4)); }

EXPORT("env") uint8_t *env(char *ptr, size_t len) {
  char *name = copy(ptr, len);
  free(ptr);
  const char *value = getenv(name);
  free(name);
  ret[0] = value != NULL;
  if (value) set_string(4, strdup(value));
  return ret;
}
POST_RETURN("env") void env_post(uint8_t *r) { if (r[0]) free((void *)*(uint32_t *)(r + 4)); }
`,
};

export type RepoEntry = ComponentSource | { raw: string | Uint8Array };

/** A directory holding each entry as `<name>.wasm` (or raw files, for broken ones). */
export async function repository(entries: Record<string, RepoEntry>): Promise<string> {
  const dir = await tempDir('rt-repo-');
  for (const [name, entry] of Object.entries(entries)) {
    const path = join(dir, name.includes('.') ? name : `${name}.wasm`);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, 'raw' in entry ? entry.raw : await buildComponent(entry));
  }
  return dir;
}

let examplesDir: Promise<string> | undefined;

/** The bundled examples, built once per test run (cached across runs by content hash). */
export function examplesRepository(): Promise<string> {
  examplesDir ??= (async () => {
    const dir = await tempDir('rt-examples-');
    await buildExamples(dir, (m) => process.stderr.write(`      ${m}\n`));
    return dir;
  })();
  return examplesDir;
}

/** Copies `file` into `dir` under `name`. */
export async function place(file: string, dir: string, name: string): Promise<void> {
  await copyFile(file, join(dir, name));
}
