import { OpenAPIHono, z } from '@hono/zod-openapi';
import { cancellationQuote, toBookingRecord, InsufficientBalanceError } from '../../../src/services/bookings/index.js';
import { amountToNumber, ConflictError, UpstreamError, ValidationError } from '../../../src/services/kernel/index.js';
import { modifyBookingDates, modifyDatesRules, type DatesChange } from '../../../src/services/reservations/index.js';
import { dataEnvelope, errorResponses, ok } from '../../envelope.js';
import type { HttpEnv } from '../../env.js';
import { scopedRoute } from '../../routing.js';
import { idempotency, idempotencyHeader } from '../../idempotency.js';
import { BookingRecordWire, FeeWire, feeToWire } from '../bookings/wire.js';
import { BAD_ID, money, NO_RESERVATION, ReservationId } from './params.js';
import { CancellationPolicyWire, PricingWire, pricingToWire } from '../search/wire.js';

/**
 * The reservation routes of docs/spec/channel-api.md §4.7 that change or preview a booking: a date change (preview
 * and commit) and the fee preview under /reservations (an alias of GET /bookings/{id}/cancellation-fee).
 * A reservation id is a booking id: the same services answer both paths.
 */

const ModifyDatesWire = z
  .object({
    checkin: modifyDatesRules.checkin.openapi({ description: 'The new check-in date, YYYY-MM-DD', example: '2027-01-10' }),
    checkout: modifyDatesRules.checkout.openapi({ description: 'The new check-out date: 1 to 30 nights after checkin', example: '2027-01-13' }),
    preview: modifyDatesRules.preview.optional().default(false).openapi({ description: 'true: only say what the change would be; nothing changes' }),
    sale_amount: modifyDatesRules.saleAmount.optional().openapi({
      type: 'integer',
      minimum: 1,
      description:
        "Your customer's price for the new stay, as sale_amount of POST /bookings (informational; the voucher prints it). " +
        'A commit stores it; without it, a commit that changes the total clears the old one (the voucher then shows the ' +
        'total paid). Ignored on a preview',
    }),
  })
  .strict()
  .openapi('ModifyDates');

const DatesChangeWire = z
  .object({
    booking_id: z.uuid(),
    preview: z.boolean().openapi({ description: 'true: nothing was changed' }),
    modification_id: z.uuid().nullable().openapi({ description: 'The id of the change made; null on a preview' }),
    previous: z.object({ checkin: z.iso.date(), checkout: z.iso.date(), total_amount: money('KRW') }),
    checkin: z.iso.date(),
    checkout: z.iso.date(),
    nights: z.int(),
    pricing: PricingWire.openapi({ description: "The new stay: in the booking's request currency, and billable_totals in KRW" }),
    old_total: money('What the booking cost before, KRW'),
    new_total: money('What it costs with the new dates, KRW'),
    difference: money('new_total - old_total: positive is charged, negative refunded (production; the sandbox moves no money)'),
    change_fee: money('Always 0: dates can change only while cancelling is free'),
    currency: z.string().openapi({ example: 'KRW' }),
    cancellation_policy: CancellationPolicyWire.openapi({ description: "The rate plan's policy, with its deadline for the new check-in" }),
    free_change_before: z.iso.datetime().nullable().openapi({ description: "Until when the booking's dates can change (its free-cancellation deadline)" }),
    booking: BookingRecordWire.nullable().openapi({ description: 'The modified booking; null on a preview' }),
  })
  .openapi('DatesChange');

