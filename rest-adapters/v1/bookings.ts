import { OpenAPIHono, z } from '@hono/zod-openapi';
import { VISIBLE_STATUSES as LIST_STATUSES } from '../../src/services/bookings/states.js';
import {
  bookingRules,
  cancelBooking,
  cancellationQuote,
  createBooking,
  getBooking,
  listBookings,
  toBookingRecord,
  updateBooking,
  type Booking,
  type CancellationQuote,
} from '../../src/services/bookings/bookings.js';
import { NotImplementedError, amountToNumber } from '../../src/services/kernel/index.js';
import { dataEnvelope, errorResponses, Meta, ok } from '../envelope.js';
import { scopedRoute, type HttpEnv } from '../http.js';
import { idempotency, idempotencyHeader } from '../idempotency.js';
import { intParam } from '../params.js';
import { BAD_ID } from './reservationParams.js';
import { CancellationPolicyWire, Pagination, paginationToWire } from './search.js';

/**
 * v1 bookings (spec §4.5): create from a book_token, list, read, modify, preview and cancel, and
 * the two endpoints the contract keeps unimplemented (501). Records are spec §2.2: camelCase with
 * 64-bit amounts as strings; the fee endpoints give numbers, as the specification says.
 */

const amountString = z.string().regex(/^\d+$/).openapi({ description: '64-bit integer amount, as a string', example: '182400' });

