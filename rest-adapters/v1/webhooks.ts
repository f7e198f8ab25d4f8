import { OpenAPIHono, z } from '@hono/zod-openapi';
import { BOOKING_EVENT_TYPES } from '../../src/services/bookings/states.js';
import {
  createWebhook,
  deleteWebhook,
  DELIVERY_SCOPES,
  getDelivery,
  getWebhook,
  listDeliveries,
  listWebhooks,
  MAX_WEBHOOKS_PER_CHANNEL,
  pingWebhook,
  replayDelivery,
  updateWebhook,
  webhookRules,
  type DeliveryView,
  type WebhookView,
} from '../../src/services/webhooks/endpoints.js';
import { dataEnvelope, errorResponses, Meta, ok } from '../envelope.js';
import { scopedRoute, type HttpEnv } from '../http.js';
import { intParam } from '../params.js';
import { Pagination, paginationToWire } from './search.js';

/**
 * v1 webhook subscriptions (DECISIONS.md, Webhooks; scope channels:write): create (the signing
 * secret is shown once), list, read, change, delete; a test ping; the delivery log and the replay
 * of a delivery, which carry booking records and so need reservations:read too (DELIVERY_SCOPES).
 * The rules live in src/services/webhooks.ts, shared with GraphQL.
 */

const SCOPE = 'channels:write';
const TAGS = ['Webhooks'];

