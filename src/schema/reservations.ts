import { z } from 'zod';
import { AlreadyCancelledError, BookTokenError, InsufficientBalanceError, NotCancellableError, NotModifiableError, PriceChangedError, SoldOutError } from '../services/bookings/index.js';
import {
  cancelReservation,
  createReservation,
  readReservation,
  reservationCursor,
  reservationRules as rules,
  reservationView,
  reservationWindow,
  updateReservation,
  type ReservationView,
} from '../services/reservations/index.js';
import { builder } from './builder.js';
import { connectionArgs, keysetConnection } from './connections.js';
import { withGraphQLFields } from './errors.js';
import { idArgument } from './node.js';
import { orNull } from './orNull.js';
import { Currency } from './search.js';
import { ReservationCancellationRef, ReservationConnection, ReservationRef } from './reservationTypes.js';
import { operationScopes } from '../services/access/index.js';

/**
 * Reservations (docs/spec/channel-api.md §4.8): the GraphQL twins of /channel/v1/reservations, over the same services
 * (src/services/reservations/), scopes and input rules (reservationRules).
 *
 * As for the booking mutations, expected outcomes (sold out, price changed, balance too low, a
 * used, invalid or expired book token, a reservation or room that cannot be cancelled or
 * modified) are members of each mutation's result union, implementing DomainError; everything
 * else (authentication, scope, validation, an unknown reservation, a provider failure) is a
 * top-level error with extensions.code. The query fields answer null for a reservation the
 * channel does not have. Creating takes no idempotency key, as createBooking takes none.
 *
 * The service names fields in its errors as REST does (snake_case); here they name the GraphQL
 * arguments (`check_in` of the input is `input.checkIn`, `room_ids.0` is `roomIds.0`).
 */

// ---------------------------------------------------------------------------------------------
// Inputs, validated with the service's rules (the ones REST uses)

const ReservationFilter = builder.inputType('ReservationFilter', {
  description: 'Filters of reservations (REST: GET /channel/v1/reservations); they combine',
  fields: (t) => ({
    confirmationNumber: t.string({ description: 'Exact, in any case' }),
    guestEmail: t.string({ description: "The guest's e-mail, compared case-insensitively" }),
    checkInFrom: t.field({ type: 'Date', description: 'Check-in on or after' }),
    checkInTo: t.field({ type: 'Date', description: 'Check-in on or before' }),
  }),
});

const ReservationGuestInput = builder.inputType('ReservationGuestInput', {
  description: 'The lead guest and contact',
  fields: (t) => ({
    firstName: t.string({ required: true }),
    lastName: t.string({ required: true }),
    email: t.string({ required: true }),
    phone: t.string(),
    country: t.string({ description: 'ISO 3166-1 alpha-2' }),
  }),
});

const RoomGuestInput = builder.inputType('ReservationRoomGuestInput', {
  fields: (t) => ({
    firstName: t.string({ required: true }),
    lastName: t.string({ required: true }),
  }),
});

const ReservationRoomInput = builder.inputType('ReservationRoomInput', {
  fields: (t) => ({
    roomtypeId: t.string({ description: 'Default: the top-level roomtypeId' }),
    rateplanId: t.string({ description: 'Default: the top-level rateplanId' }),
    adults: t.int({ description: 'Required without a bookToken' }),
    children: t.int({ description: 'Taken as 8 years old unless childrenAges says' }),
    childrenAges: t.intList(),
    guest: t.field({ type: RoomGuestInput, description: "Who stays in this room, when not the reservation's guest; not for the first room" }),
  }),
});

const CreateReservationInput = builder.inputType('CreateReservationInput', {
  description:
    'The body of POST /channel/v1/reservations in camelCase: a bookToken (its offer at its price), or propertyId, the ' +
    'dates and the rooms, priced now by the search and the price check. Amounts are never taken from the client',
  fields: (t) => ({
    bookToken: t.string({ description: 'From priceCheck; single use' }),
    propertyId: t.int(),
    checkIn: t.field({ type: 'Date' }),
    checkOut: t.field({ type: 'Date' }),
    roomtypeId: t.string({ description: 'One room, or the default of each room in rooms' }),
    rateplanId: t.string(),
    adults: t.int({ description: 'The party of a one-room reservation (without rooms)' }),
    children: t.int(),
    childrenAges: t.intList(),
    rooms: t.field({ type: [ReservationRoomInput], description: 'Several rooms, one booking each, sharing one confirmation number' }),
    currency: t.field({ type: Currency, description: 'Currency to show prices in (default KRW); the channel is billed in KRW' }),
    guest: t.field({ type: ReservationGuestInput, required: true }),
    specialRequests: t.string(),
    arrivalTime: t.string({ description: 'HH:MM, local time at the property' }),
    channelBookingNumber: t.string({ description: "The partner's own reference" }),
  }),
});

