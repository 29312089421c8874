// The undici twin of rt's HTTPS client (`get` in lib/primary/https-repository.ts),
// for bench/https-client.ts: the same signature, answer and errors, and the same
// guarantees: the extra CA beside the system ones (an Agent's `connect.ca`), one
// deadline for the whole exchange (redirects and body), the size cap enforced
// while the body streams (a declared Content-Length over it refused before
// reading), at most 5 redirects and only to https:, 304 with If-None-Match.
// One Agent serves every request of a process, as an undici-based rt would
// keep one dispatcher built from its configuration.

import { Agent, request } from 'undici';
import { CappedBytes } from '../lib/capped-bytes.js';
import { exchangeError, redirectTarget, type Response } from '../lib/primary/https-repository.js';
import { RepositoryError } from '../lib/primary/repository-scan.js';

export interface UndiciHttp {
  dispatcher: Agent;
  timeoutMs: number;
  maxBytes: number;
}

export function undiciHttp(ca: string[] | undefined, timeoutMs: number, maxBytes: number): UndiciHttp {
  return { dispatcher: new Agent(ca === undefined ? {} : { connect: { ca } }), timeoutMs, maxBytes };
}

type Answer = Awaited<ReturnType<typeof request>>;

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export async function undiciGet(url: string, http: UndiciHttp, etag?: string): Promise<Response> {
  const signal = AbortSignal.timeout(http.timeoutMs);
  let current = new URL(url);
  try {
    for (let redirects = 0; ; redirects++) {
      const res = await request(current, { dispatcher: http.dispatcher, signal, headers: etag === undefined ? {} : { 'if-none-match': etag } });
      const status = res.statusCode;
      if (status < 300 || status >= 400 || status === 304) {
        const body = status >= 200 && status < 300 ? await readBody(res, url, http.maxBytes) : await discard(res);
        const tag = header(res.headers.etag);
        return tag === undefined ? { status, body } : { status, body, etag: tag };
      }
      await res.body.dump();
      current = redirectTarget(url, current, status, header(res.headers.location), redirects);
    }
  } catch (e) {
    throw exchangeError(url, e, signal, http.timeoutMs);
  }
}

async function readBody(res: Answer, url: string, maxBytes: number): Promise<Buffer> {
  const tooLarge = () => {
    res.body.destroy();
    return new RepositoryError(url, `larger than repositories.max_download_bytes (${maxBytes} bytes)`);
  };
  const body = new CappedBytes(maxBytes);
  const declared = header(res.headers['content-length']);
  if (body.refuses(declared === undefined ? undefined : Number(declared))) throw tooLarge();
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    if (!body.add(chunk)) throw tooLarge();
  }
  return body.bytes();
}

async function discard(res: Answer): Promise<Buffer> {
  // Unlike node:http, undici holds the connection until the body is read: dump it so the socket is reused.
  await res.body.dump();
  return Buffer.alloc(0);
}
