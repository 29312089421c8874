// wasi:io/streams and wasi:io/error, over sources and sinks of rt's own.
//
// rt replaces these interfaces wholesale rather than passing preview2-shim's
// through: StarlingMonkey polls body and timer pollables together, and the
// shim's `poll` only knows pollables of its own I/O worker.
// Errors follow the glue's convention (core/host-objects.ts): `closed` and
// `last-operation-failed` come back to the guest as err values; breaking the
// interface's rules traps.

import type { ByteSink, ByteSource } from '../core/byte-queue.js';
import { assignRep, GuestMisuse, WasiError, type Variant } from '../core/host-objects.js';
import { Pollable, poll } from './poll.js';

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