const UpdateReservationGuestInput = builder.inputType('UpdateReservationGuestInput', {
  description: 'Omitted fields stay; null clears phone or country',
  fields: (t) => ({
    firstName: t.string(),
    lastName: t.string(),
    email: t.string(),
    phone: t.string(),
    country: t.string(),
  }),
});

const UpdateReservationInput = builder.inputType('UpdateReservationInput', {
  description:
    'Fields to change (REST: PATCH /channel/v1/reservations/{id}); omitted fields stay, null clears one. specialRequests and ' +
    'arrivalTime only before check-in',
  fields: (t) => ({
    guest: t.field({ type: UpdateReservationGuestInput }),
    specialRequests: t.string(),
    arrivalTime: t.string(),
  }),
});

/** An optional GraphQL field: absent or null is left out, as REST leaves out an absent member. */
const optional = <T extends z.ZodType>(rule: T) => rule.nullish().transform((v) => v ?? undefined);
/** A PATCH field: absent stays absent (unchanged), null clears. */
const clearable = <T extends z.ZodType>(rule: T) => rule.nullable().optional();
/** A PATCH field that cannot be cleared: null is refused, as in REST. */
const required = <T extends z.ZodType>(rule: T) => rule.optional();

const listArgs = z.object({
  filter: z
    .object({
      confirmationNumber: rules.confirmationNumber.nullish(),
      guestEmail: rules.email.nullish(),
      checkInFrom: rules.date.nullish(),
      checkInTo: rules.date.nullish(),
    })
    .nullish(),
  ...connectionArgs,
});

/** A reservation id argument: the reservationId (REST), the bookingId of any of its rooms, or the global id of either. */
const reservationId = idArgument('Reservation', 'Booking');

const roomInput = z.object({
  roomtypeId: optional(rules.roomtypeId),
  rateplanId: optional(rules.rateplanId),
  adults: optional(rules.roomAdults),
  children: optional(rules.roomChildren),
  childrenAges: optional(rules.childrenAges),
  guest: optional(z.object({ firstName: rules.personName, lastName: rules.personName })),
});

const createArgs = z.object({
  input: z.object({
    bookToken: optional(rules.bookToken),
    propertyId: optional(rules.propertyId),
    checkIn: optional(rules.checkIn),
    checkOut: optional(rules.checkOut),
    roomtypeId: optional(rules.roomtypeId),
    rateplanId: optional(rules.rateplanId),
    adults: optional(rules.roomAdults),
    children: optional(rules.roomChildren),
    childrenAges: optional(rules.childrenAges),
    rooms: optional(z.array(roomInput).min(1).max(rules.roomCount)),
    currency: optional(rules.currency),
    guest: z.object({
      firstName: rules.personName,
      lastName: rules.personName,
      email: rules.email,
      phone: optional(rules.phone),
      country: optional(rules.country),
    }),
    specialRequests: optional(rules.specialRequests),
    arrivalTime: optional(rules.arrivalTime),
    channelBookingNumber: optional(rules.channelBookingNumber),
  }),
});

const updateArgs = z.object({
  id: reservationId,
  input: z
    .object({
      guest: optional(
        z
          .object({
            firstName: required(rules.personName),
            lastName: required(rules.personName),
            email: required(rules.email),
            phone: clearable(rules.phone),
            country: clearable(rules.country),
          })
          .refine((g) => Object.values(g).some((v) => v !== undefined), 'give at least one guest field to change'),
      ),
      specialRequests: clearable(rules.specialRequests),
      arrivalTime: clearable(rules.arrivalTime),
    })
    .refine((v) => Object.values(v).some((x) => x !== undefined), 'give at least one field to change'),
});

const cancelArgs = z.object({
  id: reservationId,
  // Each room by its bookingId or the Booking's global id, under the service's own rule (roomIds).
  roomIds: optional(z.array(idArgument('Booking')).pipe(rules.roomIds)),
});

// ---------------------------------------------------------------------------------------------
// Root fields

