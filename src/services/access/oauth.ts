import type { App, PrismaClient } from '../../generated/prisma/client.js';
import { isAllowedAddress } from './auth.js';
import { AppError } from '../kernel/index.js';
import { isScope, sortScopes, type Scope } from './scopes.js';
import { digest, matchesDigest, newSecret, PREFIX } from './secrets.js';

/** Lifetime of an access token (docs/spec/channel-api.md §5.2). */
export const ACCESS_TOKEN_TTL_SECONDS = 1800;

export type OAuthErrorCode =
  | 'invalid_request'
  | 'unsupported_grant_type'
  | 'invalid_client'
  | 'invalid_scope'
  | 'access_denied'
  | 'rate_limit_exceeded'
  | 'unsupported_token_type';

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  unsupported_grant_type: 400,
  invalid_client: 401,
  invalid_scope: 400,
  // The client is right but calls from outside its app's IP allow list.
  access_denied: 403,
  rate_limit_exceeded: 429,
  // RFC 7009 §2.2.1: a token of a kind the revocation endpoint does not revoke (an API key).
  unsupported_token_type: 400,
};

/** An error of the token and revocation endpoints; rendered in the RFC 6749 form, not the envelope. */
export class OAuthError extends AppError {
  constructor(code: OAuthErrorCode, description: string, headers: Record<string, string> = {}) {
    super(STATUS[code], code, description, null, headers);
  }
}

/** Client authentication of the token and revocation endpoints (RFC 6749 §2.3.1), from the body or HTTP Basic. */
export interface ClientAuthentication {
  client_id?: unknown;
  client_secret?: unknown;
}

