// Bytes read from a stream up to a bound: a request body (http.max_body_bytes)
// or a repository download (repositories.max_download_bytes). Both readers
// refuse a declared length over the bound before reading, and stop at the
// first chunk that goes past it, so a large or endless body costs at most
// the bound in memory.

export class CappedBytes {
  readonly #chunks: Buffer[] = [];
  #size = 0;

  constructor(readonly maxBytes: number) {}

  /** Whether a declared length (Content-Length) is over the bound already. */
  refuses(declared: number | undefined): boolean {
    return declared !== undefined && declared > this.maxBytes;
  }

  /** Keeps `chunk`; false (and keeps nothing more) once the bytes go past the bound. */
  add(chunk: Buffer): boolean {
    this.#size += chunk.length;
    if (this.#size > this.maxBytes) return false;
    this.#chunks.push(chunk);
    return true;
  }

  /** What was read, in one buffer (the chunk itself when there was one). */
  bytes(): Buffer {
    return this.#chunks.length === 1 ? this.#chunks[0] : Buffer.concat(this.#chunks, this.#size);
  }
}
