import { z } from 'zod';
import { principalOf, NotFoundError, UnprocessableError, normalizeIpEntry } from '../kernel/index.js';
import type { RequestContext } from '../../context.js';
import type { App } from '../../generated/prisma/client.js';
import { isAllowedAddress } from './auth.js';
import { isScope, sortScopes } from './scopes.js';

/**
 * The app behind a credential, and its IP allow list (docs/spec/channel-api.md §5.7: "Allowed IP addresses can
 * optionally be registered by the partner"). Shared by REST /channel/v1/apps/me, the GraphQL
 * `app` and `setIpAllowList` fields, and the operator's `app:ip-allow-list`.
 *
 * The list is enforced on every request (src/services/access/auth.ts authenticate); an empty list
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
 * The change is announced to the credential cache, so the list applies from the next request on
 * this instance; on the others at once through Redis, else when their cached credential expires
 * (AUTH_CACHE_TTL_MS, 5 s by default).
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
  await ctx.deps.credentialChanges.announce({ appId: app.id });
  return toAppView(app);
}
