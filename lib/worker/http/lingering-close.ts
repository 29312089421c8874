// A lingering close (RFC 9112 §9.6) for an answer that closes its
// connection while its client is still sending the body: a 413 part-way
// through an upload, a 408, a refusal the app gave without reading.
//
// Node's server ends such an answer with `socket.destroySoon()`: the answer,
// a FIN, and the socket closed as soon as that is flushed. A socket closed
// with unread bytes in it is reset, and a client that writes its whole body
// before it reads (many do: measured with one, 10 uploads of 50 MB, 10 broken
// pipes and no 413 read) loses the answer waiting in its buffer. So this
// connection, once answered, half-closes, reads and drops what still comes,
// and closes when its client does (Node's socket closes once both ends have
// ended) or LINGER_MS after the answer, whichever is first.

import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** Long enough for a client to read an answer it has received; short enough that a client that keeps sending does not hold its connection. */
const LINGER_MS = 2_000;

/** When `req`'s body has not all arrived: its connection lingers if its answer closes it, and the rest of the body is read and dropped. */
export function lingerIfUnread(req: IncomingMessage): void {
  if (req.complete) return;
  req.socket.destroySoon = lingeringClose;
  // Nothing else reads it now: bytes left in the socket are what resets it.
  req.resume();
}

function lingeringClose(this: Socket): void {
  this.end();
  const timer = setTimeout(() => this.destroy(), LINGER_MS).unref();
  this.once('close', () => clearTimeout(timer));
}
