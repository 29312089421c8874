// A raw connection to rt, for tests that send what a well-behaved client
// could not (a stalled body, two Host headers) or must choose the address
// they come from (fair shares are per client address: docs/api.md §5.10;
// any 127.x.y.z reaches a loopback listener).

import { connect, type Socket } from 'node:net';
import { eventually, letTimePass, StopWaiting, within } from './eventually.js';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What arrives on a raw connection, and when (and whether) the server closed it. */
export class Raw {
  readonly socket: Socket;
  data = '';
  readonly opened = performance.now();
  readonly closed: Promise<number>;

  constructor(port: number, from?: string) {
    this.socket = connect({ port, host: '127.0.0.1', ...(from ? { localAddress: from } : {}) });
    this.socket.on('data', (d: Buffer) => (this.data += d.toString('latin1')));
    this.socket.on('error', () => {});
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve(performance.now() - this.opened)));
  }

  /** A connection to `port` from address `from` (default: the system's choice, 127.0.0.1), once it is open. */
  static async open(port: number, from?: string): Promise<Raw> {
    const raw = new Raw(port, from);
    await new Promise((resolve) => raw.socket.once('connect', resolve));
    return raw;
  }

  send(text: string | Buffer): this {
    this.socket.write(text);
    return this;
  }

  /** The first whole answer on the connection (its body sized by Content-Length), within `timeoutMs`. */
  async answer(timeoutMs = 10_000): Promise<RawAnswer> {
    return eventually(
      () => {
        const parsed = parseAnswer(this.data);
        if (parsed) return parsed;
        const got = `no whole answer; got ${JSON.stringify(this.data.slice(0, 300))}`;
        throw this.socket.destroyed ? new StopWaiting(got) : new Error(got);
      },
      { what: 'an answer on the connection', timeoutMs, intervalMs: 20 },
    );
  }

  /** How long after opening the server closed the connection; fails past `timeoutMs`. */
  async closedWithin(timeoutMs: number): Promise<number> {
    return within(this.closed, timeoutMs, 'the server closing the connection');
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The first answer in `data`, once it is whole (its body sized by Content-Length). */
export function parseAnswer(data: string): RawAnswer | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = data.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  if (data.length < end + 4 + length) return undefined;
  return { status: Number(statusLine.split(' ')[1]), headers, body: data.slice(end + 4, end + 4 + length) };
}

export const answerJson = (answer: RawAnswer) => JSON.parse(answer.body) as Record<string, unknown>;

/** More of an upload after its first `bytes`: `frames` 64 KiB frames, `everyMs` apart (a client on a slow link). */
export interface Trickle {
  frames: number;
  everyMs: number;
}

/**
 * A chunked upload of `bytes` (zeros), then of `trickle`, sent whole and
 * ended before a byte of the answer is read, as many clients do; then the
 * answer's status line, '' for a connection closed with no answer, or the
 * error the connection failed with ('EPIPE', 'ECONNRESET') if the server
 * reset it first and the answer was lost.
 */
export async function uploadBeforeReading(port: number, path: string, bytes: number, trickle: Trickle = { frames: 0, everyMs: 0 }): Promise<string> {
  const socket = connect({ port, host: '127.0.0.1' });
  // Paused: what the server answers waits in the kernel until the body is out.
  socket.pause();
  return new Promise((resolve) => {
    socket.on('error', (e: Error & { code?: string }) => resolve(e.code ?? e.message));
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const size = 65536;
    const frame = Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), Buffer.alloc(size), Buffer.from('\r\n')]);
    for (let sent = 0; sent < bytes; sent += size) socket.write(frame);
    const finish = () =>
      socket.end('0\r\n\r\n', () => {
        let got = '';
        socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
        socket.on('end', () => resolve(got.slice(0, got.indexOf('\r\n'))));
        socket.resume();
      });
    void (async () => {
      for (let i = 0; i < trickle.frames && !socket.destroyed; i++) {
        socket.write(frame);
        await letTimePass(trickle.everyMs, 'a slow link: the next frame comes later');
      }
      if (!socket.destroyed) finish();
    })();
  });
}
