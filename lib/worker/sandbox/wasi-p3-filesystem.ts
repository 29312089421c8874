// WASI 0.3's wasi:filesystem (docs/api.md §5.9, §8): the directories a
// sidecar grants (`allowed_paths`), and nothing else of the host's. Each 0.3
// descriptor wraps the 0.2 one of preopens.ts, which is where the sandbox
// is (paths kept beneath their grant with symlinks resolved, read-only
// grants, no guest-made symlinks): the two lines differ only in their ABI.
// WASI 0.3's functions answer later (its `async func`s resolve to a result,
// its bytes and directory entries come as streams with a future of how they
// ended), so here each is the 0.2 call made at once, its thrown error-code
// turned into the err case. A file's bytes are read and written 64 KiB at a
// time, so a large file never sits whole in the thread's memory.

import type * as wasi from '@bytecodealliance/preview2-shim/interfaces/wasi-filesystem-types';
import type { GuestBytes } from './guest-bytes.js';
import type { Descriptor as GrantedDescriptor, Preopens } from './preopens.js';

const CHUNK = 64 * 1024;

/** WASI 0.3's variants as jco holds them: `{tag}`, with `val` for a case with a payload. */
type ErrorCode = { tag: string; val?: string };
type Result<T> = { tag: 'ok'; val: T } | { tag: 'err'; val: ErrorCode };
type DescriptorType = { tag: Exclude<wasi.DescriptorType, 'unknown'> } | { tag: 'other'; val: undefined };
interface DescriptorStat extends Omit<wasi.DescriptorStat, 'type'> {
  type: DescriptorType;
}
interface DirectoryEntry {
  type: DescriptorType;
  name: string;
}

/** 0.2's error-codes are thrown as their name; 0.3's are a variant (0.2's `would-block` is 0.3's `other`). */
function errorCode(e: unknown): ErrorCode {
  if (typeof e !== 'string') throw e;
  return e === 'would-block' ? { tag: 'other', val: e } : { tag: e };
}

/** `call`'s value as a result: its thrown error-code the err case; anything else (rt's own fault) traps the call. */
function attempt<T>(call: () => T): Result<T> {
  try {
    return { tag: 'ok', val: call() };
  } catch (e) {
    return { tag: 'err', val: errorCode(e) };
  }
}

/** `call` done, as a result<_, error-code>. */
function done(call: () => void): Result<undefined> {
  return attempt(() => {
    call();
    return undefined;
  });
}

function descriptorType(type: wasi.DescriptorType): DescriptorType {
  return type === 'unknown' ? { tag: 'other', val: undefined } : { tag: type };
}

function descriptorStat(stat: wasi.DescriptorStat): DescriptorStat {
  return { ...stat, type: descriptorType(stat.type) };
}

/** A stream's items and the future of how it ended, as a 0.3 function returns them. */
function streamed<T>(items: (ended: (result: Result<undefined>) => void) => AsyncGenerator<T, void, undefined>): [AsyncGenerator<T, void, undefined>, Promise<Result<undefined>>] {
  let ended!: (result: Result<undefined>) => void;
  const future = new Promise<Result<undefined>>((resolve) => (ended = resolve));
  return [items(ended), future];
}

export class Descriptor {
  readonly #inner: GrantedDescriptor;
  /** A granted directory itself: every get-directories hands out the same one, so a guest's drop of it closes nothing. */
  readonly #preopen: boolean;

  constructor(inner: GrantedDescriptor, preopen = false) {
    this.#inner = inner;
    this.#preopen = preopen;
  }

