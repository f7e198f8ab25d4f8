import { encodeGlobalID } from '@pothos/plugin-relay';
import { z } from 'zod';
import {
  createWebhook,
  deleteWebhook,
  getDelivery,
  getWebhook,
  pingWebhook,
  replayDelivery,
  updateWebhook,
  webhookCursor,
  webhookRules,
  webhookWindow,
  type WebhookView,
} from '../services/webhooks/index.js';
import { operationScopes } from '../services/access/index.js';
import { BookingEventTypeEnum } from './bookingTypes.js';
import { builder } from './builder.js';
import { Channel } from './channel.js';
import { connectionArgs, keysetConnection } from './connections.js';
import { withGraphQLFields } from './errors.js';
import { idArgument } from './node.js';
import { orNull } from './orNull.js';
import { WebhookConnection, WebhookDeliveryRef, WebhookRef } from './webhookTypes.js';

/**
 * Webhook subscriptions: the GraphQL twins of /channel/v1/webhooks, over the same service and the
 * same input rules (webhookRules); the WebhookEndpoint and WebhookDelivery types, and a webhook's
 * delivery log (WebhookEndpoint.deliveries), are in webhookTypes.ts. Every root field needs channels:write (docs/spec/DECISIONS.md); those that
 * read or resend deliveries (booking records) need reservations:read too (DELIVERY_SCOPES).
 *
 * Errors: authentication, scope and input validation are top-level errors with
 * `extensions.code`, as everywhere. An unknown webhook or delivery (or another channel's) is null
 * on the single-item queries and a top-level NOT_FOUND on mutations, as the booking mutations do. The refusals of the service (WEBHOOK_LIMIT_REACHED, DELIVERY_PENDING,
 * DELIVERY_HELD, WEBHOOK_DISABLED) are top-level errors too, with the code and details REST gives: they are
 * refusals of a configuration call, not outcomes of a booking flow, and the service throws them as
 * plain ConflictErrors (no class of their own for a result union to match).
 */

// ---------------------------------------------------------------------------------------------
// Types

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

/** A webhook id argument: the webhookId (REST) or the WebhookEndpoint's global id. */
const id = idArgument('WebhookEndpoint');
/** A delivery id argument: the deliveryId (REST) or the WebhookDelivery's global id. */
const deliveryId = idArgument('WebhookDelivery');

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



/** The service names the URL `url` (the REST member); here it is the argument `input.url`. */
const inputFields = <T>(promise: Promise<T>): Promise<T> => withGraphQLFields('input', promise);

// ---------------------------------------------------------------------------------------------
// Root fields

const WEBHOOKS_DESCRIPTION = "The channel's webhooks, oldest first (REST: GET /channel/v1/webhooks)";
const webhooksArgs = z.object(connectionArgs);

builder.objectField(Channel, 'webhooks', (t) =>
  t.connection(
    {
      type: WebhookRef,
      nullable: true,
      description: `${WEBHOOKS_DESCRIPTION}; scope channels:write`,
      authScopes: operationScopes('webhooks.list'),
      validate: { schema: webhooksArgs },
      resolve: (_channel, args, ctx) => keysetConnection(args, webhookWindow(ctx), webhookCursor),
    },
    WebhookConnection,
  ),
);

builder.queryFields((t) => ({
  webhooks: t.connection(
    {
      type: WebhookRef,
      description: WEBHOOKS_DESCRIPTION,
      authScopes: operationScopes('webhooks.list'),
      validate: { schema: webhooksArgs },
      resolve: (_root, args, ctx) => keysetConnection(args, webhookWindow(ctx), webhookCursor),
    },
    WebhookConnection,
  ),
  webhook: t.field({
    type: WebhookRef,
    nullable: true,
    description: 'One webhook by its webhookId or global id, or null when the channel has none',
    authScopes: operationScopes('webhook.read'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id }) },
    resolve: (_root, args, ctx) => orNull(getWebhook(ctx, args.id)),
  }),
  webhookDelivery: t.field({
    type: WebhookDeliveryRef,
    nullable: true,
    description:
      'One delivery of a webhook (each by its REST id or global id), or null when there is none. Needs reservations:read as ' +
      'well as channels:write',
    authScopes: operationScopes('webhook.delivery'),
    args: { webhookId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ webhookId: id, id: deliveryId }) },
    resolve: (_root, args, ctx) => orNull(getDelivery(ctx, args.webhookId, args.id)),
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
      inputFields(updateWebhook(ctx, args.id, args.input as z.infer<typeof updateArgs>['input'])),
  }),
  deleteWebhook: t.field({
    type: 'ID',
    description:
      'Deletes a webhook with its delivery log; deliveries not yet made are dropped (REST: DELETE /channel/v1/webhooks/{id}). ' +
      'Returns the global id of the webhook deleted (for a client cache to drop it)',
    authScopes: operationScopes('webhook.delete'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id }) },
    resolve: async (_root, args, ctx) => {
      await deleteWebhook(ctx, args.id);
      // The service matched it as a UUID; the stored form is lower case.
      return encodeGlobalID('WebhookEndpoint', args.id.toLowerCase());
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
    resolve: (_root, args, ctx) => pingWebhook(ctx, args.id),
  }),
  replayWebhookDelivery: t.field({
    type: WebhookDeliveryRef,
    description:
      'Sends a delivered or failed delivery again, with the same webhook-id and body and a fresh retry schedule. ' +
      'A pending delivery is a DELIVERY_PENDING error; a held one a DELIVERY_HELD error (enabling the webhook sends it); a ' +
      'disabled webhook a WEBHOOK_DISABLED error (enable it first). Needs reservations:read as well as channels:write',
    authScopes: operationScopes('webhook.replay'),
    args: { webhookId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ webhookId: id, id: deliveryId }) },
    resolve: (_root, args, ctx) => replayDelivery(ctx, args.webhookId, args.id),
  }),
}));
