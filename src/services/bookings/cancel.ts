import type { AppDeps, RequestContext } from '../../context.js';
import type { Booking } from '../../generated/prisma/client.js';
import { canTransition, type Trigger } from './states.js';
import { cancellationCharges, freeCancellationBefore, type CancellationCharges } from '../search/index.js';
import { ConflictError, UpstreamError } from '../kernel/index.js';
import { postBookingMoney } from './ledger.js';
import type { CancellationPolicyType } from '../catalog/index.js';
import { AlreadyCancelledError, CancellationNotConfirmedError, NotCancellableError } from './errors.js';
import { getBooking } from './list.js';
import { dateOnly, isUnsettled } from './record.js';
import { move, transact } from './transitions.js';

// ---------------------------------------------------------------------------------------------
// Cancel

/** 409 BOOKING_ALREADY_CANCELLED or BOOKING_NOT_CANCELLABLE when `booking` cannot be cancelled now. */
export function refuseCancel(booking: Booking): void {
  if (booking.status === 'cancelled' || booking.status === 'cancelling') throw new AlreadyCancelledError(booking.id, booking.status);
  if (!canTransition(booking.status, 'cancel_requested')) throw new NotCancellableError(booking.id, booking.status);
}

/**
 * Fee and refund of cancelling `booking` at `at`. A pending booking past its payment deadline was
 * never confirmed in time: whoever cancels it (the sweeper, the sync, the partner), it is free.
 */
export function chargesOf(booking: Booking, at: Date, options: { waived?: boolean } = {}): CancellationCharges {
  const wasPending = booking.status === 'pending' || (booking.status === 'cancelling' && booking.previousStatus === 'pending');
  const overdue = wasPending && booking.paymentDeadline !== null && booking.paymentDeadline <= at;
  return cancellationCharges(
    {
      cancellationPolicy: (booking.cancellationPolicy ?? 'non_refundable') as CancellationPolicyType,
      totalAmount: booking.totalAmount,
      checkin: dateOnly(booking.checkin),
      timezone: booking.timezone,
    },
    at,
    { waived: options.waived || overdue },
  );
}

export interface CancellationQuote extends CancellationCharges {
  booking: Booking;
  /** True when the figures are the ones a past cancellation recorded. */
  final: boolean;
}

/** What cancelling now would cost (the preview); for a cancelled booking, what it cost. */
export async function cancellationQuote(ctx: RequestContext, id: string): Promise<CancellationQuote> {
  return quoteOf(await getBooking(ctx, id), ctx.deps.clock());
}

/**
 * The quote of a booking in hand at `at`: the figures a cancellation recorded, or what cancelling
 * would cost; 409 BOOKING_ALREADY_CANCELLED or BOOKING_NOT_CANCELLABLE when it cannot be cancelled.
 */
export function quoteOf(booking: Booking, at: Date): CancellationQuote {
  if (booking.status === 'cancelled' && booking.cancellationFee !== null && booking.refundAmount !== null) {
    return { booking, fee: booking.cancellationFee, refund: booking.refundAmount, freeCancellationBefore: booking.cancellationDeadline, final: true };
  }
  refuseCancel(booking);
  return { booking, ...chargesOf(booking, at), final: false };
}

/**
 * quoteOf, or null where it refuses: for a list of bookings, where a refusal is not an error. A
 * booking read while in flight (it reads pending) has no quote: cancelling it is 404 until settled.
 */
export function quoteOrNull(booking: Booking, at: Date): CancellationQuote | null {
  if (isUnsettled(booking)) return null;
  try {
    return quoteOf(booking, at);
  } catch (error) {
    if (error instanceof AlreadyCancelledError || error instanceof NotCancellableError) return null;
    throw error;
  }
}

/**
 * PUT /bookings/{id}/cancel. The booking goes to `cancelling` first (one conditional update, so
 * of twenty concurrent cancels one goes on and the rest get 409), then the provider is told,
 * then one transaction makes it `cancelled`, records fee and refund, credits the refund once
 * (production) and writes `reservation.cancelled`. The provider refusing or failing puts the
 * booking back as it was (409 or 502); so does, in production, a provider that does not know the
 * booking (502, cancelsUnknownToProvider). The fee is the one of the moment of the request.
 */
export async function cancelBooking(ctx: RequestContext, id: string): Promise<Booking> {
  const booking = await getBooking(ctx, id);
  refuseCancel(booking);
  // Held by this request while it has the row in flight (`cancelling`): should the database go
  // away under it, this instance's recovery settles the row from the provider's view (inFlight.ts).
  return ctx.deps.inFlight.with([booking.id], () => cancelHeld(ctx, id, booking));
}

