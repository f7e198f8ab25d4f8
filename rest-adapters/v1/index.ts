import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps } from '../../src/context.js';
import { apiDocumentRoutes, SCOPE_DESCRIPTIONS } from '../docs.js';
import { restRateLimit } from '../rateLimit.js';
import type { HttpEnv } from '../env.js';
import { authContext } from '../http.js';
import { router } from '../routing.js';
import { oauthRoutes } from '../oauth/token.js';
import { appRoutes } from './apps.js';
import { batchRatesRoutes } from './search/batchRates.js';
import { bookingRoutes } from './bookings/index.js';
import { channelRoutes } from './channels.js';
import { contentRoutes } from './content.js';
import { propertyRoutes } from './properties.js';
import { reservationChangeRoutes, reservationRoutes } from './reservations/index.js';
import { reservationVoucherRoutes } from './reservationVouchers.js';
import { searchRoutes } from './search/index.js';
import { webhookRoutes } from './webhooks/index.js';

/** REST v1 under /channel/v1 (docs/spec/channel-api.md §4.1 to §4.5) and its OpenAPI 3.1 document. */
export function v1Routes(deps: AppDeps): OpenAPIHono<HttpEnv> {
  const app = router();

  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKeyAuth', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'A channel API key; carries all scopes of its app. Keep it on servers.',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'OAuth2', {
    type: 'oauth2',
    description:
      'client_credentials at POST /channel/v1/oauth/token (client_id and client_secret in the body or HTTP Basic); ' +
      'send the token as Authorization: Bearer oat_... It lasts 1800 seconds; there is no refresh token. ' +
      'POST /channel/v1/oauth/revoke (RFC 7009) revokes it earlier.',
    flows: {
      clientCredentials: {
        tokenUrl: '/channel/v1/oauth/token',
        scopes: SCOPE_DESCRIPTIONS,
      },
    },
  });

  // Registered before the credential check, so they need none (Hono runs handlers in order).
  oauthRoutes(app, deps);
  apiDocumentRoutes(
    app,
    {
      openapi: '3.1.0',
      info: {
        title: 'Channel API v1',
        version: '1.0.0',
        description: V1_DESCRIPTION,
      },
      servers: [{ url: '/channel/v1', description: 'This service (production or sandbox, as deployed)' }],
      tags: V1_TAGS,
    },
    { title: 'Channel API v1', errors: 'v1', otherDocs: { label: 'v2 docs', href: '../api/channel/v2/docs' } },
  );

  app.use('*', authContext(deps));
  app.use('*', restRateLimit(deps, 'rest_v1'));
  channelRoutes(app);
  appRoutes(app);
  propertyRoutes(app);
  contentRoutes(app);
  searchRoutes(app);
  batchRatesRoutes(app);
  bookingRoutes(app);
  reservationRoutes(app);
  reservationChangeRoutes(app);
  reservationVoucherRoutes(app);
  webhookRoutes(app);
  return app;
}

const V1_DESCRIPTION = `Search, price-check, book, retrieve and cancel lodging through the channel API. v1 chains the calls by tokens:

1. \`GET /search/availability/{propertyId}\` gives each bookable rate a \`price_check_token\`.
2. \`GET /search/price-check?token=...\` re-verifies the price with the provider and gives a single-use \`book_token\` (30 minutes).
3. \`POST /bookings\` books it. The charge is always the amount signed into the \`book_token\`.

**Authentication.** Every route except \`POST /oauth/token\`, \`POST /oauth/revoke\`, this document and the docs page takes either
\`X-Api-Key: <key>\` (all scopes of its app) or \`Authorization: Bearer oat_...\` from the token endpoint
(client_credentials, 1800 seconds, the scopes it was issued with). Without a valid one: 401 \`UNAUTHORIZED\`.
A token is refused from the moment it is revoked: by the partner (\`POST /oauth/revoke\`, RFC 7009), or by the
operator rotating the client secret or suspending the app (resuming does not revive tokens).
Without the route's scopes (\`x-required-scopes\` on each operation, every one needed; a webhook's delivery log and
replays need \`channels:write\` and \`reservations:read\`): 403 \`INSUFFICIENT_SCOPE\` naming the missing one in
\`details.required_scope\`.
From an address outside the app's IP allow list (\`PUT /apps/me/ip-allow-list\`): 403 \`IP_NOT_ALLOWED\`.
Plain HTTP where the deployment requires HTTPS: 403 \`HTTPS_REQUIRED\`.

**Envelopes.** Successes are \`{"data": ..., "meta": {"request_id", "timestamp"}}\` (lists add \`pagination\`,
search adds \`search_context\`); content files are bare JSON arrays or CSV. Errors are
\`{"error": {"code", "message", "details"}, "meta": {...}}\`, except the token and revocation endpoints, which answer
in the RFC 6749 form \`{"error", "error_description"}\`. Every response carries \`X-Request-Id\` (= \`meta.request_id\`).

**Limits.** Requests are limited per channel by tier (sandbox 60, starter 600 per minute; the channel's
values are \`rate_limit\` of \`GET /channels/me\`), reported in \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\` (seconds); beyond them 429 \`RATE_LIMIT_EXCEEDED\` with \`Retry-After\`. The token and
revocation endpoints together allow 20 requests per 60 seconds per client address. Request bodies: at most 1 MiB (413); JSON bodies must be
sent as \`application/json\` (415). An answer not ready within the request deadline (30 s) is 504 \`REQUEST_TIMEOUT\`.

**Repeating a request safely.** \`POST /bookings\`, \`PUT /bookings/{id}/cancel\`, \`POST /reservations\`,
\`POST /reservations/{id}/cancel\`, \`DELETE /reservations/{id}/rooms/{booking_id}\`,
\`POST /reservations/{id}/modify-dates\` and \`POST /reservations/{id}/send-voucher\` take an optional
\`Idempotency-Key\`: the same key with the same body gives the first response again for 24 hours
(\`Idempotent-Replayed: true\`); with another body, 409 \`IDEMPOTENCY_KEY_REUSED\`.

**Sandbox.** The header \`X-Test-Scenario\` on a search, price-check or booking request forces an outcome:
\`price_changed\`, \`sold_out\`, \`upstream_error\` (502), \`upstream_timeout\` (502), \`pending\`. Production ignores it.
The sandbox never charges the balance.

v2 (link-chained, string ids, page tokens) is described at \`/api/channel/v2/openapi.json\`; v1 remains supported.`;

const V1_TAGS = [
  { name: 'OAuth', description: 'Access tokens for the client_credentials grant, and their revocation (RFC 7009)' },
  { name: 'Channel', description: 'The channel linked to the credential' },
  { name: 'Content', description: 'Properties, room types and rate plans (v1 property ids are integers), and content files' },
  { name: 'Search', description: 'Availability, rates and the price check that issues book_tokens' },
  { name: 'Bookings', description: 'Book from a book_token; read, modify, preview the fee, cancel' },
  { name: 'Tax invoices', description: 'Planned; not implemented in v1' },
  { name: 'Webhooks', description: 'Booking event subscriptions (Standard Webhooks signatures), their delivery log and replays' },
];
