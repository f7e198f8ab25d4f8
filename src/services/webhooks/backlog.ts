import type { PrismaClient } from '../../generated/prisma/client.js';

/** The webhook backlog at a glance (the /metrics gauges read it when scraped). */
export interface WebhookBacklog {
  /** Outbox events not yet published, and the age in seconds of the oldest (0 when none). */
  outboxPending: number;
  outboxOldestSeconds: number;
  /** Deliveries waiting for an attempt, and those held while their endpoint is disabled. */
  deliveriesPending: number;
  deliveriesHeld: number;
  /** Age in seconds of the oldest pending delivery (0 when none). */
  deliveryOldestSeconds: number;
  /** Endpoints disabled, by their partner or after a delivery failed its whole retry schedule. */
  endpointsDisabled: number;
}

/**
 * One statement, cheap at any size of history: unpublished outbox events through their partial
 * index (outbox_events_unpublished_idx), deliveries by status through (status, next_attempt_at),
 * and the endpoints (a few per channel).
 */
export async function webhookBacklog(prisma: PrismaClient, now: Date): Promise<WebhookBacklog> {
  const [row] = await prisma.$queryRaw<
    { outbox: number; outbox_oldest: Date | null; pending: number; held: number; pending_oldest: Date | null; disabled: number }[]
  >`
    SELECT
      (SELECT count(*)::int FROM outbox_events WHERE published_at IS NULL) AS outbox,
      (SELECT min(occurred_at) FROM outbox_events WHERE published_at IS NULL) AS outbox_oldest,
      (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS pending,
      (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'held') AS held,
      (SELECT min(created_at) FROM webhook_deliveries WHERE status = 'pending') AS pending_oldest,
      (SELECT count(*)::int FROM webhook_endpoints WHERE disabled_at IS NOT NULL) AS disabled`;
  const age = (at: Date | null | undefined) => (at ? Math.max(0, (now.getTime() - at.getTime()) / 1000) : 0);
  return {
    outboxPending: row?.outbox ?? 0,
    outboxOldestSeconds: age(row?.outbox_oldest),
    deliveriesPending: row?.pending ?? 0,
    deliveriesHeld: row?.held ?? 0,
    deliveryOldestSeconds: age(row?.pending_oldest),
    endpointsDisabled: row?.disabled ?? 0,
  };
}
