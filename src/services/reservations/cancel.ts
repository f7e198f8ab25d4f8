import type { RequestContext } from '../../context.js';
import type { Booking } from '../../generated/prisma/client.js';
import { cancelBooking, refuseCancel } from '../bookings/index.js';
import { AppError, NotFoundError, ValidationError, type FieldIssue } from '../kernel/index.js';
import { ReservationAlreadyCancelledError } from './errors.js';
import { getReservation } from './read.js';
import type { Reservation } from './rules.js';
import { DROPPED, reservationStatus } from './view.js';

// ---------------------------------------------------------------------------------------------
// Cancel

export interface ReservationCancellation {
  reservation: Reservation;
  /** The rooms this request cancelled, as they are now. */
  cancelled: Booking[];
}

/**
 * Cancels the whole reservation (every room not already cancelled or failed) or the rooms named
 * by `roomIds`, each through the booking service's cancellation: its own fee by its policy, its
 * refund credited once through the ledger (production), its reservation.cancelled event. Every
 * room is checked first: a room that cannot be cancelled (checked in, or already cancelled when
 * named) refuses the whole request with 409 and nothing is cancelled. If the provider fails on a
 * room (502), the rooms cancelled before it stay cancelled and the same request cancels the rest.
 */
export async function cancelReservation(ctx: RequestContext, id: string, roomIds?: string[]): Promise<ReservationCancellation> {
  const { bookings } = await getReservation(ctx, id);
  let targets: Booking[];
  if (roomIds === undefined) {
    targets = bookings.filter((b) => !DROPPED.has(b.status));
    if (!targets.length) {
      throw new ReservationAlreadyCancelledError(bookings[0]!.itineraryId, reservationStatus(bookings));
    }
  } else {
    const issues: FieldIssue[] = [];
    targets = [];
    roomIds.forEach((roomId, i) => {
      const room = bookings.find((b) => b.id === roomId.toLowerCase());
      if (!room) issues.push({ field: `room_ids.${i}`, reason: 'not a room of this reservation' });
      else if (targets.includes(room)) issues.push({ field: `room_ids.${i}`, reason: 'listed twice' });
      else targets.push(room);
    });
    if (issues.length) throw new ValidationError(issues);
  }
  for (const b of targets) refuseCancel(b);

  const cancelled: Booking[] = [];
  for (const b of targets) {
    try {
      cancelled.push(await cancelBooking(ctx, b.id));
    } catch (error) {
      // A room someone cancelled meanwhile is as good as cancelled by this request.
      if (!(error instanceof AppError && error.code === 'BOOKING_ALREADY_CANCELLED')) throw error;
    }
  }
  return { reservation: await getReservation(ctx, id), cancelled };
}

/** DELETE /reservations/{id}/rooms/{bookingId}: one room; a booking that is not a room of the reservation is 404. */
export async function cancelReservationRoom(ctx: RequestContext, id: string, bookingId: string): Promise<ReservationCancellation> {
  const { bookings } = await getReservation(ctx, id);
  if (!bookings.some((b) => b.id === bookingId.toLowerCase())) {
    throw new NotFoundError(`Room ${bookingId} is not a room of reservation ${id}`);
  }
  return cancelReservation(ctx, id, [bookingId]);
}
