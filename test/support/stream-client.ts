// An HTTP client for streamed answers that sees what fetch hides: when each
// piece arrived, whether the chunked body ended with its final chunk, and a
// reader that can pause or hang up mid-stream.

import { request, type IncomingMessage } from 'node:http';

export interface Piece {
  /** ms since the request was sent. */
  at: number;
  bytes: Buffer;
}

export interface StreamedAnswer {
  res: IncomingMessage;
  status: number;
  /** ms since the request was sent, when the headers came. */
  headersAt: number;
  pieces: Piece[];
  /** Resolves when the answer is over: `complete` only if the body ended with its final chunk. */
  ended: Promise<{ complete: boolean; at: number }>;
  body(): Buffer;
  text(): string;
  /** Hangs up. */
  close(): void;
}

/** POSTs `json` to `url` (from local address `from`, if given) and resolves once the headers are in; the body keeps arriving into `pieces`. */
export function openStream(url: string, json: unknown, headers: Record<string, string> = {}, opts: { paused?: boolean; from?: string } = {}): Promise<StreamedAnswer> {
  const started = performance.now();
  const since = () => performance.now() - started;
  return new Promise((resolve, reject) => {
    const from = opts.from ? { localAddress: opts.from, agent: false } : {};
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, ...from }, (res) => {
      const pieces: Piece[] = [];
      const ended = new Promise<{ complete: boolean; at: number }>((done) => {
        res.on('close', () => done({ complete: res.complete, at: since() }));
        res.on('error', () => {});
      });
      if (!opts.paused) res.on('data', (bytes: Buffer) => pieces.push({ at: since(), bytes }));
      resolve({
        res,
        status: res.statusCode!,
        headersAt: since(),
        pieces,
        ended,
        body: () => Buffer.concat(pieces.map((p) => p.bytes)),
        text: () => Buffer.concat(pieces.map((p) => p.bytes)).toString('utf8'),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(json));
  });
}

/** The NDJSON lines of `text` as values. */
export function ndjson(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

/** The SSE events of `text`: each its `event` name (default `message`) and parsed data. */
export function sseEvents(text: string): { event: string; data: unknown }[] {
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      return { event, data: JSON.parse(data) as unknown };
    });
}
