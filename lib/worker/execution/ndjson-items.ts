// A stream<T> parameter whose items are not bytes comes as NDJSON (docs/api.md
// §5.9): one JSON value of T per line of the request body. The lines are
// decoded here, on the instance thread, as the body's bytes arrive (so the
// body keeps the byte window, limits and pace of a stream<u8>), and each
// value goes to the guest as the glue takes it. A line that is not JSON, or
// not a T, ends the stream there; the call is then answered 400 naming it
// (or, once a stream answer has begun, cut short): the guest never sees a
// value that does not fit, and never learns of the rest.

import { CodecError, typeCodec } from '../../wit/codec.js';
import type { WitType } from '../../wit/types.js';

/** Why the body's items stopped short: the kinds and details of a 400 (invocation.ts's Failure). */
export interface ItemsFailure {
  kind: 'invalid-json' | 'invalid-arguments';
  details: string;
}

const NEWLINE = 0x0a;

/** Integer and float items: jco's glue takes an array of them as that many items, so a chunk's lines go to it in one step. */
const NUMERIC = new Set(['u8', 'u16', 'u32', 'u64', 's8', 's16', 's32', 's64', 'f32', 'f64']);

export class NdjsonItems {
  /** Set when a line did not fit: the stream ended before it. */
  failure: ItemsFailure | undefined;
  /** A line that did not fit, while the guest has yet to take the items before it. */
  #unfit: ItemsFailure | undefined;
  readonly #decode: (json: unknown, path: string) => unknown;
  readonly #batched: boolean;
  #index = 0;

  /** `param`: the parameter's name, the head of a failure's path (`points[3].x`). */
  constructor(
    element: WitType,
    private readonly param: string,
  ) {
    this.#decode = typeCodec(element).decode;
    this.#batched = element.kind === 'primitive' && NUMERIC.has(element.name);
  }

  /** The items of the lines in `chunks`, as the glue's values of T: one at a time, or a chunk's numbers as an array. */
  async *items(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<unknown, void, undefined> {
    let partial: Buffer[] = [];
    for await (const chunk of chunks) {
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const values: unknown[] = [];
      let from = 0;
      for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, from)) {
        const line = partial.length === 0 ? bytes.subarray(from, end) : Buffer.concat([...partial, bytes.subarray(from, end)]);
        partial = [];
        from = end + 1;
        if (!this.#line(line, values)) break;
      }
      if (this.#unfit === undefined && from < bytes.length) partial.push(Buffer.from(bytes.subarray(from)));
      yield* this.#give(values);
      // Known only once the guest wants more than the lines before it: what it wrote for those goes out first.
      this.failure = this.#unfit;
      if (this.failure) return;
    }
    // The last line needs no newline after it.
    const values: unknown[] = [];
    if (partial.length > 0) this.#line(Buffer.concat(partial), values);
    yield* this.#give(values);
    this.failure = this.#unfit;
  }

  *#give(values: unknown[]): Generator<unknown, void, undefined> {
    if (values.length === 0) return;
    if (this.#batched) yield values;
    else yield* values;
  }

  /** Decodes one line into `values` (a blank one is skipped); false when it did not fit. */
  #line(line: Buffer, values: unknown[]): boolean {
    const text = line.toString('utf8').trim();
    if (text === '') return true;
    const path = `${this.param}[${this.#index}]`;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      this.#unfit = { kind: 'invalid-json', details: `${path} is not JSON (${(e as Error).message}): ${JSON.stringify(text.slice(0, 100))}` };
      return false;
    }
    try {
      values.push(this.#decode(json, path));
    } catch (e) {
      if (!(e instanceof CodecError)) throw e;
      this.#unfit = { kind: 'invalid-arguments', details: e.message };
      return false;
    }
    this.#index++;
    return true;
  }
}
