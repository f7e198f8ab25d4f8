import { z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppDeps } from '../../src/context.js';
import { issueAccessToken, OAuthError, revokeAccessToken, SCOPES, type OAuthErrorCode } from '../../src/services/access/index.js';
import { BadRequestError, ForbiddenError, InternalError, RateLimitError, ServiceUnavailableError, UnauthorizedError } from '../../src/services/kernel/index.js';
import { errorResponseOf, Meta, oauthErrorResponse } from '../envelope.js';
import type { HttpEnv } from '../env.js';

/**
 * The OAuth endpoints, outside the authentication chain, answering in RFC 6749 form:
 * POST /oauth/token (docs/spec/channel-api.md §4.1, client_credentials only) and POST /oauth/revoke (RFC 7009). Both
 * authenticate the client the same way (readClientRequest, then the service's one check), and
 * share one limit: 20 requests per 60 s per client address, every attempt counted, so the two
 * together cannot be used to guess a secret faster than one alone (docs/decisions.md).
 */
export function oauthRoutes(app: OpenAPIHono<HttpEnv>, deps: AppDeps) {
  const prisma = deps.db.prisma;
  app.post('/oauth/token', (c) =>
    oauthEndpoint(c, deps, async () => {
      const token = await issueAccessToken(prisma, await readClientRequest(c), new Date(), c.get('clientIp'));
      return c.json(token, 200);
    }),
  );
  app.post('/oauth/revoke', (c) =>
    oauthEndpoint(c, deps, async () => {
      const { revoked } = await revokeAccessToken(prisma, await readClientRequest(c), new Date(), c.get('clientIp'));
      // Committed: this instance's cache drops the token now, the others' through Redis or their TTL.
      if (revoked) await deps.credentialChanges.announce({ accessTokenDigest: revoked });
      // RFC 7009 §2.2: 200 with no content, whether or not a token was revoked.
      return c.body(null, 200);
    }),
  );

  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/oauth/token',
    operationId: 'issueToken',
    tags: ['OAuth'],
    summary: 'Issue an access token (client_credentials)',
    description:
      'No authentication header; the client authenticates with client_id and client_secret in the body ' +
      '(or HTTP Basic). 20 requests per 60 seconds per IP address, shared with POST /oauth/revoke. ' +
      'Responses are not enveloped.',
    request: {
      body: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': { schema: TokenRequestWire },
          'application/json': { schema: TokenRequestWire },
        },
      },
    },
    responses: {
      200: {
        description: 'The token; Cache-Control: no-store',
        headers: { 'Cache-Control': noStore },
        content: { 'application/json': { schema: TokenResponseWire } },
      },
      ...errorResponseOf(BadRequestError, { description: 'invalid_request, unsupported_grant_type or invalid_scope', content: oauthErrorOf('invalid_request', 'unsupported_grant_type', 'invalid_scope') }),
      ...errorResponseOf(UnauthorizedError, { description: 'invalid_client: wrong credentials or suspended app', content: oauthErrorOf('invalid_client') }),
      ...errorResponseOf(ForbiddenError, oauthForbidden),
      ...errorResponseOf(RateLimitError, { description: 'rate_limit_exceeded, with Retry-After', content: oauthErrorOf('rate_limit_exceeded') }),
      ...errorResponseOf(InternalError, { description: 'server_error: a fault of the service', content: oauthErrorOf('server_error') }),
      ...errorResponseOf(ServiceUnavailableError, oauthUnavailable),
    },
  });

  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/oauth/revoke',
    operationId: 'revokeToken',
    tags: ['OAuth'],
    summary: 'Revoke an access token (RFC 7009)',
    description:
      'Revokes one of the client\'s own access tokens: from the answer on, the token is refused with 401 on ' +
      'REST v1, v2 and GraphQL, and live subscriptions started with it end. Client authentication as at ' +
      'POST /oauth/token (client_id and client_secret in the body, or HTTP Basic), from an address the ' +
      "app's IP allow list admits. The answer is 200 with no content whether the token was revoked, " +
      "unknown, already revoked, expired or another client's (whose token is left as it is): it tells " +
      'nothing about tokens the client does not hold. token_type_hint is accepted and ignored; only ' +
      'access tokens are revoked here (an API key is unsupported_token_type; the operator rotates keys). ' +
      '20 requests per 60 seconds per IP address, shared with POST /oauth/token. Errors are not enveloped.',
    request: {
      body: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': { schema: RevocationRequestWire },
          'application/json': { schema: RevocationRequestWire },
        },
      },
    },
    responses: {
      200: {
        description: 'Done: the token is revoked if it was one of this client\'s; no content',
        headers: { 'Cache-Control': noStore },
      },
      ...errorResponseOf(BadRequestError, { description: 'invalid_request (token missing, a malformed body) or unsupported_token_type (an API key)', content: oauthErrorOf('invalid_request', 'unsupported_token_type') }),
      ...errorResponseOf(UnauthorizedError, { description: 'invalid_client: wrong credentials or suspended app', content: oauthErrorOf('invalid_client') }),
      ...errorResponseOf(ForbiddenError, oauthForbidden),
      ...errorResponseOf(RateLimitError, { description: 'rate_limit_exceeded, with Retry-After', content: oauthErrorOf('rate_limit_exceeded') }),
      ...errorResponseOf(InternalError, { description: 'server_error: a fault of the service', content: oauthErrorOf('server_error') }),
      ...errorResponseOf(ServiceUnavailableError, oauthUnavailable),
    },
  });
}

/**
 * What both endpoints do around their own work: no caching of any answer, the per-address limit
 * charged before anything else, and errors in the RFC 6749 form.
 */
