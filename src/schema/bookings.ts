import { z } from 'zod';
import {
  AlreadyCancelledError,
  bookingRules,
  BookTokenError,
  cancelBooking,
  cancellationQuote,
  createBooking,
  dateOnly,
  getBooking,
  InsufficientBalanceError,
  isVisible,
  listBookings,
  NotCancellableError,
  NotModifiableError,
  PriceChangedError,
  SoldOutError,
  updateBooking,
  VISIBLE_STATUSES,
  type Booking,
  type BookingPage,
  type BookingView,
  type CancellationQuote,
  type FilterNames,
  type PartyNames,
} from '../services/bookings/index.js';
import { builder } from './builder.js';
import { graphqlNames } from './errors.js';
import { orNull } from './orNull.js';
import { CancellationPolicyType } from './properties.js';
import { PaginationRef } from './search.js';
import { operationScopes } from '../services/access/index.js';

/**
 * Bookings: the GraphQL twins of the v1 booking routes (REST: /channel/v1/bookings...), over the
 * same services and the same input rules.
 *
 * Expected outcomes of a mutation (sold out, price changed, balance too low, a used, invalid or
 * expired book token, a booking that cannot be cancelled or modified) are members of the
 * mutation's result union, each implementing `DomainError { code message }` with the extra
 * fields of its REST `details`. Everything else (authentication, scope, input validation, an
 * unknown booking, a provider failure, a concurrent change) stays a top-level GraphQL error with
 * `extensions.code`, as on every other field. Queries have no unions: an unknown booking is null,
 * and a refused fee preview is a top-level error.
 */

// ---------------------------------------------------------------------------------------------
// The booking record (docs/spec/channel-api.md §2.2), from the Prisma row

export const BookingStatus = builder.enumType('BookingStatus', {
  description: 'The statuses a partner sees (spec §2.2)',
  values: VISIBLE_STATUSES,
});

