// A cursor over WebAssembly binary bytes (core modules and components share
// the encoding): bytes, LEB128 integers, UTF-8 names and vectors. Errors are
// the caller's own, so each format reports problems in its own words.

/** How a format words the two ways its bytes can be wrong. */
export interface BinaryFaults {
  truncated(offset: number): Error;
  malformed(offset: number, what: string): Error;
}

export class BinaryReader {
  constructor(
    readonly buf: Uint8Array,
    public pos: number,
    readonly end: number,
    readonly faults: BinaryFaults,
  ) {}

  /** A reader of `[pos, end)` of the same bytes, with the same faults. */
  slice(pos: number, end: number): BinaryReader {
    return new BinaryReader(this.buf, pos, end, this.faults);
  }

  fail(what: string): never {
    throw this.faults.malformed(this.pos, what);
  }

  byte(): number {
    if (this.pos >= this.end) throw this.faults.truncated(this.pos);
    return this.buf[this.pos++];
  }

  peek(): number {
    if (this.pos >= this.end) throw this.faults.truncated(this.pos);
    return this.buf[this.pos];
  }

  /** Unsigned LEB128 of at most 5 bytes (a u32). */
  u32(): number {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
    }
    return this.fail('LEB128 integer too long');
  }

  /** Signed LEB128 up to 33 bits: in components, negative values are type opcodes, the rest type indices. */
  s33(): number {
    let result = 0;
    let shift = 0;
    let b: number;
    do {
      b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80 && shift < 35);
    if (b & 0x40) result -= 2 ** shift;
    return result;
  }

  /** Past a LEB128 integer of any width (an i64.const's). */
  skipLeb(): void {
    while (this.byte() & 0x80);
  }

  /** A name: a u32 length, then that many bytes of UTF-8 (invalid UTF-8 throws a TypeError). */
  string(): string {
    const len = this.u32();
    if (this.pos + len > this.end) throw this.faults.truncated(this.pos);
    const text = new TextDecoder('utf-8', { fatal: true }).decode(this.buf.subarray(this.pos, this.pos + len));
    this.pos += len;
    return text;
  }

  vec<T>(item: () => T): T[] {
    const n = this.u32();
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(item());
    return out;
  }

  skip(n: number): void {
    if (this.pos + n > this.end) throw this.faults.truncated(this.pos);
    this.pos += n;
  }

  optional<T>(item: () => T): T | undefined {
    const flag = this.byte();
    if (flag === 0) return undefined;
    if (flag === 1) return item();
    return this.fail(`expected 0x00 or 0x01, got 0x${flag.toString(16)}`);
  }
}

/** Signed LEB128 of `value` (an i32 or an i64: a bigint). */
export function encodeSigned(value: number | bigint): number[] {
  let v = BigInt(value);
  const out: number[] = [];
  for (;;) {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    if ((v === 0n && (byte & 0x40) === 0) || (v === -1n && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/** One section of a module or component: its id, its body, and all its bytes (id and size too). */
export interface Section {
  id: number;
  body: Uint8Array;
  raw: Uint8Array;
}

/** The 8 bytes before the first section: the magic number and the version (a module's or a component's). */
export const PREAMBLE = 8;

/** The sections of a module or component, after its preamble, in order. */
export function* sections(binary: Uint8Array, faults: BinaryFaults): Generator<Section> {
  if (binary.length < PREAMBLE) throw faults.truncated(binary.length);
  const r = new BinaryReader(binary, PREAMBLE, binary.length, faults);
  while (r.pos < r.end) {
    const start = r.pos;
    const id = r.byte();
    const size = r.u32();
    const bodyStart = r.pos;
    r.skip(size);
    yield { id, body: binary.subarray(bodyStart, r.pos), raw: binary.subarray(start, r.pos) };
  }
}

/** A section of id `id` whose body is `body`, one part after another: its id, its size, then the parts. */
export function encodeSection(id: number, body: readonly Uint8Array[]): Uint8Array[] {
  const size = body.reduce((n, p) => n + p.length, 0);
  return [Uint8Array.of(id, ...encodeU32(size)), ...body];
}

/** `value` as unsigned LEB128. */
export function encodeU32(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value) byte |= 0x80;
    out.push(byte);
  } while (value);
  return out;
}

/** `parts` one after another, in a buffer of their own (an encoder's output, written section by section). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
