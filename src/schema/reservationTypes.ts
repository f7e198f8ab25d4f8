import { dateOnly, VISIBLE_STATUSES, type Booking } from '../services/bookings/index.js';
import {
  cancelledTotals,
  getReservations,
  policyOf,
  reservationStatus,
  reservationView,
  type ReservationCancellation,
  type ReservationView,
} from '../services/reservations/index.js';
import { operationScopes } from '../services/access/index.js';
import type { RoomOccupancy } from '../upstream/protocol.js';
import type { RequestContext } from '../context.js';
import { builder } from './builder.js';
import { BookingRef, BookingStatus, currentBooking } from './bookingTypes.js';
import { countedConnection } from './connections.js';
import { PropertyRef } from './properties.js';
import { PolicyRef } from './search.js';

/**
 * The output types of reservations (docs/spec/channel-api.md §4.8), from the service's ReservationView: Reservation
 * is a Node, and a booking's reservation an edge of Booking; their root fields are in
 * src/schema/reservations.ts.
 */

// ---------------------------------------------------------------------------------------------
// Output types

interface GuestView {
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  phone: string | null;
  country: string | null;
}

const ReservationGuestRef = builder.objectRef<GuestView>('ReservationGuest').implement({
  description: 'The lead guest and contact of a reservation',
  fields: (t) => ({
    firstName: t.exposeString('firstName', { nullable: true }),
    lastName: t.exposeString('lastName', { nullable: true }),
    email: t.exposeString('email', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true }),
    country: t.exposeString('country', { nullable: true, description: 'ISO 3166-1 alpha-2' }),
  }),
});

const RoomGuestRef = builder.objectRef<Pick<GuestView, 'firstName' | 'lastName'>>('ReservationRoomGuest').implement({
  description: "The guest staying in a room; null names: the reservation's guest",
  fields: (t) => ({
    firstName: t.exposeString('firstName', { nullable: true }),
    lastName: t.exposeString('lastName', { nullable: true }),
  }),
});

const RoomPriceRef = builder.objectRef<Booking>('ReservationRoomPrice').implement({
  fields: (t) => ({
    total: t.expose('totalAmount', { type: 'Money', description: 'What this room was charged (KRW)' }),
    currency: t.exposeString('currency'),
    requestTotal: t.expose('requestAmount', { type: 'Money', description: 'The same in the currency searched in' }),
    requestCurrency: t.exposeString('requestCurrency'),
  }),
});

const occupancyOf = (b: Booking) => b.occupancy as unknown as RoomOccupancy[];

const ReservationRoomRef = builder.objectRef<Booking>('ReservationRoom').implement({
  description: 'One room of a reservation: one booking (also in `booking` and `bookings`)',
  fields: (t) => ({
    bookingId: t.exposeID('id', { description: 'The booking of this room' }),
    booking: t.field({ type: BookingRef, description: 'The booking record of this room (spec §2.2)', resolve: (b) => b }),
    status: t.field({ type: BookingStatus, resolve: (b) => visible(b.status) }),
    roomtypeId: t.exposeString('roomtypeId'),
    roomType: t.exposeString('roomType', { nullable: true }),
    rateplanId: t.exposeString('rateplanId'),
    ratePlan: t.exposeString('ratePlan', { nullable: true }),
    checkIn: t.field({ type: 'Date', resolve: (b) => dateOnly(b.checkin) }),
    checkOut: t.field({ type: 'Date', resolve: (b) => dateOnly(b.checkout) }),
    roomCount: t.int({ description: 'Rooms this booking holds: 1, except a v1 booking made for several rooms', resolve: (b) => occupancyOf(b).length }),
    adults: t.exposeInt('guestsAdult'),
    children: t.exposeInt('guestsChild'),
    childrenAges: t.intList({ resolve: (b) => occupancyOf(b).flatMap((r) => r.children_ages) }),
    guest: t.field({ type: RoomGuestRef, resolve: (b) => ({ firstName: b.guestFirstName, lastName: b.guestLastName }) }),
    hubBookingNumber: t.exposeString('hubBookingNumber', { nullable: true, description: "The provider's confirmation number of this room" }),
    price: t.field({ type: RoomPriceRef, resolve: (b) => b }),
    cancellationPolicy: t.field({ type: PolicyRef, resolve: policyOf }),
    cancellationFee: t.expose('cancellationFee', { type: 'Money', nullable: true, description: 'KRW; set once the room is cancelled' }),
    refundAmount: t.expose('refundAmount', { type: 'Money', nullable: true, description: 'KRW; set once the room is cancelled' }),
    cancelledAt: t.expose('cancelledAt', { type: 'DateTime', nullable: true }),
  }),
});

const ReservationPriceRef = builder.objectRef<ReservationView['totals']>('ReservationPrice').implement({
  fields: (t) => ({
    total: t.expose('total', {
      type: 'Money',
      description: 'What the rooms were charged together (KRW): the server-side price, never an amount sent by the client',
    }),
    currency: t.exposeString('currency'),
    requestTotal: t.expose('requestTotal', { type: 'Money', nullable: true, description: 'The same in the currency searched in' }),
    requestCurrency: t.exposeString('requestCurrency', { nullable: true, description: 'Null when the rooms were priced in different currencies' }),
    cancellationFee: t.expose('cancellationFee', { type: 'Money', description: 'Kept of the rooms cancelled so far' }),
    refundAmount: t.expose('refundAmount', { type: 'Money', description: 'Given back for the rooms cancelled so far' }),
  }),
});

