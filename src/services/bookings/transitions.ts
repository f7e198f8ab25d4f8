import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
import { Prisma, type Booking } from '../../generated/prisma/client.js';
import { transition, type BookingEventType, type BookingStatus, type Trigger } from './states.js';
import { toBookingRecord } from './record.js';
import { currentTraceparent, rowForSql } from '../kernel/index.js';

// ---------------------------------------------------------------------------------------------
// Transitions and events

/**
 * Moves `booking` by `trigger` if nobody moved it first; writes the move's events. Null when it lost
 * the race. A move ends the ownership of a request in flight (leaseOwner) unless `data` sets one.
 */
export async function move(
  tx: Prisma.TransactionClient,
  booking: Booking,
  trigger: Trigger,
  data: Prisma.BookingUpdateManyMutationInput,
  at: Date,
  to?: BookingStatus,
): Promise<Booking | null> {
  const next = transition(booking.status, trigger, to);
  // The row as updated comes back with the update (no second read).
  const [updated] = await tx.booking.updateManyAndReturn({
    where: { id: booking.id, status: booking.status },
    data: { leaseOwner: null, ...data, status: next.to, updatedAt: at },
  });
  if (!updated) return null;
  await recordEvents(tx, updated, next.events, at);
  return updated;
}

/**
 * move() in one statement and outside any transaction, for a row the caller holds as it is (the
 * request that wrote it, settling it): the update, guarded by the status and `updatedAt` held, and
 * its events, written only if the update is. The row is not read back: with the guard holding it
 * is the row held with `data`, the new status and `at` (every change a partner can see sets
 * `updatedAt`). Null when the guard fails (moved by someone else, or changed since): the caller
 * falls back to move() in a transaction, which reads what is there. One round trip instead of a
 * transaction's five (issue 18, item 7).
 */
export async function moveHeld(
  db: Prisma.TransactionClient,
  booking: Booking,
  trigger: Trigger,
  data: Partial<Pick<Booking, 'hubBookingNumber' | 'paymentDeadline' | 'syncedAt'>>,
  at: Date,
): Promise<Booking | null> {
  const next = transition(booking.status, trigger);
  // As move(): the move ends the request's ownership of the row in flight.
  const changes = { leaseOwner: null, ...data, status: next.to, updatedAt: at };
  const updated: Booking = { ...booking, ...changes };
  const { columns, json } = rowForSql(changes);
  const payload = next.events.length ? toBookingRecord(updated) : null;
  const traceparent = next.events.length ? (currentTraceparent() ?? null) : null;
  const events = JSON.stringify(
    next.events.map((type, i) => ({
      id: randomUUID(),
      channel_id: booking.channelId,
      booking_id: booking.id,
      type,
      payload,
      traceparent,
      // Distinct instants keep the order of events written together (as recordEvents).
      occurred_at: new Date(at.getTime() + i),
    })),
  );
  const [row] = await db.$queryRaw<{ moved: number }[]>`
    WITH moved AS (
      UPDATE "bookings" SET (${columns}) = (SELECT ${columns} FROM json_populate_record(NULL::"bookings", ${json}::json))
      WHERE "id" = ${booking.id}::uuid AND "status"::text = ${booking.status} AND "updated_at" = ${booking.updatedAt}
      RETURNING "id"
    ), events AS (
      INSERT INTO "outbox_events" ("id", "channel_id", "booking_id", "type", "payload", "occurred_at", "traceparent")
      SELECT e."id", e."channel_id", e."booking_id", e."type", e."payload", e."occurred_at", e."traceparent"
      FROM json_populate_recordset(NULL::"outbox_events", ${events}::json) AS e WHERE EXISTS (SELECT 1 FROM moved)
    )
    SELECT count(*)::int AS "moved" FROM moved`;
  return row && Number(row.moved) === 1 ? updated : null;
}

/** Writes events into the outbox, each carrying the booking record as it is now. */
export async function recordEvents(tx: Prisma.TransactionClient, booking: Booking, types: BookingEventType[], at: Date) {
  if (!types.length) return;
  const payload = toBookingRecord(booking) as unknown as Prisma.InputJsonValue;
  // The trace that writes the events (tracing on), for the webhook deliveries they cause.
  const traceparent = currentTraceparent() ?? null;
  await tx.outboxEvent.createMany({
    data: types.map((type, i) => ({
      id: randomUUID(),
      channelId: booking.channelId,
      bookingId: booking.id,
      type,
      payload,
      traceparent,
      // Distinct instants keep the order of events written together.
      occurredAt: new Date(at.getTime() + i),
    })),
  });
}

export function transact<T>(deps: AppDeps, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return deps.db.prisma.$transaction(fn, TRANSACTION_OPTIONS);
}
