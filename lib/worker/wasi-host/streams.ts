// wasi:io/streams and wasi:io/error, over sources and sinks of rt's own.
//
// rt replaces these interfaces wholesale rather than passing preview2-shim's
// through: StarlingMonkey polls body and timer pollables together, and the
// shim's `poll` only knows pollables of its own I/O worker (findings §2).
// Errors follow the glue's convention (resource.ts): `closed` and
// `last-operation-failed` come back to the guest as err values; breaking the
// interface's rules traps.

import { Pollable, poll } from './poll.js';
import { assignRep, GuestMisuse, WasiError, type Variant } from './resource.js';

/**
 * wasi:io/error#error: what `last-operation-failed` carries. `code` is the
 * wasi:http error-code behind it, when the stream is an HTTP body that broke
 * (wasi:http/types#http-error-code reads it back).
 */
export class IoError {
  constructor(
    readonly message: string,
    readonly code?: Variant,
  ) {
    assignRep(this);
  }

  toDebugString(): string {
    return this.message;
  }

  [Symbol.dispose](): void {}
}

export type StreamError = { tag: 'closed' } | { tag: 'last-operation-failed'; val: IoError };

const closed = (): WasiError<StreamError> => new WasiError<StreamError>({ tag: 'closed' });
const failed = (message: string, code?: Variant): WasiError<StreamError> => new WasiError<StreamError>({ tag: 'last-operation-failed', val: new IoError(message, code) });

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

export class InputStream {
  readonly #source: ByteSource;

  /** rt's constructor: the glue never makes an input stream itself. */
  constructor(source: ByteSource) {
    this.#source = source;
    assignRep(this);
  }

  read(len: bigint): Uint8Array {
    const got = this.#source.read(clampLength(len));
    if (got.length > 0 || len === 0n) return got;
    const status = this.#source.status();
    if (status.kind === 'ended') throw closed();
    if (status.kind === 'failed') throw failed(status.reason, status.code);
    return got;
  }

  blockingRead(len: bigint): Uint8Array {
    const ready = this.#readiness();
    if (!ready.ready()) poll([ready]);
    return this.read(len);
  }

  skip(len: bigint): bigint {
    return BigInt(this.read(len).length);
  }

  blockingSkip(len: bigint): bigint {
    return BigInt(this.blockingRead(len).length);
  }

  subscribe(): Pollable {
    return this.#readiness();
  }

  #readiness(): Pollable {
    const source = this.#source;
    return new Pollable({ ready: () => source.available() > 0 || source.status().kind !== 'open', pending: () => source.status().kind === 'open' });
  }

  [Symbol.dispose](): void {}
}

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

/** At most this much per blocking-write-and-flush, as wasi:io says. */
const BLOCKING_WRITE_MAX = 4096;

export class OutputStream {
  readonly #sink: ByteSink;

  constructor(sink: ByteSink) {
    this.#sink = sink;
    assignRep(this);
  }

  checkWrite(): bigint {
    this.#check();
    return BigInt(this.#sink.capacity());
  }

  write(contents: Uint8Array): void {
    this.#check();
    // wasi:io: writing more than check-write permitted is a guest bug (wasmtime traps too).
    if (contents.length > this.#sink.capacity()) throw new GuestMisuse(`output-stream.write: ${contents.length} bytes where check-write permitted ${this.#sink.capacity()}`);
    // jco lifts a list<u8> argument as a copy of its own (memory.buffer.slice): no copy more here.
    if (contents.length > 0) this.#sink.write(contents);
  }

  blockingWriteAndFlush(contents: Uint8Array): void {
    if (contents.length > BLOCKING_WRITE_MAX) throw new GuestMisuse(`output-stream.blocking-write-and-flush: ${contents.length} bytes, more than ${BLOCKING_WRITE_MAX}`);
    let rest = contents;
    while (rest.length > 0) {
      this.#waitForCapacity();
      const n = Math.min(rest.length, this.#sink.capacity());
      this.write(rest.subarray(0, n));
      rest = rest.subarray(n);
    }
    this.#check();
  }

  // Bytes reach the sink as they are written: there is nothing to flush.
  flush(): void {
    this.#check();
  }

  blockingFlush(): void {
    this.#check();
  }

  writeZeroes(len: bigint): void {
    this.write(new Uint8Array(clampLength(len)));
  }

  blockingWriteZeroesAndFlush(len: bigint): void {
    this.blockingWriteAndFlush(new Uint8Array(clampLength(len)));
  }

  /** Splicing from a stream: as many bytes as are here and fit, no blocking. */
  splice(src: InputStream, len: bigint): bigint {
    const room = Math.min(clampLength(len), this.#sink.capacity());
    const got = src.read(BigInt(room));
    this.write(got);
    return BigInt(got.length);
  }

  blockingSplice(src: InputStream, len: bigint): bigint {
    this.#waitForCapacity();
    const room = Math.min(clampLength(len), this.#sink.capacity());
    const got = src.blockingRead(BigInt(room));
    this.write(got);
    return BigInt(got.length);
  }

  subscribe(): Pollable {
    const sink = this.#sink;
    return new Pollable({ ready: () => sink.capacity() > 0 || sink.failure() !== undefined || !sink.open(), pending: () => sink.open() });
  }

  #waitForCapacity(): void {
    this.#check();
    if (this.#sink.capacity() === 0) poll([this.subscribe()]);
    this.#check();
  }

  #check(): void {
    const failure = this.#sink.failure();
    if (failure !== undefined) throw failed(failure);
    if (!this.#sink.open()) throw closed();
  }

  [Symbol.dispose](): void {}
}

/** A u64 length as a JS length: more than a buffer could hold reads as "as much as there is". */
function clampLength(len: bigint): number {
  return len > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(len);
}