const WebhookWire = z
  .object({
    id: z.uuid(),
    url: z.string().openapi({ example: 'https://partner.example/hooks/channel' }),
    events: z.array(z.enum(BOOKING_EVENT_TYPES)).openapi({ description: 'The booking event types delivered here' }),
    description: z.string().nullable(),
    status: z.enum(['active', 'disabled']).openapi({
      description: 'disabled: deliveries are held (by the channel, or after one failed for its whole retry schedule)',
    }),
    disabled_reason: z.string().nullable(),
    disabled_at: z.iso.datetime().nullable(),
    last_success_at: z.iso.datetime().nullable().openapi({ description: 'The last delivery answered with a 2xx' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Webhook');

const CreatedWebhookWire = WebhookWire.extend({
  secret: z.string().openapi({
    description: 'The Standard Webhooks signing secret; shown only in this response',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }),
}).openapi('CreatedWebhook');

const eventsField = webhookRules.events.openapi({ description: 'Booking event types, each once; omitted: all of them' });

const CreateWebhookWire = z
  .object({
    url: webhookRules.url.openapi({
      description:
        'Where deliveries are POSTed: a public address only (unless WEBHOOK_ALLOW_PRIVATE_URLS is set, for local receivers); ' +
        'https only in production',
      example: 'https://partner.example/hooks/channel',
    }),
    events: eventsField.optional(),
    description: webhookRules.description.optional().openapi({ description: 'At most 200 characters, no NUL character' }),
  })
  .strict()
  .openapi('CreateWebhook');

const UpdateWebhookWire = z
  .object({
    url: webhookRules.url.optional(),
    events: eventsField.optional(),
    description: webhookRules.description.optional().openapi({ description: 'null clears it' }),
    enabled: z.boolean().optional().openapi({
      description: 'false holds deliveries (status disabled; they are `held` in the log); true resumes them, and held deliveries go out at once',
    }),
  })
  .strict()
  .refine((body) => Object.values(body).some((v) => v !== undefined), { message: 'give at least one field to change' })
  .openapi('UpdateWebhook');

const AttemptWire = z
  .object({
    attempt: z.int().openapi({ description: '1 for the first attempt; counting goes on across replays' }),
    started_at: z.iso.datetime(),
    duration_ms: z.int(),
    status_code: z.int().nullable().openapi({ description: "The receiver's HTTP status; null when none came" }),
    response_body: z.string().nullable().openapi({ description: "The first kilobyte of the receiver's answer" }),
    error: z.string().nullable().openapi({ example: 'HTTP 500' }),
  })
  .openapi('WebhookAttempt');

const PayloadWire = z
  .object({
    type: z.string().openapi({ example: 'reservation.created' }),
    timestamp: z.iso.datetime(),
    data: z.record(z.string(), z.unknown()).openapi({ description: 'The booking record (a ping: {"webhook_id"})' }),
  })
  .openapi('WebhookPayload');

const DeliveryWire = z
  .object({
    id: z.uuid().openapi({ description: 'The webhook-id header, the same on every attempt' }),
    webhook_id: z.uuid(),
    event_id: z.uuid().nullable().openapi({ description: 'The booking event; null for a ping' }),
    type: z.string().openapi({ example: 'reservation.created' }),
    status: z.enum(['pending', 'held', 'delivered', 'failed']).openapi({
      description:
        'pending: retried on its schedule; held: waiting while the webhook is disabled (enabling it sends it); ' +
        'delivered: a 2xx answer; failed: every attempt failed',
    }),
    attempts: z.int(),
    next_attempt_at: z.iso.datetime().nullable().openapi({ description: 'Set while pending (not while held)' }),
    delivered_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    payload: PayloadWire.openapi({ description: 'The JSON body sent, byte for byte the same on every attempt' }),
    attempt_log: z.array(AttemptWire),
  })
  .openapi('WebhookDelivery');

/** The error responses of the path ids, shared by the by-id routes. */
const BAD_ID = [400, 'VALIDATION_ERROR: an id is longer than 64 characters'] as const;
const NO_WEBHOOK = [404, "NOT_FOUND: no webhook of this channel has this id (another channel's is 404 too)"] as const;
const NO_DELIVERY = [404, 'NOT_FOUND: no such webhook of this channel, or no such delivery of it'] as const;

const WebhookId = z.object({ id: z.string().min(1).max(64).openapi({ description: 'Webhook id (uuid)' }) });
const DeliveryId = WebhookId.extend({
  delivery_id: z.string().min(1).max(64).openapi({ description: 'Delivery id (uuid)' }),
});

const DeliveriesQuery = z.object({
  page: intParam(z.int().min(1).max(1_000_000)).optional().default(1),
  per_page: intParam(z.int().min(1).max(100)).optional().default(20),
  status: z.enum(['pending', 'held', 'delivered', 'failed']).optional(),
});

function toWire(w: WebhookView): z.infer<typeof WebhookWire> {
  return {
    id: w.id,
    url: w.url,
    events: w.events as z.infer<typeof WebhookWire>['events'],
    description: w.description,
    status: w.status,
    disabled_reason: w.disabledReason,
    disabled_at: w.disabledAt?.toISOString() ?? null,
    last_success_at: w.lastSuccessAt?.toISOString() ?? null,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}

function deliveryToWire(d: DeliveryView): z.infer<typeof DeliveryWire> {
  return {
    id: d.id,
    webhook_id: d.endpointId,
    event_id: d.eventId,
    type: d.type,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.status === 'pending' ? d.nextAttemptAt.toISOString() : null,
    delivered_at: d.deliveredAt?.toISOString() ?? null,
    created_at: d.createdAt.toISOString(),
    payload: JSON.parse(d.body) as z.infer<typeof PayloadWire>,
    attempt_log: d.attemptLog.map((a) => ({
      attempt: a.attempt,
      started_at: a.startedAt.toISOString(),
      duration_ms: a.durationMs,
      status_code: a.statusCode,
      response_body: a.responseBody,
      error: a.error,
    })),
  };
}

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

const createRoute = scopedRoute(SCOPE, {
  method: 'post',
  path: '/webhooks',
  tags: TAGS,
  summary: 'Subscribe a URL to booking events',
  description:
    'Returns the webhook with its signing secret, shown only here. Deliveries follow Standard Webhooks (webhook-id, ' +
    'webhook-timestamp, webhook-signature headers) and are retried for more than 24 hours. 400 for a URL the environment ' +
    `refuses (a non-public address; in production, anything but https); 409 WEBHOOK_LIMIT_REACHED beyond ${MAX_WEBHOOKS_PER_CHANNEL} per channel.`,
  request: { body: { required: true, content: json(CreateWebhookWire) } },
  responses: {
    201: {
      description: 'The webhook and its secret',
      headers: { Location: { description: 'The webhook', schema: { type: 'string' } } },
      content: json(dataEnvelope(CreatedWebhookWire)),
    },
    ...errorResponses(
      [400, 'VALIDATION_ERROR: a bad field (details.fields), a URL the environment refuses, or a malformed JSON body'],
      401,
      403,
      [409, `WEBHOOK_LIMIT_REACHED: at most ${MAX_WEBHOOKS_PER_CHANNEL} webhooks per channel`],
      413,
      429,
    ),
  },
});

const listRoute = scopedRoute(SCOPE, {
  method: 'get',
  path: '/webhooks',
  tags: TAGS,
  summary: "The channel's webhooks, oldest first",
  responses: {
    200: { description: 'Every webhook of the channel (never the secret)', content: json(dataEnvelope(z.array(WebhookWire))) },
    ...errorResponses(401, 403, 429),
  },
});

const getRoute = scopedRoute(SCOPE, {
  method: 'get',
  path: '/webhooks/{id}',
  tags: TAGS,
  summary: 'One webhook',
  request: { params: WebhookId },
  responses: {
    200: { description: 'The webhook', content: json(dataEnvelope(WebhookWire)) },
    ...errorResponses(BAD_ID, 401, 403, NO_WEBHOOK, 429),
  },
});

const patchRoute = scopedRoute(SCOPE, {
  method: 'patch',
  path: '/webhooks/{id}',
  tags: TAGS,
  summary: 'Change a webhook, or hold and resume its deliveries',
  description: 'Omitted fields stay as they are; description null clears it. enabled true resumes a disabled webhook.',
  request: { params: WebhookId, body: { required: true, content: json(UpdateWebhookWire) } },
  responses: {
    200: { description: 'The updated webhook', content: json(dataEnvelope(WebhookWire)) },
    ...errorResponses(
      [400, 'VALIDATION_ERROR: a bad field or id (details.fields), a URL the environment refuses, or a malformed JSON body'],
      401,
      403,
      NO_WEBHOOK,
      413,
      429,
    ),
  },
});

const deleteRoute = scopedRoute(SCOPE, {
  method: 'delete',
  path: '/webhooks/{id}',
  tags: TAGS,
  summary: 'Delete a webhook',
  description: 'Its delivery log goes with it; deliveries not yet made are dropped.',
  request: { params: WebhookId },
  responses: {
    204: { description: 'Deleted' },
    ...errorResponses(BAD_ID, 401, 403, NO_WEBHOOK, 429),
  },
});

const pingRoute = scopedRoute(SCOPE, {
  method: 'post',
  path: '/webhooks/{id}/ping',
  tags: TAGS,
  summary: 'Send a webhook.ping now',
  description:
    'One signed attempt, made before answering, never retried; works on a disabled webhook too. Check the receiver and its ' +
    'signature check with it: status delivered (2xx) or failed, with the attempt.',
  request: { params: WebhookId },
  responses: {
    200: { description: 'The ping delivery with its attempt', content: json(dataEnvelope(DeliveryWire)) },
    ...errorResponses(BAD_ID, 401, 403, NO_WEBHOOK, 429),
  },
});

const deliveriesRoute = scopedRoute(DELIVERY_SCOPES, {
  method: 'get',
  path: '/webhooks/{id}/deliveries',
  tags: TAGS,
  summary: "A webhook's deliveries, newest first, each with its attempts",
  description: 'Each payload is the booking record sent, guest details included: the route needs reservations:read as well as channels:write.',
  request: { params: WebhookId, query: DeliveriesQuery },
  responses: {
    200: {
      description: 'A page of deliveries',
      content: json(z.object({ data: z.array(DeliveryWire), pagination: Pagination, meta: Meta })),
    },
    ...errorResponses([400, 'VALIDATION_ERROR: a bad id or query parameter (details.fields)'], 401, 403, NO_WEBHOOK, 429),
  },
});

const deliveryRoute = scopedRoute(DELIVERY_SCOPES, {
  method: 'get',
  path: '/webhooks/{id}/deliveries/{delivery_id}',
  tags: TAGS,
  summary: 'One delivery with its attempts',
  description: 'The payload is the booking record sent, guest details included: the route needs reservations:read as well as channels:write.',
  request: { params: DeliveryId },
  responses: {
    200: { description: 'The delivery', content: json(dataEnvelope(DeliveryWire)) },
    ...errorResponses(BAD_ID, 401, 403, NO_DELIVERY, 429),
  },
});

const replayRoute = scopedRoute(DELIVERY_SCOPES, {
  method: 'post',
  path: '/webhooks/{id}/deliveries/{delivery_id}/replay',
  tags: TAGS,
  summary: 'Send a delivered or failed delivery again',
  description:
    'The same webhook-id and body, with a fresh retry schedule. 409 DELIVERY_PENDING while it is still being retried ' +
    '(details.next_attempt_at); 409 DELIVERY_HELD for a held one (enabling the webhook sends it); 409 WEBHOOK_DISABLED: ' +
    'enable the webhook first. The body is a booking record: the route needs reservations:read as well as channels:write.',
  request: { params: DeliveryId },
  responses: {
    202: { description: 'The delivery, pending again', content: json(dataEnvelope(DeliveryWire)) },
    ...errorResponses(
      BAD_ID,
      401,
      403,
      NO_DELIVERY,
      [409, 'DELIVERY_PENDING (details.next_attempt_at), DELIVERY_HELD or WEBHOOK_DISABLED'],
      429,
    ),
  },
});

export function webhookRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(createRoute, async (c) => {
    const b = c.req.valid('json');
    const { webhook, secret } = await createWebhook(c.get('ctx'), { url: b.url, events: b.events, description: b.description });
    c.header('Location', `/channel/v1/webhooks/${webhook.id}`);
    return ok(c, { ...toWire(webhook), secret }, 201);
  });

  app.openapi(listRoute, async (c) => ok(c, (await listWebhooks(c.get('ctx'))).map(toWire)));

  app.openapi(getRoute, async (c) => ok(c, toWire(await getWebhook(c.get('ctx'), c.req.valid('param').id))));

  app.openapi(patchRoute, async (c) => {
    const b = c.req.valid('json');
    const webhook = await updateWebhook(c.get('ctx'), c.req.valid('param').id, {
      url: b.url,
      events: b.events,
      description: b.description,
      enabled: b.enabled,
    });
    return ok(c, toWire(webhook));
  });

  app.openapi(deleteRoute, async (c) => {
    await deleteWebhook(c.get('ctx'), c.req.valid('param').id);
    return c.body(null, 204);
  });

  app.openapi(pingRoute, async (c) => ok(c, deliveryToWire(await pingWebhook(c.get('ctx'), c.req.valid('param').id))));

  app.openapi(deliveriesRoute, async (c) => {
    const q = c.req.valid('query');
    const page = await listDeliveries(c.get('ctx'), c.req.valid('param').id, { status: q.status, page: q.page, perPage: q.per_page });
    return ok(c, page.items.map(deliveryToWire), 200, { pagination: paginationToWire(page) });
  });

  app.openapi(deliveryRoute, async (c) => {
    const p = c.req.valid('param');
    return ok(c, deliveryToWire(await getDelivery(c.get('ctx'), p.id, p.delivery_id)));
  });

  app.openapi(replayRoute, async (c) => {
    const p = c.req.valid('param');
    return ok(c, deliveryToWire(await replayDelivery(c.get('ctx'), p.id, p.delivery_id)), 202);
  });
}