export const BookingRecordWire = z
  .object({
    id: z.uuid(),
    userId: z.uuid().openapi({ description: 'The channel' }),
    appId: z.uuid(),
    hubBookingNumber: z.string().nullable().openapi({ description: "The provider's confirmation number" }),
    channelBookingNumber: z.string().nullable().openapi({ description: "The partner's own booking number" }),
    propertyId: z.string(),
    propertyName: z.string().nullable(),
    roomType: z.string().nullable(),
    ratePlan: z.string().nullable(),
    checkin: z.iso.date(),
    checkout: z.iso.date(),
    guestsAdult: z.int(),
    guestsChild: z.int(),
    bookerName: z.string(),
    bookerEmail: z.string().nullable(),
    guestFirstName: z.string().nullable(),
    guestLastName: z.string().nullable(),
    guestPhone: z.string().nullable(),
    guestCountry: z.string().nullable(),
    specialRequests: z.string().nullable(),
    totalAmount: amountString.openapi({ description: 'What was paid in, and the base of any refund (KRW)' }),
    netAmount: amountString.openapi({ description: 'What was paid in (KRW)' }),
    saleAmount: amountString.nullable().openapi({ description: "The channel's customer price; informational" }),
    currency: z.string().openapi({ example: 'KRW' }),
    status: z.enum(LIST_STATUSES),
    cancellationPolicy: z.enum(['flexible', 'moderate', 'strict', 'non_refundable']).nullable(),
    cancellationDeadline: z.iso.datetime().nullable().openapi({ description: 'Free cancellation until then; null: never free' }),
    refundAmount: amountString.nullable(),
    cancellationFee: amountString.nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi('Booking');

const optional = <T extends z.ZodType>(rule: T) => rule.optional();

const CreateBookingWire = z
  .object({
    book_token: bookingRules.bookToken.openapi({ description: 'From GET /search/price-check; single use' }),
    booker_name: bookingRules.bookerName,
    booker_email: optional(bookingRules.email),
    guest_first_name: optional(bookingRules.personName),
    guest_last_name: optional(bookingRules.personName),
    guest_phone: optional(bookingRules.phone),
    guest_country: optional(bookingRules.country).openapi({ description: 'ISO 3166-1 alpha-2', example: 'KR' }),
    guests_adult: optional(bookingRules.guestsAdult).openapi({
      description: "Default and most: the adults the book_token was priced for (every room together); more is 400 VALIDATION_ERROR naming guests_adult",
    }),
    guests_child: optional(bookingRules.guestsChild).openapi({
      description: "Default and most: the children the book_token was priced for (every room together); more is 400 VALIDATION_ERROR naming guests_child",
    }),
    property_name: optional(bookingRules.displayName).openapi({ description: 'Display only; default: the catalog name' }),
    room_type: optional(bookingRules.displayName).openapi({ description: 'Display only' }),
    rate_plan: optional(bookingRules.displayName).openapi({ description: 'Display only' }),
    special_requests: optional(bookingRules.specialRequests),
    sale_amount: optional(bookingRules.saleAmount).openapi({ type: 'integer', minimum: 1, description: 'Informational; the charge is the book_token amount' }),
    channel_booking_number: optional(bookingRules.channelBookingNumber).openapi({ description: "The partner's own booking number" }),
  })
  .openapi('CreateBooking');

const nullable = <T extends z.ZodType>(rule: T) => rule.nullable().optional();

const UpdateBookingWire = z
  .object({
    booker_name: optional(bookingRules.bookerName),
    booker_email: nullable(bookingRules.email),
    guest_first_name: nullable(bookingRules.personName),
    guest_last_name: nullable(bookingRules.personName),
    guest_phone: nullable(bookingRules.phone),
    guest_country: nullable(bookingRules.country),
    special_requests: nullable(bookingRules.specialRequests).openapi({ description: 'Only before check-in' }),
  })
  .strict()
  .refine((body) => Object.values(body).some((v) => v !== undefined), { message: 'give at least one field to change' })
  .openapi('UpdateBooking');

/** The error responses of a booking path id, shared by the by-id routes. */
const NO_BOOKING = [404, "NOT_FOUND: no booking of this channel has this id (another channel's booking is 404 too)"] as const;

const BookingId = z.object({ id: z.string().min(1).max(64).openapi({ description: 'Booking id (uuid)' }) });

const dateQuery = bookingRules.date;

const ListQuery = z.object({
  page: intParam(z.int().min(1).max(1_000_000)).optional().default(1),
  per_page: intParam(z.int().min(1).max(100)).optional().default(20),
  status: z.enum(LIST_STATUSES).optional(),
  checkin_from: dateQuery.optional(),
  checkin_to: dateQuery.optional(),
  created_from: dateQuery.optional().openapi({ description: 'UTC day' }),
  created_to: dateQuery.optional().openapi({ description: 'UTC day, inclusive' }),
  affiliate_reference_id: bookingRules.channelBookingNumber.optional().openapi({ description: "The partner's booking number (channelBookingNumber)" }),
});

export const FeeWire = z
  .object({
    booking_id: z.uuid(),
    cancellation_fee: z.number().openapi({ description: 'KRW' }),
    refund_amount: z.number(),
    currency: z.string(),
    cancellation_policy: CancellationPolicyWire,
  })
  .openapi('CancellationFee');

const CancelWire = z
  .object({
    booking_id: z.uuid(),
    status: z.literal('cancelled'),
    cancellation_fee: z.number(),
    refund_amount: z.number(),
    currency: z.string(),
  })
  .openapi('CancellationResult');

const createRoute = scopedRoute('reservations:write', {
  method: 'post',
  path: '/bookings',
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
      [400, 'VALIDATION_ERROR: a bad field (details.fields), a malformed JSON body or Idempotency-Key'],
      401,
      402,
      403,
      [409, 'SOLD_OUT or PRICE_CHANGED (nothing booked; the book_token can be used again), IDEMPOTENCY_KEY_REUSED, or IDEMPOTENCY_KEY_IN_PROGRESS (with Retry-After)'],
      413,
      [422, 'BOOK_TOKEN_USED (details.booking_id), BOOK_TOKEN_INVALID or BOOK_TOKEN_EXPIRED'],
      429,
      [502, 'UPSTREAM_ERROR: the provider failed; nothing is booked or charged and the book_token can be used again'],
    ),
  },
}, [idempotency()]);

const listRoute = scopedRoute('reservations:read', {
  method: 'get',
  path: '/bookings',
  tags: ['Bookings'],
  summary: "The channel's bookings, newest first",
  request: { query: ListQuery },
  responses: {
    200: {
      description: 'A page of bookings',
      content: { 'application/json': { schema: z.object({ data: z.array(BookingRecordWire), pagination: Pagination, meta: Meta }) } },
    },
    ...errorResponses([400, 'VALIDATION_ERROR: a bad query parameter (details.fields)'], 401, 403, 429),
  },
});

const getRoute = scopedRoute('reservations:read', {
  method: 'get',
  path: '/bookings/{id}',
  tags: ['Bookings'],
  summary: 'One booking',
  request: { params: BookingId },
  responses: {
    200: { description: 'The booking', content: { 'application/json': { schema: dataEnvelope(BookingRecordWire) } } },
    ...errorResponses(BAD_ID, 401, 403, NO_BOOKING, 429),
  },
});

