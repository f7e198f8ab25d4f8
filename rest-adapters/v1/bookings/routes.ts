import { z } from '@hono/zod-openapi';
import { dataEnvelope, errorResponses, Meta } from '../../envelope.js';
import { scopedRoute } from '../../routing.js';
import { idempotency, idempotencyHeader } from '../../idempotency.js';
import { BAD_ID } from '../reservations/params.js';
import { CancellationPolicyWire, Pagination } from '../search/wire.js';
import { BookingId, BookingRecordWire, CancelWire, CreateBookingWire, FeeWire, ListQuery, UpdateBookingWire } from './wire.js';
import { ConflictError, NotFoundError, NotImplementedError, UnprocessableError, UpstreamError, ValidationError } from '../../../src/services/kernel/index.js';
import { InsufficientBalanceError } from '../../../src/services/bookings/index.js';

/** The OpenAPI definitions of v1 bookings (docs/spec/channel-api.md §4.5); wire shapes in wire.ts. */

/** The error responses of a booking path id, shared by the by-id routes. */
const NO_BOOKING = [NotFoundError, "NOT_FOUND: no booking of this channel has this id (another channel's booking is 404 too)"] as const;

export const createRoute = scopedRoute('booking.create', {
  method: 'post',
  path: '/bookings',
  operationId: 'createBooking',
  tags: ['Bookings'],
  summary: 'Book the offer of a book_token',
  description:
    'The charge is the amount signed into the book_token; amounts in the body never change it. In production it is paid ' +
    'from the channel balance (402 INSUFFICIENT_BALANCE when short). 201 confirmed, or pending when the provider confirms later. ' +
    '422 BOOK_TOKEN_USED (details.booking_id), BOOK_TOKEN_INVALID or BOOK_TOKEN_EXPIRED. 409 SOLD_OUT or PRICE_CHANGED when ' +
    'the provider refuses; 502 when it fails: in both cases nothing is booked or charged and the token can be used again.',
  request: {
    headers: idempotencyHeader,
    body: { required: true, content: { 'application/json': { schema: CreateBookingWire } } },
  },
  responses: {
    201: {
      description: 'The booking (status confirmed, or pending when the provider confirms later)',
      headers: { Location: { description: 'The booking: /channel/v1/bookings/{id}', schema: { type: 'string' } } },
      content: { 'application/json': { schema: dataEnvelope(BookingRecordWire) } },
    },
    ...errorResponses(
      [ValidationError, 'VALIDATION_ERROR: a bad field (details.fields), a malformed JSON body or Idempotency-Key'],
      InsufficientBalanceError,
      [ConflictError, 'SOLD_OUT or PRICE_CHANGED (nothing booked; the book_token can be used again), IDEMPOTENCY_KEY_REUSED, or IDEMPOTENCY_KEY_IN_PROGRESS (with Retry-After)'],
      [UnprocessableError, 'BOOK_TOKEN_USED (details.booking_id), BOOK_TOKEN_INVALID or BOOK_TOKEN_EXPIRED'],
      [UpstreamError, 'UPSTREAM_ERROR: the provider failed; nothing is booked or charged and the book_token can be used again'],
    ),
  },
}, [idempotency()]);

export const listRoute = scopedRoute('bookings.list', {
  method: 'get',
  path: '/bookings',
  operationId: 'listBookings',
  tags: ['Bookings'],
  summary: "The channel's bookings, newest first",
  request: { query: ListQuery },
  responses: {
    200: {
      description: 'A page of bookings',
      content: { 'application/json': { schema: z.object({ data: z.array(BookingRecordWire), pagination: Pagination, meta: Meta }) } },
    },
    ...errorResponses([ValidationError, 'VALIDATION_ERROR: a bad query parameter (details.fields)']),
  },
});

export const getRoute = scopedRoute('booking.read', {
  method: 'get',
  path: '/bookings/{id}',
  operationId: 'getBooking',
  tags: ['Bookings'],
  summary: 'One booking',
  request: { params: BookingId },
  responses: {
    200: { description: 'The booking', content: { 'application/json': { schema: dataEnvelope(BookingRecordWire) } } },
    ...errorResponses(BAD_ID, NO_BOOKING),
  },
});

export const patchRoute = scopedRoute('booking.update', {
  method: 'patch',
  path: '/bookings/{id}',
  operationId: 'updateBooking',
  tags: ['Bookings'],
  summary: 'Update booker and guest details',
  description:
    'Allowed while the booking is pending, confirmed or checked in; special_requests only before check-in (15:00 local on the ' +
    'check-in date). null clears a field. Writes reservation.modified when something changed. 409 BOOKING_NOT_MODIFIABLE.',
  request: { params: BookingId, body: { required: true, content: { 'application/json': { schema: UpdateBookingWire } } } },
  responses: {
    200: { description: 'The updated booking', content: { 'application/json': { schema: dataEnvelope(BookingRecordWire) } } },
    ...errorResponses(
      [ValidationError, 'VALIDATION_ERROR: a bad field or id (details.fields), or a malformed JSON body'],
      NO_BOOKING,
      [ConflictError, 'BOOKING_NOT_MODIFIABLE (details.status), or BOOKING_CHANGED: read it and retry'],
    ),
  },
});

