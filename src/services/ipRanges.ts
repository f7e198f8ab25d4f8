import ipaddr from 'ipaddr.js';

/**
 * Client addresses and address ranges: who is calling (behind TRUSTED_PROXIES), whether an address
 * lies in a list of addresses and CIDR ranges (the apps' IP allow lists, TRUSTED_PROXIES).
 */

/** Canonical text of an address; an IPv4-mapped IPv6 address becomes its IPv4 address. */
export function normalizeIp(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
    ? (parsed as ipaddr.IPv6).toIPv4Address().toString()
    : parsed.toString();
}

/** Whether `address` is one of `ranges` (addresses or CIDR ranges); an invalid address is in none. */
export function isInRanges(address: string, ranges: readonly string[]): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address);
  return ranges.some((range) => {
    try {
      const [net, bits] = range.includes('/') ? ipaddr.parseCIDR(range) : [ipaddr.process(range), -1];
      const target = ipaddr.process(net.toString());
      if (target.kind() !== ip.kind()) return false;
      return bits < 0 ? target.toString() === ip.toString() : ip.match(target, bits);
    } catch {
      return false;
    }
  });
}

export function isLoopback(address: string | undefined): boolean {
  return address !== undefined && ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback';
}

/** What the connection says about its caller: the socket's peer and the proxies' headers. */
export interface ConnectionFacts {
  /** The socket's remote address; undefined when there is no socket (in-process calls). */
  peer: string | undefined;
  /** The socket is TLS (the service terminates TLS itself). */
  encrypted: boolean;
  forwardedFor: string | undefined;
  forwardedProto: string | undefined;
}

/**
 * The caller's address: the socket's peer, or, when that peer is a trusted proxy, the nearest
 * address in X-Forwarded-For that is not one.
 */
export function clientAddress(facts: ConnectionFacts, trustedProxies: readonly string[]): string | undefined {
  const { peer } = facts;
  if (!peer) return undefined;
  const forwarded = (facts.forwardedFor ?? '').split(',').map((s) => s.trim()).filter(Boolean).reverse();
  const chain = [peer, ...forwarded];
  for (const address of chain) {
    if (!ipaddr.isValid(address) || !isInRanges(address, trustedProxies)) return normalizeIp(address);
  }
  return normalizeIp(chain[chain.length - 1]!);
}

/**
 * Whether the request reached us over HTTPS: on a TLS socket, or from a trusted proxy whose
 * X-Forwarded-Proto says https. Of a list ("https, http") the last value counts: it is the one the
 * nearest proxy, the trusted one, wrote; earlier values may come from the client.
 */
export function isHttps(facts: ConnectionFacts, trustedProxies: readonly string[]): boolean {
  if (facts.encrypted) return true;
  if (!facts.peer || !isInRanges(facts.peer, trustedProxies)) return false;
  const proto = facts.forwardedProto?.split(',').at(-1)?.trim().toLowerCase();
  return proto === 'https' || proto === 'wss';
}
