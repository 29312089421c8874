// Every error rt answers over HTTP, in one catalogue (docs/api.md §5.5).
//
// Each has a stable code a client can branch on (`RT_ERR_UNKNOWN_SERVICE`),
// its status, and its general description — the body's `error`; `details`
// says what went wrong for this request. Codes never change meaning: a new
// kind of failure gets a new code. The worker's routes and the answers to
// control operations both raise these; docs/api.md lists them (a test checks).

export const ERRORS = {
  // The request itself
  RT_ERR_BAD_REQUEST: { status: 400, error: 'bad request' },
  RT_ERR_REQUEST_HEADERS_TOO_LARGE: { status: 431, error: 'request header fields too large' },
  RT_ERR_REQUEST_TIMEOUT: { status: 408, error: 'request timeout' },
  RT_ERR_CLIENT_CLOSED_REQUEST: { status: 499, error: 'client closed request' },
  RT_ERR_NOT_FOUND: { status: 404, error: 'not found' },
  RT_ERR_METHOD_NOT_ALLOWED: { status: 405, error: 'method not allowed' },
  RT_ERR_NOT_IMPLEMENTED: { status: 501, error: 'not implemented' },
  RT_ERR_TOO_MANY_CONNECTIONS: { status: 503, error: 'too many connections' },
  RT_ERR_FORBIDDEN: { status: 403, error: 'forbidden' },
  RT_ERR_UNAUTHORIZED: { status: 401, error: 'unauthorized' },
  RT_ERR_EXPECTATION_FAILED: { status: 417, error: 'expectation failed' },
  // Its body
  RT_ERR_BODY_TOO_LARGE: { status: 413, error: 'request body too large' },
  RT_ERR_UNSUPPORTED_CONTENT_TYPE: { status: 415, error: 'unsupported content type' },
  RT_ERR_UNSUPPORTED_CONTENT_ENCODING: { status: 415, error: 'unsupported content encoding' },
  RT_ERR_INVALID_BODY: { status: 400, error: 'invalid body' },
  RT_ERR_INVALID_JSON: { status: 400, error: 'invalid JSON' },
  RT_ERR_INVALID_ARGUMENTS: { status: 400, error: 'invalid arguments' },
  // What it addresses
  RT_ERR_NOT_READY: { status: 503, error: 'not ready' },
  RT_ERR_UNKNOWN_SERVICE: { status: 404, error: 'unknown service' },
  RT_ERR_UNKNOWN_METHOD: { status: 404, error: 'unknown method' },
  RT_ERR_METHOD_NOT_INVOCABLE: { status: 400, error: 'method not invocable' },
  RT_ERR_SERVICE_QUIESCED: { status: 503, error: 'service quiesced' },
  RT_ERR_SERVICE_OVERLOADED: { status: 503, error: 'service overloaded' },
  RT_ERR_OVER_SHARE: { status: 503, error: 'client over its share' },
  RT_ERR_UNKNOWN_RESOURCE: { status: 404, error: 'unknown resource' },
  RT_ERR_UNKNOWN_HANDLE: { status: 404, error: 'unknown handle' },
  RT_ERR_HANDLE_GONE: { status: 410, error: 'handle gone' },
  RT_ERR_TOO_MANY_HANDLES: { status: 503, error: 'too many handles' },
  RT_ERR_HANDLES_REFUSED: { status: 409, error: 'handles refused' },
  RT_ERR_BAD_HANDLE_SCOPE: { status: 400, error: 'bad handle scope' },
  RT_ERR_TOO_MANY_SCOPES: { status: 503, error: 'too many scopes' },
  // The call
  RT_ERR_METHOD_RETURNED_ERROR: { status: 500, error: 'method returned an error' },
  RT_ERR_COMPONENT_TRAPPED: { status: 500, error: 'component trapped' },
  RT_ERR_UNSATISFIED_IMPORT: { status: 500, error: 'unsatisfied import' },
  RT_ERR_COMPONENT_EXITED: { status: 500, error: 'component exited' },
  RT_ERR_INSTANCE_LOST: { status: 500, error: 'instance lost' },
  RT_ERR_CALL_TIMEOUT: { status: 504, error: 'call timed out' },
  RT_ERR_STREAM_TIMEOUT: { status: 504, error: 'stream timed out' },
  // An HTTP handler's answer (docs/api.md §5.8)
  RT_ERR_NO_RESPONSE: { status: 500, error: 'handler set no response' },
  RT_ERR_HANDLER_ERROR: { status: 500, error: 'handler answered with an error' },
  RT_ERR_BAD_RESPONSE: { status: 502, error: 'malformed response from handler' },
  // Control operations
  RT_ERR_INVALID_CONFIGURATION: { status: 400, error: 'invalid configuration' },
  RT_ERR_RESTART_FAILED: { status: 500, error: 'restart failed' },
  RT_ERR_CONTROL_FAILED: { status: 500, error: 'control operation failed' },
  // rt itself
  RT_ERR_INTERNAL: { status: 500, error: 'internal error' },
} as const satisfies Record<string, { status: number; error: string }>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * The status rt logs and counts for a client that went away before its answer
 * (nginx's 499): a client abort is neither a server error nor a bad request
 * (docs/api.md §5.5). Nobody receives it.
 */
export const CLIENT_CLOSED_REQUEST = ERRORS.RT_ERR_CLIENT_CLOSED_REQUEST.status;

/** `service`/`method` where they apply, and any operation-specific fields. */
export interface ErrorContext {
  service?: string;
  method?: string;
  [extra: string]: unknown;
}

export interface ErrorBody extends ErrorContext {
  error: string;
  code: ErrorCode;
  details: string;
}

export class ApiError extends Error {
  readonly status: number;
  /** The general description: "unknown service", "component trapped". */
  readonly error: string;

  constructor(
    readonly code: ErrorCode,
    /** The cause, specific to this request. */
    readonly details: string,
    readonly context: ErrorContext = {},
    /** Headers the answer carries besides the body (`Retry-After`). */
    readonly headers: Record<string, string> = {},
    /** Only for a status another layer chose (Koa's own 4xx, the router's 501s): else the code's. */
    status?: number,
  ) {
    const entry = ERRORS[code];
    super(`${entry.error}: ${details}`);
    this.error = entry.error;
    this.status = status ?? entry.status;
  }

  body(): ErrorBody {
    return { error: this.error, code: this.code, details: this.details, ...this.context };
  }
}

/**
 * Any failure as the answer it gets: rt's own are ApiErrors; an error from
 * Koa or a middleware with a 4xx status (http-errors) keeps it, with our
 * body; anything else is a 500.
 */
export function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const status = (e as { status?: unknown } | null)?.status;
  const message = e instanceof Error ? e.message : String(e);
  return typeof status === 'number' && status >= 400 && status < 500 ? new ApiError('RT_ERR_BAD_REQUEST', message, {}, {}, status) : new ApiError('RT_ERR_INTERNAL', message);
}
