import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps } from '../../src/context.js';
import { errorResponse, invalidRequestFrom, v2Error } from '../envelope.js';
import { apiDocumentRoutes, SCOPE_DESCRIPTIONS } from '../docs.js';
import { restRateLimit } from '../rateLimit.js';
import type { HttpEnv } from '../env.js';
import { authContext } from '../http.js';
import { v2ContentRoutes } from './content.js';
import { v2BookingRoutes } from './bookings.js';
import { offerRoutes } from './offers.js';

/**
 * REST v2 under /api/channel/v2 (docs/spec/channel-api.md §4.6, §7, §9; docs/spec/DECISIONS.md "v2 details") and its OpenAPI
 * 3.1 document. The same services, credentials, scopes and error envelope as v1; what differs is
 * the code of a bad request: 400 `INVALID_REQUEST` (with v1's `details.fields`), never
 * `VALIDATION_ERROR`, whether the route's schema, a service rule or a malformed JSON body refused it.
 */
export function v2Routes(deps: AppDeps): OpenAPIHono<HttpEnv> {
  const app = new OpenAPIHono<HttpEnv>({
    defaultHook: (result) => {
      if (!result.success) throw invalidRequestFrom(result.error, result.target);
    },
  });
  // Every error of a v2 route is answered here, so a VALIDATION_ERROR from a service becomes
  // INVALID_REQUEST too. An unknown path under the base falls through to the application's 404.
  app.onError((error, c) => errorResponse(c, v2Error(error)));

  // docs/spec/channel-api.md §4.6 names X-Api-Key; a Bearer token from /channel/v1/oauth/token works as well (the
  // same credential machinery as v1; docs/decisions.md "v2").
  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKeyAuth', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'A channel API key (the same as v1); carries all scopes of its app. Keep it on servers.',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'OAuth2', {
    type: 'oauth2',
    description:
      'client_credentials at /channel/v1/oauth/token; send the token as Authorization: Bearer oat_... ' +
      'POST /channel/v1/oauth/revoke (RFC 7009) revokes it before its 1800 seconds run out.',
    flows: {
      clientCredentials: {
        tokenUrl: '/channel/v1/oauth/token',
        scopes: SCOPE_DESCRIPTIONS,
      },
    },
  });

  // Registered before the credential check, so they need none (Hono runs handlers in order).
  apiDocumentRoutes(
    app,
    {
      openapi: '3.1.0',
      info: { title: 'Channel API v2', version: '2.0.0', description: V2_DESCRIPTION },
      servers: [{ url: '/api/channel/v2' }],
      tags: [
        { name: 'Booking flow', description: 'Availability, price check, book, retrieve, cancel: follow the links as given' },
        { name: 'Content', description: 'Properties and room types with string ids; the property list pages with page tokens' },
      ],
    },
    { title: 'Channel API v2', errors: 'v2', otherDocs: { label: 'v1 docs', href: '../../channel/v1/docs' } },
  );

  app.use('*', authContext(deps));
  app.use('*', restRateLimit(deps, 'rest_v2'));

  // ---- booking flow routes are registered here (offerRoutes(app), bookingRoutes(app)) ----
  // They come before the content routes: Hono tries matching routes in the order they were
  // registered, and GET /properties/availability would otherwise be taken by /properties/{id}
  // (and refused as a non-numeric id).
  offerRoutes(app);
  v2BookingRoutes(app);
  // ---- end of booking flow routes ----

  v2ContentRoutes(app);
  return app;
}

const V2_DESCRIPTION = `The link-chained flow and content with string ids. The same API key as v1
(\`X-Api-Key\`); a Bearer token from \`POST /channel/v1/oauth/token\` works as well.

1. \`GET /properties/availability\` gives each bookable rate a \`links.price_check\` (30 minutes).
2. Call that href as given: the price check answers \`matched\`, \`price_changed\` (the new prices) or \`sold_out\`, with \`links.book\`.
3. \`POST\` the book href with the guests: \`links.retrieve\` (never expires) and \`links.cancel\`.
4. Retrieve or cancel through those links.

Never assemble a link's parameters. After any token error (400 \`INVALID_TOKEN\`, 403 \`FORBIDDEN\`,
409 \`TOKEN_ALREADY_USED\`, 410 \`TOKEN_EXPIRED\`) restart at step 1.

**Bodies.** Successes are the objects themselves (no \`data\` envelope). Errors use the v1 envelope
\`{"error": {"code", "message", "details"}, "meta": {"request_id", "timestamp"}}\`; a bad request is 400
\`INVALID_REQUEST\` with \`details.fields\`. Every response carries \`X-Request-Id\`.

**Limits and retries.** The channel's rate limit is shared with v1 (\`X-RateLimit-*\` headers, 429 with \`Retry-After\`).
Booking and cancelling take an optional \`Idempotency-Key\` (24 hours). Bodies at most 1 MiB (413), JSON only (415).`;
