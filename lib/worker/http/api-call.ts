// One request to an API operation (operations.ts), as the operation sees it
// whichever transport reached it: the Koa app (app.ts), or the invoke lane in
// front of it (invoke-lane.ts). An operation reads the request through an
// ApiCall and answers with a Reply, which one function writes (writeReply):
// so the two transports cannot answer the same request differently.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../errors.js';
import type { RequestState } from './request-state.js';

export interface ApiCall {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly state: RequestState;
  /** The names the path gives (`domain`, `service`, `method`, `resource`, `handle`), decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** A request header's value; '' when it has none. */
  header(name: string): string;
  /** The first of `types` the request's Accept takes, as Koa negotiates it; false for none. */
  accepts(...types: string[]): string | false;
}

/** What an operation answers. */
export type Reply =
  /** rt's own JSON. */
  | { kind: 'json'; status: number; body: unknown; headers?: Readonly<Record<string, string>> }
  /** rt's own text in another media type (the metrics). */
  | { kind: 'text'; type: string; body: string }
  /** Bytes the component made, in the media type it declares: never to run as rt's page (COMPONENT_CONTENT_HEADERS). */
  | { kind: 'content'; type: string; body: Uint8Array }
  /** Another worker's answer, passed on (peers.ts): its body as it arrives. */
  | { kind: 'relayed'; status: number; headers: readonly string[]; body: IncomingMessage }
  /** No body (204). */
  | { kind: 'empty'; status: number }
  /** The operation wrote the answer on `res` itself (a stream, a handler's response). */
  | { kind: 'written' };

/**
 * The headers of an answer whose body the component made rather than rt (raw
 * bytes in the media type its sidecar declares, a stream): a page among them
 * must never run as rt's origin, where its requests to rt would pass the
 * control guard (control-guard.ts) as rt's own. The sandbox gives it an
 * opaque origin, scripts, forms, popups and downloads still working; nosniff
 * keeps browsers from reading bytes as a type that runs. rt's own answers
 * do without: their body is rt's.
 */
export const COMPONENT_CONTENT_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': 'sandbox allow-scripts allow-forms allow-popups allow-downloads',
  'X-Content-Type-Options': 'nosniff',
};

export const WRITTEN: Reply = { kind: 'written' };

export function json(body: unknown, status = 200, headers?: Readonly<Record<string, string>>): Reply {
  return headers ? { kind: 'json', status, body, headers } : { kind: 'json', status, body };
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Writes `reply` on `res` in one writeHead, after `before` (a flat list of
 * names and values, which Node takes without a setHeader per header). Nothing
 * is written for a client that left, nor after an answer began. Returns
 * the answer's status.
 */
export function writeReply(res: ServerResponse, reply: Reply, before: readonly string[]): number {
  if (reply.kind === 'written') {
    // A stream or a handler's response returns once its answer is out: none at all would leave the client hanging.
    if (!res.headersSent && !res.destroyed) throw new ApiError('RT_ERR_INTERNAL', 'the operation gave no answer');
    return res.statusCode;
  }
  const status = 'status' in reply ? reply.status : 200;
  if (res.destroyed || res.headersSent) return status;
  const headers = [...before];
  switch (reply.kind) {
    case 'json': {
      if (reply.headers) for (const name in reply.headers) headers.push(name, reply.headers[name]);
      const body = JSON.stringify(reply.body);
      headers.push('Content-Type', JSON_TYPE, 'Content-Length', String(Buffer.byteLength(body)));
      res.writeHead(status, headers);
      res.end(body);
      break;
    }
    case 'text':
      headers.push('Content-Type', reply.type, 'Content-Length', String(Buffer.byteLength(reply.body)));
      res.writeHead(status, headers);
      res.end(reply.body);
      break;
    case 'content':
      for (const name in COMPONENT_CONTENT_HEADERS) headers.push(name, COMPONENT_CONTENT_HEADERS[name]);
      headers.push('Content-Type', reply.type, 'Content-Length', String(reply.body.byteLength));
      res.writeHead(status, headers);
      res.end(reply.body);
      break;
    case 'relayed':
      headers.push(...reply.headers);
      res.writeHead(status, headers);
      if (status === 204 || status === 304) {
        reply.body.resume();
        res.end();
      } else relay(reply.body, res);
      break;
    case 'empty':
      res.writeHead(status, headers);
      res.end();
      break;
  }
  return status;
}

/** Puts the headers every answer to the request carries on `res`, for what writes its answer its own way (a stream, a handler's response, Koa). */
export function setAnswerHeaders(res: ServerResponse, headers: readonly string[]): void {
  for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i], headers[i + 1]);
}

/** The other worker's body onto `res`; an answer cut short there is cut short here (no final chunk). */
function relay(body: IncomingMessage, res: ServerResponse): void {
  body.on('error', () => res.destroy());
  body.once('aborted', () => res.destroy());
  res.once('close', () => body.destroy());
  body.pipe(res);
}

/** One operation of the API (operations.ts): what it answers, where, and what guards it. */
export interface ApiOperation {
  /** What the operation is, for whatever names it (its log, its trace span). */
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'ALL';
  /** Below `/api`, as @koa/router matches it (`:domain` names a part, `{/*path}` the rest). */
  readonly path: string;
  /** Changes what runs (docs/api.md §5.6): refused before it runs unless the request may make control operations. */
  readonly control?: boolean;
  readonly run: (call: ApiCall) => Promise<Reply>;
}
