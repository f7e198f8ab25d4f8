import { z } from '@hono/zod-openapi';
import { bookingRules, VISIBLE_STATUSES as LIST_STATUSES, type Booking, type CancellationQuote } from '../../../src/services/bookings/index.js';
import { CANCELLATION_POLICY_TYPES, amountToNumber } from '../../../src/services/kernel/index.js';
import { intParam } from '../../params.js';
import { CancellationPolicyWire } from '../search/wire.js';

/**
 * The wire shapes of v1 bookings (docs/spec/channel-api.md §4.5) and their mappers. Records are docs/spec/channel-api.md §2.2: camelCase
 * with 64-bit amounts as strings; the fee endpoints give numbers, as the specification says.
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
    cancellationPolicy: z.enum(CANCELLATION_POLICY_TYPES).nullable(),
    cancellationDeadline: z.iso.datetime().nullable().openapi({ description: 'Free cancellation until then; null: never free' }),
    refundAmount: amountString.nullable(),
    cancellationFee: amountString.nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi('Booking');

const optional = <T extends z.ZodType>(rule: T) => rule.optional();

export const CreateBookingWire = z
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

export const UpdateBookingWire = z
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

export const BookingId = z.object({ id: z.string().min(1).max(64).openapi({ description: 'Booking id (uuid)' }) });

const dateQuery = bookingRules.date;

export const ListQuery = z.object({
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

export const CancelWire = z
  .object({
    booking_id: z.uuid(),
    status: z.literal('cancelled'),
    cancellation_fee: z.number(),
    refund_amount: z.number(),
    currency: z.string(),
  })
  .openapi('CancellationResult');

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

export function policyOf(b: Booking): z.infer<typeof CancellationPolicyWire> {
  return {
    type: (b.cancellationPolicy ?? 'non_refundable') as z.infer<typeof CancellationPolicyWire>['type'],
    free_cancellation_before: b.cancellationDeadline?.toISOString() ?? null,
  };
}

export function cancelledToWire(booking: Booking): z.infer<typeof CancelWire> {
  return {
    booking_id: booking.id,
    status: 'cancelled' as const,
    cancellation_fee: amountToNumber(booking.cancellationFee ?? 0n),
    refund_amount: amountToNumber(booking.refundAmount ?? 0n),
    currency: booking.currency,
  };
}