export const feeRoute = scopedRoute('booking.cancellationQuote', {
  method: 'get',
  path: '/bookings/{id}/cancellation-fee',
  operationId: 'getBookingCancellationFee',
  tags: ['Bookings'],
  summary: 'What cancelling now would cost, without cancelling',
  description: 'For a cancelled booking, the fee and refund it was cancelled with. 409 BOOKING_NOT_CANCELLABLE for checked-in and closed bookings.',
  request: { params: BookingId },
  responses: {
    200: { description: 'The fee and refund', content: { 'application/json': { schema: dataEnvelope(FeeWire) } } },
    ...errorResponses(BAD_ID, NO_BOOKING, [ConflictError, 'BOOKING_NOT_CANCELLABLE: checked in, checked out, no-show or failed (details.status)']),
  },
});

export const policyRoute = scopedRoute('booking.cancellationPolicy', {
  method: 'get',
  path: '/bookings/{id}/cancellation-policy',
  operationId: 'getBookingCancellationPolicy',
  tags: ['Bookings'],
  summary: "The booking's cancellation policy",
  request: { params: BookingId },
  responses: {
    200: { description: 'The policy', content: { 'application/json': { schema: dataEnvelope(CancellationPolicyWire) } } },
    ...errorResponses(BAD_ID, NO_BOOKING),
  },
});

export const cancelRoute = scopedRoute('booking.cancel', {
  method: 'put',
  path: '/bookings/{id}/cancel',
  operationId: 'cancelBooking',
  tags: ['Bookings'],
  summary: 'Cancel a booking',
  description:
    'Fee per the policy, measured from 15:00 on the check-in date in the property time zone; the refund (total - fee) is ' +
    'credited to the balance once in production. 409 BOOKING_ALREADY_CANCELLED or BOOKING_NOT_CANCELLABLE (checked in, ' +
    'checked out, no-show, failed). 502: the provider failed, or (production) does not know the booking and so does not ' +
    'confirm the cancellation (details.reason provider_does_not_confirm_cancellation); the booking is unchanged.',
  request: { params: BookingId, headers: idempotencyHeader },
  responses: {
    200: { description: 'Cancelled', content: { 'application/json': { schema: dataEnvelope(CancelWire) } } },
    ...errorResponses(
      [ValidationError, 'VALIDATION_ERROR: a bad id or Idempotency-Key (details.fields)'],
      NO_BOOKING,
      [
        ConflictError,
        'BOOKING_ALREADY_CANCELLED, BOOKING_NOT_CANCELLABLE (checked in, checked out, no-show, failed; details.status), ' +
          'BOOKING_CHANGED (read it and retry), IDEMPOTENCY_KEY_REUSED, or IDEMPOTENCY_KEY_IN_PROGRESS (with Retry-After)',
      ],
      [UpstreamError, 'UPSTREAM_ERROR: the provider failed, or does not confirm the cancellation (production; details.reason); the booking is unchanged'],
    ),
  },
}, [idempotency()]);

export const voucherRoute = scopedRoute('booking.voucher', {
  method: 'get',
  path: '/bookings/{id}/voucher',
  operationId: 'getBookingVoucher',
  tags: ['Bookings'],
  summary: 'Booking voucher (not implemented)',
  deprecated: true,
  description: 'Unimplemented in v1: always 501 NOT_IMPLEMENTED for a booking of the channel.',
  request: { params: BookingId },
  responses: errorResponses(BAD_ID, NO_BOOKING, [NotImplementedError, 'NOT_IMPLEMENTED: always, for a booking of the channel']),
});

const plannedParam = z.union([z.string(), z.array(z.string())]).optional();

export const taxInvoicesRoute = scopedRoute('taxInvoices.list', {
  method: 'get',
  path: '/tax-invoices',
  operationId: 'listTaxInvoices',
  tags: ['Tax invoices'],
  summary: 'Tax invoices (not implemented)',
  deprecated: true,
  description: 'Unimplemented in v1: always 501 NOT_IMPLEMENTED. Planned query: year, month (1 to 12).',
  request: {
    // Documented for the future, not read: whatever is sent (a repeated year too) is still 501.
    query: z.object({
      year: plannedParam.openapi({ type: 'integer', minimum: 2000, maximum: 9999, description: 'Planned: the year (not read yet)' }),
      month: plannedParam.openapi({ type: 'integer', minimum: 1, maximum: 12, description: 'Planned: the month, 1 to 12 (not read yet)' }),
    }),
  },
  responses: errorResponses([NotImplementedError, 'NOT_IMPLEMENTED: always, once authenticated']),
});
