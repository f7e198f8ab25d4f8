import { amountToNumber, callOptions, ConflictError, currencySchema, isUniqueViolation, principalOf, UpstreamError, ValidationError, type Amount, type Currency } from '../kernel/index.js';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AppDeps, RequestContext } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
import type { Booking, BookingModification } from '../../generated/prisma/client.js';
import type { RoomOccupancy } from '../../upstream/protocol.js';
import {
  bookingRules,
  dateOnly,
  dateValue,
  getBooking,
  movesBookingMoney,
  postBookingMoney,
  PriceChangedError,
  recordEvents,
  requestLeaseMs,
  SoldOutError,
  transact,
  type BookingStatus,
} from '../bookings/index.js';
import { freeCancellationBefore, inclusive, localDate, normalizeStay, pricingOf, searchRules, SNAKE_NAMES, type FieldNames, type Pricing } from '../search/index.js';
import { findRoomType, getProperty, type CancellationPolicyType } from '../catalog/index.js';
import { ModificationInProgressError, ModificationNotAllowedError, type NotAllowedReason } from './errors.js';

/**
 * Date changes of a booking (POST /channel/v1/reservations/{id}/modify-dates, GraphQL
 * `modifyBookingDates`): the same room type, rate plan and party on new dates, re-priced by the
 * provider. A preview changes nothing; a commit follows the steps of a booking's creation
 * (docs/decisions.md, "Bookings (v1)"), because the provider is a separate system:
 *   1. one transaction: the booking row locked and checked again, the change written
 *      `processing` (at most one per booking, by a partial unique index) and, when the booking
 *      was charged and the new stay is dearer, the difference debited (402: nothing written);
 *   2. the provider moves the booking, idempotent on the change's id;
 *   3. one transaction: the booking takes the new dates, amounts and cancellation deadline, a
 *      cheaper stay is refunded, and `reservation.modified` goes to the outbox; or, when the
 *      provider refused or failed, or the booking changed meanwhile (a cancellation won), the
 *      change is void with the charge given back, and the provider told to abort it.
 * A process stopping between the steps leaves a `processing` change the sweeper
 * (`sweepModifications`, run by the booking sync) aborts at the provider and voids.
 *
 * Rules: the id names one booking, and only that booking changes. It must be confirmed, before its
 * check-in day (property time zone) and still cancellable free of charge, so a change never costs
 * a fee (`change_fee` 0); and it must be the only live room of its reservation (moving one room of
 * several would split the stay: `multi_room`). A v1 booking that holds several rooms in one row
 * changes as a whole: the provider moves all its rooms. Occupancy, room type and rate plan stay;
 * the rate plan's current policy applies to the new stay. `saleAmount` (the partner's customer
 * price, informational) takes the commit's `sale_amount`, or is cleared when the total changes
 * without one, so a voucher never prints the old price for the new dates.
 */

// ---------------------------------------------------------------------------------------------
// Input

export const modifyDatesRules = {
  checkin: searchRules.checkin,
  checkout: searchRules.checkout,
  preview: z.boolean(),
  /** The partner's customer price for the new stay: the rule of POST /bookings. */
  saleAmount: bookingRules.saleAmount,
};

export interface ModifyDatesInput {
  checkin: string;
  checkout: string;
  /** True: only say what the change would be. */
  preview?: boolean | undefined;
  /**
   * The partner's customer price for the new stay (informational; the voucher prints it). A commit
   * stores it; without it, a commit that changes the total clears the old one. Unused on a preview.
   */
  saleAmount?: Amount | undefined;
}

/** Names of the input fields as a surface spells them. */
export type ModifyDatesNames = Pick<FieldNames, 'checkin' | 'checkout'>;

