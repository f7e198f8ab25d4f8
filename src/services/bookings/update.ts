import type { RequestContext } from '../../context.js';
import { Prisma, type Booking } from '../../generated/prisma/client.js';
import type { BookingStatus } from './states.js';
import { checkinInstant } from '../search/index.js';
import { ConflictError } from '../kernel/index.js';
import { NotModifiableError } from './errors.js';
import { getBooking } from './list.js';
import { dateOnly } from './record.js';
import type { GuestDetails } from './rules.js';
import { recordEvents, transact } from './transitions.js';

// ---------------------------------------------------------------------------------------------
// Modify

const MODIFIABLE: ReadonlySet<BookingStatus> = new Set(['pending', 'confirmed', 'checked_in']);

/** The rules of a change (409 BOOKING_NOT_MODIFIABLE): a live booking; special requests and arrival time before check-in. */
export function refuseModify(booking: Booking, patch: GuestDetails, now: Date): void {
  if (!MODIFIABLE.has(booking.status)) {
    throw new NotModifiableError(booking.id, `A booking that is ${booking.status} cannot be modified`, booking.status);
  }
  const started = () => booking.status === 'checked_in' || now >= checkinInstant(dateOnly(booking.checkin), booking.timezone);
  if (patch.specialRequests !== undefined && started()) {
    throw new NotModifiableError(booking.id, 'Special requests can be changed only before check-in', booking.status);
  }
  if (patch.arrivalTime !== undefined && started()) {
    throw new NotModifiableError(booking.id, 'The arrival time can be changed only before check-in', booking.status);
  }
}

/**
 * PATCH: guest and booker details while the booking is live; special requests only before
 * check-in (15:00 local on the check-in date, and not once checked in). Writes
 * `reservation.modified` when something changed; an update that changes nothing writes nothing.
 */
/** The fields of `patch` that differ from the booking's: what an update writes (nothing else). */
export function changedGuestFields(booking: Booking, patch: GuestDetails): Prisma.BookingUpdateManyMutationInput {
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch) as [keyof GuestDetails, string | null | undefined][]) {
    if (value !== undefined && booking[key] !== value) changes[key] = value;
  }
  return changes;
}

export async function updateBooking(ctx: RequestContext, id: string, patch: GuestDetails): Promise<Booking> {
  const booking = await getBooking(ctx, id);
  const now = ctx.deps.clock();
  refuseModify(booking, patch, now);
  const changes = changedGuestFields(booking, patch);
  if (!Object.keys(changes).length) return booking;
  return transact(ctx.deps, async (tx) => {
    const { count } = await tx.booking.updateMany({ where: { id: booking.id, status: booking.status }, data: { ...changes, updatedAt: now } });
    if (count === 0) throw new ConflictError('BOOKING_CHANGED', 'The booking changed while it was being updated; read it and retry');
    const updated = await tx.booking.findUniqueOrThrow({ where: { id: booking.id } });
    await recordEvents(tx, updated, ['reservation.modified'], now);
    return updated;
  });
}
