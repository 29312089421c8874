// The host directories a sidecar grants (`allowed_paths`, docs/api.md §8) as the
// component's preopened directories. preview2-shim does the file work; its
// descriptors are wrapped here because the shim alone is not a sandbox: it
// follows symlinks out of a preopen, lets a guest create symlinks pointing out
// of it, and knows nothing of read-only grants. Every descriptor the guest
// holds is a `Descriptor` of this module, so `wasi:filesystem/types` must be
// this module's too (the glue checks resources with instanceof).

import { realpathSync } from 'node:fs';
import { posix } from 'node:path';
import * as preview2 from '@bytecodealliance/preview2-shim';
import type * as wasi from '@bytecodealliance/preview2-shim/interfaces/wasi-filesystem-types';
import type { PathGrant } from '../../service.js';
import { confined, guestSegments } from './path-confinement.js';

type ShimDescriptor = wasi.Descriptor;
type ErrorCode = wasi.ErrorCode;

interface ShimFilesystem {
  types: { DirectoryEntryStream: unknown; filesystemErrorCode: unknown };
  /** A preopen's descriptor, made without adding it to the shim's process-wide preopens (which no rt instance reads). */
  _createPreopenDescriptor(host: string): ShimDescriptor;
}
const shim = (preview2 as unknown as { filesystem: ShimFilesystem }).filesystem;

const symbolDispose: symbol = Symbol.dispose ?? Symbol.for('dispose');

/** One granted directory, as every descriptor opened beneath it knows it. */
interface Grant {
  /** The host directory, symlinks resolved: nothing a guest opens may resolve outside it. */
  root: string;
  writable: boolean;
}

/** WASI errors are thrown as their error-code string; the glue turns them into the err case. */
function fail(code: ErrorCode): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- the glue's convention for WASI errors, not ours
  throw code;
}

export class Descriptor {
  readonly #inner: ShimDescriptor;
  readonly #grant: Grant;
  /** This descriptor's host path, within the grant's root. */
  readonly #path: string;
  readonly #isRoot: boolean;

  private constructor(inner: ShimDescriptor, grant: Grant, path: string, isRoot: boolean) {
    this.#inner = inner;
    this.#grant = grant;
    this.#path = path;
    this.#isRoot = isRoot;
  }

  static root(inner: ShimDescriptor, grant: Grant): Descriptor {
    return new Descriptor(inner, grant, grant.root, true);
  }

  /**
   * `path` made safe to hand to the shim: normalised, and (when it resolves
   * through symlinks) still inside the grant. Answers the relative path the
   * shim resolves the same way, against the same directory.
   */
  #beneath(path: string, followLast: boolean): string {
    const segments = guestSegments(path);
    if (segments === undefined || !confined(this.#grant.root, posix.join(this.#path, ...segments), followLast)) fail('not-permitted');
    return segments.length === 0 ? '.' : segments.join('/');
  }

  #mutable(): void {
    if (!this.#grant.writable) fail('read-only');
  }

  static #unwrap(other: unknown): Descriptor {
    if (!(other instanceof Descriptor)) fail('bad-descriptor');
    return other;
  }