export interface DatesChange {
  preview: boolean;
  /** The booking as it is now: unchanged on a preview, with the new dates after a commit. */
  booking: Booking;
  previousCheckin: string;
  previousCheckout: string;
  checkin: string;
  checkout: string;
  nights: number;
  /** The new stay, in the booking's request currency and in KRW as billed. */
  pricing: Pricing;
  /** KRW. */
  oldTotal: Amount;
  newTotal: Amount;
  /** newTotal - oldTotal: > 0 is charged, < 0 refunded (production; the sandbox moves no money). */
  difference: Amount;
  /** Always 0: a change is allowed only while free cancellation is. */
  changeFee: Amount;
  /** The policy of the new stay: the rate plan's, with its deadline for the new check-in. */
  cancellationPolicy: { type: CancellationPolicyType; freeCancellationBefore: Date | null };
  /** Until when the booking's dates can be changed (its free-cancellation deadline as booked). */
  freeChangeBefore: Date | null;
  /** The change's id (a commit), null on a preview. */
  modificationId: string | null;
}

// ---------------------------------------------------------------------------------------------
// Preview and commit

export async function modifyBookingDates(
  ctx: RequestContext,
  id: string,
  input: ModifyDatesInput,
  names: ModifyDatesNames = SNAKE_NAMES,
): Promise<DatesChange> {
  const { deps } = ctx;
  const booking = await getBooking(ctx, id);
  const now = deps.clock();
  const nights = checkDates(booking, input, now, names);
  refuseChange(booking, now);
  await refuseSplit(deps, booking);

  const quote = await quoteChange(ctx, booking, input, nights);
  if (input.preview) return quote;
  return commit(ctx, booking, quote, input.saleAmount);
}

/**
 * New dates: valid as a search's (1 to 30 nights, not past, within 500 days), from today at the
 * property, and new. Returns the new stay's nights.
 */
function checkDates(booking: Booking, input: ModifyDatesInput, now: Date, names: ModifyDatesNames): number {
  const stay = normalizeStay(
    { checkin: input.checkin, checkout: input.checkout, occupancy: occupancyOf(booking) },
    now,
    { ...SNAKE_NAMES, ...names },
  );
  const today = localDate(now, booking.timezone);
  if (input.checkin < today) throw new ValidationError([{ field: names.checkin, reason: `must not be before today at the property (${today})` }]);
  if (input.checkin === dateOnly(booking.checkin) && input.checkout === dateOnly(booking.checkout)) {
    throw new ValidationError([{ field: names.checkin, reason: 'the booking already has these dates' }]);
  }
  return stay.nights;
}

/**
 * Only a confirmed booking, before its check-in day in the property's time zone and while it can
 * still be cancelled free of charge (a later change would dodge the cancellation fee).
 */
function refuseChange(booking: Booking, now: Date): void {
  const status = booking.status as BookingStatus;
  if (status === 'checked_in' || status === 'checked_out' || status === 'no_show') {
    throw new ModificationNotAllowedError(booking, 'checked_in', 'The dates cannot change once the guest has checked in');
  }
  if (status !== 'confirmed') {
    throw new ModificationNotAllowedError(booking, 'not_confirmed', `The dates of a booking that is ${status} cannot change; only a confirmed booking's can`);
  }
  if (localDate(now, booking.timezone) >= dateOnly(booking.checkin)) {
    throw new ModificationNotAllowedError(booking, 'check_in_day_reached', 'The dates cannot change on or after the check-in day');
  }
  const freeBefore = freeChangeBefore(booking);
  if (freeBefore === null || now.getTime() >= freeBefore.getTime()) {
    throw new ModificationNotAllowedError(
      booking,
      'free_change_period_ended',
      freeBefore === null
        ? 'The dates of a non-refundable booking cannot change'
        : `The dates could be changed until ${freeBefore.toISOString()}, while cancelling was free`,
    );
  }
}

function freeChangeBefore(booking: Booking): Date | null {
  const policy = (booking.cancellationPolicy ?? 'non_refundable') as CancellationPolicyType;
  return freeCancellationBefore(policy, dateOnly(booking.checkin), booking.timezone);
}

const LIVE: BookingStatus[] = ['pending', 'confirmed', 'cancelling', 'checked_in'];

