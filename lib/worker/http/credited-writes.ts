// Writing a body whose producer runs on credit (a streamed answer,
// stream-response.ts; an HTTP handler's response, wasi-http-route.ts): the
// bytes are views of the producer's ring (byte-ring.ts), written as they are;
// what arrives in one turn of the event loop leaves in one write to the
// socket, and the bytes are granted back to the producer once the socket has
// taken them, so a slow reader stops the producer instead of filling memory.
//
// The body ends here too (`end`, `cut`), never on the response under a cork
// of this turn: since Node 22, a chunked response corked with `res.cork()`
// keeps its writes in a buffer of its own, which only its uncork makes into
// a chunk. Node 22 and 24's `res.end()` sends the final chunk ahead of that
// buffer (the body's last bytes go out after the response has ended: an
// empty body in the client, garbage on a kept-alive connection); and Node
// 26's `res.write` on an uncorked response corks it until the next tick, so
// a write followed at once by `socket.end()` never leaves. So what a turn
// wrote is uncorked first, and the last record of a cut goes in under the
// same cork.

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
 * 1.15 to 1.61 × at 16 KiB (docs/performance-log.md, "Wake-ups and the window").
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
    const n = bytes.byteLength;
    this.#cork();
    this.res.write(bytes, (error) => {
      if (!error) this.grant(n);
    });
  }

  /**
   * Ends the body whole: what this turn wrote, then the final chunk (and
   * trailers), in that order and in one write to the socket (its own cork
   * holds both): a small response whose body ends in the turn it began costs
   * one syscall, not two.
   */
  end(): void {
    const socket = this.res.socket;
    socket?.cork();
    this.#uncork();
    this.res.end();
    socket?.uncork();
  }

  /**
   * Ends the connection without the final chunk, so no client takes the body
   * for a whole one: what was written still goes out, and `last` (an SSE
   * error record) after it.
   */
  cut(last?: Uint8Array): void {
    if (last !== undefined) {
      this.#cork();
      this.res.write(last);
    }
    this.#uncork();
    this.res.socket?.end();
  }

  /** Uncorked on setImmediate: what one turn of the event loop delivers (its look at the ring, the stream's end) leaves in one writev. */
  #cork(): void {
    if (this.#corked) return;
    this.#corked = true;
    this.res.cork();
    setImmediate(() => this.#uncork());
  }

  /** Once per cork: a second uncork leaves Node 22+'s response counting its corks below zero, and it buffers every later write for good. */
  #uncork(): void {
    if (!this.#corked) return;
    this.#corked = false;
    this.res.uncork();
  }
}
