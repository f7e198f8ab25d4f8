-- Date changes of bookings (POST /channel/v1/reservations/{id}/modify-dates): one row per change,
-- `processing` while the provider is told, then `applied` or `void`.

-- CreateTable
CREATE TABLE "booking_modifications" (
    "id" UUID NOT NULL,
    "booking_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "state" TEXT NOT NULL,
    "from_checkin" DATE NOT NULL,
    "from_checkout" DATE NOT NULL,
    "to_checkin" DATE NOT NULL,
    "to_checkout" DATE NOT NULL,
    "from_total" BIGINT NOT NULL,
    "to_total" BIGINT NOT NULL,
    "to_request_amount" BIGINT NOT NULL,
    "cancellation_policy" TEXT NOT NULL,
    "charged" BOOLEAN NOT NULL,
    "upstream_cleanup" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "settled_at" TIMESTAMPTZ(3),

    CONSTRAINT "booking_modifications_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "booking_modifications_state_check" CHECK ("state" IN ('processing', 'applied', 'void'))
);

-- CreateIndex
CREATE INDEX "booking_modifications_booking_id_idx" ON "booking_modifications"("booking_id");

-- CreateIndex
CREATE INDEX "booking_modifications_state_created_at_idx" ON "booking_modifications"("state", "created_at");

-- CreateIndex: one change in flight per booking, a void one the provider may still hold included,
-- so two concurrent changes can never both reach the provider (Prisma cannot express the predicate).
CREATE UNIQUE INDEX "booking_modifications_in_flight_key" ON "booking_modifications"("booking_id")
    WHERE "state" = 'processing' OR "upstream_cleanup";

-- AddForeignKey
ALTER TABLE "booking_modifications" ADD CONSTRAINT "booking_modifications_booking_id_fkey" FOREIGN KEY ("booking_id") REFERENCES "bookings"("id") ON DELETE CASCADE ON UPDATE CASCADE;
