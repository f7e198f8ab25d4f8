import { z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppDeps } from '../../src/context.js';
import { issueAccessToken, OAuthError, type TokenRequest } from '../../src/services/oauth.js';
import { SCOPES } from '../../src/services/scopes.js';
import { ErrorEnvelope, oauthErrorResponse } from '../envelope.js';
import type { HttpEnv } from '../http.js';

/**
 * POST /oauth/token (spec §4.1): client_credentials only, outside the authentication chain,
 * answering in RFC 6749 form, 20 requests per 60 s per client address.
 */
export function tokenRoute(app: OpenAPIHono<HttpEnv>, deps: AppDeps) {
  app.post('/oauth/token', async (c) => {
    c.header('Cache-Control', 'no-store');
    c.header('Pragma', 'no-cache');
    try {
      const limit = await deps.limiters.oauthToken.consume(c.get('clientIp') ?? 'unknown');
      c.header('X-RateLimit-Limit', String(limit.limit));
      c.header('X-RateLimit-Remaining', String(limit.remaining));
      c.header('X-RateLimit-Reset', String(limit.resetSeconds));
      if (!limit.allowed) {
        throw new OAuthError('rate_limit_exceeded', `At most ${limit.limit} token requests per minute`, {
          'Retry-After': String(limit.resetSeconds),
        });
      }
      const token = await issueAccessToken(deps.db.prisma, await readTokenRequest(c), new Date(), c.get('clientIp'));
      return c.json(token, 200);
    } catch (error) {
      return oauthErrorResponse(c, error);
    }
  });

  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/oauth/token',
    tags: ['OAuth'],
    summary: 'Issue an access token (client_credentials)',
    description:
      'No authentication header; the client authenticates with client_id and client_secret in the body ' +
      '(or HTTP Basic). 20 requests per 60 seconds per IP address. Responses are not enveloped.',
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
        headers: { 'Cache-Control': { description: 'no-store: never cache a token', required: true, schema: { type: 'string', example: 'no-store' } } },
        content: { 'application/json': { schema: TokenResponseWire } },
      },
      400: { description: 'invalid_request, unsupported_grant_type or invalid_scope', content: oauthError },
      401: { description: 'invalid_client: wrong credentials or suspended app', content: oauthError },
      403: {
        description:
          "access_denied (OAuth form): the client calls from outside its app's IP allow list; HTTPS_REQUIRED (error envelope): plain HTTP where HTTPS is required",
        content: {
          'application/json': {
            schema: z.union([ErrorEnvelope, oauthError['application/json'].schema]),
          },
        },
      },
      429: { description: 'rate_limit_exceeded, with Retry-After', content: oauthError },
      500: { description: 'server_error: a fault of the service', content: oauthError },
    },
  });
}

const TokenRequestWire = z
  .object({
    grant_type: z.literal('client_credentials'),
    client_id: z.string(),
    client_secret: z.string(),
    scope: z.string().optional().openapi({ description: `Space-separated subset of the app's scopes: ${SCOPES.join(' ')}` }),
  })
  .openapi('TokenRequest');

const TokenResponseWire = z
  .object({
    access_token: z.string().openapi({ example: 'oat_...' }),
    token_type: z.literal('Bearer'),
    expires_in: z.literal(1800),
    scope: z.string(),
  })
  .openapi('TokenResponse');

const oauthError = {
  'application/json': {
    schema: z
      .object({
        error: z.enum(['invalid_request', 'unsupported_grant_type', 'invalid_client', 'invalid_scope', 'access_denied', 'rate_limit_exceeded', 'server_error']),
        error_description: z.string().optional(),
      })
      .openapi('OAuthError'),
  },
};

/** The body as form-urlencoded or JSON, with HTTP Basic client authentication allowed (RFC 6749 §2.3.1). */
async function readTokenRequest(c: Context<HttpEnv>): Promise<TokenRequest> {
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
