import { z } from 'zod';
import { BOOKING_EVENT_TYPES, type BookingEventType } from '../services/bookings/index.js';
import {
  createWebhook,
  deleteWebhook,
  getDelivery,
  getWebhook,
  listDeliveries,
  listWebhooks,
  pingWebhook,
  replayDelivery,
  updateWebhook,
  webhookRules,
  type DeliveryView,
  type WebhookView,
  type WebhookAttempt,
} from '../services/webhooks/index.js';
import type { Page } from '../services/search/index.js';
import { builder } from './builder.js';
import { withGraphQLFields } from './errors.js';
import { orNull } from './orNull.js';
import { PaginationRef } from './search.js';
import { operationScopes } from '../services/access/index.js';

/**
 * Webhook subscriptions: the GraphQL twins of /channel/v1/webhooks, over the same service and the
 * same input rules (webhookRules). Every root field needs channels:write (docs/spec/DECISIONS.md); those that
 * read or resend deliveries (booking records) need reservations:read too (DELIVERY_SCOPES).
 *
 * Errors: authentication, scope and input validation are top-level errors with
 * `extensions.code`, as everywhere. An unknown webhook or delivery (or another channel's) is null
 * on the single-item queries and a top-level NOT_FOUND on mutations and on webhookDeliveries, as
 * the booking mutations do. The refusals of the service (WEBHOOK_LIMIT_REACHED, DELIVERY_PENDING,
 * DELIVERY_HELD, WEBHOOK_DISABLED) are top-level errors too, with the code and details REST gives: they are
 * refusals of a configuration call, not outcomes of a booking flow, and the service throws them as
 * plain ConflictErrors (no class of their own for a result union to match).
 */

// ---------------------------------------------------------------------------------------------
// Types

/**
 * The booking event types as GraphQL enum values: `reservation_created` stands for the event type
 * `reservation.created`. Also the type of Subscription.bookingEvents (src/schema/events.ts).
 */
export const BookingEventTypeEnum = builder.enumType('BookingEventType', {
  description: 'A booking event type; `reservation_created` is the event type `reservation.created` of webhook bodies',
  values: Object.fromEntries(BOOKING_EVENT_TYPES.map((type) => [type.replace('.', '_'), { value: type }])) as {
    [K in BookingEventType as K extends `${infer A}.${infer B}` ? `${A}_${B}` : never]: { value: K };
  },
});

const WebhookStatus = builder.enumType('WebhookStatus', {
  description: 'active: deliveries go out. disabled: deliveries are held (by the channel, or after a delivery failed for its whole retry schedule)',
  values: ['active', 'disabled'] as const,
});

const WebhookDeliveryStatus = builder.enumType('WebhookDeliveryStatus', {
  description:
    'pending: not yet delivered, retried on its schedule. held: waiting while the webhook is disabled (enabling it sends it). ' +
    'delivered: a 2xx answer. failed: every attempt failed',
  values: ['pending', 'held', 'delivered', 'failed'] as const,
});

export const WebhookRef = builder.objectRef<WebhookView>('Webhook').implement({
  description: 'A webhook subscription of the channel (REST: /channel/v1/webhooks). The signing secret is shown only by createWebhook',
  fields: (t) => ({
    id: t.exposeID('id'),
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
  }),
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

const WebhookDeliveryRef = builder.objectRef<DeliveryView>('WebhookDelivery').implement({
  description: 'One message to one webhook, with its attempts',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The webhook-id header, the same on every attempt and replay' }),
    webhookId: t.id({ resolve: (d) => d.endpointId }),
    eventId: t.id({ nullable: true, description: 'The booking event delivered; null for a ping', resolve: (d) => d.eventId }),
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
    attemptLog: t.field({ type: [WebhookAttemptRef], resolve: (d) => d.attemptLog }),
  }),
});

const WebhookDeliveryPageRef = builder.objectRef<Page<DeliveryView>>('WebhookDeliveryPage').implement({
  description: 'A page of deliveries, newest first',
  fields: (t) => ({
    items: t.field({ type: [WebhookDeliveryRef], resolve: (p) => p.items }),
    pagination: t.field({ type: PaginationRef, resolve: (p) => p }),
  }),
});

const CreateWebhookPayload = builder.objectRef<{ webhook: WebhookView; secret: string }>('CreateWebhookPayload').implement({
  fields: (t) => ({
    webhook: t.field({ type: WebhookRef, resolve: (p) => p.webhook }),
    secret: t.exposeString('secret', {
      description: 'The signing secret (whsec_...), shown this once: verify webhook-signature with it (Standard Webhooks)',
    }),
  }),
});

// ---------------------------------------------------------------------------------------------
// Inputs, validated with the rules REST uses (webhookRules)

const CreateWebhookInput = builder.inputType('CreateWebhookInput', {
  description: 'The body of POST /channel/v1/webhooks',
  fields: (t) => ({
    url: t.string({
      required: true,
      description:
        'Where deliveries are POSTed: a public address (unless the service allows private ones), https (http also in the ' +
        'sandbox), at most 2048 characters',
    }),
    events: t.field({ type: [BookingEventTypeEnum], description: 'Each type once; default: every booking event type' }),
    description: t.string({ description: 'At most 200 characters, no NUL character' }),
  }),
});

const UpdateWebhookInput = builder.inputType('UpdateWebhookInput', {
  description: 'Fields to change; omitted fields stay, null clears description (url and events cannot be cleared)',
  fields: (t) => ({
    url: t.string(),
    events: t.field({ type: [BookingEventTypeEnum] }),
    description: t.string(),
    enabled: t.boolean({ description: 'false holds deliveries (status held); true resumes a disabled webhook and sends what was held at once' }),
  }),
});