builder.queryFields((t) => ({
  reservation: t.field({
    type: ReservationRef,
    nullable: true,
    description:
      'One reservation by its reservationId, the bookingId of any of its rooms, or the global id of either; null when ' +
      'the channel has none (REST: GET /channel/v1/reservations/{id})',
    authScopes: operationScopes('reservation.read'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id: reservationId }) },
    resolve: async (_root, args, ctx) => {
      const found = await orNull(readReservation(ctx, args.id));
      return found && reservationView(found);
    },
  }),
  reservations: t.connection(
    {
      type: ReservationRef,
      description:
        "The channel's reservations, newest first (REST: GET /channel/v1/reservations). Every booking belongs to one: a v1 " +
        'booking is a reservation of one room, a v2 itinerary one too',
      authScopes: operationScopes('reservations.list'),
      args: { filter: t.arg({ type: ReservationFilter }) },
      validate: { schema: listArgs },
      resolve: async (_root, { filter, ...page }, ctx) => {
        const list = await withGraphQLFields('filter', () =>
          reservationWindow(ctx, {
            confirmationNumber: filter?.confirmationNumber ?? undefined,
            guestEmail: filter?.guestEmail ?? undefined,
            checkInFrom: filter?.checkInFrom ?? undefined,
            checkInTo: filter?.checkInTo ?? undefined,
          }),
        );
        const views = { rows: async (window: Parameters<typeof list.rows>[0]) => (await list.rows(window)).map(reservationView), count: list.count };
        return keysetConnection(page, views, (v: ReservationView) => reservationCursor({ id: v.id, confirmationNumber: v.confirmationNumber, bookings: v.rooms }));
      },
    },
    ReservationConnection,
  ),
}));

builder.mutationFields((t) => ({
  createReservation: t.field({
    type: ReservationRef,
    description:
      'Reserves one or several rooms with a nested guest (REST: POST /channel/v1/reservations). Priced on the server: the ' +
      "bookToken's price, or the search and price check of each room now. Every room is one booking, all booked together " +
      'or none; in production each is paid from the balance. A provider failure is a top-level UPSTREAM_ERROR; then, as ' +
      'after SoldOutError, PriceChangedError or InsufficientBalanceError, nothing is booked or charged. An unknown ' +
      'property, room type or rate plan is a top-level NOT_FOUND',
    authScopes: operationScopes('reservation.create'),
    args: { input: t.arg({ type: CreateReservationInput, required: true }) },
    validate: { schema: createArgs },
    errors: {
      types: [SoldOutError, PriceChangedError, InsufficientBalanceError, BookTokenError],
      union: { name: 'CreateReservationResult' },
      result: { name: 'CreateReservationSuccess' },
      dataField: { name: 'reservation' },
    },
    resolve: async (_root, args, ctx) => {
      const input = args.input as z.infer<typeof createArgs>['input'];
      return reservationView(await withGraphQLFields('input', createReservation(ctx, input)));
    },
  }),
  updateReservation: t.field({
    type: ReservationRef,
    description:
      'Changes the guest, special requests or arrival time of every live room (REST: PATCH /channel/v1/reservations/{id}), ' +
      'all or nothing, by the rules of updateBooking; reservation.modified for each room that changed',
    authScopes: operationScopes('reservation.update'),
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateReservationInput, required: true }) },
    validate: { schema: updateArgs },
    errors: {
      types: [NotModifiableError],
      union: { name: 'UpdateReservationResult' },
      result: { name: 'UpdateReservationSuccess' },
      dataField: { name: 'reservation' },
    },
    resolve: async (_root, args, ctx) => {
      const input = args.input as z.infer<typeof updateArgs>['input'];
      return reservationView(await updateReservation(ctx, args.id, input));
    },
  }),
  cancelReservation: t.field({
    type: ReservationCancellationRef,
    description:
      'Cancels the whole reservation (without roomIds) or the rooms named (REST: POST /channel/v1/reservations/{id}/cancel), ' +
      'each by its own policy, its refund credited once in production. A room that cannot be cancelled refuses the whole ' +
      'request (nothing cancelled). A provider failure (or, in production, a provider that does not know a room and so ' +
      'does not confirm its cancellation) is a top-level UPSTREAM_ERROR: rooms cancelled before it stay cancelled, and ' +
      'the same request cancels the rest',
    authScopes: operationScopes('reservation.cancel'),
    args: { id: t.arg.id({ required: true }), roomIds: t.arg.idList({ description: 'booking ids of the rooms to cancel; omitted: all' }) },
    validate: { schema: cancelArgs },
    errors: {
      types: [AlreadyCancelledError, NotCancellableError],
      union: { name: 'CancelReservationResult' },
      result: { name: 'CancelReservationSuccess' },
      dataField: { name: 'cancellation' },
    },
    resolve: (_root, args, ctx) =>
      withGraphQLFields('', cancelReservation(ctx, args.id, args.roomIds ?? undefined)),
  }),
}));
