// The OpenAPI document's `servers` entry: rt as the client that asked for
// the document reached it (docs/api.md §5), so a client generated from it
// calls the same rt. Not `http.host`: that is where rt listens (`0.0.0.0`),
// which no client can reach. From the request's Host and the connection's
// scheme; behind a proxy rt trusts (`http.trusted_proxies`), from the
// `X-Forwarded-Proto` and `X-Forwarded-Host` it sets, since the client
// reached the proxy, not rt.

import { isIP } from 'node:net';
import { plainAddress } from '../client-address.js';

/** What a request says about the URL it was sent to. */
export interface RequestedUrl {
  /** Whether it came over TLS. */
  tls: boolean;
  /** Its Host header. */
  host: string | undefined;
  /** The address and port the connection reached (what Host falls back on when it says nothing usable). */
  local: { address: string | undefined; port: number | undefined };
  /** `X-Forwarded-Proto` and `X-Forwarded-Host`, only when the peer is a trusted proxy. */
  forwarded?: { proto: string | undefined; host: string | undefined };
}

/** Hostnames that name no host: where a server listens on every address. */
const UNSPECIFIED = new Set(['0.0.0.0', '[::]', '[::0]', '[0:0:0:0:0:0:0:0]']);

/**
 * The base URL of the request's rt: `scheme://host[:port]`, the default
 * port left out. A forwarded value is taken when a trusted proxy sent it
 * (the first of a list: what the client reached, as the outermost proxy
 * wrote it); a host that is no plain `host[:port]`, or names no host
 * (`0.0.0.0`), gives way to the address the connection reached.
 */
export function serverUrl(request: RequestedUrl): string {
  const proto = first(request.forwarded?.proto)?.toLowerCase();
  const scheme = proto === 'http' || proto === 'https' ? proto : request.tls ? 'https' : 'http';
  const host = plainHost(scheme, first(request.forwarded?.host)) ?? plainHost(scheme, request.host) ?? plainHost(scheme, localHost(request.local));
  // The connection always reached some address: this is only for a socket that has already closed.
  return `${scheme}://${host ?? 'localhost'}`;
}

function first(list: string | undefined): string | undefined {
  const value = list?.split(',')[0].trim();
  return value || undefined;
}

/** `host` as a URL of `scheme` writes it (case and default port away), when it is a plain `host[:port]` naming a host. */
function plainHost(scheme: string, host: string | undefined): string | undefined {
  // "evil.example@rt" or "rt/x" would parse as some other URL's host.
  if (!host || /[/@?#\\\s]/.test(host)) return undefined;
  try {
    const url = new URL(`${scheme}://${host}`);
    return url.host === '' || UNSPECIFIED.has(url.hostname) ? undefined : url.host;
  } catch {
    return undefined;
  }
}

function localHost({ address, port }: RequestedUrl['local']): string | undefined {
  if (address === undefined) return undefined;
  const plain = plainAddress(address);
  const named = isIP(plain) === 6 ? `[${plain}]` : plain;
  return port === undefined ? named : `${named}:${port}`;
}
