import { z } from 'zod';
import { InsufficientBalanceError, PriceChangedError, SoldOutError, VISIBLE_STATUSES } from '../services/bookings/index.js';
import { ModificationNotAllowedError, modifyBookingDates, modifyDatesRules, type DatesChange } from '../services/reservations/index.js';
import { builder } from './builder.js';
import { serviceEnum } from './enums.js';
import { graphqlNames } from './errors.js';
import { DomainError } from './bookingErrors.js';
import { BookingRef, BookingStatus } from './bookingTypes.js';
import { idArgument } from './node.js';
import { PolicyRef, PricingRef } from './search.js';
import { operationScopes } from '../services/access/index.js';

/**
 * The GraphQL twin of POST /channel/v1/reservations/{id}/modify-dates: the same service, scope
 * and rules. Expected refusals (sold out, price moved, balance too low, a booking whose dates can
 * no longer change) are members of the result union; the rest are top-level errors, as for the
 * other booking mutations.
 */

const DatesChangeRef = builder.objectRef<DatesChange>('BookingDatesChange').implement({
  description: "A change of a booking's dates: what it would be (preview) or what was done",
  fields: (t) => ({
    preview: t.exposeBoolean('preview', { description: 'True: nothing was changed' }),
    modificationId: t.exposeID('modificationId', { nullable: true, description: 'The id of the change made; null on a preview' }),
    booking: t.field({
      type: BookingRef,
      nullable: true,
      // A preview changes nothing, so it has no booking of its own to answer: reading the booking
      // as it is needs reservations:read (Query.booking), as REST's preview answers `booking: null`.
      description: 'The booking with its new dates; null on a preview (read it with Query.booking, scope reservations:read)',
      resolve: (d) => (d.preview ? null : d.booking),
    }),
    previousCheckin: t.expose('previousCheckin', { type: 'Date' }),
    previousCheckout: t.expose('previousCheckout', { type: 'Date' }),
    checkin: t.expose('checkin', { type: 'Date', description: 'The new check-in date' }),
    checkout: t.expose('checkout', { type: 'Date', description: 'The new check-out date' }),
    nights: t.exposeInt('nights'),
    pricing: t.field({ type: PricingRef, description: "The new stay, in the booking's request currency and in KRW as billed", resolve: (d) => d.pricing }),
    oldTotal: t.expose('oldTotal', { type: 'Money', description: 'KRW' }),
    newTotal: t.expose('newTotal', { type: 'Money', description: 'KRW' }),
    difference: t.expose('difference', {
      type: 'Money',
      description: 'newTotal - oldTotal: positive is charged, negative refunded (production; the sandbox moves no money)',
    }),
    changeFee: t.expose('changeFee', { type: 'Money', description: 'Always 0: dates can change only while cancelling is free' }),
    currency: t.string({ resolve: (d) => d.booking.currency }),
    cancellationPolicy: t.field({
      type: PolicyRef,
      description: "The rate plan's policy, with its deadline for the new check-in",
      resolve: (d) => d.cancellationPolicy,
    }),
    freeChangeBefore: t.expose('freeChangeBefore', {
      type: 'DateTime',
      nullable: true,
      description: "Until when the booking's dates can change (its free-cancellation deadline)",
    }),
  }),
});

const NotAllowedReason = serviceEnum('ModificationNotAllowedReason', [
  'not_confirmed',
  'checked_in',
  'check_in_day_reached',
  'free_change_period_ended',
  'multi_room',
] as const);

builder.objectType(ModificationNotAllowedError, {
  name: 'ModificationNotAllowedError',
  description:
    "MODIFICATION_NOT_ALLOWED: the booking's dates can no longer change (reason: not confirmed, checked in, check-in day " +
    'reached, free cancellation over, or one of several live rooms of its reservation). Nothing was changed',
  interfaces: [DomainError],
  fields: (t) => ({
    bookingId: t.id({ description: 'Its bookingId (REST id)', resolve: (e) => String(e.details?.booking_id ?? '') }),
    status: t.field({
      type: BookingStatus,
      resolve: (e) => {
        const status = e.details?.status;
        if (typeof status !== 'string' || !(VISIBLE_STATUSES as readonly string[]).includes(status)) throw new Error(`MODIFICATION_NOT_ALLOWED carries status ${String(status)}`);
        return status as (typeof VISIBLE_STATUSES)[number];
      },
    }),
    reason: t.field({ type: NotAllowedReason, resolve: (e) => e.details?.reason as (typeof NotAllowedReason.$inferType) }),
  }),
});

const ModifyBookingDatesInput = builder.inputType('ModifyBookingDatesInput', {
  description: 'New dates for a booking (REST: POST /channel/v1/reservations/{id}/modify-dates); occupancy, room and rate stay',
  fields: (t) => ({
    checkin: t.field({ type: 'Date', required: true, description: 'From today at the property' }),
    checkout: t.field({ type: 'Date', required: true, description: '1 to 30 nights after checkin' }),
    preview: t.boolean({ description: 'True: only say what the change would be (default false: make it)' }),
    saleAmount: t.field({
      type: 'Money',
      description:
        "Your customer's price for the new stay, as createBooking's saleAmount (informational; the voucher prints it). A " +
        'commit stores it; without it, a commit that changes the total clears the old one (the voucher then shows the total ' +
        'paid). Ignored on a preview',
    }),
  }),
});

const modifyArgs = z.object({
  id: idArgument('Booking'),
  input: z.object({
    checkin: modifyDatesRules.checkin,
    checkout: modifyDatesRules.checkout,
    preview: modifyDatesRules.preview.nullish(),
    // Money arrives as a bigint already; the REST rule takes a JSON number (range and all), as createBooking's.
    saleAmount: z
      .bigint()
      .transform((v): number | string => Number(v))
      .pipe(modifyDatesRules.saleAmount)
      .nullish()
      .transform((v) => v ?? undefined),
  }),
});

builder.mutationFields((t) => ({
  modifyBookingDates: t.field({
    type: DatesChangeRef,
    description:
      "Changes a booking's dates, or previews the change (REST: POST /channel/v1/reservations/{id}/modify-dates). The new " +
      'stay is re-priced by the provider; in production the difference is charged from the balance or refunded to it; the ' +
      'booking takes saleAmount (the one given, else cleared when the total changes); reservation.modified is sent. The id ' +
      'names one booking and only that booking changes (never another room of its reservation). It must be confirmed, ' +
      'before its check-in day, cancellable free of charge and the only live room of its reservation (else MULTI_ROOM: ' +
      'moving it alone would split the stay); a booking made for several rooms (one book token) changes as a whole. A provider ' +
      'failure is a top-level UPSTREAM_ERROR and changes nothing',
    authScopes: operationScopes('reservation.modifyDates'),
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: ModifyBookingDatesInput, required: true }) },
    validate: { schema: modifyArgs },
    errors: {
      types: [SoldOutError, PriceChangedError, InsufficientBalanceError, ModificationNotAllowedError],
      union: { name: 'ModifyBookingDatesResult' },
      result: { name: 'ModifyBookingDatesSuccess' },
      dataField: { name: 'change' },
    },
    resolve: (_root, { id, input }, ctx) =>
      modifyBookingDates(
        ctx,
        id,
        { checkin: input.checkin, checkout: input.checkout, preview: input.preview ?? false, saleAmount: input.saleAmount ?? undefined },
        graphqlNames('input', ['checkin', 'checkout']),
      ),
  }),
}));
