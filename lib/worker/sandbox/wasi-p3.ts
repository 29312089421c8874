// The host's WASI 0.3 interfaces (docs/api.md §5.9) but HTTP (wasi-host/p3)
// and sockets: random, the clocks (sleeping among them), the environment,
// exit, stdio, and the granted directories (wasi-p3-filesystem.ts). They are
// rt's own, not preview3-shim's: each is a line or two over node:crypto, the
// process clocks, timers and stdio, within the same grants as their 0.2
// twins (the environment holds what the sidecar grants; exit ends the call,
// never the worker; what a guest writes to stdout and stderr goes to its
// thread's capture, into the log under its service, as 0.2's output does,
// and never to the worker's own stdout; stdin is empty). Sockets are not
// served: those imports are stubs that trap.

import { randomBytes } from 'node:crypto';
import { WASI_0_3 } from '../../wasi-lines.js';
import type { GuestBytes } from './guest-bytes.js';
import type { Preopens } from './preopens.js';
import { writeCaptured, type StreamName } from './output-capture.js';
import { filesystem03 } from './wasi-p3-filesystem.js';

/** The most bytes one get-random-bytes call gives: 0.3 lets the host give fewer than `max-len`, and a guest's u64 must not make the worker allocate it. */
export const MAX_RANDOM_BYTES = 65_536;

/** What the 0.3 interfaces are given: the granted environment and directories, and how exit ends the call. */
export interface P3Grants {
  env: [string, string][];
  /** The granted directories, opened (preopens.ts grantedDirectories). */
  preopens?: Preopens;
  exit: (status: unknown) => never;
}

function bytes(maxLen: bigint): Uint8Array {
  return randomBytes(Number(maxLen < BigInt(MAX_RANDOM_BYTES) ? maxLen : BigInt(MAX_RANDOM_BYTES)));
}

/**
 * Resolves once the monotonic clock has reached `mark` (at once if it has), in timer steps Node can take
 * (setTimeout's longest is ~24.8 days). A timer may fire up to a millisecond before its time by this clock:
 * the guest is promised at least what it asked, so it is looked at again.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

async function until(mark: bigint): Promise<void> {
  for (let left = mark - process.hrtime.bigint(); left > 0n; left = mark - process.hrtime.bigint()) {
    const ms = Math.min(Number((left + 999_999n) / 1_000_000n), MAX_TIMER_MS);
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/** stdout's or stderr's write-via-stream: copies what the guest writes to `stream`'s capture until it ends the stream; the future's result. */
async function copyTo(data: GuestBytes, stream: StreamName): Promise<{ tag: 'ok' | 'err'; val?: string }> {
  try {
    for (;;) {
      const { done, value } = await data.read(65_536);
      if (done) return { tag: 'ok', val: undefined };
      if (value) writeCaptured(stream, Uint8Array.from(value));
    }
  } catch {
    // The guest trapped, or dropped the stream mid-write: what it wrote went out.
    return { tag: 'err', val: 'pipe' };
  }
}

async function* nothing(): AsyncGenerator<Uint8Array, void, undefined> {}

function u64(): bigint {
  return randomBytes(8).readBigUInt64LE();
}

/** The interfaces of wasi-lines.ts's WASI_0_3_SERVED, in jco's values: u64 as bigint, list<u8> as Uint8Array, a tuple as an array, an option as the value or undefined. */
export function wasi03Interfaces({ env, preopens = [], exit }: P3Grants): Record<string, object> {
  const table: Record<string, object> = {
    'wasi:random/random': { getRandomBytes: bytes, getRandomU64: u64 },
    // The same source: a guest asking for less than the secure kind gets no less.
    'wasi:random/insecure': { getInsecureRandomBytes: bytes, getInsecureRandomU64: u64 },
    'wasi:random/insecure-seed': { getInsecureSeed: () => [u64(), u64()] },
    // Waiting is an async import: the glue suspends the guest's task (JSPI) until the promise settles, and the thread serves on meanwhile.
    'wasi:clocks/monotonic-clock': { now: () => process.hrtime.bigint(), getResolution: () => 1n, waitFor: (ns: bigint) => until(process.hrtime.bigint() + ns), waitUntil: until },
    'wasi:clocks/system-clock': {
      now: () => {
        const ns = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
        return { seconds: ns / 1_000_000_000n, nanoseconds: Number(ns % 1_000_000_000n) };
      },
      getResolution: () => 1000n,
    },
    'wasi:cli/environment': { getEnvironment: () => env, getArguments: () => [], getInitialCwd: () => undefined },
    'wasi:cli/exit': { exit: (status: unknown) => exit(status), exitWithCode: (code: number) => exit({ code }) },
    'wasi:cli/stdin': { readViaStream: () => [nothing(), Promise.resolve({ tag: 'ok', val: undefined })] },
    'wasi:cli/stdout': { writeViaStream: (data: GuestBytes) => copyTo(data, 'stdout') },
    'wasi:cli/stderr': { writeViaStream: (data: GuestBytes) => copyTo(data, 'stderr') },
    ...filesystem03(preopens),
  };
  return Object.fromEntries(Object.entries(table).map(([name, value]) => [`${name}@${WASI_0_3}`, value]));
}
