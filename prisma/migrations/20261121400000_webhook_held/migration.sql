-- Deliveries of a disabled webhook wait as `held`, so the claim of due deliveries never reads
-- them; enabling the webhook makes them `pending` again.
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_status_check";
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_status_check"
    CHECK ("status" IN ('pending', 'held', 'delivered', 'failed'));

-- What disabling now does, done once for the webhooks disabled already: their deliveries not in
-- flight (never leased, or the lease ran out) are held.
UPDATE "webhook_deliveries" AS d SET "status" = 'held'
FROM "webhook_endpoints" AS e
WHERE e."id" = d."endpoint_id" AND e."disabled_at" IS NOT NULL AND d."status" = 'pending'
  AND (d."lease_id" IS NULL OR d."next_attempt_at" <= now());

-- `attempts` when the delivery was last replayed: the cap on attempts (interrupted ones included)
-- counts from there, so a replay gets a whole allowance of its own.
ALTER TABLE "webhook_deliveries" ADD COLUMN "attempts_at_replay" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex: each claim counts the leases in flight per endpoint; few rows are leased at a time
-- (Prisma cannot express the predicate).
CREATE INDEX "webhook_deliveries_leased_idx" ON "webhook_deliveries"("endpoint_id")
    WHERE "status" = 'pending' AND "lease_id" IS NOT NULL;
