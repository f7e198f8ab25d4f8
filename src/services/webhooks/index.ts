/**
 * The public face of webhooks: endpoints (endpoints.ts), URLs (urls.ts), the event message and
 * fan-out (fanOut.ts), leases (claims.ts), attempts and retries (attempts.ts), the batched
 * recording of successes (outcomes.ts), purge (purge.ts) and
 * the delivery work the outbox dispatcher runs (dispatch.ts). Other modules import only this file.
 */
export { WebhookSender, attemptDelivery, type WebhookAttemptOutcome } from './attempts.js';
export { webhookBacklog, type WebhookBacklog } from './backlog.js';
export { PER_ENDPOINT_IN_FLIGHT, claimDue, maxTotalAttempts } from './claims.js';
export { DeliveryWork } from './dispatch.js';
export { LAST_SUCCESS_EVERY_MS, OutcomeRecorder } from './outcomes.js';
export {
  DELIVERY_SCOPES,
  ATTEMPT_LOG_SHOWN,
  MAX_WEBHOOKS_PER_CHANNEL,
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
  type DeliveryStatus,
  type DeliveryView,
  type WebhookChange,
  type WebhookInput,
  type WebhookView,
} from './endpoints.js';
export { fanOut, type BookingEventMessage } from './fanOut.js';
export { deliveryCounts, deliveryCursor, deliveryLogs, getDeliveries, getWebhooks, webhookCursor, webhookWindow, type DeliveryLogFilter } from './reads.js';
export { DELIVERY_RETENTION_MS, purgeDeliveries } from './purge.js';
/** A delivery attempt as stored: DeliveryView's attempt log. */
export type { WebhookAttempt } from '../../generated/prisma/client.js';
