// What rt answers when Node itself ends a request: its HTTP parser rejects
// the bytes (a malformed request line, headers over its size limit,
// malformed chunking) or its request timer runs out (headers or body too
// slow). These errors reach the server's 'clientError' event, not a route,
// so they get the error body (docs/api.md §5.5) from here.

import { maxHeaderSize } from 'node:http';
import { ApiError } from '../../errors.js';

/** Node's error for a request whose headers or body did not arrive within the server's timeouts. */
export const REQUEST_TIMEOUT_CODE = 'ERR_HTTP_REQUEST_TIMEOUT';

/** The answer for an error Node's HTTP server reports on a connection; undefined when there is none to give (a reset, a hang-up, a write error). */
export function connectionError(error: Error & { code?: string; reason?: string }): ApiError | undefined {
  if (error.code === REQUEST_TIMEOUT_CODE) {
    return new ApiError('RT_ERR_REQUEST_TIMEOUT', 'the request did not arrive in time (http.request_timeout_seconds)');
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError('RT_ERR_REQUEST_HEADERS_TOO_LARGE', `the request's headers exceed ${maxHeaderSize} bytes`);
  }
  // The client closed its side mid-request: nobody is there to read an answer (a client abort, docs/api.md §5.5).
  if (error.code === 'HPE_INVALID_EOF_STATE') return undefined;
  // llhttp's codes: HPE_INVALID_METHOD, HPE_INVALID_CHUNK_SIZE, ... with the reason in words.
  if (error.code?.startsWith('HPE_')) return new ApiError('RT_ERR_BAD_REQUEST', `the request is not valid HTTP: ${error.reason ?? error.message}`);
  return undefined;
}
