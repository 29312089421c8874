// The parts of an HTTP message every wasi:http version represents alike: the
// method and scheme variants a guest reads, and what a response's status and
// headers must be for rt to send them (a guest may build fields from anything
// rt handed it, so they are checked when the response goes out).

import { FORBIDDEN_HEADERS, isValidFieldName, isValidFieldValue, type FieldEntry } from './field-rules.js';

export type Method = { tag: 'get' | 'head' | 'post' | 'put' | 'delete' | 'connect' | 'options' | 'trace' | 'patch' } | { tag: 'other'; val: string };
export type Scheme = { tag: 'HTTP' } | { tag: 'HTTPS' } | { tag: 'other'; val: string };
export type Result<T, E> = { tag: 'ok'; val: T } | { tag: 'err'; val: E };

const METHODS = new Set(['get', 'head', 'post', 'put', 'delete', 'connect', 'options', 'trace', 'patch']);

/** A request's method as the guest sees it. Methods are case-sensitive (RFC 9110 §9.1): only the uppercase spelling is the standard one. */
export function methodOf(method: string): Method {
  const lower = method.toLowerCase();
  return METHODS.has(lower) && method === lower.toUpperCase() ? ({ tag: lower } as Method) : { tag: 'other', val: method };
}

/** A request's scheme as the guest sees it. */
export function schemeOf(scheme: string): Scheme {
  const s = scheme.toLowerCase();
  return s === 'http' ? { tag: 'HTTP' } : s === 'https' ? { tag: 'HTTPS' } : { tag: 'other', val: scheme };
}

/** Final statuses a client can be sent: RFC 9110's classes 2xx–5xx (1xx are not final). */
export function statusProblem(status: number): string | undefined {
  return status >= 200 && status <= 599 ? undefined : `status ${status} is not a final HTTP status (200–599)`;
}

/** Headers that can go on the wire as they are; the problem otherwise (fields cloned from rt's may hold anything). */
export function headerProblem(headers: FieldEntry[]): { problem: string } | { contentLength: number | undefined } {
  let contentLength: number | undefined;
  for (const [name, value] of headers) {
    if (!isValidFieldName(name)) return { problem: `invalid header name ${JSON.stringify(name)}` };
    if (!isValidFieldValue(value)) return { problem: `invalid value for header ${name}` };
    if (FORBIDDEN_HEADERS.has(name)) return { problem: `header ${name} is the host's to set` };
    if (name === 'content-length') {
      const text = Buffer.from(value).toString('latin1').trim();
      if (!/^\d{1,15}$/.test(text)) return { problem: `invalid content-length ${JSON.stringify(text)}` };
      if (contentLength !== undefined && contentLength !== Number(text)) return { problem: 'conflicting content-length headers' };
      contentLength = Number(text);
    }
  }
  return { contentLength };
}