const patchRoute = scopedRoute('reservations:write', {
  method: 'patch',
  path: '/bookings/{id}',
  tags: ['Bookings'],
  summary: 'Update booker and guest details',
  description:
    'Allowed while the booking is pending, confirmed or checked in; special_requests only before check-in (15:00 local on the ' +
    'check-in date). null clears a field. Writes reservation.modified when something changed. 409 BOOKING_NOT_MODIFIABLE.',
  request: { params: BookingId, body: { required: true, content: { 'application/json': { schema: UpdateBookingWire } } } },
  responses: {
    200: { description: 'The updated booking', content: { 'application/json': { schema: dataEnvelope(BookingRecordWire) } } },
    ...errorResponses(
      [400, 'VALIDATION_ERROR: a bad field or id (details.fields), or a malformed JSON body'],
      401,
      403,
      NO_BOOKING,
      [409, 'BOOKING_NOT_MODIFIABLE (details.status), or BOOKING_CHANGED: read it and retry'],
      413,
      429,
    ),
  },
});

const feeRoute = scopedRoute('reservations:read', {
  method: 'get',
  path: '/bookings/{id}/cancellation-fee',
  tags: ['Bookings'],
  summary: 'What cancelling now would cost, without cancelling',
  description: 'For a cancelled booking, the fee and refund it was cancelled with. 409 BOOKING_NOT_CANCELLABLE for checked-in and closed bookings.',
  request: { params: BookingId },
  responses: {
    200: { description: 'The fee and refund', content: { 'application/json': { schema: dataEnvelope(FeeWire) } } },
    ...errorResponses(BAD_ID, 401, 403, NO_BOOKING, [409, 'BOOKING_NOT_CANCELLABLE: checked in, checked out, no-show or failed (details.status)'], 429),
  },
});

const policyRoute = scopedRoute('reservations:read', {
  method: 'get',
  path: '/bookings/{id}/cancellation-policy',
  tags: ['Bookings'],
  summary: "The booking's cancellation policy",
  request: { params: BookingId },
  responses: {
    200: { description: 'The policy', content: { 'application/json': { schema: dataEnvelope(CancellationPolicyWire) } } },
    ...errorResponses(BAD_ID, 401, 403, NO_BOOKING, 429),
  },
});

const cancelRoute = scopedRoute('reservations:write', {
  method: 'put',
  path: '/bookings/{id}/cancel',
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
      [400, 'VALIDATION_ERROR: a bad id or Idempotency-Key (details.fields)'],
      401,
      403,
      NO_BOOKING,
      [
        409,
        'BOOKING_ALREADY_CANCELLED, BOOKING_NOT_CANCELLABLE (checked in, checked out, no-show, failed; details.status), ' +
          'BOOKING_CHANGED (read it and retry), IDEMPOTENCY_KEY_REUSED, or IDEMPOTENCY_KEY_IN_PROGRESS (with Retry-After)',
      ],
      429,
      [502, 'UPSTREAM_ERROR: the provider failed, or does not confirm the cancellation (production; details.reason); the booking is unchanged'],
    ),
  },
}, [idempotency()]);

const voucherRoute = scopedRoute('voucher:read', {
  method: 'get',
  path: '/bookings/{id}/voucher',
  tags: ['Bookings'],
  summary: 'Booking voucher (not implemented)',
  deprecated: true,
  description: 'Unimplemented in v1: always 501 NOT_IMPLEMENTED for a booking of the channel.',
  request: { params: BookingId },
  responses: errorResponses(BAD_ID, 401, 403, NO_BOOKING, 429, [501, 'NOT_IMPLEMENTED: always, for a booking of the channel']),
});

const plannedParam = z.union([z.string(), z.array(z.string())]).optional();

const taxInvoicesRoute = scopedRoute('tax-invoices:read', {
  method: 'get',
  path: '/tax-invoices',
  tags: ['Tax invoices'],
  summary: 'Tax invoices (not implemented)',
  deprecated: true,
  description: 'Unimplemented in v1: always 501 NOT_IMPLEMENTED. Planned query: year, month (1 to 12).',
  request: {
    // Documented for the future, not read: whatever is sent (a repeated year too) is still 501.
    query: z.object({
      year: plannedParam.openapi({ type: 'string', description: 'Planned: year (integer)' }),
      month: plannedParam.openapi({ type: 'string', description: 'Planned: month, 1 to 12' }),
    }),
  },
  responses: errorResponses(401, 403, 429, [501, 'NOT_IMPLEMENTED: always, once authenticated']),
});

