// `wasi:http/outgoing-handler` for a component granted `allowed_outbound_hosts`
// (docs/api.md §8): preview2-shim's handler behind the allow-list. A request to
// any other host is refused before anything connects, with the error code a
// wasi:http guest expects for a policy refusal.

import * as preview2 from '@bytecodealliance/preview2-shim';
import type * as wasi from '@bytecodealliance/preview2-shim/interfaces/wasi-http-types';
import { OutboundPolicy } from '../../outbound-hosts.js';

type Handle = (request: wasi.OutgoingRequest, options: wasi.RequestOptions | undefined) => wasi.FutureIncomingResponse;
const shim = (preview2 as unknown as { http: { outgoingHandler: { handle: Handle } } }).http;

/** The shim sends a request without a scheme as https. */
function schemeOf(request: wasi.OutgoingRequest): string {
  const scheme = request.scheme();
  if (scheme === undefined || scheme.tag === 'HTTPS') return 'https';
  if (scheme.tag === 'HTTP') return 'http';
  return scheme.val.toLowerCase();
}

export function grantedOutgoingHandler(hosts: string[]): { handle: Handle } {
  const policy = new OutboundPolicy(hosts);
  return {
    handle(request, options) {
      const authority = request.authority();
      if (authority === undefined || !policy.allows(schemeOf(request), authority)) {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the glue turns a thrown ErrorCode into the err case
        throw { tag: 'HTTP-request-denied' } satisfies wasi.ErrorCode;
      }
      return shim.outgoingHandler.handle(request, options);
    },
  };
}
