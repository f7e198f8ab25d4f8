import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
import { Prisma, type Booking } from '../../generated/prisma/client.js';
import { transition, type BookingEventType, type BookingStatus, type Trigger } from './states.js';
import { toBookingRecord } from './record.js';

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
  const { count } = await tx.booking.updateMany({
    where: { id: booking.id, status: booking.status },
    data: { leaseOwner: null, ...data, status: next.to, updatedAt: at },
  });
  if (count === 0) return null;
  const updated = await tx.booking.findUniqueOrThrow({ where: { id: booking.id } });
  await recordEvents(tx, updated, next.events, at);
  return updated;
}

/** Writes events into the outbox, each carrying the booking record as it is now. */
export async function recordEvents(tx: Prisma.TransactionClient, booking: Booking, types: BookingEventType[], at: Date) {
  if (!types.length) return;
  const payload = toBookingRecord(booking) as unknown as Prisma.InputJsonValue;
  await tx.outboxEvent.createMany({
    data: types.map((type, i) => ({
      id: randomUUID(),
      channelId: booking.channelId,
      bookingId: booking.id,
      type,
      payload,
      // Distinct instants keep the order of events written together.
      occurredAt: new Date(at.getTime() + i),
    })),
  });
}

export function transact<T>(deps: AppDeps, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return deps.db.prisma.$transaction(fn, TRANSACTION_OPTIONS);
}
