import ipaddr from 'ipaddr.js';

/**
 * Client addresses and address ranges: who is calling (behind TRUSTED_PROXIES), whether an address
 * lies in a list of addresses and CIDR ranges (the apps' IP allow lists, TRUSTED_PROXIES).
 */

/**
 * One entry in its canonical text, or why it is refused.
 *
 * - IPv4 only in four-part decimal (`127.1`, `0x7f.0.0.1` and leading zeros are refused: the
 *   legacy forms read differently in different tools).
 * - IPv6 in RFC 5952 text (lower case, `::` compression); an IPv4-mapped address or range
 *   (`::ffff:203.0.113.7`, `::ffff:203.0.113.0/120`) becomes its IPv4 form, which is how the
 *   service sees such a caller. Zone ids (`fe80::1%eth0`) are refused.
 * - A range whose address has host bits set (`198.51.100.7/24`) is refused, naming the network:
 *   widening it silently could allow far more than the partner meant.
 * - A full-length prefix (`/32`, `/128`) is the address itself and is written as the address.
 * - A prefix of 0 (`0.0.0.0/0`, `::/0`) and the unspecified address (`0.0.0.0`, `::`) are
 *   refused: the first allows everyone (an empty list says that), the second no caller has.
 */
export function normalizeIpEntry(raw: string): { value: string } | { error: string } {
  const text = raw.trim();
  const slash = text.indexOf('/');
  const addressText = slash < 0 ? text : text.slice(0, slash);
  const prefixText = slash < 0 ? undefined : text.slice(slash + 1);

  let address: ipaddr.IPv4 | ipaddr.IPv6;
  if (ipaddr.IPv4.isValidFourPartDecimal(addressText)) {
    address = ipaddr.IPv4.parse(addressText);
  } else if (ipaddr.IPv6.isValid(addressText) && !addressText.includes('%')) {
    address = ipaddr.IPv6.parse(addressText);
  } else {
    return { error: 'not an IPv4 or IPv6 address or CIDR range (e.g. 203.0.113.7, 198.51.100.0/24, 2001:db8::/48)' };
  }

  let prefix = address.kind() === 'ipv4' ? 32 : 128;
  if (prefixText !== undefined) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText) || Number(prefixText) > prefix) {
      return { error: `the prefix length must be a whole number from 1 to ${prefix}` };
    }
    prefix = Number(prefixText);
  }

  // An IPv4-mapped IPv6 address is an IPv4 caller.
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && prefix >= 96) {
    address = address.toIPv4Address();
    prefix -= 96;
  }

  if (prefix === 0) return { error: 'a range of every address is not allowed; an empty list already allows any address' };
  const full = address.kind() === 'ipv4' ? 32 : 128;
  if (prefix < full) {
    const network = networkOf(address, prefix);
    if (network.toString() !== address.toString()) {
      return { error: `host bits are set; the network of this range is ${network.toString()}/${prefix}` };
    }
    return { value: `${address.toString()}/${prefix}` };
  }
  if (address.range() === 'unspecified') return { error: 'the unspecified address is never the address of a caller' };
  return { value: address.toString() };
}

function networkOf(address: ipaddr.IPv4 | ipaddr.IPv6, prefix: number): ipaddr.IPv4 | ipaddr.IPv6 {
  return address instanceof ipaddr.IPv4
    ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefix}`);
}

/** Canonical text of an address; an IPv4-mapped IPv6 address becomes its IPv4 address. */
function normalizeIp(address: string): string {
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
  const forwarded = (facts.forwardedFor ?? '').split(',').map((s) => withoutPort(s.trim())).filter(Boolean).reverse();
  const chain = [peer, ...forwarded];
  for (const address of chain) {
    if (!ipaddr.isValid(address) || !isInRanges(address, trustedProxies)) return normalizeIp(address);
  }
  return normalizeIp(chain[chain.length - 1]!);
}

/** `203.0.113.9:5555` and `[2001:db8::1]:5555` (some load balancers add the port) as the address. */
function withoutPort(entry: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry);
  if (bracketed) return bracketed[1]!;
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(entry);
  return v4 ? v4[1]! : entry;
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
