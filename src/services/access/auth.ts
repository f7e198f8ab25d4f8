import { LRUCache } from 'lru-cache';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { IpNotAllowedError, UnauthorizedError, isInRanges } from '../kernel/index.js';
import { isScope, type Scope } from './scopes.js';
import { digest, PREFIX } from './secrets.js';

/** Who is calling: the app behind an API key or an access token, and what it may do. */
export interface Principal {
  readonly channelId: string;
  readonly appId: string;
  readonly credential: 'api_key' | 'access_token';
  readonly scopes: ReadonlySet<Scope>;
  /** Addresses or CIDR ranges the app may call from; empty means any. */
  readonly ipAllowList: readonly string[];
}

export interface CredentialHeaders {
  apiKey?: string | null | undefined;
  authorization?: string | null | undefined;
}

/**
 * A change that makes cached credentials stale: every credential of one app (suspension, a
 * rotated key or client secret, a new IP allow list), or one access token (RFC 7009 revocation).
 */
export type CredentialChange = { appId: string } | { accessTokenDigest: string };

/**
 * Credentials recently found valid, by digest, so a busy partner does not cost a database lookup
 * per request. Entries live a few seconds; a change made through this instance (revocations,
 * operator commands, an app's IP allow list) drops the entries it concerns at once, other
 * instances within the TTL, or at once through Redis (src/events/credentialChanges.ts;
 * docs/decisions.md). Refusals are never cached.
 */
export class CredentialCache {
  private readonly entries: LRUCache<string, { principal: Principal; expiresAt: Date | null }>;
  /** Bumped by clear() and forget(), so a lookup that started before a change cannot store its stale answer. */
  private generation = 0;

  constructor(ttlMs: number) {
    this.entries = new LRUCache({ max: 10_000, ttl: ttlMs });
  }

  get(key: string, now: Date): Principal | undefined {
    const hit = this.entries.get(key);
    return hit && (hit.expiresAt === null || hit.expiresAt > now) ? hit.principal : undefined;
  }

  /** Starts a lookup; the returned function stores its result unless the cache was cleared since. */
  begin(key: string): (principal: Principal, expiresAt: Date | null) => void {
    const generation = this.generation;
    return (principal, expiresAt) => {
      if (generation === this.generation) this.entries.set(key, { principal, expiresAt });
    };
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  /** Drops the entries a change concerns: the app's keys and tokens, or the one token. */
  forget(change: CredentialChange): void {
    this.generation++;
    if ('accessTokenDigest' in change) {
      this.entries.delete(bearerKey(change.accessTokenDigest));
      return;
    }
    const stale: string[] = [];
    for (const [key, entry] of this.entries.entries()) if (entry.principal.appId === change.appId) stale.push(key);
    for (const key of stale) this.entries.delete(key);
  }
}

/** The cache key of an access token: a credential is cached under its kind and digest. */
function bearerKey(tokenDigest: string): string {
  return `bearer:${tokenDigest}`;
}

export function createCredentialCache(ttlMs: number): CredentialCache | null {
  return ttlMs > 0 ? new CredentialCache(ttlMs) : null;
}

/**
 * Resolves the credential of a request. No credential at all gives null (the caller decides
 * whether the route needs one); a credential that is wrong, expired, revoked or belongs to a
 * suspended app throws UnauthorizedError; a good one used from outside its app's IP allow list
 * throws IpNotAllowedError (an unknown address is outside any non-empty list).
 */
export async function authenticate(
  prisma: PrismaClient,
  headers: CredentialHeaders,
  options: { now?: Date; cache?: CredentialCache | null; clientIp?: string | undefined } = {},
): Promise<Principal | null> {
  const principal = await resolveCredential(prisma, headers, options);
  if (principal && !isAllowedAddress(principal, options.clientIp)) throw new IpNotAllowedError(options.clientIp);
  return principal;
}

/** An app with an IP allow list may call only from an address in it; an empty list allows any. */
export function isAllowedAddress(principal: Pick<Principal, 'ipAllowList'>, clientIp: string | undefined): boolean {
  if (principal.ipAllowList.length === 0) return true;
  return clientIp !== undefined && isInRanges(clientIp, principal.ipAllowList);
}

/**
 * The longest credential value read (an API key or an `Authorization` header; ours are under 80
 * characters): a longer one is refused as not valid before it is parsed, hashed or looked up.
 */
export const CREDENTIAL_MAX_CHARS = 512;

async function resolveCredential(
  prisma: PrismaClient,
  headers: CredentialHeaders,
  options: { now?: Date; cache?: CredentialCache | null },
): Promise<Principal | null> {
  const now = options.now ?? new Date();
  const apiKey = headers.apiKey?.trim();
  if (apiKey) {
    if (apiKey.length > CREDENTIAL_MAX_CHARS) throw new UnauthorizedError('The API key is not valid');
    return cached(options.cache, `key:${digest(apiKey)}`, now, () => authenticateApiKey(prisma, apiKey));
  }
  const authorization = headers.authorization?.trim();
  if (authorization) {
    if (authorization.length > CREDENTIAL_MAX_CHARS) throw new UnauthorizedError('The access token is not valid');
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match?.[1]) throw new UnauthorizedError('The Authorization header must be "Bearer <access_token>"');
    const token = match[1];
    return cached(options.cache, bearerKey(digest(token)), now, () => authenticateAccessToken(prisma, token, now));
  }
  return null;
}

/** A credential is cached under its kind and digest, so a key is never accepted as a token. */
async function cached(
  cache: CredentialCache | null | undefined,
  key: string,
  now: Date,
  lookup: () => Promise<Principal & { expiresAt?: Date }>,
): Promise<Principal> {
  const hit = cache?.get(key, now);
  if (hit) return hit;
  const store = cache?.begin(key);
  const { expiresAt, ...principal } = await lookup();
  store?.(principal, expiresAt ?? null);
  return principal;
}

async function authenticateApiKey(prisma: PrismaClient, key: string): Promise<Principal> {
  const row = await prisma.apiKey.findUnique({
    where: { keyHash: digest(key) },
    include: { app: true },
  });
  if (!row || row.revokedAt) throw new UnauthorizedError('The API key is not valid');
  if (row.app.status !== 'active') throw new UnauthorizedError('The app of this API key is suspended');
  return principalOf(row.app, 'api_key', row.app.scopes);
}

async function authenticateAccessToken(prisma: PrismaClient, token: string, now: Date): Promise<Principal & { expiresAt: Date }> {
  if (!token.startsWith(PREFIX.accessToken)) throw new UnauthorizedError('The access token is not valid');
  const row = await prisma.accessToken.findUnique({
    where: { tokenHash: digest(token) },
    include: { app: true },
  });
  if (!row) throw new UnauthorizedError('The access token is not valid');
  if (row.app.status !== 'active') throw new UnauthorizedError('The app of this access token is suspended');
  if (row.revokedAt) throw new UnauthorizedError('The access token has been revoked; request a new one');
  if (row.expiresAt <= now) throw new UnauthorizedError('The access token has expired; request a new one');
  // A token never carries more than its app has now, even if the app's scopes were narrowed.
  const current = new Set(row.app.scopes);
  return { ...principalOf(row.app, 'access_token', row.scopes.filter((s) => current.has(s))), expiresAt: row.expiresAt };
}

function principalOf(
  app: { id: string; channelId: string; ipAllowList: string[] },
  credential: Principal['credential'],
  scopes: string[],
): Principal {
  return {
    channelId: app.channelId,
    appId: app.id,
    credential,
    scopes: new Set(scopes.filter(isScope)),
    ipAllowList: app.ipAllowList,
  };
}