export function bookingRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(createRoute, async (c) => {
    const b = c.req.valid('json');
    const booking = await createBooking(c.get('ctx'), {
      bookToken: b.book_token,
      bookerName: b.booker_name,
      bookerEmail: b.booker_email,
      guestFirstName: b.guest_first_name,
      guestLastName: b.guest_last_name,
      guestPhone: b.guest_phone,
      guestCountry: b.guest_country,
      guestsAdult: b.guests_adult,
      guestsChild: b.guests_child,
      propertyName: b.property_name,
      roomType: b.room_type,
      ratePlan: b.rate_plan,
      specialRequests: b.special_requests,
      saleAmount: b.sale_amount,
      channelBookingNumber: b.channel_booking_number,
    });
    c.header('Location', `/channel/v1/bookings/${booking.id}`);
    return ok(c, toBookingRecord(booking), 201);
  });

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    const page = await listBookings(
      c.get('ctx'),
      {
        status: q.status,
        checkinFrom: q.checkin_from,
        checkinTo: q.checkin_to,
        createdFrom: q.created_from,
        createdTo: q.created_to,
        channelBookingNumber: q.affiliate_reference_id,
        page: q.page,
        perPage: q.per_page,
      },
      { checkinFrom: 'checkin_from', checkinTo: 'checkin_to', createdFrom: 'created_from', createdTo: 'created_to' },
    );
    return ok(c, page.items.map(toBookingRecord), 200, { pagination: paginationToWire(page) });
  });

  app.openapi(getRoute, async (c) => ok(c, toBookingRecord(await getBooking(c.get('ctx'), c.req.valid('param').id))));

  app.openapi(patchRoute, async (c) => {
    const b = c.req.valid('json');
    const booking = await updateBooking(c.get('ctx'), c.req.valid('param').id, {
      bookerName: b.booker_name,
      bookerEmail: b.booker_email,
      guestFirstName: b.guest_first_name,
      guestLastName: b.guest_last_name,
      guestPhone: b.guest_phone,
      guestCountry: b.guest_country,
      specialRequests: b.special_requests,
    });
    return ok(c, toBookingRecord(booking));
  });

  app.openapi(feeRoute, async (c) => ok(c, feeToWire(await cancellationQuote(c.get('ctx'), c.req.valid('param').id))));

  app.openapi(policyRoute, async (c) => ok(c, policyOf(await getBooking(c.get('ctx'), c.req.valid('param').id))));

  app.openapi(cancelRoute, async (c) => {
    const booking = await cancelBooking(c.get('ctx'), c.req.valid('param').id);
    return ok(c, {
      booking_id: booking.id,
      status: 'cancelled' as const,
      cancellation_fee: amountToNumber(booking.cancellationFee ?? 0n),
      refund_amount: amountToNumber(booking.refundAmount ?? 0n),
      currency: booking.currency,
    });
  });

  app.openapi(voucherRoute, async (c) => {
    // The booking must be the caller's (404 otherwise) before the contract's 501.
    await getBooking(c.get('ctx'), c.req.valid('param').id);
    throw new NotImplementedError('Vouchers are not available in v1');
  });

  app.openapi(taxInvoicesRoute, async () => {
    throw new NotImplementedError('Tax invoices are not available in v1');
  });
}

/** The fee preview as GET /bookings/{id}/cancellation-fee (and its alias under /reservations) answers it. */
export function feeToWire(quote: CancellationQuote): z.infer<typeof FeeWire> {
  return {
    booking_id: quote.booking.id,
    cancellation_fee: amountToNumber(quote.fee),
    refund_amount: amountToNumber(quote.refund),
    currency: quote.booking.currency,
    cancellation_policy: policyOf(quote.booking),
  };
}

function policyOf(b: Booking): z.infer<typeof CancellationPolicyWire> {
  return {
    type: (b.cancellationPolicy ?? 'non_refundable') as z.infer<typeof CancellationPolicyWire>['type'],
    free_cancellation_before: b.cancellationDeadline?.toISOString() ?? null,
  };
}
