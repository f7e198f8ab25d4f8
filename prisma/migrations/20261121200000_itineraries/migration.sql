-- Bookings made together (v2 multi-room) share an itinerary; a book token may make one booking per room.

-- AlterTable
ALTER TABLE "bookings" ADD COLUMN "token_room" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "itinerary_id" UUID,
ADD COLUMN "bed_group_id" TEXT;

-- A v1 booking is its own itinerary.
UPDATE "bookings" SET "itinerary_id" = "id";
ALTER TABLE "bookings" ALTER COLUMN "itinerary_id" SET NOT NULL;

-- DropIndex
DROP INDEX "bookings_book_token_jti_key";

-- CreateIndex
CREATE UNIQUE INDEX "bookings_book_token_jti_token_room_key" ON "bookings"("book_token_jti", "token_room");

-- CreateIndex
CREATE INDEX "bookings_channel_id_itinerary_id_idx" ON "bookings"("channel_id", "itinerary_id");
