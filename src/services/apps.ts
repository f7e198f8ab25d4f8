import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { principalOf, type RequestContext } from '../context.js';
import type { App } from '../generated/prisma/client.js';
import { isAllowedAddress } from './auth.js';
import { NotFoundError, UnprocessableError } from './errors.js';
import { isScope, sortScopes } from './scopes.js';

/**
 * The app behind a credential, and its IP allow list (spec §5.7: "Allowed IP addresses can
 * optionally be registered by the partner"). Shared by REST /channel/v1/apps/me, the GraphQL
 * `app` and `setIpAllowList` fields, and the operator's `app:ip-allow-list`.
 *
 * The list is enforced on every request (src/services/auth.ts authenticate); an empty list
 * means any address.
 */

export const MAX_IP_ALLOW_LIST = 50;

/** An app as its partner (and the operator) reads it; never a secret. */
export interface AppView {
  appId: string;
  userId: string;
  name: string;
  clientId: string;
  scopes: string[];
  status: 'active' | 'suspended';
  ipAllowList: string[];
  createdAt: Date;
  updatedAt: Date;
}

export function toAppView(app: App): AppView {
  return {
    appId: app.id,
    userId: app.channelId,
    name: app.name,
    clientId: app.clientId,
    scopes: sortScopes(app.scopes.filter(isScope)),
    status: app.status,
    ipAllowList: app.ipAllowList,
    createdAt: app.createdAt,
    updatedAt: app.updatedAt,
  };
}

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

/**
 * The rule of the allow list, written once: REST (`ip_allow_list`), GraphQL (`ipAllowList`) and
 * the operator route build their request schemas from it. It yields the list normalized
 * (normalizeIpEntry) with duplicates removed, first occurrence kept.
 */
export const appRules = {
  ipAllowList: z
    .array(
      z
        .string()
        .max(100, 'at most 100 characters')
        .transform((entry, ctx) => {
          const result = normalizeIpEntry(entry);
          if ('value' in result) return result.value;
          ctx.addIssue({ code: 'custom', message: result.error });
          return z.NEVER;
        }),
    )
    .max(MAX_IP_ALLOW_LIST, `at most ${MAX_IP_ALLOW_LIST} entries`)
    .transform((entries) => [...new Set(entries)]),
};

/** The app of the request's credential. */
export async function getOwnApp(ctx: RequestContext): Promise<AppView> {
  const app = await ctx.deps.db.prisma.app.findUnique({ where: { id: principalOf(ctx).appId } });
  if (!app) throw new NotFoundError('The app of this credential was not found');
  return toAppView(app);
}

/**
 * Replaces the allow list of the credential's app with `list` (already through
 * appRules.ipAllowList). A non-empty list that does not cover the address of this very request
 * (ctx.clientIp) is refused with 422 IP_ALLOW_LIST_LOCKOUT: the next request would be refused
 * and only the operator could undo it. The check is the enforcement's own (isAllowedAddress), so
 * an unknown address is refused the same way.
 *
 * This instance's credential cache is cleared, so the list applies from the next request; other
 * instances pick it up when their cached credential expires (AUTH_CACHE_TTL_MS, 5 s by default).
 */
export async function replaceOwnIpAllowList(ctx: RequestContext, list: string[]): Promise<AppView> {
  const address = ctx.clientIp;
  if (!isAllowedAddress({ ipAllowList: list }, address)) {
    throw new UnprocessableError(
      'IP_ALLOW_LIST_LOCKOUT',
      address === undefined
        ? 'The address of this request is not known, so the list cannot be checked against it; ' +
            'send an empty list or ask the operator to set it'
        : `The list does not include ${address}, the address of this request: every request from it would be ` +
            'refused. Add it (or a range holding it) to the list',
      { client_ip: address ?? null },
    );
  }
  const app = await ctx.deps.db.prisma.app.update({
    where: { id: principalOf(ctx).appId },
    data: { ipAllowList: list },
  });
  ctx.deps.credentials?.clear();
  return toAppView(app);
}