/** An optional GraphQL field: absent or null is left out. */
const optional = <T extends z.ZodType>(rule: T) => rule.nullish().transform((v) => v ?? undefined);

const id = z.string().min(1).max(64);

const createArgs = z.object({
  input: z.object({
    url: webhookRules.url,
    events: optional(webhookRules.events),
    description: optional(webhookRules.description),
  }),
});

const updateArgs = z.object({
  id,
  input: z
    .object({
      url: webhookRules.url.optional(),
      events: webhookRules.events.optional(),
      description: webhookRules.description.optional(),
      enabled: z.boolean().optional(),
    })
    .refine((v) => Object.values(v).some((x) => x !== undefined), 'give at least one field to change'),
});

const deliveriesArgs = z.object({
  webhookId: id,
  status: z.enum(['pending', 'held', 'delivered', 'failed']).nullish(),
  page: z.int().min(1).max(1_000_000),
  perPage: z.int().min(1).max(100),
});


/** The service names the URL `url` (the REST member); here it is the argument `input.url`. */
const inputFields = <T>(promise: Promise<T>): Promise<T> => withGraphQLFields('input', promise);

// ---------------------------------------------------------------------------------------------
// Root fields

builder.queryFields((t) => ({
  webhooks: t.field({
    type: [WebhookRef],
    description: "The channel's webhooks, oldest first (REST: GET /channel/v1/webhooks)",
    authScopes: operationScopes('webhooks.list'),
    resolve: (_root, _args, ctx) => listWebhooks(ctx),
  }),
  webhook: t.field({
    type: WebhookRef,
    nullable: true,
    description: 'One webhook, or null when the channel has none with this id',
    authScopes: operationScopes('webhook.read'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id }) },
    resolve: (_root, args, ctx) => orNull(getWebhook(ctx, String(args.id))),
  }),
  webhookDeliveries: t.field({
    type: WebhookDeliveryPageRef,
    description:
      'The delivery log of a webhook, newest first, each delivery with its attempts. An unknown webhook is a NOT_FOUND error. ' +
      'Payloads are booking records: needs reservations:read as well as channels:write',
    authScopes: operationScopes('webhook.deliveries'),
    args: {
      webhookId: t.arg.id({ required: true }),
      status: t.arg({ type: WebhookDeliveryStatus }),
      page: t.arg.int({ required: true, defaultValue: 1 }),
      perPage: t.arg.int({ required: true, defaultValue: 20, description: '1 to 100' }),
    },
    validate: { schema: deliveriesArgs },
    resolve: (_root, args, ctx) =>
      listDeliveries(ctx, String(args.webhookId), { status: args.status ?? undefined, page: args.page, perPage: args.perPage }),
  }),
  webhookDelivery: t.field({
    type: WebhookDeliveryRef,
    nullable: true,
    description: 'One delivery of a webhook, or null when there is none. Needs reservations:read as well as channels:write',
    authScopes: operationScopes('webhook.delivery'),
    args: { webhookId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ webhookId: id, id }) },
    resolve: (_root, args, ctx) => orNull(getDelivery(ctx, String(args.webhookId), String(args.id))),
  }),
}));

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: CreateWebhookPayload,
    description:
      'Subscribes a URL to booking events (REST: POST /channel/v1/webhooks); the signing secret is returned this once. ' +
      'It receives the events that happen afterwards. More than 20 webhooks: a WEBHOOK_LIMIT_REACHED error',
    authScopes: operationScopes('webhook.create'),
    args: { input: t.arg({ type: CreateWebhookInput, required: true }) },
    validate: { schema: createArgs },
    resolve: (_root, args, ctx) => inputFields(createWebhook(ctx, args.input as z.infer<typeof createArgs>['input'])),
  }),
  updateWebhook: t.field({
    type: WebhookRef,
    description: 'Changes a webhook, or disables and enables it',
    authScopes: operationScopes('webhook.update'),
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateWebhookInput, required: true }) },
    validate: { schema: updateArgs },
    resolve: (_root, args, ctx) =>
      inputFields(updateWebhook(ctx, String(args.id), args.input as z.infer<typeof updateArgs>['input'])),
  }),
  deleteWebhook: t.field({
    type: 'ID',
    description:
      'Deletes a webhook with its delivery log; deliveries not yet made are dropped (REST: DELETE /channel/v1/webhooks/{id}). ' +
      'Returns the id',
    authScopes: operationScopes('webhook.delete'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id }) },
    resolve: async (_root, args, ctx) => {
      await deleteWebhook(ctx, String(args.id));
      // The service matched it as a UUID; the stored form is lower case.
      return String(args.id).toLowerCase();
    },
  }),
  pingWebhook: t.field({
    type: WebhookDeliveryRef,
    description:
      'Sends a webhook.ping now and answers with its delivery and attempt; works on a disabled webhook too, and is not ' +
      'retried',
    authScopes: operationScopes('webhook.ping'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id }) },
    resolve: (_root, args, ctx) => pingWebhook(ctx, String(args.id)),
  }),
  replayWebhookDelivery: t.field({
    type: WebhookDeliveryRef,
    description:
      'Sends a delivered or failed delivery again, with the same webhook-id and body and a fresh retry schedule. ' +
      'A pending delivery is a DELIVERY_PENDING error; a held one a DELIVERY_HELD error (enabling the webhook sends it); a ' +
      'disabled webhook a WEBHOOK_DISABLED error (enable it first). Needs reservations:read as well as channels:write',
    authScopes: operationScopes('webhook.replay'),
    args: { webhookId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ webhookId: id, id }) },
    resolve: (_root, args, ctx) => replayDelivery(ctx, String(args.webhookId), String(args.id)),
  }),
}));
