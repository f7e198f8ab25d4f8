import type { OpenAPIHono } from '@hono/zod-openapi';
import type { HttpEnv } from '../../env.js';
import * as handlers from './handlers.js';
import * as routes from './routes.js';
import { ImageWire } from '../../wire/properties.js';

/**
 * v1 search (docs/spec/channel-api.md §4.4): many properties, one property with price_check_tokens, detailed rates.
 * Amounts are numbers in the request currency's minor units (KRW has none); the channel is billed
 * in KRW, shown as billable amounts. Registered in this order (the OpenAPI document follows it).
 */
export function searchRoutes(app: OpenAPIHono<HttpEnv>) {
  // Registered as itself first: search items only hold it nullable, which would otherwise make the component nullable.
  app.openAPIRegistry.register('Image', ImageWire);
  app.openapi(routes.multiRoute, handlers.multi);
  app.openapi(routes.singleRoute, handlers.single);
  app.openapi(routes.priceCheckRoute, handlers.check);
  app.openapi(routes.ratesRoute, handlers.rates);
}
