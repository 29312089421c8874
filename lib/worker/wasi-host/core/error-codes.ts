// Why an outgoing request failed, as wasi:http's error-code says it (the same
// variant in every wasi:http version): from the errors node's sockets, DNS,
// TLS and HTTP parser raise.

import type { ErrorCode } from './handler-io.js';

const TLS_CERTIFICATE = /^(CERT_|ERR_TLS_CERT|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT)/;

/** A node error (a socket's, DNS's, TLS's, the parser's) as the wasi:http error-code it stands for. */
export function errorCodeOf(error: unknown): ErrorCode {
  type NodeError = Error & { code?: string };
  let e = error as NodeError | undefined;
  // Happy eyeballs (autoSelectFamily) fails with an AggregateError of each address's error.
  if (e instanceof AggregateError && (e as NodeError).code === undefined && e.errors.length > 0) e = e.errors[0] as NodeError;
  const code = e?.code ?? '';
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_NONAME':
    case 'EAI_NODATA':
    case 'EAI_FAIL':
      return { tag: 'DNS-error', val: { rcode: code, infoCode: undefined } };
    case 'EAI_AGAIN':
      return { tag: 'DNS-timeout' };
    case 'ECONNREFUSED':
      return { tag: 'connection-refused' };
    case 'ECONNRESET':
    case 'EPIPE':
      return { tag: 'connection-terminated' };
    case 'ETIMEDOUT':
      return { tag: 'connection-timeout' };
    case 'EHOSTUNREACH':
      return { tag: 'destination-IP-unroutable' };
    case 'ENETUNREACH':
      return { tag: 'destination-unavailable' };
  }
  if (code.startsWith('HPE_')) return { tag: 'HTTP-protocol-error' };
  if (TLS_CERTIFICATE.test(code)) return { tag: 'TLS-certificate-error' };
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO') return { tag: 'TLS-protocol-error' };
  return { tag: 'internal-error', val: e instanceof Error ? `${code ? `${code}: ` : ''}${e.message}` : String(error) };
}
