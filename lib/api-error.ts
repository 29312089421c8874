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
