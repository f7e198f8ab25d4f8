import { z } from 'zod';
import {
  AlreadyCancelledError,
  bookingCursor,
  bookingRules,
  BookTokenError,
  bookingWindow,
  cancelBooking,
  cancellationQuote,
  createBooking,
  readBooking,
  InsufficientBalanceError,
  NotCancellableError,
  NotModifiableError,
  PriceChangedError,
  SoldOutError,
  updateBooking,
  VISIBLE_STATUSES,
  type BookingFilterValues,
  type FilterNames,
  type PartyNames,
} from '../services/bookings/index.js';
import { operationScopes } from '../services/access/index.js';
import type { RequestContext } from '../context.js';
import { BookingConnection, BookingRef, BookingStatus, CancellationQuoteRef } from './bookingTypes.js';
import { builder } from './builder.js';
import { Channel } from './channel.js';
import { connectionArgs, keysetConnection } from './connections.js';
import { graphqlNames } from './errors.js';
import { idArgument } from './node.js';
import { orNull } from './orNull.js';

/**
 * Bookings: the GraphQL twins of the v1 booking routes (REST: /channel/v1/bookings...), over the
 * same services and the same input rules; the Booking type and its edges are in bookingTypes.ts.
 * The channel's bookings are a connection, at the root and on Channel.
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
// Inputs, validated with the rules REST uses (bookingRules)

const BookingFilter = builder.inputType('BookingFilter', {
  fields: (t) => ({
    status: t.field({ type: BookingStatus }),
    checkinFrom: t.field({ type: 'Date', description: 'Inclusive' }),
    checkinTo: t.field({ type: 'Date', description: 'Inclusive' }),
    createdFrom: t.field({ type: 'Date', description: 'UTC day, inclusive' }),
    createdTo: t.field({ type: 'Date', description: 'UTC day, inclusive' }),
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

/** A booking id argument: the bookingId (REST) or the Booking's global id. */
const bookingId = idArgument('Booking');

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
  ...connectionArgs,
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

/** The channel's bookings under `filter`, a page of them for the connection arguments. */
function bookingPage(ctx: RequestContext, { filter, ...page }: z.infer<typeof listArgs>) {
  const filters: BookingFilterValues = {
    status: filter?.status ?? undefined,
    checkinFrom: filter?.checkinFrom ?? undefined,
    checkinTo: filter?.checkinTo ?? undefined,
    createdFrom: filter?.createdFrom ?? undefined,
    createdTo: filter?.createdTo ?? undefined,
    channelBookingNumber: filter?.channelBookingNumber ?? undefined,
  };
  return keysetConnection(page, bookingWindow(ctx, filters, FILTER_NAMES), bookingCursor);
}

const BOOKINGS_DESCRIPTION = "The channel's bookings, newest first (REST: GET /channel/v1/bookings)";

builder.objectField(Channel, 'bookings', (t) =>
  t.connection(
    {
      type: BookingRef,
      nullable: true,
      description: `${BOOKINGS_DESCRIPTION}; scope reservations:read`,
      authScopes: operationScopes('bookings.list'),
      args: { filter: t.arg({ type: BookingFilter }) },
      validate: { schema: listArgs },
      resolve: (_channel, args, ctx) => bookingPage(ctx, args),
    },
    BookingConnection,
  ),
);

builder.queryFields((t) => ({
  bookings: t.connection(
    {
      type: BookingRef,
      description: BOOKINGS_DESCRIPTION,
      authScopes: operationScopes('bookings.list'),
      args: { filter: t.arg({ type: BookingFilter }) },
      validate: { schema: listArgs },
      resolve: (_root, args, ctx) => bookingPage(ctx, args),
    },
    BookingConnection,
  ),
  booking: t.field({
    type: BookingRef,
    nullable: true,
    description: "One booking by its bookingId or global id, or null when the channel has none (REST: GET /channel/v1/bookings/{id})",
    authScopes: operationScopes('booking.read'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id: bookingId }) },
    resolve: (_root, args, ctx) => orNull(readBooking(ctx, args.id)),
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
    resolve: (_root, args, ctx) => orNull(cancellationQuote(ctx, args.id)),
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
    resolve: (_root, args, ctx) => updateBooking(ctx, args.id, args.input as z.infer<typeof updateArgs>['input']),
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
    resolve: (_root, args, ctx) => cancelBooking(ctx, args.id),
  }),
}));