async function oauthEndpoint(c: Context<HttpEnv>, deps: AppDeps, handle: () => Promise<Response>): Promise<Response> {
  c.header('Cache-Control', 'no-store');
  c.header('Pragma', 'no-cache');
  try {
    const limit = await deps.limiters.oauthToken.consume(c.get('clientIp') ?? 'unknown');
    c.header('X-RateLimit-Limit', String(limit.limit));
    c.header('X-RateLimit-Remaining', String(limit.remaining));
    c.header('X-RateLimit-Reset', String(limit.resetSeconds));
    if (!limit.allowed) {
      deps.metrics.rateLimited('oauth');
      throw new OAuthError('rate_limit_exceeded', `At most ${limit.limit} token and revocation requests per minute`, {
        'Retry-After': String(limit.resetSeconds),
      });
    }
    return await handle();
  } catch (error) {
    return oauthErrorResponse(c, error);
  }
}

const noStore = { description: 'no-store: never cache an answer of this endpoint', required: true, schema: { type: 'string' as const, example: 'no-store' } };

const TokenRequestWire = z
  .object({
    grant_type: z.literal('client_credentials'),
    client_id: z.string(),
    client_secret: z.string(),
    scope: z.string().optional().openapi({ description: `Space-separated subset of the app's scopes: ${SCOPES.join(' ')}` }),
  })
  .openapi('TokenRequest');

const RevocationRequestWire = z
  .object({
    token: z.string().openapi({ description: 'The access token to revoke (oat_...)', example: 'oat_...' }),
    token_type_hint: z
      .string()
      .optional()
      .openapi({ description: 'RFC 7009 §2.1; accepted and ignored (only access tokens are revoked here)', example: 'access_token' }),
    client_id: z.string().optional().openapi({ description: 'With client_secret, unless HTTP Basic is used' }),
    client_secret: z.string().optional(),
  })
  .openapi('RevocationRequest');

const TokenResponseWire = z
  .object({
    access_token: z.string().openapi({ example: 'oat_...' }),
    token_type: z.literal('Bearer'),
    expires_in: z.int().min(1).openapi({ description: 'Seconds the token is valid (1800)', example: 1800 }),
    scope: z.string(),
  })
  .openapi('TokenResponse');

/** The RFC 6749 error form, its `error` one of `codes` (the codes of one status). */
function oauthErrorOf(...codes: [OAuthCode, ...OAuthCode[]]) {
  return {
    'application/json': {
      schema: z.object({ error: z.enum(codes), error_description: z.string().optional() }).openapi({ description: 'RFC 6749 §5.2' }),
    },
  };
}

/** The RFC 6749 codes the service answers, server_error (a 500) and temporarily_unavailable (a 503). */
type OAuthCode = OAuthErrorCode | 'server_error' | 'temporarily_unavailable';

const oauthUnavailable = {
  description:
    'temporarily_unavailable (OAuth form, with Retry-After): the database is unreachable; SERVICE_UNAVAILABLE (error envelope): the instance is shutting down. Retry',
  content: {
    'application/json': {
      schema: z.union([
        z.object({
          error: z.object({ code: z.enum(['SERVICE_UNAVAILABLE']), message: z.string(), details: z.record(z.string(), z.unknown()).nullable() }),
          meta: Meta,
        }),
        oauthErrorOf('temporarily_unavailable')['application/json'].schema,
      ]),
    },
  },
};

const oauthForbidden = {
  description:
    "access_denied (OAuth form): the client calls from outside its app's IP allow list; HTTPS_REQUIRED (error envelope): plain HTTP where HTTPS is required",
  content: {
    'application/json': {
      schema: z.union([
        z.object({
          error: z.object({ code: z.enum(['HTTPS_REQUIRED']), message: z.string(), details: z.record(z.string(), z.unknown()).nullable() }),
          meta: Meta,
        }),
        oauthErrorOf('access_denied')['application/json'].schema,
      ]),
    },
  },
};

/**
 * The body of either endpoint as form-urlencoded or JSON, with HTTP Basic client authentication
 * allowed (RFC 6749 §2.3.1; RFC 7009 §2.1 asks for the same as at the token endpoint).
 */
async function readClientRequest(c: Context<HttpEnv>): Promise<Record<string, unknown>> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  let body: Record<string, unknown>;
  if (type === 'application/x-www-form-urlencoded') {
    const params = new URLSearchParams(await c.req.text());
    body = {};
    for (const key of new Set(params.keys())) {
      if (params.getAll(key).length > 1) throw new OAuthError('invalid_request', `${key} is repeated`);
      body[key] = params.get(key);
    }
  } else if (type === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await c.req.text());
    } catch {
      throw new OAuthError('invalid_request', 'The body is not valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new OAuthError('invalid_request', 'The body must be a JSON object');
    }
    body = parsed as Record<string, unknown>;
  } else {
    throw new OAuthError('invalid_request', 'Send application/x-www-form-urlencoded or application/json');
  }

  const basic = /^Basic\s+(\S+)$/i.exec(c.req.header('authorization') ?? '');
  if (basic?.[1]) {
    if (body.client_id !== undefined || body.client_secret !== undefined) {
      throw new OAuthError('invalid_request', 'Use one client authentication method, not both');
    }
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const malformed = () => new OAuthError('invalid_client', 'Malformed Basic credentials', { 'WWW-Authenticate': 'Basic' });
    if (colon < 0) throw malformed();
    // RFC 6749 §2.3.1: each part is form-urlencoded; a broken escape (`%ZZ`) is malformed, not a fault.
    try {
      body.client_id = decodeURIComponent(decoded.slice(0, colon));
      body.client_secret = decodeURIComponent(decoded.slice(colon + 1));
    } catch {
      throw malformed();
    }
  }
  return body;
}
