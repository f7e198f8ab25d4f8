import type { OpenAPIHono } from '@hono/zod-openapi';
import type { HttpEnv } from '../../env.js';
import * as handlers from './handlers.js';
import * as routes from './routes.js';

/**
 * v1 bookings (docs/spec/channel-api.md §4.5): create from a book_token, list, read, modify, preview and cancel, and
 * the two endpoints the contract keeps unimplemented (501). Registered in this order (the OpenAPI
 * document follows it).
 */
export function bookingRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(routes.createRoute, handlers.create);
  app.openapi(routes.listRoute, handlers.list);
  app.openapi(routes.getRoute, handlers.get);
  app.openapi(routes.patchRoute, handlers.patch);
  app.openapi(routes.feeRoute, handlers.fee);
  app.openapi(routes.policyRoute, handlers.policy);
  app.openapi(routes.cancelRoute, handlers.cancel);
  app.openapi(routes.voucherRoute, handlers.voucher);
  app.openapi(routes.taxInvoicesRoute, handlers.taxInvoices);
}
