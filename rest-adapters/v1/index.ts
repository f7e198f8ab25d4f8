import type { OpenAPIHono } from '@hono/zod-openapi';
import { SCOPES } from '../../src/services/scopes.js';
import type { AppDeps } from '../../src/context.js';
import { authContext, router, type HttpEnv } from '../http.js';
import { tokenRoute } from '../oauth/token.js';
import { bookingRoutes } from './bookings.js';
import { channelRoutes } from './channels.js';
import { contentRoutes } from './content.js';
import { propertyRoutes } from './properties.js';
import { searchRoutes } from './search.js';
import { webhookRoutes } from './webhooks.js';

/** REST v1 under /channel/v1 (spec §4.1 to §4.5) and its OpenAPI 3.1 document. */
export function v1Routes(deps: AppDeps): OpenAPIHono<HttpEnv> {
  const app = router();

  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKeyAuth', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'A channel API key; carries all scopes of its app',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'OAuth2', {
    type: 'oauth2',
    description: 'client_credentials; send the token as Authorization: Bearer oat_...',
    flows: {
      clientCredentials: {
        tokenUrl: '/channel/v1/oauth/token',
        scopes: Object.fromEntries(SCOPES.map((s) => [s, s])),
      },
    },
  });

  // Registered before the credential check, so they need none (Hono runs handlers in order).
  tokenRoute(app, deps);
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Channel API v1',
      version: '1.0.0',
      description: 'Search, price-check, book, retrieve and cancel lodging through the channel API.',
    },
    servers: [{ url: '/channel/v1' }],
  });

  app.use('*', authContext(deps));
  channelRoutes(app);
  propertyRoutes(app);
  contentRoutes(app);
  searchRoutes(app);
  bookingRoutes(app);
  webhookRoutes(app);
  return app;
}
