import { z } from 'zod';
import {
  ATTEMPT_LOG_SHOWN,
  deliveryCounts,
  deliveryCursor,
  deliveryLogs,
  getDeliveries,
  getWebhooks,
  type DeliveryView,
  type WebhookAttempt,
  type WebhookView,
} from '../services/webhooks/index.js';
import type { BookingEventType } from '../services/bookings/index.js';
import { operationScopes } from '../services/access/index.js';
import type { RequestContext } from '../context.js';
import { BookingEventTypeEnum } from './bookingTypes.js';
import { builder } from './builder.js';
import { connectionArgs, countedConnection, PAGE_SIZE, type ConnectionPage } from './connections.js';
import { serviceEnum } from './enums.js';
import { resolveCursorConnection, type DefaultConnectionArguments } from '@pothos/plugin-relay';

/**
 * Webhook subscriptions and their deliveries as Nodes (REST: /channel/v1/webhooks), and a
 * webhook's delivery log as a connection of the webhook. Their root fields are in
 * src/schema/webhooks.ts.
 */

const WebhookStatus = serviceEnum(
  'WebhookStatus',
  ['active', 'disabled'] as const,
  'ACTIVE: deliveries go out. DISABLED: deliveries are held (by the channel, or after a delivery failed for its whole retry schedule)',
);

export const DELIVERY_STATUSES = ['pending', 'held', 'delivered', 'failed'] as const;

export const WebhookDeliveryStatus = serviceEnum(
  'WebhookDeliveryStatus',
  DELIVERY_STATUSES,
  'PENDING: not yet delivered, retried on its schedule. HELD: waiting while the webhook is disabled (enabling it sends it). ' +
    'DELIVERED: a 2xx answer. FAILED: every attempt failed',
);

export const WebhookRef = builder.loadableNodeRef('WebhookEndpoint', {
  id: { resolve: (w: WebhookView) => w.id },
  load: (ids: string[], ctx: RequestContext) => getWebhooks(ctx, ids),
});

export const WebhookDeliveryRef = builder.loadableNodeRef('WebhookDelivery', {
  id: { resolve: (d: DeliveryView) => d.id },
  load: (ids: string[], ctx: RequestContext) => getDeliveries(ctx, ids),
});

const WebhookAttemptRef = builder.objectRef<WebhookAttempt>('WebhookAttempt').implement({
  description: 'One attempt to deliver',
  fields: (t) => ({
    attempt: t.exposeInt('attempt', { description: '1 for the first' }),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    durationMs: t.exposeInt('durationMs'),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: "The receiver's HTTP status; null when none came" }),
    responseBody: t.exposeString('responseBody', { nullable: true, description: "The first kilobyte of the receiver's answer" }),
    error: t.exposeString('error', { nullable: true, description: 'Why the attempt failed (non-2xx, timeout, refused address); null on success' }),
  }),
});

WebhookDeliveryRef.implement({
  description: 'One message to one webhook, with its attempts (scopes channels:write and reservations:read: its body is a booking record)',
  fields: (t) => ({
    deliveryId: t.exposeID('id', { description: 'The delivery id REST uses: the webhook-id header, the same on every attempt and replay' }),
    webhookId: t.id({ description: 'The webhookId of its webhook', resolve: (d) => d.endpointId }),
    webhook: t.field({ type: WebhookRef, nullable: true, description: 'Its webhook', resolve: (d) => d.endpointId }),
    eventId: t.id({ nullable: true, description: 'The booking event delivered (BookingEvent.id); null for a ping', resolve: (d) => d.eventId }),
    type: t.exposeString('type', { description: 'The event type as in the body: reservation.created, ..., or webhook.ping' }),
    status: t.field({ type: WebhookDeliveryStatus, resolve: (d) => d.status }),
    attempts: t.exposeInt('attempts', { description: 'Attempts made so far' }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'While pending, when the next attempt is due (not before); null while held and once delivered or failed',
      resolve: (d) => (d.status === 'pending' ? d.nextAttemptAt : null),
    }),
    deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    payload: t.string({ description: 'The exact JSON body sent: {"type","timestamp","data"}', resolve: (d) => d.body }),
    attemptLog: t.field({
      type: [WebhookAttemptRef],
      description: `The newest ${ATTEMPT_LOG_SHOWN} attempts, first first (\`attempts\` counts them all)`,
      resolve: (d) => d.attemptLog,
    }),
  }),
});