/**
 * The id names one booking (one room of a reservation, docs/spec/channel-api.md §4.8; a reservation's id is its first
 * room's) and only that booking changes: never another room of its reservation. The booking
 * itself passed `refuseChange`; when its reservation has another live room, moving this one
 * alone would split the stay: 409 multi_room. Rooms are never added to a reservation, so a
 * reservation that passes here cannot gain a live room before the commit.
 */
async function refuseSplit(deps: AppDeps, booking: Booking): Promise<void> {
  const other = await deps.db.prisma.booking.findFirst({
    where: { channelId: booking.channelId, itineraryId: booking.itineraryId, id: { not: booking.id }, status: { in: LIVE } },
    select: { id: true },
  });
  if (other) {
    throw new ModificationNotAllowedError(
      booking,
      'multi_room',
      'This booking is one of several live rooms of its reservation; its dates cannot change alone (cancel the other rooms first, or cancel and book again)',
    );
  }
}

function occupancyOf(booking: Booking): RoomOccupancy[] {
  return booking.occupancy as unknown as RoomOccupancy[];
}

/** The provider's price and stock for the new dates, and what the change comes to. */
async function quoteChange(ctx: RequestContext, booking: Booking, input: ModifyDatesInput, nights: number): Promise<DatesChange> {
  const answer = await ctx.deps.upstream.quoteChange(booking.id, { checkin: input.checkin, checkout: input.checkout }, callOptions(ctx));
  if (answer === null) {
    ctx.logger.error({ booking: booking.id }, 'the provider does not know a confirmed booking');
    throw new UpstreamError('The inventory provider does not know this booking');
  }
  if (answer === 'not_modifiable') {
    // The property reports the guest arrived; the booking sync brings that status over.
    throw new ModificationNotAllowedError(booking, 'checked_in', 'The provider reports that the guest has arrived; the dates cannot change');
  }
  if (answer.status === 'sold_out' || !answer.rate) throw new SoldOutError();
  // The rate plan's policy now; a plan gone from the catalog cannot be booked again: sold out.
  const property = await getProperty(ctx, booking.propertyId);
  const plan = findRoomType(property, booking.roomtypeId).ratePlans.find((p) => p.id === booking.rateplanId);
  if (!plan) throw new SoldOutError();

  const currency = currencySchema.catch('KRW').parse(booking.requestCurrency) as Currency;
  const pricing = pricingOf(answer.rate, currency);
  const newTotal = inclusive(answer.rate);
  return {
    preview: true,
    booking,
    previousCheckin: dateOnly(booking.checkin),
    previousCheckout: dateOnly(booking.checkout),
    checkin: input.checkin,
    checkout: input.checkout,
    nights,
    pricing,
    oldTotal: booking.totalAmount,
    newTotal,
    difference: newTotal - booking.totalAmount,
    changeFee: 0n,
    cancellationPolicy: {
      type: plan.cancellationPolicy,
      freeCancellationBefore: freeCancellationBefore(plan.cancellationPolicy, input.checkin, booking.timezone),
    },
    freeChangeBefore: freeChangeBefore(booking),
    modificationId: null,
  };
}

/** The stay the booking had when the change was quoted: the change applies only to that. */
function sameStay(booking: Booking, quote: DatesChange) {
  return {
    id: booking.id,
    status: 'confirmed' as const,
    checkin: dateValue(quote.previousCheckin),
    checkout: dateValue(quote.previousCheckout),
    totalAmount: quote.oldTotal,
  };
}

