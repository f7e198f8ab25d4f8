import { z } from 'zod';
import {
  BOOKING_EVENT_TYPES,
  bookingEvents,
  dateOnly,
  fromBookingRecord,
  getBookings,
  isVisible,
  quoteOrNull,
  VISIBLE_STATUSES,
  type Booking,
  type BookingEventType,
  type BookingRecord,
  type BookingView,
  type CancellationQuote,
} from '../services/bookings/index.js';
import { policyOf } from '../services/reservations/index.js';
import { operationScopes } from '../services/access/index.js';
import type { RequestContext } from '../context.js';
import { builder } from './builder.js';
import { countedConnection } from './connections.js';
import { serviceEnum } from './enums.js';
import { CancellationPolicyType, PropertyRef } from './properties.js';
import { PolicyRef } from './search.js';

/**
 * The booking record (docs/spec/channel-api.md §2.2) as a Node, with its edges: the property, the
 * current cancellation quote and terms, and the event history (its reservation is an edge of
 * src/schema/reservationTypes.ts). Its root fields are in src/schema/bookings.ts.
 *
 * A Booking is a row, or the record an event carried (a snapshot, in BookingEvent.booking). The
 * edges that need more than the record (the quote, the reservation) read the booking as it is now.
 */

/** How many of a booking's events Booking.events answers (the newest; the cost counts `first`). */
const EVENTS_PAGE = { default: 10, max: 100 } as const;
const eventsArgs = z.object({ first: z.int().min(0).max(EVENTS_PAGE.max).nullish() });

export const BookingStatus = serviceEnum('BookingStatus', VISIBLE_STATUSES, 'The statuses a partner sees (spec §2.2)');

/**
 * The booking event types: RESERVATION_CREATED stands for `reservation.created` of webhook bodies
 * (and REST). Also the type of Subscription.bookingEvents and of webhooks' events.
 */
export const BookingEventTypeEnum = serviceEnum(
  'BookingEventType',
  BOOKING_EVENT_TYPES,
  'A booking event type; RESERVATION_CREATED is the event type `reservation.created` of webhook bodies',
);

export const BookingRef = builder.loadableNodeRef('Booking', {
  id: { resolve: (b: BookingView) => b.id },
  load: (ids: string[], ctx: RequestContext) => getBookings(ctx, ids),
});

/** The booking as it is now: the row itself, or the row of a snapshot (null once the channel has it no more). */
export async function currentBooking(ctx: RequestContext, b: BookingView): Promise<Booking | null> {
  if ('itineraryId' in b) return b as Booking;
  return (await BookingRef.getDataloader(ctx).load(b.id)) as Booking | null;
}

export const CancellationQuoteRef = builder.objectRef<CancellationQuote>('CancellationQuote').implement({
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

/** A booking event: a live one (its instant as text) or one of a booking's history. */
export interface BookingEventShape {
  id: string;
  type: string;
  occurredAt: string | Date;
  booking: BookingRecord;
}

export const BookingEventRef = builder.objectRef<BookingEventShape>('BookingEvent').implement({
  description: 'A booking event (spec §6) with the booking as it was when the event happened',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Unique per event (the outbox event id); the same event never comes twice on one subscription' }),
    type: t.field({ type: BookingEventTypeEnum, resolve: (e) => e.type as BookingEventType }),
    occurredAt: t.field({ type: 'DateTime', resolve: (e) => new Date(e.occurredAt) }),
    booking: t.field({
      type: BookingRef,
      description: 'The booking as it was when the event happened (its edges read the booking as it is now)',
      resolve: (e) => fromBookingRecord(e.booking),
    }),
  }),
});

BookingRef.implement({
  description: 'A booking of the channel (spec §2.2; REST: GET /channel/v1/bookings/{id})',
  fields: (t) => ({
    bookingId: t.exposeID('id', { description: 'The booking id REST uses (a UUID)' }),
    userId: t.id({ description: 'The channel', resolve: (b) => b.channelId }),
    appId: t.exposeID('appId'),
    hubBookingNumber: t.exposeString('hubBookingNumber', { nullable: true, description: "The provider's confirmation number" }),
    channelBookingNumber: t.exposeString('channelBookingNumber', { nullable: true, description: "The partner's own booking number" }),
    propertyId: t.exposeInt('propertyId'),
    property: t.field({
      type: PropertyRef,
      nullable: true,
      description: 'The property with its content (scope properties:read); null when the catalog no longer has it',
      authScopes: operationScopes('property.read'),
      resolve: (b, _args, ctx) => ctx.loaders.property.load(b.propertyId),
    }),
    propertyName: t.exposeString('propertyName', { nullable: true }),
    roomType: t.exposeString('roomType', { nullable: true }),
    ratePlan: t.exposeString('ratePlan', { nullable: true }),
    checkin: t.field({ type: 'Date', resolve: (b) => dateOnly(b.checkin) }),
    checkout: t.field({ type: 'Date', resolve: (b) => dateOnly(b.checkout) }),
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
      resolve: (b) => b.cancellationPolicy as typeof CancellationPolicyType.$inferType | null,
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
    cancellationQuote: t.field({
      type: CancellationQuoteRef,
      nullable: true,
      description:
        'What cancelling now would cost (REST: GET /channel/v1/bookings/{id}/cancellation-fee; scope reservations:read); ' +
        'for a cancelled booking what it cost. Null where cancellationQuote(id:) refuses (a booking being cancelled, ' +
        'checked in, checked out, a no-show, failed or completed), so a list never errors on it',
      authScopes: operationScopes('booking.cancellationQuote'),
      resolve: async (b, _args, ctx) => {
        const booking = await currentBooking(ctx, b);
        return booking && quoteOrNull(booking, ctx.deps.clock());
      },
    }),
    cancellationTerms: t.field({
      type: PolicyRef,
      nullable: true,
      description:
        'The cancellation policy kind with its free-cancellation deadline (REST: GET /channel/v1/bookings/{id}/cancellation-policy; ' +
        'scope reservations:read)',
      authScopes: operationScopes('booking.cancellationPolicy'),
      resolve: (b) => policyOf(b),
    }),
    events: t.loadableList({
      type: BookingEventRef,
      nullable: true,
      description:
        "The booking's newest events, newest first, each with the booking as it was then (the history webhooks deliver; " +
        'scope reservations:read). The events of a page of bookings are one query',
      authScopes: operationScopes('booking.read'),
      args: {
        first: t.arg.int({
          defaultValue: EVENTS_PAGE.default,
          description: `The newest events: 0 to ${EVENTS_PAGE.max}, default ${EVENTS_PAGE.default}`,
        }),
      },
      validate: { schema: eventsArgs },
      byPath: true,
      load: (ids: string[], ctx: RequestContext, args) => bookingEvents(ctx, ids, args.first ?? EVENTS_PAGE.default),
      resolve: (b) => b.id,
    }),
  }),
});

export const BookingConnection = countedConnection(BookingRef, 'BookingConnection', 'Bookings, newest first', 'Bookings the filter matches');
