-- The instance whose request holds an Idempotency-Key (its answer not stored yet). A key whose
-- request died is released by the recovery pass that settles bookings in flight: by its own
-- instance once no request of it holds the key, by another once that instance is gone
-- (src/services/bookings/sync.ts, recoverInFlight). Keys without an owner (written before this
-- migration) keep the request lease.

-- AlterTable
ALTER TABLE "idempotency_keys" ADD COLUMN "lease_owner" UUID;
