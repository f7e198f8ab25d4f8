import type { Booking } from '../../generated/prisma/client.js';
import { AlreadyCancelledError, type BookingStatus } from '../bookings/index.js';
import { ConflictError, type ErrorDetails } from '../kernel/index.js';

/**
 * 409 BOOKING_ALREADY_CANCELLED for a whole reservation: every room is cancelled (or failed).
 * An AlreadyCancelledError, so GraphQL answers it as BookingAlreadyCancelledError (its bookingId
 * the reservation id); REST details carry reservation_id too.
 */
export class ReservationAlreadyCancelledError extends AlreadyCancelledError {
  override readonly details: ErrorDetails;
  constructor(reservationId: string, status: BookingStatus) {
    super(reservationId, status);
    this.message = 'The reservation is already cancelled';
    this.details = { booking_id: reservationId, reservation_id: reservationId, status };
  }
}

/** Why a booking's dates cannot change; `details.reason` of MODIFICATION_NOT_ALLOWED. */
export type NotAllowedReason = 'not_confirmed' | 'checked_in' | 'check_in_day_reached' | 'free_change_period_ended' | 'multi_room';

export class ModificationNotAllowedError extends ConflictError {
  constructor(booking: Pick<Booking, 'id' | 'status'>, reason: NotAllowedReason, message: string) {
    super('MODIFICATION_NOT_ALLOWED', message, { booking_id: booking.id, status: booking.status, reason });
  }
}

export class ModificationInProgressError extends ConflictError {
  constructor(id: string) {
    super('MODIFICATION_IN_PROGRESS', 'Another change of this booking is being made; read the booking and retry', { booking_id: id });
  }
}
