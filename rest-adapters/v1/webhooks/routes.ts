import { z } from '@hono/zod-openapi';
import { MAX_WEBHOOKS_PER_CHANNEL } from '../../../src/services/webhooks/index.js';
import { dataEnvelope, errorResponses, Meta } from '../../envelope.js';
import { scopedRoute } from '../../routing.js';
import { Pagination } from '../search/wire.js';
import {
  CreatedWebhookWire,
  CreateWebhookWire,
  DeliveriesQuery,
  DeliveryId,
  DeliveryWire,
  UpdateWebhookWire,
  WebhookId,
  WebhookWire,
} from './wire.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../src/services/kernel/index.js';

/** The OpenAPI definitions of v1 webhook subscriptions; wire shapes in wire.ts. */

const TAGS = ['Webhooks'];

/** The error responses of the path ids, shared by the by-id routes. */
const BAD_ID = [ValidationError, 'VALIDATION_ERROR: an id is longer than 64 characters'] as const;
const NO_WEBHOOK = [NotFoundError, "NOT_FOUND: no webhook of this channel has this id (another channel's is 404 too)"] as const;
const NO_DELIVERY = [NotFoundError, 'NOT_FOUND: no such webhook of this channel, or no such delivery of it'] as const;

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

export const createRoute = scopedRoute('webhook.create', {
  method: 'post',
  path: '/webhooks',
  operationId: 'createWebhook',
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
      [ValidationError, 'VALIDATION_ERROR: a bad field (details.fields), a URL the environment refuses, or a malformed JSON body'],
      [ConflictError, `WEBHOOK_LIMIT_REACHED: at most ${MAX_WEBHOOKS_PER_CHANNEL} webhooks per channel`],
    ),
  },
});

export const listRoute = scopedRoute('webhooks.list', {
  method: 'get',
  path: '/webhooks',
  operationId: 'listWebhooks',
  tags: TAGS,
  summary: "The channel's webhooks, oldest first",
  responses: {
    200: { description: 'Every webhook of the channel (never the secret)', content: json(dataEnvelope(z.array(WebhookWire))) },
  },
});

export const getRoute = scopedRoute('webhook.read', {
  method: 'get',
  path: '/webhooks/{id}',
  operationId: 'getWebhook',
  tags: TAGS,
  summary: 'One webhook',
  request: { params: WebhookId },
  responses: {
    200: { description: 'The webhook', content: json(dataEnvelope(WebhookWire)) },
    ...errorResponses(BAD_ID, NO_WEBHOOK),
  },
});

export const patchRoute = scopedRoute('webhook.update', {
  method: 'patch',
  path: '/webhooks/{id}',
  operationId: 'updateWebhook',
  tags: TAGS,
  summary: 'Change a webhook, or hold and resume its deliveries',
  description: 'Omitted fields stay as they are; description null clears it. enabled true resumes a disabled webhook.',
  request: { params: WebhookId, body: { required: true, content: json(UpdateWebhookWire) } },
  responses: {
    200: { description: 'The updated webhook', content: json(dataEnvelope(WebhookWire)) },
    ...errorResponses(
      [ValidationError, 'VALIDATION_ERROR: a bad field or id (details.fields), a URL the environment refuses, or a malformed JSON body'],
      NO_WEBHOOK,
    ),
  },
});

export const deleteRoute = scopedRoute('webhook.delete', {
  method: 'delete',
  path: '/webhooks/{id}',
  operationId: 'deleteWebhook',
  tags: TAGS,
  summary: 'Delete a webhook',
  description: 'Its delivery log goes with it; deliveries not yet made are dropped.',
  request: { params: WebhookId },
  responses: {
    204: { description: 'Deleted' },
    ...errorResponses(BAD_ID, NO_WEBHOOK),
  },
});

export const pingRoute = scopedRoute('webhook.ping', {
  method: 'post',
  path: '/webhooks/{id}/ping',
  operationId: 'pingWebhook',
  tags: TAGS,
  summary: 'Send a webhook.ping now',
  description:
    'One signed attempt, made before answering, never retried; works on a disabled webhook too. Check the receiver and its ' +
    'signature check with it: status delivered (2xx) or failed, with the attempt.',
  request: { params: WebhookId },
  responses: {
    200: { description: 'The ping delivery with its attempt', content: json(dataEnvelope(DeliveryWire)) },
    ...errorResponses(BAD_ID, NO_WEBHOOK),
  },
});

export const deliveriesRoute = scopedRoute('webhook.deliveries', {
  method: 'get',
  path: '/webhooks/{id}/deliveries',
  operationId: 'listWebhookDeliveries',
  tags: TAGS,
  summary: "A webhook's deliveries, newest first, each with its attempts",
  description: 'Each payload is the booking record sent, guest details included: the route needs reservations:read as well as channels:write.',
  request: { params: WebhookId, query: DeliveriesQuery },
  responses: {
    200: {
      description: 'A page of deliveries',
      content: json(z.object({ data: z.array(DeliveryWire), pagination: Pagination, meta: Meta })),
    },
    ...errorResponses([ValidationError, 'VALIDATION_ERROR: a bad id or query parameter (details.fields)'], NO_WEBHOOK),
  },
});

export const deliveryRoute = scopedRoute('webhook.delivery', {
  method: 'get',
  path: '/webhooks/{id}/deliveries/{delivery_id}',
  operationId: 'getWebhookDelivery',
  tags: TAGS,
  summary: 'One delivery with its attempts',
  description: 'The payload is the booking record sent, guest details included: the route needs reservations:read as well as channels:write.',
  request: { params: DeliveryId },
  responses: {
    200: { description: 'The delivery', content: json(dataEnvelope(DeliveryWire)) },
    ...errorResponses(BAD_ID, NO_DELIVERY),
  },
});

export const replayRoute = scopedRoute('webhook.replay', {
  method: 'post',
  path: '/webhooks/{id}/deliveries/{delivery_id}/replay',
  operationId: 'replayWebhookDelivery',
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
      NO_DELIVERY,
      [ConflictError, 'DELIVERY_PENDING (details.next_attempt_at), DELIVERY_HELD or WEBHOOK_DISABLED'],
    ),
  },
});
