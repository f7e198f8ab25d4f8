-- Recovery in seconds (issue 18, item 8): the instance whose request holds a booking in flight
-- (`processing` while the provider books it, `cancelling` while it cancels it). Each instance
-- holds a session advisory lock derived from its id while it lives; another instance that can
-- take that lock knows the owner is gone and settles its rows at once (src/services/bookings/sync.ts,
-- recoverInFlight). Rows without an owner (written before this migration) keep the request lease.

-- AlterTable
ALTER TABLE "bookings" ADD COLUMN "lease_owner" UUID;
