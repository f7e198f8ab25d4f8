import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as dnsLookupAsync } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ValidationError } from './errors.js';

/**
 * Where webhooks may be sent. In production (by default) only https, and only to public
 * addresses: a partner must not make the service call its own network (SSRF). The rule is checked
 * when a URL is saved and again on every connection (DNS may change between the two).
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
        addresses = await dnsLookupAsync(host, { all: true, verbatim: true });
      } catch {
        throw refuse(`the host ${host} does not resolve`);
      }
      if (!addresses.length || addresses.some((a) => !isPublicAddress(a.address))) {
        throw refuse(`the host ${host} resolves to a non-public address`);
      }
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
    return ipaddr.process(address).range() === 'unicast';
  } catch {
    return false;
  }
}

export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'EBLOCKEDADDRESS';
}

/**
 * A DNS lookup for outgoing webhook connections that refuses non-public answers, so a name that
 * resolved to a public address when it was saved cannot be re-pointed at the internal network.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
    if (error) return callback(error, '', 4);
    const list = addresses as LookupAddress[];
    const blocked = list.find((a) => !isPublicAddress(a.address));
    if (blocked || !list.length) {
      return callback(new BlockedAddressError(`${hostname} resolves to the non-public address ${blocked?.address ?? '(none)'}`), '', 4);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
};