async function commit(ctx: RequestContext, booking: Booking, quote: DatesChange, saleAmount: Amount | undefined): Promise<DatesChange> {
  const { deps } = ctx;
  const { channelId } = principalOf(ctx);
  const modificationId = randomUUID();
  const now = deps.clock();

  // 1. Reserve: the row locked, checked again, the change written and a dearer stay paid for.
  let modification: BookingModification;
  try {
    modification = await transact(deps, async (tx) => {
      await tx.$queryRaw`SELECT "id" FROM "bookings" WHERE "id" = ${booking.id}::uuid FOR UPDATE`;
      const current = await tx.booking.findFirstOrThrow({ where: { id: booking.id } });
      refuseChange(current, now);
      if (!matches(current, sameStay(booking, quote))) throw bookingChanged();
      const written = await tx.bookingModification.create({
        data: {
          id: modificationId,
          bookingId: booking.id,
          channelId,
          state: 'processing',
          fromCheckin: dateValue(quote.previousCheckin),
          fromCheckout: dateValue(quote.previousCheckout),
          toCheckin: dateValue(quote.checkin),
          toCheckout: dateValue(quote.checkout),
          fromTotal: quote.oldTotal,
          toTotal: quote.newTotal,
          toRequestAmount: quote.pricing.inclusive,
          cancellationPolicy: quote.cancellationPolicy.type,
          // Whether this instance took the difference: the void or refund of it follows that.
          charged: movesBookingMoney(deps.config.env, current),
          createdAt: now,
        },
      });
      if (quote.difference > 0n) await postBookingMoney(tx, deps.config.env, written, -quote.difference, 'modification_charge');
      return written;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new ModificationInProgressError(booking.id);
    throw error;
  }

  // 2. The provider. Not tied to the client's connection: a client going away must not leave
  //    the change half made.
  let outcome;
  try {
    outcome = await deps.upstream.modifyBooking(
      booking.id,
      { modification_id: modificationId, checkin: quote.checkin, checkout: quote.checkout, total: amountToNumber(quote.newTotal) },
      { scenario: ctx.scenario, log: ctx },
    );
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    // It may or may not have applied: abort it there (which also stops a late duplicate), then void.
    await voidModification(deps, modification, !(await abortAtProvider(deps, modification)));
    throw error;
  }
  if (!outcome.ok) {
    // A refusal applied nothing.
    await voidModification(deps, modification, false);
    if (outcome.reason === 'sold_out') throw new SoldOutError();
    if (outcome.reason === 'price_mismatch') throw new PriceChangedError();
    if (outcome.reason === 'not_modifiable') {
      throw new ModificationNotAllowedError(booking, 'checked_in', 'The provider reports that the guest has arrived; the dates cannot change');
    }
    throw new UpstreamError('The inventory provider could not change the booking');
  }

  // 3. Settle: the booking takes the change, unless something else moved it first.
  const settled = await applyModification(deps, booking, modification, saleAmount);
  if (!settled) {
    await voidModification(deps, modification, !(await abortAtProvider(deps, modification)));
    const current = await deps.db.prisma.booking.findUniqueOrThrow({ where: { id: booking.id } });
    refuseChange(current, deps.clock());
    throw bookingChanged();
  }
  return { ...quote, preview: false, booking: settled, modificationId };
}

function matches(booking: Booking, stay: ReturnType<typeof sameStay>): boolean {
  return (
    booking.status === stay.status &&
    booking.checkin.getTime() === stay.checkin.getTime() &&
    booking.checkout.getTime() === stay.checkout.getTime() &&
    booking.totalAmount === stay.totalAmount
  );
}

function bookingChanged(): ConflictError {
  return new ConflictError('BOOKING_CHANGED', 'The booking changed while its dates were being changed; read it and retry');
}

/**
 * The booking takes the change in one transaction (dates, amounts, policy and deadline, the
 * partner's sale amount, the refund of a cheaper stay, `reservation.modified`). Null when the
 * booking is no longer the one the change was made for (a cancellation won) or the change is no
 * longer in flight.
 */
async function applyModification(deps: AppDeps, booking: Booking, m: BookingModification, saleAmount: Amount | undefined): Promise<Booking | null> {
  const now = deps.clock();
  // A sale amount given is stored; without one, the old customer price no longer matches a new total.
  const sale = saleAmount !== undefined ? { saleAmount } : m.toTotal !== m.fromTotal ? { saleAmount: null } : {};
  return transact(deps, async (tx) => {
    const { count } = await tx.booking.updateMany({
      where: { id: booking.id, status: 'confirmed', checkin: m.fromCheckin, checkout: m.fromCheckout, totalAmount: m.fromTotal },
      data: {
        checkin: m.toCheckin,
        checkout: m.toCheckout,
        totalAmount: m.toTotal,
        netAmount: m.toTotal,
        requestAmount: m.toRequestAmount,
        cancellationPolicy: m.cancellationPolicy,
        cancellationDeadline: freeCancellationBefore(m.cancellationPolicy as CancellationPolicyType, dateOnly(m.toCheckin), booking.timezone),
        ...sale,
        updatedAt: now,
      },
    });
    if (count === 0) return null;
    const claimed = await tx.bookingModification.updateMany({ where: { id: m.id, state: 'processing' }, data: { state: 'applied', settledAt: now } });
    // The sweeper voided it meanwhile (only after the request's lease): roll the booking back.
    if (claimed.count === 0) throw bookingChanged();
    const difference = m.toTotal - m.fromTotal;
    if (difference < 0n) await postBookingMoney(tx, deps.config.env, m, -difference, 'modification_refund');
    const updated = await tx.booking.findUniqueOrThrow({ where: { id: booking.id } });
    await recordEvents(tx, updated, ['reservation.modified'], now);
    return updated;
  });
}

/** The change did not happen: void, the charge given back once; `cleanup` while the provider may still hold it. */
async function voidModification(deps: AppDeps, m: BookingModification, cleanup: boolean): Promise<boolean> {
  const now = deps.clock();
  return transact(deps, async (tx) => {
    const { count } = await tx.bookingModification.updateMany({
      where: { id: m.id, state: 'processing' },
      data: { state: 'void', settledAt: now, upstreamCleanup: cleanup },
    });
    if (count === 0) return false;
    const difference = m.toTotal - m.fromTotal;
    if (difference > 0n) await postBookingMoney(tx, deps.config.env, m, difference, 'modification_void');
    return true;
  });
}

/** Tells the provider to abort the change; true when it answered (it holds the booking as before, or nothing). */
async function abortAtProvider(deps: AppDeps, m: Pick<BookingModification, 'id' | 'bookingId'>): Promise<boolean> {
  try {
    const answer = await deps.upstream.abortModification(m.bookingId, m.id);
    if (answer === null) deps.logger.warn({ booking: m.bookingId, modification: m.id }, 'the provider does not know a booking whose change is aborted');
    return true;
  } catch (error) {
    if (error instanceof UpstreamError) return false;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// The sweeper

const SWEEP_BATCH = 200;

/**
 * Settles what requests left behind: a `processing` change older than a request can take (the
 * process stopped; no answer was given) is aborted at the provider and voided with its charge
 * given back; a void change the provider may still hold is aborted there until it answers.
 * Conditional updates throughout, so several instances may run it at once. Returns the number of
 * changes settled or cleaned.
 */
export async function sweepModifications(deps: AppDeps): Promise<{ settled: number; cleaned: number; failures: number }> {
  const { prisma } = deps.db;
  const stale = new Date(deps.clock().getTime() - requestLeaseMs(deps));
  const report = { settled: 0, cleaned: 0, failures: 0 };
  const stuck = await prisma.bookingModification.findMany({ where: { state: 'processing', createdAt: { lt: stale } }, take: SWEEP_BATCH });
  for (const m of stuck) {
    if (!(await abortAtProvider(deps, m))) {
      report.failures++;
      continue;
    }
    if (await voidModification(deps, m, false)) report.settled++;
  }
  const leftovers = await prisma.bookingModification.findMany({ where: { state: 'void', upstreamCleanup: true }, take: SWEEP_BATCH });
  for (const m of leftovers) {
    if (!(await abortAtProvider(deps, m))) {
      report.failures++;
      continue;
    }
    const { count } = await prisma.bookingModification.updateMany({ where: { id: m.id, upstreamCleanup: true }, data: { upstreamCleanup: false } });
    report.cleaned += count;
  }
  return report;
}