export const BookingRef = builder.objectRef<BookingView>('Booking').implement({
  description: 'A booking of the channel (spec §2.2; REST: GET /channel/v1/bookings/{id})',
  fields: (t) => ({
    id: t.exposeID('id'),
    userId: t.id({ description: 'The channel', resolve: (b) => b.channelId }),
    appId: t.exposeID('appId'),
    hubBookingNumber: t.exposeString('hubBookingNumber', { nullable: true, description: "The provider's confirmation number" }),
    channelBookingNumber: t.exposeString('channelBookingNumber', { nullable: true, description: "The partner's own booking number" }),
    propertyId: t.exposeInt('propertyId'),
    propertyName: t.exposeString('propertyName', { nullable: true }),
    roomType: t.exposeString('roomType', { nullable: true }),
    ratePlan: t.exposeString('ratePlan', { nullable: true }),
    checkin: t.string({ description: 'YYYY-MM-DD', resolve: (b) => dateOnly(b.checkin) }),
    checkout: t.string({ description: 'YYYY-MM-DD', resolve: (b) => dateOnly(b.checkout) }),
    guestsAdult: t.exposeInt('guestsAdult'),
    guestsChild: t.exposeInt('guestsChild'),
    bookerName: t.exposeString('bookerName'),
    bookerEmail: t.exposeString('bookerEmail', { nullable: true }),
    guestFirstName: t.exposeString('guestFirstName', { nullable: true }),
    guestLastName: t.exposeString('guestLastName', { nullable: true }),
    guestPhone: t.exposeString('guestPhone', { nullable: true }),
    guestCountry: t.exposeString('guestCountry', { nullable: true, description: 'ISO 3166-1 alpha-2' }),
    specialRequests: t.exposeString('specialRequests', { nullable: true }),
    totalAmount: t.expose('totalAmount', { type: 'Money', description: 'What was paid in, and the base of any refund (KRW)' }),
    netAmount: t.expose('netAmount', { type: 'Money', description: 'What was paid in (KRW)' }),
    saleAmount: t.expose('saleAmount', { type: 'Money', nullable: true, description: "The channel's customer price; informational" }),
    currency: t.exposeString('currency'),
    status: t.field({
      type: BookingStatus,
      resolve: (b) => {
        // The services never hand out processing or void rows; this is the record's own guard.
        if (!isVisible(b.status)) throw new Error(`booking ${b.id} is ${b.status}, not a partner-visible status`);
        return b.status;
      },
    }),
    cancellationPolicy: t.field({
      type: CancellationPolicyType,
      nullable: true,
      resolve: (b) => b.cancellationPolicy as (typeof CancellationPolicyType.$inferType) | null,
    }),
    cancellationDeadline: t.expose('cancellationDeadline', {
      type: 'DateTime',
      nullable: true,
      description: 'Free cancellation until then; null: never free',
    }),
    refundAmount: t.expose('refundAmount', { type: 'Money', nullable: true }),
    cancellationFee: t.expose('cancellationFee', { type: 'Money', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const BookingPageRef = builder.objectRef<BookingPage>('BookingPage').implement({
  description: 'A page of bookings, newest first',
  fields: (t) => ({
    items: t.field({ type: [BookingRef], resolve: (p) => p.items }),
    pagination: t.field({ type: PaginationRef, resolve: (p) => p }),
  }),
});

const CancellationQuoteRef = builder.objectRef<CancellationQuote>('CancellationQuote').implement({
  description: 'What cancelling now would cost; for a cancelled booking, what it cost',
  fields: (t) => ({
    booking: t.field({ type: BookingRef, resolve: (q) => q.booking }),
    cancellationFee: t.expose('fee', { type: 'Money' }),
    refundAmount: t.expose('refund', { type: 'Money', description: 'totalAmount - cancellationFee' }),
    currency: t.string({ resolve: (q) => q.booking.currency }),
    freeCancellationBefore: t.expose('freeCancellationBefore', {
      type: 'DateTime',
      nullable: true,
      description: 'Null: never free (non_refundable)',
    }),
    final: t.exposeBoolean('final', { description: 'True when these are the figures a past cancellation recorded' }),
  }),
});

// ---------------------------------------------------------------------------------------------
// Inputs, validated with the rules REST uses (bookingRules)

const BookingFilter = builder.inputType('BookingFilter', {
  fields: (t) => ({
    status: t.field({ type: BookingStatus }),
    checkinFrom: t.string({ description: 'YYYY-MM-DD, inclusive' }),
    checkinTo: t.string({ description: 'YYYY-MM-DD, inclusive' }),
    createdFrom: t.string({ description: 'YYYY-MM-DD (UTC day), inclusive' }),
    createdTo: t.string({ description: 'YYYY-MM-DD (UTC day), inclusive' }),
    channelBookingNumber: t.string({ description: "The partner's booking number (REST: affiliate_reference_id)" }),
  }),
});

const CreateBookingInput = builder.inputType('CreateBookingInput', {
  description: 'The body of POST /channel/v1/bookings in camelCase. The charge is the amount signed into the book token',
  fields: (t) => ({
    bookToken: t.string({ required: true, description: 'From priceCheck; single use' }),
    bookerName: t.string({ required: true }),
    bookerEmail: t.string(),
    guestFirstName: t.string(),
    guestLastName: t.string(),
    guestPhone: t.string(),
    guestCountry: t.string({ description: 'ISO 3166-1 alpha-2' }),
    guestsAdult: t.int({ description: "Default and most: the adults the book token was priced for (every room together); more is a VALIDATION_ERROR" }),
    guestsChild: t.int({ description: "Default and most: the children the book token was priced for (every room together); more is a VALIDATION_ERROR" }),
    propertyName: t.string({ description: 'Display only; default: the catalog name' }),
    roomType: t.string({ description: 'Display only' }),
    ratePlan: t.string({ description: 'Display only' }),
    specialRequests: t.string(),
    saleAmount: t.field({ type: 'Money', description: 'Informational; the charge is the book token amount' }),
    channelBookingNumber: t.string({ description: "The partner's own booking number" }),
  }),
});

const UpdateBookingInput = builder.inputType('UpdateBookingInput', {
  description: 'Fields to change (REST: PATCH /channel/v1/bookings/{id}); omitted fields stay, null clears one. ' +
    'specialRequests only before check-in',
  fields: (t) => ({
    bookerName: t.string({ description: 'Cannot be cleared' }),
    bookerEmail: t.string(),
    guestFirstName: t.string(),
    guestLastName: t.string(),
    guestPhone: t.string(),
    guestCountry: t.string(),
    specialRequests: t.string(),
  }),
});

/** An optional GraphQL field: absent or null is left out, as REST leaves out an absent member. */
const optional = <T extends z.ZodType>(rule: T) => rule.nullish().transform((v) => v ?? undefined);
/** A PATCH field: absent stays absent (unchanged), null clears. */
const clearable = <T extends z.ZodType>(rule: T) => rule.nullable().optional();

const dateRule = bookingRules.date;

const bookingId = z.string().min(1).max(64);

const listArgs = z.object({
  filter: z
    .object({
      status: z.enum(VISIBLE_STATUSES).nullish(),
      checkinFrom: dateRule.nullish(),
      checkinTo: dateRule.nullish(),
      createdFrom: dateRule.nullish(),
      createdTo: dateRule.nullish(),
      channelBookingNumber: bookingRules.channelBookingNumber.nullish(),
    })
    .nullish(),
  page: z.int().min(1).max(1_000_000),
  perPage: z.int().min(1).max(100),
});

const createArgs = z.object({
  input: z.object({
    bookToken: bookingRules.bookToken,
    bookerName: bookingRules.bookerName,
    bookerEmail: optional(bookingRules.email),
    guestFirstName: optional(bookingRules.personName),
    guestLastName: optional(bookingRules.personName),
    guestPhone: optional(bookingRules.phone),
    guestCountry: optional(bookingRules.country),
    guestsAdult: optional(bookingRules.guestsAdult),
    guestsChild: optional(bookingRules.guestsChild),
    propertyName: optional(bookingRules.displayName),
    roomType: optional(bookingRules.displayName),
    ratePlan: optional(bookingRules.displayName),
    specialRequests: optional(bookingRules.specialRequests),
    // Money arrives as a bigint already; the REST rule takes a JSON number (range and all).
    saleAmount: optional(z.bigint().transform((v): number | string => Number(v)).pipe(bookingRules.saleAmount)),
    channelBookingNumber: optional(bookingRules.channelBookingNumber),
  }),
});

const updateArgs = z.object({
  id: bookingId,
  input: z
    .object({
      // Required on a booking: null is refused (as in REST), not taken for "unchanged".
      bookerName: bookingRules.bookerName.optional(),
      bookerEmail: clearable(bookingRules.email),
      guestFirstName: clearable(bookingRules.personName),
      guestLastName: clearable(bookingRules.personName),
      guestPhone: clearable(bookingRules.phone),
      guestCountry: clearable(bookingRules.country),
      specialRequests: clearable(bookingRules.specialRequests),
    })
    .refine((v) => Object.values(v).some((x) => x !== undefined), 'give at least one field to change'),
});

/** The party rule's refusals of createBooking name the GraphQL input fields. */
const PARTY_NAMES: PartyNames = graphqlNames('input', ['guestsAdult', 'guestsChild']);

/** Cross-field errors of listBookings name the GraphQL arguments. */
const FILTER_NAMES: FilterNames = graphqlNames('filter', ['checkinFrom', 'checkinTo', 'createdFrom', 'createdTo']);


// ---------------------------------------------------------------------------------------------
// Root fields

builder.queryFields((t) => ({
  bookings: t.field({
    type: BookingPageRef,
    description: "The channel's bookings, newest first (REST: GET /channel/v1/bookings)",
    authScopes: operationScopes('bookings.list'),
    args: {
      filter: t.arg({ type: BookingFilter }),
      page: t.arg.int({ required: true, defaultValue: 1 }),
      perPage: t.arg.int({ required: true, defaultValue: 20, description: '1 to 100' }),
    },
    validate: { schema: listArgs },
    resolve: (_root, { filter, page, perPage }, ctx) =>
      listBookings(
        ctx,
        {
          status: filter?.status ?? undefined,
          checkinFrom: filter?.checkinFrom ?? undefined,
          checkinTo: filter?.checkinTo ?? undefined,
          createdFrom: filter?.createdFrom ?? undefined,
          createdTo: filter?.createdTo ?? undefined,
          channelBookingNumber: filter?.channelBookingNumber ?? undefined,
          page,
          perPage,
        },
        FILTER_NAMES,
      ),
  }),
  booking: t.field({
    type: BookingRef,
    nullable: true,
    description: "One booking, or null when the channel has none with this id (REST: GET /channel/v1/bookings/{id})",
    authScopes: operationScopes('booking.read'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id: bookingId }) },
    resolve: (_root, args, ctx) => orNull(getBooking(ctx, String(args.id))),
  }),
  cancellationQuote: t.field({
    type: CancellationQuoteRef,
    nullable: true,
    description:
      'What cancelling now would cost, without cancelling; null when the channel has no such booking ' +
      '(REST: GET /channel/v1/bookings/{id}/cancellation-fee). A booking that cannot be cancelled is a ' +
      'BOOKING_NOT_CANCELLABLE or BOOKING_ALREADY_CANCELLED error',
    authScopes: operationScopes('booking.cancellationQuote'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id: bookingId }) },
    resolve: (_root, args, ctx) => orNull(cancellationQuote(ctx, String(args.id))),
  }),
}));

builder.mutationFields((t) => ({
  createBooking: t.field({
    type: BookingRef,
    description:
      'Books the offer of a book token (REST: POST /channel/v1/bookings). In production the charge is paid from the ' +
      'balance. The booking is confirmed, or pending when the provider confirms later. A provider failure is a ' +
      'top-level UPSTREAM_ERROR; then, as after SoldOutError or PriceChangedError, nothing is booked or charged',
    authScopes: operationScopes('booking.create'),
    args: { input: t.arg({ type: CreateBookingInput, required: true }) },
    validate: { schema: createArgs },
    errors: {
      types: [SoldOutError, PriceChangedError, InsufficientBalanceError, BookTokenError],
      union: { name: 'CreateBookingResult' },
      result: { name: 'CreateBookingSuccess' },
      dataField: { name: 'booking' },
    },
    resolve: (_root, args, ctx) => createBooking(ctx, args.input as z.infer<typeof createArgs>['input'], PARTY_NAMES),
  }),
  updateBooking: t.field({
    type: BookingRef,
    description:
      'Changes booker and guest details (REST: PATCH /channel/v1/bookings/{id}); writes reservation.modified when ' +
      'something changed',
    authScopes: operationScopes('booking.update'),
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateBookingInput, required: true }) },
    validate: { schema: updateArgs },
    errors: {
      types: [NotModifiableError],
      union: { name: 'UpdateBookingResult' },
      result: { name: 'UpdateBookingSuccess' },
      dataField: { name: 'booking' },
    },
    resolve: (_root, args, ctx) => updateBooking(ctx, String(args.id), args.input as z.infer<typeof updateArgs>['input']),
  }),
  cancelBooking: t.field({
    type: BookingRef,
    description:
      'Cancels a booking (REST: PUT /channel/v1/bookings/{id}/cancel); the booking carries the fee and refund. ' +
      'In production the refund is credited to the balance once. A provider failure is a top-level UPSTREAM_ERROR ' +
      'and leaves the booking as it was; so is, in production, a provider that does not know the booking (it does not ' +
      'confirm the cancellation: extensions.details.reason provider_does_not_confirm_cancellation)',
    authScopes: operationScopes('booking.cancel'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id: bookingId }) },
    errors: {
      types: [AlreadyCancelledError, NotCancellableError],
      union: { name: 'CancelBookingResult' },
      result: { name: 'CancelBookingSuccess' },
      dataField: { name: 'booking' },
    },
    resolve: (_root, args, ctx) => cancelBooking(ctx, String(args.id)),
  }),
}));
