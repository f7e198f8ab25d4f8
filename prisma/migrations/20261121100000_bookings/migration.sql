-- CreateEnum
CREATE TYPE "BookingStatus" AS ENUM ('processing', 'void', 'pending', 'confirmed', 'cancelling', 'cancelled', 'completed', 'failed', 'checked_in', 'checked_out', 'no_show');

-- CreateTable
CREATE TABLE "bookings" (
    "id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "app_id" UUID NOT NULL,
    "book_token_jti" TEXT,
    "status" "BookingStatus" NOT NULL,
    "previous_status" "BookingStatus",
    "hub_booking_number" TEXT,
    "channel_booking_number" TEXT,
    "property_id" INTEGER NOT NULL,
    "property_name" TEXT,
    "roomtype_id" TEXT NOT NULL,
    "room_type" TEXT,
    "rateplan_id" TEXT NOT NULL,
    "rate_plan" TEXT,
    "checkin" DATE NOT NULL,
    "checkout" DATE NOT NULL,
    "timezone" TEXT NOT NULL,
    "occupancy" JSONB NOT NULL,
    "guests_adult" INTEGER NOT NULL,
    "guests_child" INTEGER NOT NULL,
    "booker_name" TEXT NOT NULL,
    "booker_email" TEXT,
    "guest_first_name" TEXT,
    "guest_last_name" TEXT,
    "guest_phone" TEXT,
    "guest_country" TEXT,
    "special_requests" TEXT,
    "total_amount" BIGINT NOT NULL,
    "net_amount" BIGINT NOT NULL,
    "sale_amount" BIGINT,
    "currency" CHAR(3) NOT NULL,
    "request_currency" CHAR(3) NOT NULL,
    "request_amount" BIGINT NOT NULL,
    "charged" BOOLEAN NOT NULL,
    "cancellation_policy" TEXT,
    "cancellation_deadline" TIMESTAMPTZ(3),
    "payment_deadline" TIMESTAMPTZ(3),
    "cancel_requested_at" TIMESTAMPTZ(3),
    "cancelled_at" TIMESTAMPTZ(3),
    "refund_amount" BIGINT,
    "cancellation_fee" BIGINT,
    "upstream_cleanup" BOOLEAN NOT NULL DEFAULT false,
    "synced_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "bookings_pkey" PRIMARY KEY ("id"),
    -- Not expressible in schema.prisma: amounts are never negative and a refund never exceeds the total.
    CONSTRAINT "bookings_amounts_valid" CHECK (
        "total_amount" >= 0 AND "net_amount" >= 0 AND ("sale_amount" IS NULL OR "sale_amount" > 0)
        AND ("refund_amount" IS NULL OR ("refund_amount" >= 0 AND "refund_amount" <= "total_amount"))
        AND ("cancellation_fee" IS NULL OR ("cancellation_fee" >= 0 AND "cancellation_fee" <= "total_amount"))
    ),
    CONSTRAINT "bookings_stay_valid" CHECK ("checkout" > "checkin")
);

-- CreateTable
CREATE TABLE "outbox_events" (
    "id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "booking_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "published_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "channel_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "response_status" INTEGER,
    "response_body" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("channel_id","key")
);

-- CreateIndex
CREATE UNIQUE INDEX "bookings_book_token_jti_key" ON "bookings"("book_token_jti");

-- CreateIndex
CREATE INDEX "bookings_channel_id_created_at_idx" ON "bookings"("channel_id", "created_at");

-- CreateIndex
CREATE INDEX "bookings_channel_id_checkin_idx" ON "bookings"("channel_id", "checkin");

-- CreateIndex
CREATE INDEX "bookings_channel_id_channel_booking_number_idx" ON "bookings"("channel_id", "channel_booking_number");

-- CreateIndex
CREATE INDEX "bookings_status_synced_at_idx" ON "bookings"("status", "synced_at");

-- CreateIndex
CREATE INDEX "outbox_events_channel_id_occurred_at_idx" ON "outbox_events"("channel_id", "occurred_at");

-- CreateIndex
CREATE INDEX "outbox_events_booking_id_idx" ON "outbox_events"("booking_id");

-- CreateIndex
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");

-- AddForeignKey
ALTER TABLE "bookings" ADD CONSTRAINT "bookings_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "outbox_events" ADD CONSTRAINT "outbox_events_booking_id_fkey" FOREIGN KEY ("booking_id") REFERENCES "bookings"("id") ON DELETE CASCADE ON UPDATE CASCADE;
