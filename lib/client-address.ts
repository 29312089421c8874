// A client's address (docs/api.md §5.10): what fair shares (handles,
// streams, threads waiting on bodies: worker/http/fair-shares.ts) are
// counted by; a connection's share is counted by its peer. It is the
// connection's peer, unless that peer is a proxy the operator listed in
// `http.trusted_proxies`: then it is the nearest address in
// `X-Forwarded-For` that is not a trusted proxy, read from the right, since
// each proxy appends the address it got the request from, and only the
// entries trusted proxies appended can be believed. Behind an ingress every
// connection's peer is the ingress; without this, every client would share
// one address.

import { BlockList, isIP } from 'node:net';

/** `text` as an address or a CIDR range (`10.0.0.0/8`, `fd00::/8`), or undefined when it is neither. */
function parseRange(text: string): { address: string; prefix?: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address, prefix, extra] = text.trim().split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (prefix === undefined) return { address, family };
  const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
  return bits <= (version === 4 ? 32 : 128) ? { address, prefix: bits, family } : undefined;
}

/** Whether `text` is an IP address or a CIDR range (`http.trusted_proxies` items). */
export function isAddressOrRange(text: string): boolean {
  return parseRange(text) !== undefined;
}

/** An IPv4 peer as Node reports it on a dual-stack socket (`::ffff:10.0.0.1`) is that IPv4 address. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export class TrustedProxies {
  readonly #list = new BlockList();
  readonly #any: boolean;

  /** `ranges`: `http.trusted_proxies` (checked by the configuration already). */
  constructor(ranges: readonly string[]) {
    for (const range of ranges) {
      const parsed = parseRange(range);
      if (!parsed) throw new Error(`not an IP address or CIDR range: ${range}`);
      if (parsed.prefix === undefined) this.#list.addAddress(parsed.address, parsed.family);
      else this.#list.addSubnet(parsed.address, parsed.prefix, parsed.family);
    }
    this.#any = ranges.length > 0;
  }

  #trusts(address: string): boolean {
    const version = isIP(address);
    return version !== 0 && this.#list.check(address, version === 4 ? 'ipv4' : 'ipv6');
  }

  /** Whether a connection from `peer` comes from a trusted proxy: it carries many clients' requests. */
  isProxy(peer: string): boolean {
    return this.#any && this.#trusts(plainAddress(peer));
  }

  /**
   * The client's address for a connection from `peer` carrying
   * `forwardedFor` (the X-Forwarded-For header, all of its lines joined):
   * `peer` itself unless it is trusted; else the entries from the right,
   * past every trusted proxy. An entry that is not an address stops the walk
   * at the proxy that appended it, and a chain of trusted proxies only
   * leaves its first.
   */
  client(peer: string | undefined, forwardedFor: string | undefined): string {
    const direct = plainAddress(peer ?? '');
    if (!this.#any || !this.#trusts(direct) || !forwardedFor) return direct;
    let nearest = direct;
    const hops = forwardedFor.split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = plainAddress(hops[i].trim());
      if (isIP(hop) === 0) return nearest;
      if (!this.#trusts(hop)) return hop;
      nearest = hop;
    }
    return nearest;
  }
}