async function cancelHeld(ctx: RequestContext, id: string, booking: Booking): Promise<Booking> {
  const { deps } = ctx;
  const now = deps.clock();
  const started = await transact(deps, (tx) =>
    move(tx, booking, 'cancel_requested', { previousStatus: booking.status, cancelRequestedAt: now, leaseOwner: deps.instanceId }, now),
  );
  if (!started) {
    refuseCancel(await getBooking(ctx, id));
    throw new ConflictError('BOOKING_CHANGED', 'The booking changed while it was being cancelled; read it and retry');
  }

  let answer;
  try {
    answer = await deps.upstream.cancelBooking(started.id, { scenario: ctx.scenario, log: ctx });
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    // Whether the provider cancelled is unknown: the booking stays as it was, and the sync
    // applies the cancellation if the provider did make it.
    await revertCancel(deps, started);
    throw error;
  }
  if (answer === 'not_cancellable') {
    await revertCancel(deps, started);
    throw new NotCancellableError(started.id, started.previousStatus ?? started.status);
  }
  if (answer === null && !cancelsUnknownToProvider({ config: deps.config, logger: ctx.logger }, started, 'a partner cancels it')) {
    await revertCancel(deps, started);
    throw new CancellationNotConfirmedError(started.id, started.previousStatus ?? 'confirmed');
  }
  const done = await completeCancel(deps, started, now);
  // Only a sweeper acting on this row after the request's lease could have moved it meanwhile.
  if (done.status !== 'cancelled') throw new ConflictError('BOOKING_CHANGED', 'The booking changed while it was being cancelled; read it and retry');
  return done;
}

/**
 * The one rule for a cancellation the provider answers with "I do not know this booking"
 * (docs/decisions.md, "Environments"): true when it may complete here anyway. Only the sandbox
 * does: its bundled simulator forgets its bookings when it restarts, and no money moves there. In
 * production nothing is cancelled, refunded or announced without the provider's word: the caller
 * keeps the booking as it was, and the disagreement is logged at error level for an operator;
 * the sync keeps comparing the booking with the provider. `why` says what asked for the cancellation.
 */
export function cancelsUnknownToProvider(deps: Pick<AppDeps, 'config' | 'logger'>, booking: Booking, why: string): boolean {
  const facts = { booking: booking.id, channel: booking.channelId, status: booking.status, previous: booking.previousStatus, why };
  if (deps.config.env === 'sandbox') {
    deps.logger.warn(facts, 'provider does not know a booking being cancelled; cancelling here (sandbox)');
    return true;
  }
  deps.logger.error(facts, 'provider does not know a booking being cancelled; it is kept as it was, with nothing refunded, for an operator to reconcile');
  return false;
}

/** Makes a booking cancelled with the charges of `at`, and refunds once. Used by every cancellation. */
export async function completeCancel(deps: AppDeps, booking: Booking, at: Date, options: { waived?: boolean; trigger?: Trigger } = {}): Promise<Booking> {
  const now = deps.clock();
  const charges = chargesOf(booking, at, options);
  const done = await transact(deps, async (tx) => {
    const cancelled = await move(
      tx,
      booking,
      options.trigger ?? 'cancelled',
      { cancellationFee: charges.fee, refundAmount: charges.refund, cancelledAt: now, previousStatus: null },
      now,
    );
    if (cancelled && charges.refund > 0n) await postBookingMoney(tx, deps.config.env, cancelled, charges.refund, 'booking_refund');
    return cancelled;
  });
  return done ?? deps.db.prisma.booking.findUniqueOrThrow({ where: { id: booking.id } });
}

/**
 * The provider refused or failed: back to the status before. The request's moment is forgotten,
 * so a later cancellation pays the fee of its own moment (had the provider cancelled after all,
 * the sync takes the provider's time of cancellation).
 */
export async function revertCancel(deps: AppDeps, booking: Booking): Promise<void> {
  const now = deps.clock();
  const back = booking.previousStatus ?? 'confirmed';
  await transact(deps, (tx) => move(tx, booking, 'cancel_reverted', { previousStatus: null, cancelRequestedAt: null }, now, back));
}

/** A pending booking the provider reports failed: nothing was delivered, so everything comes back. */
export async function failPending(deps: AppDeps, booking: Booking): Promise<Booking | null> {
  const now = deps.clock();
  return transact(deps, async (tx) => {
    const failed = await move(tx, booking, 'provider_failed', { cancellationFee: 0n, refundAmount: booking.totalAmount }, now);
    if (failed && failed.totalAmount > 0n) await postBookingMoney(tx, deps.config.env, failed, failed.totalAmount, 'booking_refund');
    return failed;
  });
}

/** A transition a property reports with no money attached (confirmed, checked in or out, no-show). */
export async function applyReported(deps: AppDeps, booking: Booking, trigger: Trigger): Promise<Booking | null> {
  const now = deps.clock();
  return transact(deps, (tx) => move(tx, booking, trigger, { syncedAt: now }, now));
}