const modifyDatesRoute = scopedRoute('reservation.modifyDates', {
  method: 'post',
  path: '/reservations/{id}/modify-dates',
  operationId: 'modifyReservationDates',
  tags: ['Bookings'],
  summary: "Change a reservation's dates (preview or commit)",
  description:
    'The same room type, rate plan and party on new dates, re-priced by the provider with its stock checked. `preview: true` ' +
    'answers the new price, the difference and the new policy and changes nothing. Otherwise the change is made: the ' +
    'difference is charged from the balance (production; 402 INSUFFICIENT_BALANCE when short, nothing changed) or refunded to ' +
    'it, the booking takes the new dates, amounts, cancellation deadline and sale_amount (the one given, else cleared when ' +
    'the total changes), and reservation.modified is sent. The {id} names one booking, and only that booking changes (never ' +
    'another room of its reservation). It must be confirmed (a cancelled room is not_confirmed), before its check-in day and ' +
    'cancellable free of charge, and the only live room of its reservation (with other live rooms, moving it alone would ' +
    'split the stay: multi_room); a booking made for several rooms (one book_token, room_count > 1 in GET ' +
    '/reservations/{id}) changes as a whole: all its rooms move. Otherwise 409 ' +
    'MODIFICATION_NOT_ALLOWED with details.reason (not_confirmed, checked_in, check_in_day_reached, free_change_period_ended, ' +
    'multi_room). The change itself is free. 502: the provider failed and nothing changed.',
  request: {
    params: ReservationId,
    headers: idempotencyHeader,
    body: { required: true, content: { 'application/json': { schema: ModifyDatesWire } } },
  },
  responses: {
    200: { description: 'The change (preview) or the change made, with the modified booking', content: { 'application/json': { schema: dataEnvelope(DatesChangeWire) } } },
    ...errorResponses(
      [
        ValidationError,
        'VALIDATION_ERROR: a bad date (not YYYY-MM-DD, in the past at the property, more than 500 days ahead), checkout not 1 to ' +
          '30 nights after checkin, the dates the booking already has, a sale_amount not a positive whole number, an unknown ' +
          'field, a bad id or Idempotency-Key (details.fields)',
      ],
      [InsufficientBalanceError, 'INSUFFICIENT_BALANCE (production): the balance does not cover the difference; nothing changed'],
      NO_RESERVATION,
      [
        ConflictError,
        'MODIFICATION_NOT_ALLOWED (details.reason, details.status), SOLD_OUT (no room for the new dates), PRICE_CHANGED (the ' +
          'price moved between the quote and the change: preview again), MODIFICATION_IN_PROGRESS or BOOKING_CHANGED (another ' +
          'change or a cancellation at the same time; read it and retry), IDEMPOTENCY_KEY_REUSED, or IDEMPOTENCY_KEY_IN_PROGRESS ' +
          '(with Retry-After)',
      ],
      [UpstreamError, 'UPSTREAM_ERROR: the provider failed; nothing changed'],
    ),
  },
}, [idempotency()]);

const feeRoute = scopedRoute('booking.cancellationQuote', {
  method: 'get',
  path: '/reservations/{id}/cancellation-fee',
  operationId: 'getReservationCancellationFee',
  tags: ['Bookings'],
  summary: 'What cancelling now would cost (alias of GET /bookings/{id}/cancellation-fee)',
  description:
    'The same answer as GET /bookings/{id}/cancellation-fee: for a cancelled booking, the fee and refund it was cancelled ' +
    'with. 409 BOOKING_NOT_CANCELLABLE for checked-in and closed bookings.',
  request: { params: ReservationId },
  responses: {
    200: { description: 'The fee and refund', content: { 'application/json': { schema: dataEnvelope(FeeWire) } } },
    ...errorResponses(BAD_ID, NO_RESERVATION, [ConflictError, 'BOOKING_NOT_CANCELLABLE: checked in, checked out, no-show or failed (details.status)']),
  },
});

export function reservationChangeRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(modifyDatesRoute, async (c) => {
    const body = c.req.valid('json');
    const change = await modifyBookingDates(c.get('ctx'), c.req.valid('param').id, {
      checkin: body.checkin,
      checkout: body.checkout,
      preview: body.preview,
      saleAmount: body.sale_amount,
    });
    return ok(c, datesChangeToWire(change));
  });

  app.openapi(feeRoute, async (c) => ok(c, feeToWire(await cancellationQuote(c.get('ctx'), c.req.valid('param').id))));
}

export function datesChangeToWire(d: DatesChange): z.infer<typeof DatesChangeWire> {
  return {
    booking_id: d.booking.id,
    preview: d.preview,
    modification_id: d.modificationId,
    previous: { checkin: d.previousCheckin, checkout: d.previousCheckout, total_amount: amountToNumber(d.oldTotal) },
    checkin: d.checkin,
    checkout: d.checkout,
    nights: d.nights,
    pricing: pricingToWire(d.pricing),
    old_total: amountToNumber(d.oldTotal),
    new_total: amountToNumber(d.newTotal),
    difference: amountToNumber(d.difference),
    change_fee: amountToNumber(d.changeFee),
    currency: d.booking.currency,
    cancellation_policy: { type: d.cancellationPolicy.type, free_cancellation_before: d.cancellationPolicy.freeCancellationBefore?.toISOString() ?? null },
    free_change_before: d.freeChangeBefore?.toISOString() ?? null,
    booking: d.preview ? null : toBookingRecord(d.booking),
  };
}
