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
// ended), or once its client has sent nothing for LINGER_IDLE_MS (nginx's
// lingering_timeout): a client on a slow link still gets to the end of its
// upload and reads the answer. A client that keeps sending is cut off by
// Node's requestTimeout (server.ts), which bounds the time to receive a
// request, body and all (nginx's lingering_time).
//
// Before the answer is written, the rest of a refused body stays in the
// socket (holdUnread). Read on, a client that sent its whole body and
// half-closed would have its FIN read, and Node ends the connection of a
// client that has ended before its answer (its server is not
// `httpAllowHalfOpen`): the client reads an empty close. A handler's refusal
// is answered once its guest has given up, which may be long after the last
// byte arrived.

import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** How long a lingering connection waits for more of the body: a client that has stopped sending has had time to read its answer. */
const LINGER_IDLE_MS = 2_000;

/** Leaves what is still to come of a refused body unread until its answer is written (lingerIfUnread reads it then). */
export function holdUnread(req: IncomingMessage): void {
  req.pause();
}

/** When `req`'s body has not all arrived: its connection lingers if its answer closes it, and the rest of the body is read and dropped. */
export function lingerIfUnread(req: IncomingMessage): void {
  if (req.complete) return;
  req.socket.destroySoon = lingeringClose;
  // Nothing else reads it now: bytes left in the socket are what resets it.
  req.resume();
}

function lingeringClose(this: Socket): void {
  this.end();
  // Reads (and the answer's writes) reset it; its timeout ends the connection, whoever else listens for it.
  this.setTimeout(LINGER_IDLE_MS, () => this.destroy());
}
