// W3C Trace Context (https://www.w3.org/TR/trace-context/): the
// `traceparent` and `tracestate` headers a request may carry, read as its
// span's remote parent, and written on a component's outgoing requests.

/** A span of another process that a request's span continues. */
export interface RemoteParent {
  traceId: string;
  spanId: string;
  /** Its trace-flags' sampled bit: whether the caller records this trace. */
  sampled: boolean;
  traceState: string | undefined;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
/** W3C's limit for a tracestate a vendor passes on; printable ASCII only (it goes into headers rt sends). */
const TRACESTATE = /^[\x20-\x7e]{0,512}$/;

/** The parent the headers name, or undefined when there is none or it is malformed (then the request starts a trace). */
export function remoteParent(traceparent: string | string[] | undefined, tracestate: string | string[] | undefined): RemoteParent | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const parts = TRACEPARENT.exec(traceparent.trim());
  if (parts === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = parts;
  // Version ff is invalid; version 00 has nothing after its flags; all-zero ids are invalid.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  // Several tracestate headers are one list (RFC 9110 field combination).
  const state = (Array.isArray(tracestate) ? tracestate.join(',') : tracestate)?.trim();
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1, traceState: state !== undefined && state !== '' && TRACESTATE.test(state) ? state : undefined };
}

/** The `traceparent` naming a span as the parent of what the request it goes on starts. */
export function traceparentOf(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}
