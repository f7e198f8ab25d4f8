import type { OpenAPIHono } from '@hono/zod-openapi';
import type { HttpEnv } from '../../env.js';
import * as handlers from './handlers.js';
import * as routes from './routes.js';

export { reservationChangeRoutes } from './changes.js';

/**
 * The reservation endpoints of docs/spec/channel-api.md §4.8, an OTA-style face of the booking service: create with a
 * nested guest (one room or several sharing one confirmation number), look up by id,
 * confirmation number, check-in date or guest e-mail, change the guest, special requests and
 * arrival time, cancel in whole or in part. The rules are in src/services/reservations/; the
 * voucher, date change and fee preview of a reservation have routes of their own (the date change
 * and fee preview in changes.ts). Registered in this order (the OpenAPI document follows it).
 */
export function reservationRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(routes.createRoute, handlers.create);
  app.openapi(routes.listRoute, handlers.list);
  app.openapi(routes.getRoute, handlers.get);
  app.openapi(routes.patchRoute, handlers.patch);
  app.openapi(routes.cancelRoute, handlers.cancel);
  app.openapi(routes.cancelRoomRoute, handlers.cancelRoom);
}
