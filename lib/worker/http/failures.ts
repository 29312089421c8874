// What a failed call or stream answers (docs/api.md §5.1, §5.5): the one
// place where the execution layer's failures (execution/invocation.ts)
// become rt's errors, with their status, body and headers.

import { ApiError } from '../../errors.js';
import { HANDLE_SCOPE_HEADER } from './handle-scope.js';
import type { Failure } from '../execution/invocation.js';

/** Seconds a client refused for a full queue is asked to wait. */
const RETRY_AFTER_SECONDS = 1;

/** The 504 of a call, of one `next` of a stream, and of a whole stream. */
const TIMEOUTS = {
  call: ['RT_ERR_CALL_TIMEOUT', "the call did not finish within http.request_timeout_seconds of the request's arrival and was cut off"],
  next: ['RT_ERR_CALL_TIMEOUT', 'a next call of the stream did not return within http.request_timeout_seconds and was cut off'],
  stream: ['RT_ERR_STREAM_TIMEOUT', "the stream did not end within http.stream_timeout_seconds of the request's arrival and was ended"],
} as const;

/** `failure` of the call to `where.method` of `where.service`, as the error it answers with. */
export function failureError(failure: Failure, where: { service: string; method?: string }): ApiError {
  switch (failure.kind) {
    case 'not-invocable':
      return new ApiError('RT_ERR_METHOD_NOT_INVOCABLE', failure.reason, where);
    case 'quiesced':
      return new ApiError('RT_ERR_SERVICE_QUIESCED', `${where.service} is quiesced: restart it to serve again`, where);
    case 'invalid-json':
      return new ApiError('RT_ERR_INVALID_JSON', failure.details, where);
    case 'invalid-arguments':
      return new ApiError('RT_ERR_INVALID_ARGUMENTS', failure.details, where);
    case 'unknown-handle':
      return new ApiError('RT_ERR_UNKNOWN_HANDLE', failure.details, where);
    case 'handle-ended':
      return new ApiError('RT_ERR_HANDLE_GONE', failure.details, where);
    case 'too-many-handles': {
      const holds = failure.client
        ? `holds max_handles (${failure.max}) live handles of this client's address in its default scope`
        : `holds ${failure.scope === undefined ? `${failure.max} live handles in its default scope (max_handles × max_scopes)` : `max_handles (${failure.max}) live handles in scope ${failure.scope}`}`;
      return new ApiError('RT_ERR_TOO_MANY_HANDLES', `${where.service} ${holds} already; drop some, or retry later`, where, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    }
    case 'too-many-scopes':
      return new ApiError('RT_ERR_TOO_MANY_SCOPES', `${where.service} holds max_scopes (${failure.max}) handle scopes in this worker already; drop the handles of one, or retry later`, where, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    case 'scope-required':
      return new ApiError('RT_ERR_BAD_HANDLE_SCOPE', `${where.service} requires a handle scope (handle_scope = "required"): name one with the header ${HANDLE_SCOPE_HEADER}`, where);
    case 'handles-refused':
      return new ApiError('RT_ERR_HANDLES_REFUSED', failure.details, where);
    case 'component-error': {
      const { payload } = failure;
      return new ApiError('RT_ERR_METHOD_RETURNED_ERROR', typeof payload === 'string' ? payload : JSON.stringify(payload), { ...where, value: payload });
    }
    case 'trap':
      return new ApiError(failure.code, failure.message, where);
    case 'timeout': {
      const [code, details] = TIMEOUTS[failure.what];
      return new ApiError(code, details, where);
    }
    case 'overloaded':
      return new ApiError('RT_ERR_SERVICE_OVERLOADED', `${where.service} has max_queue calls waiting in this worker already; retry later`, where, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    case 'abandoned':
      return new ApiError('RT_ERR_CLIENT_CLOSED_REQUEST', 'the client closed the connection while its call waited for an instance; it was not run', where);
  }
}
