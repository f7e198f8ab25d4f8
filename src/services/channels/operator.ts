import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { App, Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { toProfile, type ChannelProfile } from './channels.js';
import { NotFoundError, type Amount, type Currency } from '../kernel/index.js';
import { post } from '../bookings/index.js';
import { digest, matchesDigest, newSecret, PREFIX, SCOPES, sortScopes, type Scope } from '../access/index.js';

/** Operator (admin) operations of docs/spec/DECISIONS.md. Reached only through the operator API and CLI. */

export interface NewChannel {
  name: string;
  company?: string | null | undefined;
  tier?: 'sandbox' | 'starter' | undefined;
  balance?: Amount | undefined;
  currency?: Currency | undefined;
  scopes?: Scope[] | undefined;
}

export interface IssuedCredentials {
  user_id: string;
  app_id: string;
  api_key: string;
  client_id: string;
  client_secret: string;
  scopes: Scope[];
}

export interface AppSummary {
  app_id: string;
  name: string;
  client_id: string;
  status: 'active' | 'suspended';
  scopes: string[];
  ip_allow_list: string[];
  api_keys: { prefix: string; created_at: Date; revoked_at: Date | null }[];
}

export interface ChannelWithBalance extends ChannelProfile {
  balance: Amount;
  apps: AppSummary[];
}

export async function createChannel(prisma: PrismaClient, input: NewChannel): Promise<IssuedCredentials> {
  const scopes = sortScopes(input.scopes ?? SCOPES);
  const apiKey = newApiKey();
  const clientId = newSecret(PREFIX.clientId).slice(0, 28);
  const clientSecret = newSecret(PREFIX.clientSecret);
  return prisma.$transaction(async (tx) => {
    const channel = await tx.channel.create({
      data: {
        name: input.name,
        company: input.company ?? null,
        tier: input.tier ?? 'sandbox',
        defaultCurrency: input.currency ?? 'KRW',
        tierUpdatedAt: input.tier ? new Date() : null,
      },
    });
    const app = await tx.app.create({
      data: {
        channelId: channel.id,
        name: `${input.name} app`,
        clientId,
        clientSecretHash: digest(clientSecret),
        scopes,
        apiKeys: { create: apiKey.row },
      },
    });
    if (input.balance && input.balance > 0n) {
      await post(tx, channel.id, input.balance, 'opening_balance');
    }
    return {
      user_id: channel.id,
      app_id: app.id,
      api_key: apiKey.key,
      client_id: clientId,
      client_secret: clientSecret,
      scopes,
    };
  });
}

export async function showChannel(prisma: PrismaClient, channelId: string): Promise<ChannelWithBalance> {
  const channel = await prisma.channel.findUnique({
    where: { id: channelId },
    include: { apps: { include: { apiKeys: true }, orderBy: { createdAt: 'asc' } } },
  });
  if (!channel) throw new NotFoundError(`No channel ${channelId}`);
  return {
    ...toProfile(channel),
    balance: channel.balance,
    apps: channel.apps.map((app) => ({
      ...appSummary(app),
      api_keys: app.apiKeys.map((k) => ({ prefix: k.prefix, created_at: k.createdAt, revoked_at: k.revokedAt })),
    })),
  };
}

export async function topUp(
  prisma: PrismaClient,
  channelId: string,
  amount: Amount,
  reference: string | null,
): Promise<{ user_id: string; amount: Amount; balance: Amount }> {
  const balance = await prisma.$transaction(async (tx) => {
    const exists = await tx.channel.findUnique({ where: { id: channelId }, select: { id: true } });
    if (!exists) throw new NotFoundError(`No channel ${channelId}`);
    return post(tx, channelId, amount, 'top_up', reference);
  });
  return { user_id: channelId, amount, balance };
}

/**
 * Sets a channel's `rate_limit` (`channel:rate-limit`): points per window in each environment.
 * Omitted values stay. Answers the channel's limits as GET /channels/me shows them.
 */
export async function setRateLimit(
  prisma: PrismaClient,
  channelId: string,
  limits: { sandbox?: number | undefined; production?: number | undefined },
): Promise<{ user_id: string; rate_limit: { sandbox: number; production: number } }> {
  const exists = await prisma.channel.findUnique({ where: { id: channelId }, select: { id: true } });
  if (!exists) throw new NotFoundError(`No channel ${channelId}`);
  const channel = await prisma.channel.update({
    where: { id: channelId },
    data: { rateLimitSandbox: limits.sandbox, rateLimitProduction: limits.production },
  });
  return { user_id: channel.id, rate_limit: { sandbox: channel.rateLimitSandbox, production: channel.rateLimitProduction } };
}

/**
 * Suspends or resumes an app (`app:suspend`, `app:resume`). Suspending also revokes the app's
 * outstanding access tokens in the same transaction, so resuming gives back its API keys and the
 * right to mint tokens, never the old tokens. `revoked_tokens` counts the tokens revoked now.
 */
export async function setAppStatus(
  prisma: PrismaClient,
  appId: string,
  status: 'active' | 'suspended',
): Promise<Omit<AppSummary, 'api_keys'> & { revoked_tokens: number }> {
  return prisma.$transaction(async (tx) => {
    const found = await tx.app.findUnique({ where: { id: appId } });
    if (!found) throw new NotFoundError(`No app ${appId}`);
    // The update comes first: it locks the app row, so a token being minted either is committed
    // before and revoked below, or sees the app suspended and is not minted (issueAccessToken).
    const app = await tx.app.update({ where: { id: appId }, data: { status } });
    const revoked = status === 'suspended' ? await revokeTokens(tx, appId) : 0;
    return { ...appSummary(app), revoked_tokens: revoked };
  });
}

/**
 * Issues a new client secret (`secret:rotate`; shown once, stored as its digest) and, in the same
 * transaction, revokes every access token of the app: all were minted with an earlier secret. The
 * old secret is refused from the commit on; the app's API keys and status are untouched.
 */
export async function rotateClientSecret(
  prisma: PrismaClient,
  appId: string,
): Promise<{ app_id: string; client_id: string; client_secret: string; revoked_tokens: number }> {
  const clientSecret = newSecret(PREFIX.clientSecret);
  return prisma.$transaction(async (tx) => {
    const found = await tx.app.findUnique({ where: { id: appId } });
    if (!found) throw new NotFoundError(`No app ${appId}`);
    // Secret first, then tokens: the same order and lock as setAppStatus.
    const app = await tx.app.update({ where: { id: appId }, data: { clientSecretHash: digest(clientSecret) } });
    const revoked = await revokeTokens(tx, appId);
    return { app_id: app.id, client_id: app.clientId, client_secret: clientSecret, revoked_tokens: revoked };
  });
}

/** Revokes the app's access tokens not revoked yet; answers how many. */
async function revokeTokens(tx: Prisma.TransactionClient, appId: string): Promise<number> {
  const { count } = await tx.accessToken.updateMany({ where: { appId, revokedAt: null }, data: { revokedAt: new Date() } });
  return count;
}

/**
 * Replaces an app's IP allow list (`app:ip-allow-list`): `list` is already through
 * appRules.ipAllowList (src/services/access/apps.ts), the rule partners' changes follow. No lock-out
 * check: the operator does not call from the partner's address, and this is how a partner that
 * locked itself out gets back in.
 */
export async function setIpAllowList(
  prisma: PrismaClient,
  appId: string,
  list: string[],
): Promise<Omit<AppSummary, 'api_keys'>> {
  const found = await prisma.app.findUnique({ where: { id: appId } });
  if (!found) throw new NotFoundError(`No app ${appId}`);
  return appSummary(await prisma.app.update({ where: { id: appId }, data: { ipAllowList: list } }));
}

/**
 * Issues a new API key and revokes the app's previous keys at once. Access tokens are not touched:
 * they are minted with the client secret, not the key (a leaked secret is `secret:rotate`).
 */
export async function rotateKey(prisma: PrismaClient, appId: string): Promise<{ app_id: string; api_key: string }> {
  const apiKey = newApiKey();
  await prisma.$transaction(async (tx) => {
    const found = await tx.app.findUnique({ where: { id: appId } });
    if (!found) throw new NotFoundError(`No app ${appId}`);
    await tx.apiKey.updateMany({ where: { appId, revokedAt: null }, data: { revokedAt: new Date() } });
    await tx.apiKey.create({ data: { appId, ...apiKey.row } });
  });
  return { app_id: appId, api_key: apiKey.key };
}

/** A new API key and the row that stores it: its digest and a recognisable prefix. */
function newApiKey(): { key: string; row: { keyHash: string; prefix: string } } {
  const key = newSecret(PREFIX.apiKey);
  return { key, row: { keyHash: digest(key), prefix: key.slice(0, 10) } };
}

function appSummary(app: App): Omit<AppSummary, 'api_keys'> {
  return {
    app_id: app.id,
    name: app.name,
    client_id: app.clientId,
    status: app.status,
    scopes: app.scopes,
    ip_allow_list: app.ipAllowList,
  };
}

/**
 * The operator credential. ADMIN_TOKEN from the environment, when set, is the only one accepted.
 * Without it, the token kept in DATA_DIR/admin-token is used, or one is made and kept there; its
 * digest goes to the database, so instances sharing the database accept it too.
 */
export async function ensureOperatorCredential(
  prisma: PrismaClient,
  options: { adminToken: string | undefined; dataDir: string },
): Promise<{ token: string; source: 'env' | 'file'; created: boolean }> {
  if (options.adminToken) return { token: options.adminToken, source: 'env', created: false };
  const file = join(options.dataDir, 'admin-token');
  let token: string;
  let created = false;
  if (existsSync(file)) {
    token = readFileSync(file, 'utf8').trim();
  } else {
    token = newSecret(PREFIX.adminToken);
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    created = true;
  }
  const tokenHash = digest(token);
  // ON CONFLICT DO NOTHING: instances starting together on one data directory must not collide.
  await prisma.operatorCredential.createMany({ data: [{ tokenHash, source: 'file' }], skipDuplicates: true });
  return { token, source: 'file', created };
}

export async function isOperatorToken(
  prisma: PrismaClient,
  adminToken: string | undefined,
  presented: string,
): Promise<boolean> {
  if (adminToken) return matchesDigest(presented, digest(adminToken));
  const row = await prisma.operatorCredential.findUnique({ where: { tokenHash: digest(presented) } });
  return row !== null;
}

/**
 * On the first start of an empty sandbox, makes a demo channel so `curl` works at once. Returns
 * its credentials to print, or null when the sandbox already has channels. A settings row makes
 * it happen once even when several instances start together.
 */
export async function seedDemoChannel(prisma: PrismaClient): Promise<IssuedCredentials | null> {
  if ((await prisma.channel.count()) > 0) return null;
  try {
    await prisma.setting.create({ data: { key: 'demo_channel_seeded', value: new Date().toISOString() } });
  } catch {
    return null; // another instance got there first
  }
  return createChannel(prisma, { name: 'Demo Channel', company: 'Demo Travel Co.', balance: 10_000_000n });
}
