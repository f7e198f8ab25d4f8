import { z } from '@hono/zod-openapi';
import { BOOKING_EVENT_TYPES } from '../../../src/services/bookings/index.js';
import { webhookRules, type DeliveryView, type WebhookView } from '../../../src/services/webhooks/index.js';
import { intParam } from '../../params.js';

/** The wire shapes of v1 webhook subscriptions and their delivery log, and their mappers. */

export const WebhookWire = z
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

export const CreatedWebhookWire = WebhookWire.extend({
  secret: z.string().openapi({
    description: 'The Standard Webhooks signing secret; shown only in this response',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }),
}).openapi('CreatedWebhook');

export const eventsField = webhookRules.events.openapi({ description: 'Booking event types, each once; omitted: all of them' });

export const CreateWebhookWire = z
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

export const UpdateWebhookWire = z
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

export const AttemptWire = z
  .object({
    attempt: z.int().openapi({ description: '1 for the first attempt; counting goes on across replays' }),
    started_at: z.iso.datetime(),
    duration_ms: z.int(),
    status_code: z.int().nullable().openapi({ description: "The receiver's HTTP status; null when none came" }),
    response_body: z.string().nullable().openapi({ description: "The first kilobyte of the receiver's answer" }),
    error: z.string().nullable().openapi({ example: 'HTTP 500' }),
  })
  .openapi('WebhookAttempt');

export const PayloadWire = z
  .object({
    type: z.string().openapi({ example: 'reservation.created' }),
    timestamp: z.iso.datetime(),
    data: z.record(z.string(), z.unknown()).openapi({ description: 'The booking record (a ping: {"webhook_id"})' }),
  })
  .openapi('WebhookPayload');

export const DeliveryWire = z
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
    attempt_log: z.array(AttemptWire).openapi({ description: 'The newest 50 attempts, first first (`attempts` counts them all)' }),
  })
  .openapi('WebhookDelivery');

export const WebhookId = z.object({ id: z.string().min(1).max(64).openapi({ description: 'Webhook id (uuid)' }) });
export const DeliveryId = WebhookId.extend({
  delivery_id: z.string().min(1).max(64).openapi({ description: 'Delivery id (uuid)' }),
});

export const DeliveriesQuery = z.object({
  page: intParam(z.int().min(1).max(1_000_000)).optional().default(1),
  per_page: intParam(z.int().min(1).max(100)).optional().default(20),
  status: z.enum(['pending', 'held', 'delivered', 'failed']).optional(),
});

export function toWire(w: WebhookView): z.infer<typeof WebhookWire> {
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

export function deliveryToWire(d: DeliveryView): z.infer<typeof DeliveryWire> {
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
