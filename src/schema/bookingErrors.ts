import { ERROR_CODES, type AppError, type ErrorCode } from '../services/kernel/index.js';
import {
  AlreadyCancelledError,
  BookTokenError,
  InsufficientBalanceError,
  NotCancellableError,
  NotModifiableError,
  PriceChangedError,
  SoldOutError,
  VISIBLE_STATUSES,
} from '../services/bookings/index.js';
import { builder } from './builder.js';
import { BookingStatus } from './bookingTypes.js';

/**
 * The typed errors of the booking and reservation mutations (src/schema/bookings.ts): members of
 * each mutation's result union, implementing `DomainError { code message }` with the extra fields
 * of their REST `details`.
 */

// ---------------------------------------------------------------------------------------------
// Typed errors: the service's own error classes, registered as object types

/**
 * Every code the service answers: DomainError.code, and the values of extensions.code on top-level
 * errors (services/kernel/errors.ts ERROR_CODES, the same codes REST gives in error.code).
 */
export const ErrorCodeEnum = builder.enumType('ErrorCode', {
  description:
    'Every code the API answers: DomainError.code, extensions.code of a top-level error, and REST\'s error.code ' +
    '(the token endpoint answers the RFC 6749 codes instead)',
  values: ERROR_CODES,
});

export const DomainError = builder.interfaceRef<AppError>('DomainError').implement({
  description: 'An expected outcome that is not a success; `code` is the code REST gives in error.code',
  fields: (t) => ({
    code: t.field({ type: ErrorCodeEnum, resolve: (e) => e.code as ErrorCode }),
    message: t.exposeString('message'),
  }),
});

function detail(error: AppError, key: string): unknown {
  return error.details?.[key] ?? null;
}

function detailString(error: AppError, key: string): string | null {
  const value = detail(error, key);
  return typeof value === 'string' ? value : null;
}

function detailStatus(error: AppError): (typeof VISIBLE_STATUSES)[number] {
  const status = detail(error, 'status');
  if (typeof status !== 'string' || !(VISIBLE_STATUSES as readonly string[]).includes(status)) {
    throw new Error(`${error.code} carries status ${String(status)}, not a partner-visible status`);
  }
  return status as (typeof VISIBLE_STATUSES)[number];
}

function detailAmount(error: AppError, key: string): bigint {
  const value = detail(error, key);
  if (typeof value !== 'number' && typeof value !== 'bigint') throw new Error(`${error.code} carries no ${key}`);
  return BigInt(value);
}

builder.objectType(SoldOutError, {
  name: 'SoldOutError',
  description: 'SOLD_OUT: the room is no longer available for these dates. Nothing was booked or charged; search again',
  interfaces: [DomainError],
});

builder.objectType(PriceChangedError, {
  name: 'PriceChangedError',
  description: 'PRICE_CHANGED: the provider no longer offers this price. Nothing was booked or charged; run the price check again',
  interfaces: [DomainError],
});

builder.objectType(InsufficientBalanceError, {
  name: 'InsufficientBalanceError',
  description: 'INSUFFICIENT_BALANCE (production): the channel balance is below the charge. Nothing was booked or charged',
  interfaces: [DomainError],
  fields: (t) => ({
    required: t.field({ type: 'Money', description: 'The charge (KRW)', resolve: (e) => detailAmount(e, 'required') }),
    available: t.field({ type: 'Money', description: 'The balance (KRW)', resolve: (e) => detailAmount(e, 'available') }),
  }),
});

builder.objectType(BookTokenError, {
  name: 'BookTokenError',
  description:
    'BOOK_TOKEN_USED (bookingId: the booking it made), BOOK_TOKEN_INVALID (malformed, altered or of another channel) or ' +
    'BOOK_TOKEN_EXPIRED (run the price check again)',
  interfaces: [DomainError],
  fields: (t) => ({
    bookingId: t.id({ nullable: true, resolve: (e) => detailString(e, 'booking_id') }),
  }),
});

builder.objectType(AlreadyCancelledError, {
  name: 'BookingAlreadyCancelledError',
  description: 'BOOKING_ALREADY_CANCELLED: the booking is cancelled, or being cancelled (status cancelling)',
  interfaces: [DomainError],
  fields: (t) => ({
    bookingId: t.id({ resolve: (e) => detailString(e, 'booking_id') ?? '' }),
    status: t.field({ type: BookingStatus, resolve: detailStatus }),
  }),
});

builder.objectType(NotCancellableError, {
  name: 'BookingNotCancellableError',
  description: 'BOOKING_NOT_CANCELLABLE: checked in, checked out, no-show, failed or completed; or the provider refused',
  interfaces: [DomainError],
  fields: (t) => ({
    bookingId: t.id({ resolve: (e) => detailString(e, 'booking_id') ?? '' }),
    status: t.field({ type: BookingStatus, resolve: detailStatus }),
  }),
});

builder.objectType(NotModifiableError, {
  name: 'BookingNotModifiableError',
  description: 'BOOKING_NOT_MODIFIABLE: the booking is closed, or specialRequests changed after check-in',
  interfaces: [DomainError],
  fields: (t) => ({
    bookingId: t.id({ resolve: (e) => detailString(e, 'booking_id') ?? '' }),
    status: t.field({ type: BookingStatus, resolve: detailStatus }),
  }),
});
