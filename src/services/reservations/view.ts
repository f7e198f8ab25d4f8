import type { Booking } from '../../generated/prisma/client.js';
import type { VisibleStatus } from '../bookings/index.js';
import type { Amount } from '../kernel/index.js';
import type { CancellationPolicyType } from '../catalog/index.js';
import type { Reservation } from './rules.js';

// ---------------------------------------------------------------------------------------------
// What a reservation shows

/** Rooms that are no longer part of the stay. */
export const DROPPED: ReadonlySet<string> = new Set(['cancelled', 'failed']);

/** The order in which mixed room statuses name the reservation's: what still needs attention first. */
const STATUS_ORDER: VisibleStatus[] = ['pending', 'confirmed', 'cancelling', 'checked_in', 'checked_out', 'no_show', 'completed', 'cancelled', 'failed'];

/**
 * One status for the reservation: its rooms' when they agree, leaving out rooms cancelled (or
 * failed) while others remain; otherwise the first of STATUS_ORDER among them.
 */
export function reservationStatus(bookings: Booking[]): VisibleStatus {
  const kept = bookings.filter((b) => !DROPPED.has(b.status));
  const pool = (kept.length ? kept : bookings).map((b) => b.status as VisibleStatus);
  return STATUS_ORDER.find((s) => pool.includes(s)) ?? pool[0]!;
}

/** The room whose guest is the reservation's: the first room still part of the stay, else the first. */
export function leadRoom(bookings: Booking[]): Booking {
  return bookings.find((b) => !DROPPED.has(b.status)) ?? bookings[0]!;
}

export interface PolicySummary {
  type: CancellationPolicyType;
  freeCancellationBefore: Date | null;
}

export function policyOf(b: Pick<Booking, 'cancellationPolicy' | 'cancellationDeadline'>): PolicySummary {
  return { type: (b.cancellationPolicy ?? 'non_refundable') as CancellationPolicyType, freeCancellationBefore: b.cancellationDeadline };
}

/**
 * The policy of cancelling the whole reservation: its rooms' when they agree; otherwise the one
 * whose free cancellation ends first (never free ends first of all), since cancelling everything
 * for free is possible only before then. Rooms already cancelled do not count.
 */
export function reservationPolicy(bookings: Booking[]): PolicySummary {
  const kept = bookings.filter((b) => !DROPPED.has(b.status));
  const policies = (kept.length ? kept : bookings).map(policyOf);
  const deadline = (p: PolicySummary) => p.freeCancellationBefore?.getTime() ?? Number.NEGATIVE_INFINITY;
  return policies.reduce((strictest, p) => (deadline(p) < deadline(strictest) ? p : strictest));
}

export interface ReservationTotals {
  /** What the rooms were charged, KRW. */
  total: Amount;
  currency: string;
  /** The same in the currency the partner searched in; null when the rooms were found in different currencies. */
  requestTotal: Amount | null;
  requestCurrency: string | null;
  /** Of the rooms cancelled: what was kept and what came back. */
  cancellationFee: Amount;
  refundAmount: Amount;
}

export function reservationTotals(bookings: Booking[]): ReservationTotals {
  const currencies = new Set(bookings.map((b) => b.requestCurrency));
  const sum = (pick: (b: Booking) => Amount | null) => bookings.reduce((n, b) => n + (pick(b) ?? 0n), 0n);
  return {
    total: sum((b) => b.totalAmount),
    currency: bookings[0]!.currency,
    requestTotal: currencies.size === 1 ? sum((b) => b.requestAmount) : null,
    requestCurrency: currencies.size === 1 ? bookings[0]!.requestCurrency : null,
    cancellationFee: sum((b) => (b.status === 'cancelled' ? b.cancellationFee : null)),
    refundAmount: sum((b) => (DROPPED.has(b.status) ? b.refundAmount : null)),
  };
}

/** A reservation as both surfaces show it (REST in snake_case, GraphQL in camelCase). */
export interface ReservationView {
  id: string;
  confirmationNumber: string;
  status: VisibleStatus;
  propertyId: number;
  propertyName: string | null;
  checkin: Date;
  checkout: Date;
  /** Every room together. */
  adults: number;
  children: number;
  /** The lead guest and contact: the lead room's (its names, else the first room's). */
  guest: { firstName: string | null; lastName: string | null; email: string | null; phone: string | null; country: string | null };
  rooms: Booking[];
  totals: ReservationTotals;
  policy: PolicySummary;
  specialRequests: string | null;
  arrivalTime: string | null;
  channelBookingNumber: string | null;
  createdAt: Date;
  /** The latest change of any room. */
  updatedAt: Date;
}

export function reservationView(r: Reservation): ReservationView {
  const first = r.bookings[0]!;
  const lead = leadRoom(r.bookings);
  return {
    id: r.id,
    confirmationNumber: r.confirmationNumber,
    status: reservationStatus(r.bookings),
    propertyId: first.propertyId,
    propertyName: first.propertyName,
    checkin: first.checkin,
    checkout: first.checkout,
    adults: r.bookings.reduce((n, b) => n + b.guestsAdult, 0),
    children: r.bookings.reduce((n, b) => n + b.guestsChild, 0),
    guest: {
      firstName: lead.guestFirstName ?? first.guestFirstName,
      lastName: lead.guestLastName ?? first.guestLastName,
      email: lead.bookerEmail,
      phone: lead.guestPhone,
      country: lead.guestCountry,
    },
    rooms: r.bookings,
    totals: reservationTotals(r.bookings),
    policy: reservationPolicy(r.bookings),
    specialRequests: lead.specialRequests,
    arrivalTime: lead.arrivalTime,
    channelBookingNumber: first.channelBookingNumber,
    createdAt: first.createdAt,
    updatedAt: new Date(Math.max(...r.bookings.map((b) => b.updatedAt.getTime()))),
  };
}

/** Of the rooms a cancellation request cancelled: what was kept and what came back (KRW). */
export function cancelledTotals(cancelled: Booking[]): { cancellationFee: Amount; refundAmount: Amount } {
  const sum = (pick: (b: Booking) => Amount | null) => cancelled.reduce((n, b) => n + (pick(b) ?? 0n), 0n);
  return { cancellationFee: sum((b) => b.cancellationFee), refundAmount: sum((b) => b.refundAmount) };
}
