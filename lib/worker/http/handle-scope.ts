// The handle scope a request names (docs/api.md §5.1.2): `RT-Handle-Scope`,
// a value the client chooses with at least 128 bits in it (22 characters of
// base64url, 32 hex digits). It is the only thing that keeps one client's
// scope apart from another's, so a short or guessable one is refused rather
// than shared.

import { ApiError } from '../../errors.js';

export const HANDLE_SCOPE_HEADER = 'RT-Handle-Scope';

const SCOPE = /^[A-Za-z0-9_-]{22,128}$/;

/** The scope `value` (the header) names, none when absent; a value that is not a scope answers 400. */
export function requestedScope(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (SCOPE.test(value)) return value;
  throw new ApiError('RT_ERR_BAD_HANDLE_SCOPE', `${HANDLE_SCOPE_HEADER} must be 22 to 128 characters of letters, digits, "-" and "_" (at least 128 random bits, e.g. 32 hex digits), not ${value.length} characters${/[^A-Za-z0-9_-]/.test(value) ? ' with others among them' : ''}`);
}
