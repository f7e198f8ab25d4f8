import type { BookingStatus } from './states.js';
import { ConflictError, UnprocessableError, UpstreamError } from '../kernel/index.js';

// ---------------------------------------------------------------------------------------------
// Errors of the flow

export class BookTokenError extends UnprocessableError {}

export class SoldOutError extends ConflictError {
  constructor() {
    super('SOLD_OUT', 'The room is no longer available for these dates; search again');
  }
}

export class PriceChangedError extends ConflictError {
  constructor() {
    super('PRICE_CHANGED', 'The provider no longer offers this price; run the price check again for a new book_token');
  }
}

export class AlreadyCancelledError extends ConflictError {
  constructor(id: string, status: BookingStatus) {
    super(
      'BOOKING_ALREADY_CANCELLED',
      status === 'cancelling' ? 'The booking is being cancelled' : 'The booking is already cancelled',
      { booking_id: id, status },
    );
  }
}

export class NotCancellableError extends ConflictError {
  constructor(id: string, status: BookingStatus) {
    super('BOOKING_NOT_CANCELLABLE', `A booking that is ${status} cannot be cancelled`, { booking_id: id, status });
  }
}

/**
 * 502 UPSTREAM_ERROR in production when the provider answers that it does not know a booking being
 * cancelled: nothing is cancelled or refunded without its word, and the booking stays as it was.
 */
export class CancellationNotConfirmedError extends UpstreamError {
  constructor(id: string, status: BookingStatus) {
    super(
      `The inventory provider does not confirm this cancellation: the booking stays ${status} and nothing is refunded. ` +
        'The disagreement is reported to an operator; retry later',
      { booking_id: id, status, reason: 'provider_does_not_confirm_cancellation' },
    );
  }
}

export class NotModifiableError extends ConflictError {
  constructor(id: string, message: string, status: BookingStatus) {
    super('BOOKING_NOT_MODIFIABLE', message, { booking_id: id, status });
  }
}

/** 409 IDEMPOTENCY_KEY_IN_PROGRESS while the first request with the key is still running; retry after a second. */
export class IdempotencyKeyInProgressError extends ConflictError {
  override readonly headers: Readonly<Record<string, string>> = { 'Retry-After': '1' };
  constructor() {
    super('IDEMPOTENCY_KEY_IN_PROGRESS', 'A request with this Idempotency-Key is still being processed; retry shortly');
  }
}
