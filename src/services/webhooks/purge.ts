import type { AppDeps } from '../../context.js';

/** Delivered and failed deliveries (with their attempts) are deleted this long after their last attempt. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Deletes delivered and failed deliveries, with their attempts, whose last attempt is more than
 * DELIVERY_RETENTION_MS before `now` (`next_attempt_at` is then the end of that attempt's lease).
 * In batches of `batchSize`, skipping rows another instance is deleting. Returns how many went.
 */
export async function purgeDeliveries(deps: AppDeps, now: Date, batchSize = 5_000): Promise<number> {
  const before = new Date(now.getTime() - DELIVERY_RETENTION_MS);
  let total = 0;
  for (;;) {
    const deleted = await deps.db.prisma.$executeRaw`
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries
        WHERE status IN ('delivered', 'failed') AND next_attempt_at < ${before}
        LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)`;
    total += deleted;
    if (deleted < batchSize) return total;
  }
}
