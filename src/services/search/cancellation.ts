import type { CancellationPolicyType } from '../catalog/index.js';

/**
 * Cancellation policies (docs/spec/channel-api.md §2.6) and their deadlines. Deadlines are measured from 15:00 on the
 * check-in date in the property's time zone (docs/spec/DECISIONS.md).
 */

/** Hours before check-in until which cancelling is free; null: never free. */
const FREE_CANCELLATION_HOURS: Record<CancellationPolicyType, number | null> = {
  flexible: 24,
  moderate: 48,
  strict: 7 * 24,
  non_refundable: null,
};

/** Share of the total charged when cancelling after the free period, in percent. */
export const PENALTY_PERCENT: Record<CancellationPolicyType, number> = {
  flexible: 100,
  moderate: 50,
  strict: 100,
  non_refundable: 100,
};

export const CHECKIN_HOUR = 15;

/** 15:00 on the check-in date (YYYY-MM-DD) in `timezone`, as an instant. */
export function checkinInstant(checkin: string, timezone: string): Date {
  const [year, month, day] = checkin.split('-').map(Number) as [number, number, number];
  const asUtc = Date.UTC(year, month - 1, day, CHECKIN_HOUR);
  // The zone's offset at that wall time (close enough at 15:00, far from any DST switch hour).
  return new Date(asUtc - offsetMs(timezone, new Date(asUtc)));
}

export function freeCancellationBefore(policy: CancellationPolicyType, checkin: string, timezone: string): Date | null {
  const hours = FREE_CANCELLATION_HOURS[policy];
  if (hours === null) return null;
  return new Date(checkinInstant(checkin, timezone).getTime() - hours * 3_600_000);
}

/**
 * One formatter per time zone: building an Intl.DateTimeFormat costs far more than formatting
 * with it, and every rate of an availability answer asks for its deadline (issue 18, item 7).
 * The zones are the catalog's (a few hundred names at most); the cap only guards against a
 * provider sending unbounded garbage.
 */
const offsetFormats = new Map<string, Intl.DateTimeFormat>();

function offsetFormat(timezone: string): Intl.DateTimeFormat {
  let format = offsetFormats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'longOffset' });
    if (offsetFormats.size >= 1_000) offsetFormats.clear();
    offsetFormats.set(timezone, format);
  }
  return format;
}

function offsetMs(timezone: string, at: Date): number {
  const name = offsetFormat(timezone)
    .formatToParts(at)
    .find((p) => p.type === 'timeZoneName')?.value;
  const match = /GMT([+-])(\d{2}):(\d{2})/.exec(name ?? '');
  if (!match) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3]);
  return (match[1] === '-' ? -1 : 1) * minutes * 60_000;
}

export interface CancellationCharges {
  /** What the channel forfeits, in the booking's currency. */
  fee: bigint;
  /** What comes back: total - fee. */
  refund: bigint;
  freeCancellationBefore: Date | null;
}

/**
 * The one fee rule (docs/spec/channel-api.md §2.6, docs/spec/DECISIONS.md), used by the v1 preview and cancel, the v2 cancel
 * and automatic cancellations: free before the policy's deadline, then the penalty share of the
 * total (rounded down, so a fraction of a unit is never charged); non_refundable: always 100 %.
 * `waived` (a pending booking the provider never confirmed in time) refunds everything.
 */
export function cancellationCharges(
  booking: { cancellationPolicy: CancellationPolicyType; totalAmount: bigint; checkin: string; timezone: string },
  at: Date,
  options: { waived?: boolean } = {},
): CancellationCharges {
  const freeBefore = freeCancellationBefore(booking.cancellationPolicy, booking.checkin, booking.timezone);
  const free = options.waived || (freeBefore !== null && at.getTime() < freeBefore.getTime());
  const fee = free ? 0n : (booking.totalAmount * BigInt(PENALTY_PERCENT[booking.cancellationPolicy])) / 100n;
  return { fee, refund: booking.totalAmount - fee, freeCancellationBefore: freeBefore };
}
