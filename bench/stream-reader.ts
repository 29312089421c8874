// The streams bench's client: one POST on a connection of its own, the answer
// read into one buffer reused for every read (net's `onread`), its chunked
// body counted, not kept. node:http allocates a Buffer per read and parses in
// JS: at 1 GB/s on loopback that client costs about as much CPU as the server
// it measures, on the same 2 cores, and its cost swung from 1.0 to 3.0 ms per
// MiB from one run to the next (fresh pages for its buffers, or reused ones),
// taking rt's and the baseline's figures with it. A reader this lean leaves
// the cores to the servers being compared.

import { connect } from 'node:net';

export interface StreamRead {
  status: number;
  /** Body bytes (the chunks' payload, not their framing). */
  bytes: number;
  /** The chunked body ended with its final chunk (or a length-framed body was whole). */
  complete: boolean;
  /** ms from sending the request to its headers, its first body byte, its end. */
  headersMs: number;
  firstByteMs: number;
  totalMs: number;
  /** The first `keep` bytes of the body. */
  head: Buffer;
  /** Response headers, names in lower case. */
  headers: Record<string, string>;
}

const READ_BUFFER_BYTES = 256 * 1024;
const CR = 13;
const LF = 10;

/** POSTs `json` to `url` (http:, on loopback) and reads the whole answer, keeping only its first `keep` bytes. */
export function readStream(url: string, json: unknown, keep = 0): Promise<StreamRead> {
  const { hostname, port, pathname, search } = new URL(url);
  const body = Buffer.from(JSON.stringify(json));
  const request = Buffer.concat([
    Buffer.from(`POST ${pathname}${search} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`),
    body,
  ]);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const result: StreamRead = { status: 0, bytes: 0, complete: false, headersMs: NaN, firstByteMs: NaN, totalMs: NaN, head: Buffer.alloc(0), headers: {} };
    const kept: Buffer[] = [];
    let head: Buffer = Buffer.alloc(0);
    /** Where the parser is: the head; a chunk's size line; its data (`left` bytes more); the CRLF after it; the trailers; a length-framed body. */
    let state: 'head' | 'size' | 'data' | 'data-end' | 'trailers' | 'length' | 'done' = 'head';
    let left = 0;
    let line = '';
    let ended = false;

    const body = (bytes: Buffer, from: number, to: number) => {
      if (to <= from) return;
      if (result.bytes === 0) result.firstByteMs = performance.now() - started;
      if (result.bytes < keep) kept.push(Buffer.from(bytes.subarray(from, Math.min(to, from + keep - result.bytes))));
      result.bytes += to - from;
    };
    const finish = (complete: boolean, error?: Error) => {
      if (ended) return;
      ended = true;
      result.complete = complete;
      result.totalMs = performance.now() - started;
      result.head = Buffer.concat(kept);
      socket.destroy();
      if (error) reject(error);
      else resolve(result);
    };
    const startBody = (head: string) => {
      result.headersMs = performance.now() - started;
      const [statusLine, ...fields] = head.split('\r\n');
      result.status = Number(statusLine.split(' ')[1]);
      for (const field of fields) {
        const colon = field.indexOf(':');
        if (colon > 0) result.headers[field.slice(0, colon).trim().toLowerCase()] = field.slice(colon + 1).trim();
      }
      if (result.headers['transfer-encoding']?.toLowerCase() === 'chunked') state = 'size';
      else {
        left = Number(result.headers['content-length'] ?? 0);
        state = left > 0 ? 'length' : 'done';
      }
    };
    /** Parses `bytes[0, n)`: as little as a byte at a time through the framing, whole runs through the data. */
    const parse = (bytes: Buffer, n: number) => {
      let i = 0;
      while (i < n && state !== 'done') {
        switch (state) {
          case 'head': {
            // The head is small and comes in the first read or two: joined, then searched whole.
            const soFar = Buffer.concat([head, bytes.subarray(i, n)]);
            const end = soFar.indexOf('\r\n\r\n', 0, 'latin1');
            if (end === -1) {
              head = soFar;
              i = n;
              break;
            }
            i += end + 4 - head.length;
            startBody(soFar.subarray(0, end).toString('latin1'));
            break;
          }
          case 'size':
          case 'trailers': {
            const c = bytes[i++];
            if (c !== LF) {
              if (c !== CR) line += String.fromCharCode(c);
              break;
            }
            if (state === 'trailers') {
              if (line === '') state = 'done';
            } else {
              left = parseInt(line.split(';')[0], 16);
              state = left === 0 ? 'trailers' : 'data';
            }
            line = '';
            break;
          }
          case 'data':
          case 'length': {
            const take = Math.min(left, n - i);
            body(bytes, i, i + take);
            i += take;
            left -= take;
            if (left === 0) state = state === 'data' ? 'data-end' : 'done';
            break;
          }
          case 'data-end':
            if (bytes[i++] === LF) state = 'size';
            break;
        }
      }
      if (state === 'done') finish(true);
    };

    const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    const socket = connect({
      host: hostname,
      port: Number(port),
      onread: {
        buffer,
        callback: (n) => {
          parse(buffer, n);
          return true;
        },
      },
    });
    socket.once('connect', () => socket.write(request));
    socket.once('error', (e) => finish(false, e));
    socket.once('end', () => finish(state === 'done'));
    socket.once('close', () => finish(state === 'done'));
  });
}