export const WebhookDeliveryConnection = countedConnection(
  WebhookDeliveryRef,
  'WebhookDeliveryConnection',
  "A webhook's deliveries, newest first, each with its attempts",
  'Deliveries the filter matches',
);

const deliveriesArgs = z.object({ status: z.enum(DELIVERY_STATUSES).nullish(), ...connectionArgs });
type DeliveriesArgs = z.infer<typeof deliveriesArgs>;

/**
 * The delivery logs of these webhooks for one set of arguments: one window of each, in two
 * queries for all of them (and, when totalCount is asked for, one count query for all of them).
 */
async function deliveryPages(ctx: RequestContext, webhookIds: string[], args: DeliveriesArgs): Promise<ConnectionPage<DeliveryView>[]> {
  const filter = { status: args.status ?? undefined };
  let counts: Promise<number[]> | undefined;
  const countAll = () => (counts ??= deliveryCounts(ctx, webhookIds, filter));
  let logs: Promise<DeliveryView[][]> | undefined;
  return Promise.all(
    webhookIds.map(async (id, i) => {
      const page = await resolveCursorConnection(
        { args: args as DefaultConnectionArguments, toCursor: (d) => deliveryCursor(d as DeliveryView), defaultSize: PAGE_SIZE.default, maxSize: PAGE_SIZE.max },
        // Every webhook's window is the same window: the first asks for all of them.
        async (window): Promise<DeliveryView[]> => (await (logs ??= deliveryLogs(ctx, webhookIds, filter, window)))[i]!,
      );
      return { ...(page as unknown as ConnectionPage<DeliveryView>), totalCount: async () => (await countAll())[i]! };
    }),
  );
}

WebhookRef.implement({
  description: 'A webhook subscription of the channel (REST: /channel/v1/webhooks). The signing secret is shown only by createWebhook',
  fields: (t) => ({
    webhookId: t.exposeID('id', { description: 'The webhook id REST uses' }),
    url: t.exposeString('url'),
    events: t.field({
      type: [BookingEventTypeEnum],
      description: 'The booking event types delivered here',
      resolve: (w) => w.events as BookingEventType[],
    }),
    description: t.exposeString('description', { nullable: true }),
    status: t.field({ type: WebhookStatus, resolve: (w) => w.status }),
    disabledReason: t.exposeString('disabledReason', { nullable: true, description: 'Why deliveries are held; null while active' }),
    disabledAt: t.expose('disabledAt', { type: 'DateTime', nullable: true }),
    lastSuccessAt: t.expose('lastSuccessAt', { type: 'DateTime', nullable: true, description: 'The last 2xx answer' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    deliveries: t.loadable({
      type: WebhookDeliveryConnection,
      nullable: true,
      description:
        'The delivery log, newest first, each delivery with its attempts (REST: GET /channel/v1/webhooks/{id}/deliveries). ' +
        'Payloads are booking records: needs reservations:read as well as channels:write. The logs of every webhook of a ' +
        'page are read together',
      authScopes: operationScopes('webhook.deliveries'),
      args: { status: t.arg({ type: WebhookDeliveryStatus }), ...t.arg.connectionArgs() },
      validate: { schema: deliveriesArgs },
      byPath: true,
      load: (ids: string[], ctx: RequestContext, args) => deliveryPages(ctx, ids, args as DeliveriesArgs),
      resolve: (w) => w.id,
    }),
  }),
});

export const WebhookConnection = countedConnection(WebhookRef, 'WebhookEndpointConnection', "The channel's webhooks, oldest first", 'Webhooks of the channel');
