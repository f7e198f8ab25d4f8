-- /reservations (spec §4.8): a reservation is an itinerary. Its rooms share a confirmation number
-- and are listed in a fixed order; the arrival time is a field of its own.

-- AlterTable
ALTER TABLE "bookings" ADD COLUMN "itinerary_room" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "confirmation_number" TEXT,
ADD COLUMN "arrival_time" TEXT;

-- The rooms of the itineraries made so far: the first room (whose id is the itinerary's) first,
-- then in the order they were made.
UPDATE "bookings" AS b SET "itinerary_room" = r."n"
FROM (
    SELECT "id", (row_number() OVER (
        PARTITION BY "itinerary_id" ORDER BY ("id" = "itinerary_id") DESC, "created_at", "token_room", "id"
    ) - 1)::int AS "n"
    FROM "bookings"
) AS r
WHERE r."id" = b."id" AND r."n" <> 0;

-- One confirmation number per itinerary made so far.
UPDATE "bookings" AS b SET "confirmation_number" = i."n"
FROM (SELECT "itinerary_id", upper(substr(md5((random())::text), 1, 12)) AS "n" FROM "bookings" GROUP BY "itinerary_id") AS i
WHERE i."itinerary_id" = b."itinerary_id";

-- The booking service gives every room of an itinerary the same number; a row written any other
-- way is an itinerary of its own and gets one here.
ALTER TABLE "bookings" ALTER COLUMN "confirmation_number" SET DEFAULT upper(substr(md5((random())::text), 1, 12)),
ALTER COLUMN "confirmation_number" SET NOT NULL;

-- CreateIndex
CREATE INDEX "bookings_channel_id_confirmation_number_idx" ON "bookings"("channel_id", "confirmation_number");

-- CreateIndex: GET /reservations?guest_email= compares case-insensitively, on the first room of
-- each reservation (Prisma cannot express the expression or the predicate).
CREATE INDEX "bookings_reservation_guest_email_idx" ON "bookings"("channel_id", lower("booker_email"))
    WHERE "id" = "itinerary_id";
