// Writing a body whose producer runs on credit (a streamed answer,
// stream-response.ts; an HTTP handler's response, handler-route.ts): the
// bytes are views of the producer's ring (byte-ring.ts), written as they are;
// what arrives in one turn of the event loop leaves in one write to the
// socket, and the bytes are granted back to the producer once the socket has
// taken them, so a slow reader stops the producer instead of filling memory.

import type { ServerResponse } from 'node:http';

/**
 * Bytes a producer may have made ahead of its reader: its ring's size. A
 * ring of 1 MiB (touched only as far as a body reaches) rather than 256 KiB
 * because the producer's thread shares two cores with the main thread and
 * the client: each wake-up of it could preempt the main thread, and with
 * 256 KiB a 64 KiB stream woke it about twice per item. Measured (CHUNKS,
 * 64 MiB streams, interleaved with bare node:http): the main thread's
 * involuntary context switches per stream fell from ~370 to ~60, and the
 * median stream from 0.59 to 0.98 × the baseline at 64 KiB (512 KiB: 0.74),
 * 1.15 to 1.61 × at 16 KiB (docs/performance.md, "Wake-ups and the window").
 */
export const WINDOW_BYTES = 1024 * 1024;

export class CreditedWrites {
  #corked = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly grant: (bytes: number) => void,
  ) {}

  /** Writes `bytes`; they are granted back once the socket has taken them (never, if it fails: the ring is not reused). */
  write(bytes: Uint8Array): void {
    const { res } = this;
    const n = bytes.byteLength;
    // Uncorked on setImmediate: what one turn of the event loop delivers (its look at the ring, the stream's end) leaves in one writev.
    if (!this.#corked) {
      this.#corked = true;
      res.cork();
      setImmediate(() => {
        this.#corked = false;
        res.uncork();
      });
    }
    res.write(bytes, (error) => {
      if (!error) this.grant(n);
    });
  }

  /** Lets what this turn wrote go out now: before the socket is ended under it. */
  flush(): void {
    if (this.#corked) this.res.uncork();
  }
}
