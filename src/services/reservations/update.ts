import type { RequestContext } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
import type { Booking } from '../../generated/prisma/client.js';
import { changedGuestFields, NotModifiableError, recordEvents, refuseModify, VISIBLE_STATUSES, type GuestDetails } from '../bookings/index.js';
import { ConflictError, NotFoundError, principalOf } from '../kernel/index.js';
import { getReservation } from './read.js';
import { ROOM_ORDER, type Reservation } from './rules.js';
import { leadRoom, reservationStatus } from './view.js';

// ---------------------------------------------------------------------------------------------
// Modify

export interface ReservationPatch {
  guest?: {
    firstName?: string | undefined;
    lastName?: string | undefined;
    email?: string | undefined;
    phone?: string | null | undefined;
    country?: string | null | undefined;
  } | undefined;
  specialRequests?: string | null | undefined;
  arrivalTime?: string | null | undefined;
}

/**
 * PATCH /reservations/{id}: the guest (any time the rooms are live), special requests and arrival
 * time (before check-in), by the rules of PATCH /bookings/{id} (refuseModify), applied to every
 * room still live (pending, confirmed or checked in). All or nothing: one transaction locks the
 * reservation's rooms (FOR UPDATE, in id order), reads them as they are now, checks every room,
 * then changes each with a conditional update (its status as read) and writes its
 * reservation.modified. A refusal (409 BOOKING_NOT_MODIFIABLE), or any failure on a later room,
 * rolls back every room and every event: nothing changes. A cancellation or check-in racing the
 * PATCH is ordered before it (its room is no longer live, or refuses) or after it, never between
 * two rooms. A room whose values already are the patch's is not written and writes no event.
 */
export async function updateReservation(ctx: RequestContext, id: string, patch: ReservationPatch): Promise<Reservation> {
  const { id: itineraryId } = await getReservation(ctx, id);
  const channelId = principalOf(ctx).channelId;
  const now = ctx.deps.clock();
  await ctx.deps.db.prisma.$transaction(async (tx) => {
    // Every room of the reservation, locked in one order so that two PATCHes never deadlock; a
    // cancellation or a reported check-in of a room waits for this transaction, or went first.
    await tx.$queryRaw`
      SELECT "id" FROM "bookings" WHERE "channel_id" = ${channelId}::uuid AND "itinerary_id" = ${itineraryId}::uuid
      ORDER BY "id" FOR UPDATE`;
    const bookings = await tx.booking.findMany({
      where: { channelId, itineraryId, status: { in: [...VISIBLE_STATUSES] } },
      orderBy: ROOM_ORDER,
    });
    if (!bookings.length) throw new NotFoundError(`Reservation ${id} was not found`);
    for (const [booking, change] of reservationChanges(bookings, patch, now)) {
      const changes = changedGuestFields(booking, change);
      if (!Object.keys(changes).length) continue;
      const { count } = await tx.booking.updateMany({
        where: { id: booking.id, status: booking.status },
        data: { ...changes, updatedAt: now },
      });
      // Not while the rows are locked; kept as the guard PATCH /bookings/{id} has.
      if (count === 0) throw new ConflictError('BOOKING_CHANGED', 'The reservation changed while it was being updated; read it and retry');
      const updated = await tx.booking.findUniqueOrThrow({ where: { id: booking.id } });
      await recordEvents(tx, updated, ['reservation.modified'], now);
    }
  }, TRANSACTION_OPTIONS);
  return getReservation(ctx, id);
}

/**
 * What the patch changes on each live room of `bookings` (as they are now), every room checked
 * by refuseModify first: the first room that refuses refuses the whole patch.
 */
function reservationChanges(bookings: Booking[], patch: ReservationPatch, now: Date): [Booking, GuestDetails][] {
  const live = bookings.filter((b) => {
    try {
      refuseModify(b, {}, now);
      return true;
    } catch {
      return false;
    }
  });
  const status = reservationStatus(bookings);
  if (!live.length) throw new NotModifiableError(bookings[0]!.itineraryId, `A reservation that is ${status} cannot be modified`, status);

  const lead = leadRoom(bookings);
  const guest = patch.guest ?? {};
  const first = guest.firstName ?? lead.guestFirstName ?? bookings[0]!.guestFirstName;
  const last = guest.lastName ?? lead.guestLastName ?? bookings[0]!.guestLastName;
  const renamed = guest.firstName !== undefined || guest.lastName !== undefined;
  const changes = live.map((b): [Booking, GuestDetails] => [
    b,
    {
      ...(renamed && { bookerName: [first, last].filter(Boolean).join(' ') }),
      // The guest's name is the lead room's; other rooms keep their own guests.
      ...(b.id === lead.id && guest.firstName !== undefined && { guestFirstName: guest.firstName }),
      ...(b.id === lead.id && guest.lastName !== undefined && { guestLastName: guest.lastName }),
      ...(guest.email !== undefined && { bookerEmail: guest.email }),
      ...(guest.phone !== undefined && { guestPhone: guest.phone }),
      ...(guest.country !== undefined && { guestCountry: guest.country }),
      ...(patch.specialRequests !== undefined && { specialRequests: patch.specialRequests }),
      ...(patch.arrivalTime !== undefined && { arrivalTime: patch.arrivalTime }),
    },
  ]);
  for (const [b, change] of changes) refuseModify(b, change, now);
  return changes;
}
