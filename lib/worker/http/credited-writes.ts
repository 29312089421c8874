// Writing a body whose producer runs on credit (a streamed answer,
// stream-response.ts; an HTTP handler's response, handler-route.ts): what
// arrives in one turn of the event loop leaves in one write to the socket,
// and the bytes are granted back to the producer once the socket has taken
// them, so a slow reader stops the producer instead of filling memory.

import type { ServerResponse } from 'node:http';

/** Bytes a producer may have made ahead of its reader. */
export const WINDOW_BYTES = 256 * 1024;
/** Credit goes back in pieces of at least this, so a stream of small items does not cost a message per item. */
const GRANT_BYTES = WINDOW_BYTES / 4;

export class CreditedWrites {
  #corked = false;
  /** Bytes the socket has taken and not yet granted back. */
  #returned = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly grant: (bytes: number) => void,
  ) {}

  /** Writes `bytes`; they are granted back once the socket has taken them, unless the answer is `over()` by then. */
  write(bytes: Uint8Array, over: () => boolean = () => false): void {
    const { res } = this;
    const n = bytes.byteLength;
    // Not on nextTick: Node runs that queue after every port message, so it would uncork after each item.
    if (!this.#corked) {
      this.#corked = true;
      res.cork();
      setImmediate(() => {
        this.#corked = false;
        res.uncork();
      });
    }
    res.write(bytes, (error) => {
      if (error || over()) return;
      this.#returned += n;
      if (this.#returned >= GRANT_BYTES) {
        this.grant(this.#returned);
        this.#returned = 0;
      }
    });
  }

  /** Lets what this turn wrote go out now: before the socket is ended under it. */
  flush(): void {
    if (this.#corked) this.res.uncork();
  }
}
