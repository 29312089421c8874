// The sidecar's `allowed_outbound_hosts` (docs/api.md §8): which HTTP requests a
// component may send. Read by the sidecar check (primary) and by every
// outgoing handler it guards (the sandbox's for plain components, the handler
// host's on both ends of its thread), so all agree on what an entry means.
//
// An entry is `[http:// | https://]host[:port]`. Without a scheme, http and
// https are both allowed; without a port, only the scheme's default port (80,
// 443), as in Spin. Hosts compare case-insensitively, exactly: no wildcards,
// no subdomains.

export interface HostPattern {
  scheme?: 'http' | 'https';
  host: string;
  port?: number;
}

const ENTRY = /^(?:(https?):\/\/)?([^/:]+)(?::(\d{1,5}))?$/i;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

export const HOST_PATTERN_SHAPE = '[http:// or https://]host[:port] (such as "api.example.com", "https://api.example.com" or "127.0.0.1:8080")';

/** The pattern an entry stands for, or undefined when it is not one. */
export function parseHostPattern(entry: string): HostPattern | undefined {
  const match = ENTRY.exec(entry);
  if (!match) return undefined;
  const [, scheme, rawHost, rawPort] = match;
  const host = rawHost.toLowerCase();
  if (host.length > 253 || !host.split('.').every((label) => LABEL.test(label))) return undefined;
  const pattern: HostPattern = { host };
  if (scheme) pattern.scheme = scheme.toLowerCase() as 'http' | 'https';
  if (rawPort !== undefined) {
    const port = Number(rawPort);
    if (port < 1 || port > 65535) return undefined;
    pattern.port = port;
  }
  return pattern;
}

/** Whether a request to `scheme://authority` (authority `host[:port]`) matches one of `patterns`. */
export function allowsRequest(patterns: HostPattern[], scheme: string, authority: string): boolean {
  const defaultPort = DEFAULT_PORTS[scheme];
  if (defaultPort === undefined) return false;
  const match = /^([^:]+)(?::(\d+))?$/.exec(authority);
  if (!match) return false;
  const host = match[1].toLowerCase();
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  return patterns.some(
    (p) => p.host === host && (p.scheme === undefined || p.scheme === scheme) && port === (p.port ?? DEFAULT_PORTS[p.scheme ?? scheme]),
  );
}

/** A service's allow-list, parsed once: the one question every outgoing handler asks of it. */
export class OutboundPolicy {
  readonly #patterns: HostPattern[];

  /** `hosts`: the sidecar's entries, already checked (primary/sidecar.ts); one that is not a pattern is rt's bug. */
  constructor(hosts: readonly string[]) {
    this.#patterns = hosts.map((entry) => {
      const pattern = parseHostPattern(entry);
      if (!pattern) throw new Error(`allowed_outbound_hosts: ${JSON.stringify(entry)} is not a host pattern`);
      return pattern;
    });
  }

  /** Whether a request to `scheme://authority` may be sent. */
  allows(scheme: string, authority: string): boolean {
    return allowsRequest(this.#patterns, scheme, authority);
  }
}
