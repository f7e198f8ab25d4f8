import type { PrismaClient } from '../generated/prisma/client.js';
import { isAllowedAddress } from './auth.js';
import { AppError } from './errors.js';
import { isScope, sortScopes, type Scope } from './scopes.js';
import { digest, matchesDigest, newSecret, PREFIX } from './secrets.js';

/** Lifetime of an access token (spec §5.2). */
export const ACCESS_TOKEN_TTL_SECONDS = 1800;

export type OAuthErrorCode =
  | 'invalid_request'
  | 'unsupported_grant_type'
  | 'invalid_client'
  | 'invalid_scope'
  | 'access_denied'
  | 'rate_limit_exceeded';

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  unsupported_grant_type: 400,
  invalid_client: 401,
  invalid_scope: 400,
  // The client is right but calls from outside its app's IP allow list.
  access_denied: 403,
  rate_limit_exceeded: 429,
};

/** An error of the token endpoint; rendered in the RFC 6749 form, not the envelope. */
export class OAuthError extends AppError {
  constructor(code: OAuthErrorCode, description: string, headers: Record<string, string> = {}) {
    super(STATUS[code], code, description, null, headers);
  }
}

export interface TokenRequest {
  grant_type?: unknown;
  client_id?: unknown;
  client_secret?: unknown;
  scope?: unknown;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

// Compared against when the client_id is unknown, so both paths cost one digest comparison.
const UNKNOWN_CLIENT_DIGEST = digest('unknown-client');

/** The client_credentials grant (spec §4.1). */
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
  const { client_id: clientId, client_secret: clientSecret, scope } = request;
  if (typeof clientId !== 'string' || clientId === '') {
    throw new OAuthError('invalid_request', 'client_id is required');
  }
  if (typeof clientSecret !== 'string' || clientSecret === '') {
    throw new OAuthError('invalid_request', 'client_secret is required');
  }
  if (scope !== undefined && typeof scope !== 'string') {
    throw new OAuthError('invalid_request', 'scope must be a space-separated string');
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

  const granted = grantedScopes(app.scopes, scope);
  const accessToken = newSecret(PREFIX.accessToken);
  await prisma.$transaction([
    // Housekeeping: the app's tokens that expired more than a day ago are of no use to anyone.
    prisma.accessToken.deleteMany({
      where: { appId: app.id, expiresAt: { lt: new Date(now.getTime() - 86_400_000) } },
    }),
    prisma.accessToken.create({
      data: {
        appId: app.id,
        tokenHash: digest(accessToken),
        scopes: granted,
        expiresAt: new Date(now.getTime() + ACCESS_TOKEN_TTL_SECONDS * 1000),
      },
    }),
  ]);
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    scope: granted.join(' '),
  };
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
