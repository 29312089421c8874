// Bytes between a guest's streams and rt's side, whatever the WASI version:
// a source an input stream reads without blocking, a sink an output stream
// writes to, and the queue a body's pieces wait in.

import type { Variant } from './host-objects.js';

/** Bytes an input stream reads: never blocks; says when no more will come. */
export interface ByteSource {
  /** Up to `max` bytes that are here now (empty when none are yet). */
  read(max: number): Uint8Array;
  /** 'open': more may come; 'ended': all were read once `available` is 0; 'failed': the source broke (`code`: why, as wasi:http says it). */
  status(): { kind: 'open' } | { kind: 'ended' } | { kind: 'failed'; reason: string; code?: Variant };
  /** Bytes here now. */
  available(): number;
}

/** Bytes that arrived in pieces, read in any sizes: a body's side of a channel (channel.ts, outgoing-channel.ts). */
export class ChunkQueue {
  readonly #chunks: Uint8Array[] = [];
  #available = 0;

  get available(): number {
    return this.#available;
  }

  push(bytes: Uint8Array): void {
    this.#chunks.push(bytes);
    this.#available += bytes.length;
  }

  /** At most `max` bytes, from the first piece only (a view, no copy); empty when none are here. */
  take(max: number): Uint8Array {
    const first = this.#chunks[0];
    if (!first) return new Uint8Array(0);
    const n = Math.min(max, first.length);
    if (n === first.length) this.#chunks.shift();
    else this.#chunks[0] = first.subarray(n);
    this.#available -= n;
    return first.subarray(0, n);
  }

  clear(): void {
    this.#chunks.length = 0;
    this.#available = 0;
  }
}

/** A source with nothing in it: stdin, and bodies that have none. */
export const EMPTY_SOURCE: ByteSource = { read: () => new Uint8Array(0), status: () => ({ kind: 'ended' }), available: () => 0 };

/** Where an output stream's bytes go. */
export interface ByteSink {
  /** Bytes the sink takes now (check-write's answer); 0 while it is full. */
  capacity(): number;
  /** Whether capacity can still grow: false once the far side is gone. */
  open(): boolean;
  /** Takes `bytes` (at most `capacity()`): the host's own, which the sink may keep but not detach (it may be a view of a larger array the caller goes on using). */
  write(bytes: Uint8Array): void;
  /** Why writes fail, once they do (a client gone, a body cut): `last-operation-failed`. */
  failure(): string | undefined;
}
