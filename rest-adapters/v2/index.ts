import { OpenAPIHono } from '@hono/zod-openapi';
import { SCOPES } from '../../src/services/scopes.js';
import type { AppDeps } from '../../src/context.js';
import { errorResponse, invalidRequestFrom, v2Error } from '../envelope.js';
import { authContext, type HttpEnv } from '../http.js';
import { v2ContentRoutes } from './content.js';
import { v2BookingRoutes } from './bookings.js';
import { offerRoutes } from './offers.js';

/**
 * REST v2 under /api/channel/v2 (spec §4.6, §7, §9; DECISIONS.md "v2 details") and its OpenAPI
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

  // Spec §4.6 names X-Api-Key; a Bearer token from /channel/v1/oauth/token works as well (the
  // same credential machinery as v1; docs/decisions.md "v2").
  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKeyAuth', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'A channel API key (the same as v1); carries all scopes of its app',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'OAuth2', {
    type: 'oauth2',
    description: 'client_credentials at /channel/v1/oauth/token; send the token as Authorization: Bearer oat_...',
    flows: {
      clientCredentials: {
        tokenUrl: '/channel/v1/oauth/token',
        scopes: Object.fromEntries(SCOPES.map((s) => [s, s])),
      },
    },
  });

  // Registered before the credential check, so it needs none (Hono runs handlers in order).
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Channel API v2',
      version: '2.0.0',
      description:
        'Content with string ids and page tokens, and the link-chained flow: availability, price check, book, retrieve, cancel. ' +
        'Follow the links as given; never assemble their parameters.',
    },
    servers: [{ url: '/api/channel/v2' }],
  });

  app.use('*', authContext(deps));

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
