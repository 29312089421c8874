// A WASI 0.3 body as rt's side reads it, whoever made it: the glue's stream
// of what a guest writes (read(count) as it writes), or one rt made (an async
// iterable of the bytes as they arrive: a request's body handed in, the
// response to a client.send) that a guest handed back to rt, unread, as its
// own response's or outgoing request's.

import type { ErrorCode, RequestBodySource } from '../core/handler-io.js';
import type { Result } from '../core/message-parts.js';
import { Fields } from './fields.js';
import type { GuestBytes } from '../../sandbox/guest-bytes.js';

/** What a body's trailers future resolves to. */
export type TrailersResult = Result<Fields | undefined, ErrorCode>;

/** A stream<u8> the guest writes, as the glue hands it to the host. */
export interface GuestByteStream extends GuestBytes {
  /** Drops the readable end: the guest's next write finds it gone. */
  return?(): Promise<unknown>;
}

export type Body = GuestByteStream | AsyncIterable<Uint8Array>;

/** What a body rt receives (a request's to a handler, the response to a client.send) ended with, as its trailers future gives it to the guest; undefined while it is open. */
export function ending(source: RequestBodySource): TrailersResult | undefined {
  const status = source.status();
  if (status.kind === 'open') return undefined;
  if (status.kind === 'failed') return { tag: 'err', val: status.code ?? { tag: 'internal-error', val: status.reason } };
  const trailers = source.trailers();
  return { tag: 'ok', val: trailers ? Fields.fromHost(trailers) : undefined };
}

export interface ByteReader {
  /** Up to `max` bytes (at least one), or undefined at the end. */
  read(max: number): Promise<Uint8Array | undefined>;
  /** Read no more: the body's source is let go (a guest's end is dropped). */
  close(): void;
}

function isGuestStream(body: Body): body is GuestByteStream {
  return typeof (body as GuestByteStream).read === 'function';
}

export function byteReader(body: Body): ByteReader {
  if (isGuestStream(body)) {
    return {
      async read(max) {
        for (;;) {
          const { done, value } = await body.read(max);
          if (done) return undefined;
          if (value && value.length > 0) return value instanceof Uint8Array ? value : Uint8Array.from(value);
        }
      },
      close: () => void body.return?.().catch(() => {}),
    };
  }
  const chunks = body[Symbol.asyncIterator]();
  let held: Uint8Array | undefined;
  return {
    async read(max) {
      while (!held || held.length === 0) {
        const next = await chunks.next();
        if (next.done) return undefined;
        held = next.value;
      }
      const out = held.subarray(0, max);
      held = held.subarray(out.length);
      return out;
    },
    close: () => void chunks.return?.(undefined)?.catch(() => {}),
  };
}
