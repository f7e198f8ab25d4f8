import type { OpenAPIHono } from '@hono/zod-openapi';
import type { HttpEnv } from '../../env.js';
import * as handlers from './handlers.js';
import * as routes from './routes.js';

/**
 * v1 webhook subscriptions (docs/spec/DECISIONS.md, Webhooks; scope channels:write): create (the signing
 * secret is shown once), list, read, change, delete; a test ping; the delivery log and the replay
 * of a delivery, which carry booking records and so need reservations:read too (DELIVERY_SCOPES).
 * The rules live in src/services/webhooks/, shared with GraphQL. Registered in this order (the
 * OpenAPI document follows it).
 */
export function webhookRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(routes.createRoute, handlers.create);
  app.openapi(routes.listRoute, handlers.list);
  app.openapi(routes.getRoute, handlers.get);
  app.openapi(routes.patchRoute, handlers.patch);
  app.openapi(routes.deleteRoute, handlers.remove);
  app.openapi(routes.pingRoute, handlers.ping);
  app.openapi(routes.deliveriesRoute, handlers.deliveries);
  app.openapi(routes.deliveryRoute, handlers.delivery);
  app.openapi(routes.replayRoute, handlers.replay);
}
