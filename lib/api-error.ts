// The one error shape every non-2xx `/api` answer has (contract §5.5).

export interface ErrorBody {
  error: string;
  details: string;
  service?: string;
  method?: string;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** A general description: "unknown service", "component trapped". */
    readonly error: string,
    /** The cause, specific to this request. */
    readonly details: string,
    /** `service`/`method` where they apply, and any operation-specific fields. */
    readonly context: { service?: string; method?: string; [extra: string]: unknown } = {},
    /** Headers the answer carries besides the body (`Retry-After`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(`${error}: ${details}`);
  }

  body(): ErrorBody {
    return { error: this.error, details: this.details, ...this.context };
  }
}

/**
 * The status rt logs and counts for a client that went away before its answer
 * (nginx's 499): a client abort is neither a server error nor a bad request
 * (contract §5.5). Nobody receives it.
 */
export const CLIENT_CLOSED_REQUEST = 499;