  static #unwrap(other: unknown): GrantedDescriptor {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the 0.2 descriptor's convention, turned into the err case by attempt
    if (!(other instanceof Descriptor)) throw 'bad-descriptor';
    return other.#inner;
  }

  readViaStream(offset: bigint): [AsyncGenerator<Uint8Array, void, undefined>, Promise<Result<undefined>>] {
    const inner = this.#inner;
    return streamed(async function* (ended) {
      let at = offset;
      try {
        for (;;) {
          const [bytes, eof] = inner.read(BigInt(CHUNK), at);
          if (bytes.length > 0) yield bytes;
          at += BigInt(bytes.length);
          if (eof || bytes.length === 0) break;
        }
        ended({ tag: 'ok', val: undefined });
      } catch (e) {
        ended({ tag: 'err', val: errorCode(e) });
      } finally {
        // The guest dropped the stream before its end: nothing more is read.
        ended({ tag: 'ok', val: undefined });
      }
    });
  }

  writeViaStream(data: GuestBytes, offset: bigint): Promise<Result<undefined>> {
    return this.#writeFrom(data, () => offset);
  }

  appendViaStream(data: GuestBytes): Promise<Result<undefined>> {
    return this.#writeFrom(data, () => this.#inner.stat().size);
  }

  async #writeFrom(data: GuestBytes, start: () => bigint): Promise<Result<undefined>> {
    try {
      let at = start();
      for (;;) {
        const { done, value } = await data.read(CHUNK);
        if (done) return { tag: 'ok', val: undefined };
        if (!value || value.length === 0) continue;
        const bytes = value instanceof Uint8Array ? value : Uint8Array.from(value);
        for (let written = 0; written < bytes.length; ) {
          const n = Number(this.#inner.write(bytes.subarray(written), at));
          written += n;
          at += BigInt(n);
        }
      }
    } catch (e) {
      return { tag: 'err', val: errorCode(e) };
    }
  }

  readDirectory(): [AsyncGenerator<DirectoryEntry, void, undefined>, Promise<Result<undefined>>] {
    const inner = this.#inner;
    return streamed(async function* (ended) {
      try {
        const entries = inner.readDirectory();
        for (let entry = entries.readDirectoryEntry(); entry; entry = entries.readDirectoryEntry()) yield { type: descriptorType(entry.type), name: entry.name };
        ended({ tag: 'ok', val: undefined });
      } catch (e) {
        ended({ tag: 'err', val: errorCode(e) });
      } finally {
        ended({ tag: 'ok', val: undefined });
      }
    });
  }

  async advise(offset: bigint, length: bigint, advice: wasi.Advice): Promise<Result<undefined>> {
    return done(() => this.#inner.advise(offset, length, advice));
  }

  async syncData(): Promise<Result<undefined>> {
    return done(() => this.#inner.syncData());
  }

  async sync(): Promise<Result<undefined>> {
    return done(() => this.#inner.sync());
  }

  async getFlags(): Promise<Result<wasi.DescriptorFlags>> {
    return attempt(() => this.#inner.getFlags());
  }

  async getType(): Promise<Result<DescriptorType>> {
    return attempt(() => descriptorType(this.#inner.getType()));
  }

  async setSize(size: bigint): Promise<Result<undefined>> {
    return done(() => this.#inner.setSize(size));
  }

  async setTimes(access: wasi.NewTimestamp, modification: wasi.NewTimestamp): Promise<Result<undefined>> {
    return done(() => this.#inner.setTimes(access, modification));
  }

  async createDirectoryAt(path: string): Promise<Result<undefined>> {
    return done(() => this.#inner.createDirectoryAt(path));
  }

  async stat(): Promise<Result<DescriptorStat>> {
    return attempt(() => descriptorStat(this.#inner.stat()));
  }

  async statAt(pathFlags: wasi.PathFlags, path: string): Promise<Result<DescriptorStat>> {
    return attempt(() => descriptorStat(this.#inner.statAt(pathFlags, path)));
  }

  async setTimesAt(pathFlags: wasi.PathFlags, path: string, access: wasi.NewTimestamp, modification: wasi.NewTimestamp): Promise<Result<undefined>> {
    return done(() => this.#inner.setTimesAt(pathFlags, path, access, modification));
  }

  async linkAt(oldPathFlags: wasi.PathFlags, oldPath: string, newDescriptor: unknown, newPath: string): Promise<Result<undefined>> {
    return done(() => this.#inner.linkAt(oldPathFlags, oldPath, Descriptor.#unwrap(newDescriptor), newPath));
  }

  async openAt(pathFlags: wasi.PathFlags, path: string, openFlags: wasi.OpenFlags, flags: wasi.DescriptorFlags): Promise<Result<Descriptor>> {
    return attempt(() => new Descriptor(this.#inner.openAt(pathFlags, path, openFlags, flags)));
  }

  async readlinkAt(path: string): Promise<Result<string>> {
    return attempt(() => this.#inner.readlinkAt(path));
  }

  async removeDirectoryAt(path: string): Promise<Result<undefined>> {
    return done(() => this.#inner.removeDirectoryAt(path));
  }

  async renameAt(oldPath: string, newDescriptor: unknown, newPath: string): Promise<Result<undefined>> {
    return done(() => this.#inner.renameAt(oldPath, Descriptor.#unwrap(newDescriptor), newPath));
  }

  async symlinkAt(oldPath: string, newPath: string): Promise<Result<undefined>> {
    return done(() => this.#inner.symlinkAt(oldPath, newPath));
  }

  async unlinkFileAt(path: string): Promise<Result<undefined>> {
    return done(() => this.#inner.unlinkFileAt(path));
  }

  async isSameObject(other: unknown): Promise<boolean> {
    return other === this;
  }

  async metadataHash(): Promise<Result<wasi.MetadataHashValue>> {
    return attempt(() => this.#inner.metadataHash());
  }

  async metadataHashAt(pathFlags: wasi.PathFlags, path: string): Promise<Result<wasi.MetadataHashValue>> {
    return attempt(() => this.#inner.metadataHashAt(pathFlags, path));
  }

  [Symbol.dispose](): void {
    if (!this.#preopen) this.#inner[Symbol.dispose]();
  }
}

/** wasi:filesystem/types and preopens of the 0.3 line over the instance's `preopens` (unversioned: wasi-p3.ts keys them). */
export function filesystem03(preopens: Preopens): Record<string, object> {
  const directories = preopens.map(([d, guest]): [Descriptor, string] => [new Descriptor(d, true), guest]);
  return {
    'wasi:filesystem/types': { Descriptor },
    'wasi:filesystem/preopens': { getDirectories: () => directories },
  };
}