  [symbolDispose](): void {
    (this.#inner as unknown as Record<symbol, (() => void) | undefined>)[symbolDispose]?.();
  }

  readViaStream(offset: bigint) {
    return this.#inner.readViaStream(offset);
  }

  writeViaStream(offset: bigint) {
    this.#mutable();
    return this.#inner.writeViaStream(offset);
  }

  appendViaStream() {
    this.#mutable();
    return this.#inner.appendViaStream();
  }

  advise(offset: bigint, length: bigint, advice: wasi.Advice): void {
    this.#inner.advise(offset, length, advice);
  }

  syncData(): void {
    this.#inner.syncData();
  }

  getFlags(): wasi.DescriptorFlags {
    // The shim keeps no flags for a preopen.
    if (this.#isRoot) return { read: true, mutateDirectory: this.#grant.writable };
    return this.#inner.getFlags();
  }

  getType(): wasi.DescriptorType {
    return this.#inner.getType();
  }

  setSize(size: bigint): void {
    this.#mutable();
    this.#inner.setSize(size);
  }

  setTimes(access: wasi.NewTimestamp, modification: wasi.NewTimestamp): void {
    this.#mutable();
    this.#inner.setTimes(access, modification);
  }

  read(length: bigint, offset: bigint): [Uint8Array, boolean] {
    return this.#inner.read(length, offset);
  }

  write(buffer: Uint8Array, offset: bigint): bigint {
    this.#mutable();
    return this.#inner.write(buffer, offset);
  }

  readDirectory(): wasi.DirectoryEntryStream {
    // The shim cannot list a preopen itself, only directories opened from one.
    if (this.#isRoot) return this.#inner.openAt({ symlinkFollow: true }, '.', { directory: true }, { read: true }).readDirectory();
    return this.#inner.readDirectory();
  }

  sync(): void {
    this.#inner.sync();
  }

  createDirectoryAt(path: string): void {
    this.#mutable();
    this.#inner.createDirectoryAt(this.#beneath(path, false));
  }

  stat(): wasi.DescriptorStat {
    if (this.#isRoot) return this.#inner.statAt({ symlinkFollow: true }, '.');
    return this.#inner.stat();
  }

  statAt(pathFlags: wasi.PathFlags, path: string): wasi.DescriptorStat {
    return this.#inner.statAt(pathFlags, this.#beneath(path, pathFlags.symlinkFollow === true));
  }

  setTimesAt(pathFlags: wasi.PathFlags, path: string, access: wasi.NewTimestamp, modification: wasi.NewTimestamp): void {
    this.#mutable();
    this.#inner.setTimesAt(pathFlags, this.#beneath(path, pathFlags.symlinkFollow === true), access, modification);
  }

  linkAt(oldPathFlags: wasi.PathFlags, oldPath: string, newDescriptor: unknown, newPath: string): void {
    const target = Descriptor.#unwrap(newDescriptor);
    // A hard link into a writable grant would make a read-only file writable.
    this.#mutable();
    target.#mutable();
    const from = this.#beneath(oldPath, oldPathFlags.symlinkFollow === true);
    this.#inner.linkAt(oldPathFlags, from, target.#inner, target.#beneath(newPath, false));
  }

  openAt(pathFlags: wasi.PathFlags, path: string, openFlags: wasi.OpenFlags, flags: wasi.DescriptorFlags): Descriptor {
    if (openFlags.create || openFlags.truncate || flags.write || flags.mutateDirectory) this.#mutable();
    const follow = pathFlags.symlinkFollow === true;
    const sub = this.#beneath(path, follow);
    const opened = this.#inner.openAt(pathFlags, sub, openFlags, flags);
    return new Descriptor(opened, this.#grant, posix.join(this.#path, sub), false);
  }

  readlinkAt(path: string): string {
    return this.#inner.readlinkAt(this.#beneath(path, false));
  }

  removeDirectoryAt(path: string): void {
    this.#mutable();
    this.#inner.removeDirectoryAt(this.#beneath(path, false));
  }

  renameAt(oldPath: string, newDescriptor: unknown, newPath: string): void {
    const target = Descriptor.#unwrap(newDescriptor);
    this.#mutable();
    target.#mutable();
    this.#inner.renameAt(this.#beneath(oldPath, false), target.#inner, target.#beneath(newPath, false));
  }

  /**
   * Never: a guest-made symlink could point out of the grant, and checking
   * it on use leaves a window (Node has no openat) in which another instance
   * swaps it. Symlinks the operator put inside a grant are followed when
   * they stay inside it.
   */
  symlinkAt(_oldPath: string, _newPath: string): void {
    this.#mutable();
    fail('not-permitted');
  }

  unlinkFileAt(path: string): void {
    this.#mutable();
    this.#inner.unlinkFileAt(this.#beneath(path, false));
  }

  isSameObject(other: unknown): boolean {
    return other === this;
  }

  metadataHash(): wasi.MetadataHashValue {
    // The shim hashes a preopen by an id it never sets.
    if (this.#isRoot) return this.#inner.metadataHashAt({ symlinkFollow: true }, '.');
    return this.#inner.metadataHash();
  }

  metadataHashAt(pathFlags: wasi.PathFlags, path: string): wasi.MetadataHashValue {
    return this.#inner.metadataHashAt(pathFlags, this.#beneath(path, pathFlags.symlinkFollow === true));
  }
}

/** The grant's directory with symlinks resolved; it was checked at load but may have gone since. */
function grantRoot(grant: PathGrant): string {
  try {
    return realpathSync(grant.host);
  } catch (e) {
    throw new Error(`allowed_paths: ${grant.host} (granted as ${grant.guest}) cannot be opened: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
  }
}

/**
 * `wasi:filesystem/types` and `wasi:filesystem/preopens` for a component
 * granted `preopens` (grantedDirectories): exactly those directories, under their guest names. The
 * shim's own preopen list (it starts with the host's `/`) is never shown to
 * a guest; it only gains the granted roots, since the shim opens nothing
 * while that list is empty, and resetting it would break the descriptors of
 * another component's imports in the same thread.
 */
export function grantedFilesystem(preopens: Preopens): Record<string, object> {
  return {
    'wasi:filesystem/types': {
      Descriptor,
      DirectoryEntryStream: shim.types.DirectoryEntryStream,
      filesystemErrorCode: shim.types.filesystemErrorCode,
    },
    'wasi:filesystem/preopens': { getDirectories: () => preopens },
  };
}

/** Granted directories opened, each with its guest name: one set per instance, which both WASI lines' filesystems serve (WASI 0.3's wraps them: wasi-p3-filesystem.ts). */
export type Preopens = [Descriptor, string][];

export function grantedDirectories(paths: PathGrant[]): Preopens {
  return paths.map((p): [Descriptor, string] => {
    const root = grantRoot(p);
    return [Descriptor.root(shim._createPreopenDescriptor(root), { root, writable: p.writable }), p.guest];
  });
}