export interface TokenRequest extends ClientAuthentication {
  grant_type?: unknown;
  scope?: unknown;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

/** RFC 7009 §2.1. */
export interface RevocationRequest extends ClientAuthentication {
  token?: unknown;
  token_type_hint?: unknown;
}

// Compared against when the client_id is unknown, so both paths cost one digest comparison.
const UNKNOWN_CLIENT_DIGEST = digest('unknown-client');

/**
 * The app that the client_id and client_secret prove, active and called from an address its IP
 * allow list admits. The same rules at the token and the revocation endpoints.
 */
async function authenticateClient(prisma: PrismaClient, request: ClientAuthentication, clientIp: string | undefined): Promise<App> {
  const { client_id: clientId, client_secret: clientSecret } = request;
  if (typeof clientId !== 'string' || clientId === '') {
    throw new OAuthError('invalid_request', 'client_id is required');
  }
  if (typeof clientSecret !== 'string' || clientSecret === '') {
    throw new OAuthError('invalid_request', 'client_secret is required');
  }
  // PostgreSQL text cannot hold NUL, so no client_id has one (and the lookup would fail, not miss).
  const app = clientId.includes('\u0000') ? null : await prisma.app.findUnique({ where: { clientId } });
  const secretMatches = matchesDigest(clientSecret, app?.clientSecretHash ?? UNKNOWN_CLIENT_DIGEST);
  if (!app || !secretMatches) throw new OAuthError('invalid_client', 'Client authentication failed');
  if (app.status !== 'active') throw new OAuthError('invalid_client', 'The app is suspended');
  // Checked after the secret, so the answer says nothing about a client the caller cannot prove.
  if (!isAllowedAddress(app, clientIp)) {
    throw new OAuthError('access_denied', `Requests of this app are not accepted from ${clientIp ?? 'this address'}`);
  }
  return app;
}

/** The client_credentials grant (docs/spec/channel-api.md §4.1). */
export async function issueAccessToken(
  prisma: PrismaClient,
  request: TokenRequest,
  now = new Date(),
  clientIp?: string,
): Promise<TokenResponse> {
  const grantType = request.grant_type;
  if (grantType === undefined || grantType === '') {
    throw new OAuthError('invalid_request', 'grant_type is required');
  }
  if (grantType !== 'client_credentials') {
    throw new OAuthError('unsupported_grant_type', 'Only grant_type=client_credentials is supported');
  }
  const { scope } = request;
  if (scope !== undefined && typeof scope !== 'string') {
    throw new OAuthError('invalid_request', 'scope must be a space-separated string');
  }
  const app = await authenticateClient(prisma, request, clientIp);

  const granted = grantedScopes(app.scopes, scope);
  const accessToken = newSecret(PREFIX.accessToken);
  await prisma.$transaction(async (tx) => {
    // The app row, held shared until the token is stored: secret:rotate and app:suspend update it
    // before they revoke the app's tokens, so either they wait for this token and revoke it, or
    // this finds the secret replaced (or the app suspended) and mints nothing.
    const [current] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM apps
      WHERE id = ${app.id}::uuid AND client_secret_hash = ${app.clientSecretHash} AND status = 'active'
      FOR SHARE`;
    if (!current) throw new OAuthError('invalid_client', 'Client authentication failed');
    // Housekeeping: the app's tokens that expired more than a day ago are of no use to anyone.
    await tx.accessToken.deleteMany({
      where: { appId: app.id, expiresAt: { lt: new Date(now.getTime() - 86_400_000) } },
    });
    await tx.accessToken.create({
      data: {
        appId: app.id,
        tokenHash: digest(accessToken),
        scopes: granted,
        expiresAt: new Date(now.getTime() + ACCESS_TOKEN_TTL_SECONDS * 1000),
      },
    });
  });
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    scope: granted.join(' '),
  };
}

/**
 * RFC 7009 token revocation: the authenticated client's own access token is revoked; a token that
 * is unknown, already revoked, expired or another client's changes nothing, and the answer is the
 * same (§2.2), so it tells nobody whether a token exists. `token_type_hint` is read by nobody: the
 * endpoint revokes only access tokens (there are no refresh tokens), and an unknown hint must not
 * fail the request (§2.1). API keys are not OAuth tokens: one sent here (by its `ck_` prefix) is
 * `unsupported_token_type` (§2.2.1), so no partner believes a leaked key revoked; the operator
 * rotates keys. Returns the digest of the token it revoked, or null, for the credential cache.
 */
export async function revokeAccessToken(
  prisma: PrismaClient,
  request: RevocationRequest,
  now = new Date(),
  clientIp?: string,
): Promise<{ revoked: string | null }> {
  const { token, token_type_hint: hint } = request;
  if (token === undefined || token === '') throw new OAuthError('invalid_request', 'token is required');
  if (typeof token !== 'string') throw new OAuthError('invalid_request', 'token must be a string');
  if (hint !== undefined && typeof hint !== 'string') {
    throw new OAuthError('invalid_request', 'token_type_hint must be a string');
  }
  const app = await authenticateClient(prisma, request, clientIp);
  if (token.startsWith(PREFIX.apiKey)) {
    throw new OAuthError('unsupported_token_type', 'API keys are not revoked here; the operator rotates them (key:rotate)');
  }
  const tokenHash = digest(token);
  const { count } = await prisma.accessToken.updateMany({
    where: { tokenHash, appId: app.id, revokedAt: null },
    data: { revokedAt: now },
  });
  return { revoked: count > 0 ? tokenHash : null };
}

function grantedScopes(appScopes: string[], requested: string | undefined): Scope[] {
  const allowed = appScopes.filter(isScope);
  if (requested === undefined) return sortScopes(allowed);
  const asked = requested.split(' ').filter(Boolean);
  if (asked.length === 0) throw new OAuthError('invalid_scope', 'scope is empty');
  const allowedSet = new Set<string>(allowed);
  const refused = asked.filter((s) => !allowedSet.has(s));
  if (refused.length > 0) {
    throw new OAuthError('invalid_scope', `Not granted to this client: ${refused.join(' ')}`);
  }
  return sortScopes(asked.filter(isScope));
}
