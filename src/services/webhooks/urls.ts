import { Resolver } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ValidationError } from '../kernel/index.js';

/**
 * Where webhooks may be sent. Unless WEBHOOK_ALLOW_PRIVATE_URLS is set, only to public addresses:
 * a partner must not make the service call its own network (SSRF). The rule is checked when a URL
 * is saved and again on every connection (DNS may change between the two). In production only
 * https (WEBHOOK_ALLOW_HTTP).
 */
export interface TargetPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

const MAX_URL_LENGTH = 2048;

/** The URL, normalized, or a 400 naming `field` and the reason. */
export async function validateWebhookUrl(raw: string, policy: TargetPolicy, field = 'url'): Promise<string> {
  const refuse = (reason: string) => new ValidationError([{ field, reason }]);
  if (raw.length > MAX_URL_LENGTH) throw refuse(`at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('an absolute URL');
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    throw refuse(policy.allowHttp ? 'an http or https URL' : 'an https URL');
  }
  if (url.username || url.password) throw refuse('no user name or password in the URL');
  if (url.hash) throw refuse('no #fragment');
  if (!policy.allowPrivate) {
    const host = hostOf(url);
    if (ipaddr.isValid(host)) {
      if (!isPublicAddress(host)) throw refuse('a public address (not loopback, private or reserved)');
    } else {
      let addresses: LookupAddress[];
      try {
        addresses = await resolvePublic(host);
      } catch (error) {
        throw refuse(error instanceof BlockedAddressError ? error.message : `the host ${host} does not resolve`);
      }
      if (!addresses.length) throw refuse(`the host ${host} does not resolve`);
    }
  }
  return url.toString();
}

/** The host of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Globally routable unicast only: no loopback, private, link-local, CGNAT, multicast or reserved range. */
export function isPublicAddress(address: string): boolean {
  try {
    const parsed = ipaddr.process(address);
    // ipaddr.js calls the deprecated IPv4-compatible block ::/96 (e.g. ::127.0.0.1) unicast.
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) return false;
    return parsed.range() === 'unicast';
  } catch {
    return false;
  }
}

export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'EBLOCKEDADDRESS';
}

// c-ares, not getaddrinfo: getaddrinfo runs on libuv's four-thread pool and cannot be abandoned,
// so one partner's unresponsive name server would stall every partner's deliveries.
const resolver = new Resolver({ timeout: 2_000, tries: 2 });

/** Every address of `host` (A and AAAA), refusing the lot if any is not public. */
export async function resolvePublic(host: string): Promise<LookupAddress[]> {
  // RFC 6761: these names are loopback whatever a name server says (c-ares does not read /etc/hosts).
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) {
    throw new BlockedAddressError(`the host ${host} resolves to a non-public address`);
  }
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  const addresses: LookupAddress[] = [
    ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
  ];
  if (!addresses.length) {
    const reason = v4.status === 'rejected' ? v4.reason : v6.status === 'rejected' ? v6.reason : undefined;
    throw reason instanceof Error ? reason : new Error(`${host} has no address`);
  }
  // The address itself is not named: the delivery log is the partner's to read.
  if (addresses.some((a) => !isPublicAddress(a.address))) throw new BlockedAddressError(`the host ${host} resolves to a non-public address`);
  return addresses;
}

/**
 * The DNS lookup of outgoing webhook connections when private addresses are not allowed: a name
 * that resolved to a public address when it was saved cannot be re-pointed at the internal network.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  resolvePublic(hostname).then(
    (list) => {
      const wanted = options.family === 4 || options.family === 6 ? list.filter((a) => a.family === options.family) : list;
      const usable = wanted.length ? wanted : list;
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    },
    (error: Error) => callback(error as NodeJS.ErrnoException, '', 4),
  );
};
