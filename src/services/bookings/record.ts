import type { Booking } from '../../generated/prisma/client.js';
import { isVisible, readStatus, type VisibleStatus } from './states.js';
import type { CancellationPolicyType } from '../catalog/index.js';

export type { Booking };

// ---------------------------------------------------------------------------------------------
// The booking record (docs/spec/channel-api.md §2.2): camelCase, 64-bit amounts as strings. Webhook payloads too.

export interface BookingRecord {
  id: string;
  userId: string;
  appId: string;
  hubBookingNumber: string | null;
  channelBookingNumber: string | null;
  propertyId: string;
  propertyName: string | null;
  roomType: string | null;
  ratePlan: string | null;
  checkin: string;
  checkout: string;
  guestsAdult: number;
  guestsChild: number;
  bookerName: string;
  bookerEmail: string | null;
  guestFirstName: string | null;
  guestLastName: string | null;
  guestPhone: string | null;
  guestCountry: string | null;
  specialRequests: string | null;
  totalAmount: string;
  netAmount: string;
  saleAmount: string | null;
  currency: string;
  status: VisibleStatus;
  cancellationPolicy: CancellationPolicyType | null;
  cancellationDeadline: string | null;
  refundAmount: string | null;
  cancellationFee: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The copies asRead made of bookings in flight or void. */
const unsettled = new WeakSet<Booking>();

/** A booking row as a partner reads it: its status as readStatus (states.ts) says; for reads only. */
export function asRead(b: Booking): Booking {
  if (isVisible(b.status)) return b;
  const read = { ...b, status: readStatus(b.status) };
  unsettled.add(read);
  return read;
}

/** True for what asRead made of a booking in flight or void: it reads pending or failed, but nothing can be done to it yet. */
export function isUnsettled(b: Booking): boolean {
  return unsettled.has(b);
}

export function toBookingRecord(b: Booking): BookingRecord {
  if (!isVisible(b.status)) throw new Error(`booking ${b.id} is ${b.status}, not a partner-visible status`);
  return {
    id: b.id,
    userId: b.channelId,
    appId: b.appId,
    hubBookingNumber: b.hubBookingNumber,
    channelBookingNumber: b.channelBookingNumber,
    propertyId: String(b.propertyId),
    propertyName: b.propertyName,
    roomType: b.roomType,
    ratePlan: b.ratePlan,
    checkin: dateOnly(b.checkin),
    checkout: dateOnly(b.checkout),
    guestsAdult: b.guestsAdult,
    guestsChild: b.guestsChild,
    bookerName: b.bookerName,
    bookerEmail: b.bookerEmail,
    guestFirstName: b.guestFirstName,
    guestLastName: b.guestLastName,
    guestPhone: b.guestPhone,
    guestCountry: b.guestCountry,
    specialRequests: b.specialRequests,
    totalAmount: b.totalAmount.toString(),
    netAmount: b.netAmount.toString(),
    saleAmount: b.saleAmount?.toString() ?? null,
    currency: b.currency,
    status: b.status,
    cancellationPolicy: b.cancellationPolicy as CancellationPolicyType | null,
    cancellationDeadline: b.cancellationDeadline?.toISOString() ?? null,
    refundAmount: b.refundAmount?.toString() ?? null,
    cancellationFee: b.cancellationFee?.toString() ?? null,
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  };
}

/** The fields of a booking the partner sees: a row, or a record as an event carried it. */
export type BookingView = Pick<
  Booking,
  | 'id' | 'channelId' | 'appId' | 'hubBookingNumber' | 'channelBookingNumber' | 'propertyId' | 'propertyName'
  | 'roomType' | 'ratePlan' | 'checkin' | 'checkout' | 'guestsAdult' | 'guestsChild' | 'bookerName'
  | 'bookerEmail' | 'guestFirstName' | 'guestLastName' | 'guestPhone' | 'guestCountry' | 'specialRequests'
  | 'totalAmount' | 'netAmount' | 'saleAmount' | 'currency' | 'status' | 'cancellationPolicy'
  | 'cancellationDeadline' | 'refundAmount' | 'cancellationFee' | 'createdAt' | 'updatedAt'
>;

/** The inverse of toBookingRecord: the booking as an outbox event recorded it. */
export function fromBookingRecord(r: BookingRecord): BookingView {
  const amount = (v: string | null) => (v === null ? null : BigInt(v));
  const instant = (v: string | null) => (v === null ? null : new Date(v));
  return {
    id: r.id,
    channelId: r.userId,
    appId: r.appId,
    hubBookingNumber: r.hubBookingNumber,
    channelBookingNumber: r.channelBookingNumber,
    propertyId: Number(r.propertyId),
    propertyName: r.propertyName,
    roomType: r.roomType,
    ratePlan: r.ratePlan,
    checkin: dateValue(r.checkin),
    checkout: dateValue(r.checkout),
    guestsAdult: r.guestsAdult,
    guestsChild: r.guestsChild,
    bookerName: r.bookerName,
    bookerEmail: r.bookerEmail,
    guestFirstName: r.guestFirstName,
    guestLastName: r.guestLastName,
    guestPhone: r.guestPhone,
    guestCountry: r.guestCountry,
    specialRequests: r.specialRequests,
    totalAmount: BigInt(r.totalAmount),
    netAmount: BigInt(r.netAmount),
    saleAmount: amount(r.saleAmount),
    currency: r.currency,
    status: r.status,
    cancellationPolicy: r.cancellationPolicy,
    cancellationDeadline: instant(r.cancellationDeadline),
    refundAmount: amount(r.refundAmount),
    cancellationFee: amount(r.cancellationFee),
    createdAt: new Date(r.createdAt),
    updatedAt: new Date(r.updatedAt),
  };
}

export function dateOnly(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function dateValue(date: string): Date {
  return new Date(`${date}T00:00:00.000Z`);
}
