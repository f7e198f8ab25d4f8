import { createWebhook, deleteWebhook, getDelivery, getWebhook, listDeliveries, listWebhooks, pingWebhook, replayDelivery, updateWebhook } from '../../../src/services/webhooks/index.js';
import { ok } from '../../envelope.js';
import type { AppRouteHandler } from '../../env.js';
import { paginationToWire } from '../search/wire.js';
import type * as routes from './routes.js';
import { deliveryToWire, toWire } from './wire.js';

/** v1 webhook handlers: parse, call the webhook service, map to the wire. */

export const create: AppRouteHandler<typeof routes.createRoute> = async (c) => {
  const b = c.req.valid('json');
  const { webhook, secret } = await createWebhook(c.get('ctx'), { url: b.url, events: b.events, description: b.description });
  c.header('Location', `/channel/v1/webhooks/${webhook.id}`);
  return ok(c, { ...toWire(webhook), secret }, 201);
};

export const list: AppRouteHandler<typeof routes.listRoute> = async (c) => ok(c, (await listWebhooks(c.get('ctx'))).map(toWire));

export const get: AppRouteHandler<typeof routes.getRoute> = async (c) =>
  ok(c, toWire(await getWebhook(c.get('ctx'), c.req.valid('param').id)));

export const patch: AppRouteHandler<typeof routes.patchRoute> = async (c) => {
  const b = c.req.valid('json');
  const webhook = await updateWebhook(c.get('ctx'), c.req.valid('param').id, {
    url: b.url,
    events: b.events,
    description: b.description,
    enabled: b.enabled,
  });
  return ok(c, toWire(webhook));
};

export const remove: AppRouteHandler<typeof routes.deleteRoute> = async (c) => {
  await deleteWebhook(c.get('ctx'), c.req.valid('param').id);
  return c.body(null, 204);
};

export const ping: AppRouteHandler<typeof routes.pingRoute> = async (c) =>
  ok(c, deliveryToWire(await pingWebhook(c.get('ctx'), c.req.valid('param').id)));

export const deliveries: AppRouteHandler<typeof routes.deliveriesRoute> = async (c) => {
  const q = c.req.valid('query');
  const page = await listDeliveries(c.get('ctx'), c.req.valid('param').id, { status: q.status, page: q.page, perPage: q.per_page });
  return ok(c, page.items.map(deliveryToWire), 200, { pagination: paginationToWire(page) });
};

export const delivery: AppRouteHandler<typeof routes.deliveryRoute> = async (c) => {
  const p = c.req.valid('param');
  return ok(c, deliveryToWire(await getDelivery(c.get('ctx'), p.id, p.delivery_id)));
};

export const replay: AppRouteHandler<typeof routes.replayRoute> = async (c) => {
  const p = c.req.valid('param');
  return ok(c, deliveryToWire(await replayDelivery(c.get('ctx'), p.id, p.delivery_id)), 202);
};