export const ReservationRef = builder.loadableNodeRef('Reservation', {
  id: { resolve: (r: ReservationView) => r.id },
  load: async (ids: string[], ctx: RequestContext) => (await getReservations(ctx, ids)).map((r) => r && reservationView(r)),
});

ReservationRef.implement({
  description:
    'A reservation (REST: GET /channel/v1/reservations/{id}): one or several rooms booked together, one booking each, ' +
    'sharing one confirmation number. Its reservationId is the bookingId of its first room',
  fields: (t) => ({
    reservationId: t.exposeID('id', { description: 'The reservation id REST uses: the bookingId of its first room' }),
    confirmationNumber: t.exposeString('confirmationNumber', { description: 'Shared by every room' }),
    status: t.field({
      type: BookingStatus,
      description:
        "The rooms' status when they agree (rooms cancelled while others remain do not count); otherwise the first of " +
        'PENDING, CONFIRMED, CANCELLING, CHECKED_IN, CHECKED_OUT, NO_SHOW',
      resolve: (r) => r.status,
    }),
    propertyId: t.exposeInt('propertyId'),
    property: t.field({
      type: PropertyRef,
      nullable: true,
      description: 'The property with its content (scope properties:read)',
      authScopes: operationScopes('property.read'),
      resolve: (r, _args, ctx) => ctx.loaders.property.load(r.propertyId),
    }),
    propertyName: t.exposeString('propertyName', { nullable: true }),
    checkIn: t.field({ type: 'Date', resolve: (r) => dateOnly(r.checkin) }),
    checkOut: t.field({ type: 'Date', resolve: (r) => dateOnly(r.checkout) }),
    adults: t.exposeInt('adults', { description: 'Every room together' }),
    children: t.exposeInt('children'),
    guest: t.field({ type: ReservationGuestRef, resolve: (r) => r.guest }),
    rooms: t.field({ type: [ReservationRoomRef], resolve: (r) => r.rooms }),
    bookings: t.field({ type: [BookingRef], description: 'The booking of each room, in room order', resolve: (r) => r.rooms }),
    price: t.field({ type: ReservationPriceRef, resolve: (r) => r.totals }),
    cancellationPolicy: t.field({
      type: PolicyRef,
      description: "Cancelling the whole reservation: the rooms' policy, or, when they differ, the one whose free cancellation ends first",
      resolve: (r) => r.policy,
    }),
    specialRequests: t.exposeString('specialRequests', { nullable: true }),
    arrivalTime: t.exposeString('arrivalTime', { nullable: true, description: 'Expected arrival, local time at the property (HH:MM)' }),
    channelBookingNumber: t.exposeString('channelBookingNumber', { nullable: true, description: "The partner's own reference" }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

builder.objectField(BookingRef, 'reservation', (t) =>
  t.field({
    type: ReservationRef,
    nullable: true,
    description: 'The reservation the booking is a room of (scope reservations:read); every booking belongs to one',
    authScopes: operationScopes('reservation.read'),
    resolve: async (b, _args, ctx) => (await currentBooking(ctx, b))?.itineraryId ?? null,
  }),
);

export const ReservationConnection = countedConnection(ReservationRef, 'ReservationConnection', 'Reservations, newest first', 'Reservations the filter matches');

export const ReservationCancellationRef = builder.objectRef<ReservationCancellation>('ReservationCancellation').implement({
  description: 'What a cancellation did (REST: POST /channel/v1/reservations/{id}/cancel)',
  fields: (t) => ({
    reservationId: t.id({ resolve: (c) => c.reservation.id }),
    confirmationNumber: t.string({ resolve: (c) => c.reservation.confirmationNumber }),
    status: t.field({ type: BookingStatus, description: "The reservation's status after the cancellation", resolve: (c) => reservationStatus(c.reservation.bookings) }),
    cancelledRooms: t.field({ type: [ReservationRoomRef], description: 'The rooms this request cancelled, as they are now', resolve: (c) => c.cancelled }),
    cancellationFee: t.field({ type: 'Money', description: 'Of the rooms this request cancelled (KRW)', resolve: (c) => cancelledTotals(c.cancelled).cancellationFee }),
    refundAmount: t.field({
      type: 'Money',
      description: 'Of the rooms this request cancelled (KRW); credited to the balance in production',
      resolve: (c) => cancelledTotals(c.cancelled).refundAmount,
    }),
    currency: t.string({ resolve: (c) => c.reservation.bookings[0]!.currency }),
    reservation: t.field({ type: ReservationRef, resolve: (c) => reservationView(c.reservation) }),
  }),
});

function visible(status: string): (typeof VISIBLE_STATUSES)[number] {
  // The services never hand out processing or void rows; this is the type's own guard.
  if (!(VISIBLE_STATUSES as readonly string[]).includes(status)) throw new Error(`a reservation room is ${status}, not a partner-visible status`);
  return status as (typeof VISIBLE_STATUSES)[number];
}
