import { MINOR_DIGITS, type Currency } from '../kernel/index.js';
import type { RequestContext } from '../../context.js';
import type { MealPlan, RoomOccupancy } from '../../upstream/protocol.js';
import { dateOnly, isVisible, type Booking, type VisibleStatus } from '../bookings/index.js';
import { CHECKIN_HOUR, freeCancellationBefore, PENALTY_PERCENT } from '../search/index.js';
import type { CancellationPolicyType, Property } from '../catalog/index.js';
import { getReservation, leadRoom, reservationStatus } from '../reservations/index.js';

/**
 * Booking vouchers (docs/spec/channel-api.md §4.7, GET /reservations/{id}/voucher): one model of what a voucher says,
 * built here from the booking and the property's content, and rendered as HTML (html.ts) or PDF
 * (pdf.ts) from that model alone (through the sections of layout.ts), so both formats always say
 * the same.
 */

export interface VoucherAmount {
  amount: bigint;
  currency: string;
  /** "KRW 182,400" */
  label: string;
}

export interface VoucherCancellation {
  policy: CancellationPolicyType;
  /** The policy in words, with its deadline in the property's local time. */
  words: string;
  freeUntil: Date | null;
  /** Only for a cancelled room: what the cancellation cost and gave back. */
  fee: VoucherAmount | null;
  refund: VoucherAmount | null;
  cancelledAt: Date | null;
}

/** One booked room (a booking row). A v1 booking is one room; a multi-room reservation has several. */
export interface VoucherRoom {
  bookingId: string;
  /** The provider's confirmation number of this room (hubBookingNumber). */
  providerConfirmation: string | null;
  status: VisibleStatus;
  statusLabel: string;
  roomType: string | null;
  ratePlan: string | null;
  /** "Breakfast included", ...; null when the rate plan is no longer in the catalog. */
  mealPlan: string | null;
  /** "First Last" when the partner gave the guest's name. */
  guest: string | null;
  adults: number;
  children: number;
  /** "2 adults, 1 child" */
  party: string;
  /** Rooms this booking holds (1, except a v1 booking of several rooms). */
  roomCount: number;
  checkin: string;
  checkout: string;
  /** The partner's customer price (saleAmount) when it gave one, else what was paid. */
  price: VoucherAmount & { kind: 'sale' | 'total' };
  cancellation: VoucherCancellation;
  specialRequests: string | null;
}

export interface Voucher {
  /** The reservation (itinerary) id: the booking id of a one-room booking, the first room's of a multi-room one. */
  reservationId: string;
  /** The reservation's confirmation number, shared by its rooms (the provider's numbers are per room). */
  confirmationNumber: string;
  /** The partner's own booking number (channelBookingNumber). */
  partnerReference: string | null;
  status: VisibleStatus;
  /** The status as the voucher headline shows it: "CONFIRMED", "CANCELLED", ... */
  statusLabel: string;
  /** Whether the voucher can be shown at the property: false when no room is left to stay in. */
  valid: boolean;
  /** A sentence the voucher shows prominently when the reservation is not simply confirmed. */
  notice: string | null;
  property: {
    id: number;
    name: string;
    /** Null when the provider no longer lists the property. */
    address: string | null;
    city: string | null;
    country: string | null;
    timezone: string;
  };
  checkin: { date: string; label: string; time: string };
  checkout: { date: string; label: string };
  /** Expected arrival (HH:MM local), when the partner gave one. */
  arrivalTime: string | null;
  nights: number;
  booker: { name: string; email: string | null; phone: string | null };
  /** Every room's party together. */
  party: string;
  /** Rooms booked (a v1 booking may hold several rooms in one booking). */
  roomCount: number;
  /** The bookings of the reservation: one per room, except a v1 booking of several rooms. */
  rooms: VoucherRoom[];
  /**
   * The rooms still booked together (`covers: 'live'`): a cancelled or failed room is not counted,
   * its fee and refund are shown with it. When no room is left (`covers: 'booked'`): what every
   * room was booked for. `kind`: the partner's customer price (saleAmount) when every counted room
   * has one, else what was paid (totalAmount).
   */
  price: VoucherAmount & { kind: 'sale' | 'total'; covers: 'live' | 'booked' };
  /** Rooms not counted in `price` because they were cancelled (or failed), while others are live. */
  excludedRooms: number;
  issuedAt: Date;
}

// ---------------------------------------------------------------------------------------------
// Building the model

/**
 * The rooms of the reservation a booking id belongs to (the reservation's id, or any of its rooms'
 * booking ids, as every /reservations/{id} route takes it), in their order. 404 for an id that is
 * not a booking of the caller's channel.
 */
export async function reservationRooms(ctx: RequestContext, id: string): Promise<{ id: string; rooms: Booking[] }> {
  const reservation = await getReservation(ctx, id);
  return { id: id.toLowerCase(), rooms: reservation.bookings };
}

/** The voucher of the reservation of a booking of the caller's channel (404 for any other id). */
export async function buildVoucher(ctx: RequestContext, id: string): Promise<{ id: string; voucher: Voucher }> {
  const { rooms } = await reservationRooms(ctx, id);
  // Batched and cached like every content lookup; a provider failure is a 502 (retry), while a
  // property the provider no longer lists still gets its voucher from what the booking holds.
  const property = await ctx.loaders.property.load(rooms[0]!.propertyId);
  return { id: id.toLowerCase(), voucher: voucherOf(rooms, property, ctx.deps.clock()) };
}

export function voucherOf(rooms: Booking[], property: Property | null, now: Date): Voucher {
  const first = rooms[0];
  if (!first) throw new Error('a voucher needs at least one room');
  const statuses = rooms.map((b) => {
    if (!isVisible(b.status)) throw new Error(`booking ${b.id} is ${b.status}, not a partner-visible status`);
    return b.status;
  });
  const status = reservationStatus(rooms);
  // The room whose guest is the reservation's (the first one still part of the stay).
  const lead = leadRoom(rooms);
  const checkin = dateOnly(first.checkin);
  const checkout = dateOnly(first.checkout);
  // What the stay costs: the rooms still booked; a cancelled room's money is its fee and refund.
  const live = rooms.filter((b) => !GONE.has(b.status as VisibleStatus));
  const counted = live.length > 0 ? live : rooms;
  const sales = counted.every((b) => b.saleAmount !== null);
  const sum = (f: (b: Booking) => bigint) => counted.reduce((acc, b) => acc + f(b), 0n);

  return {
    reservationId: first.itineraryId,
    confirmationNumber: first.confirmationNumber,
    partnerReference: first.channelBookingNumber,
    status,
    statusLabel: labelOf(status),
    valid: statuses.some((s) => !INVALID.has(s)),
    notice: NOTICES[status],
    property: {
      id: first.propertyId,
      name: first.propertyName ?? property?.name ?? `Property ${first.propertyId}`,
      address: property?.address ?? null,
      city: property?.city ?? null,
      country: property?.country ?? null,
      timezone: first.timezone,
    },
    checkin: { date: checkin, label: dateLabel(checkin), time: `${String(CHECKIN_HOUR).padStart(2, '0')}:00` },
    checkout: { date: checkout, label: dateLabel(checkout) },
    arrivalTime: lead.arrivalTime,
    nights: Math.round((first.checkout.getTime() - first.checkin.getTime()) / 86_400_000),
    booker: { name: lead.bookerName, email: lead.bookerEmail, phone: lead.guestPhone },
    party: partyOf(
      rooms.reduce((n, b) => n + b.guestsAdult, 0),
      rooms.reduce((n, b) => n + b.guestsChild, 0),
    ),
    roomCount: rooms.reduce((n, b) => n + roomsIn(b), 0),
    rooms: rooms.map((b) => roomOf(b, property, now)),
    price: {
      ...amountOf(sum((b) => (sales ? b.saleAmount! : b.totalAmount)), first.currency),
      kind: sales ? 'sale' : 'total',
      covers: live.length > 0 ? 'live' : 'booked',
    },
    excludedRooms: live.length > 0 ? rooms.length - live.length : 0,
    issuedAt: now,
  };
}

function roomOf(b: Booking, property: Property | null, now: Date): VoucherRoom {
  const status = b.status as VisibleStatus;
  const checkin = dateOnly(b.checkin);
  const plan = property?.roomTypes.find((r) => r.id === b.roomtypeId)?.ratePlans.find((p) => p.id === b.rateplanId);
  const policy = (b.cancellationPolicy ?? 'non_refundable') as CancellationPolicyType;
  const freeUntil = b.cancellationDeadline ?? freeCancellationBefore(policy, checkin, b.timezone);
  const cancelled = status === 'cancelled';
  const guest = [b.guestFirstName, b.guestLastName].filter(Boolean).join(' ');
  return {
    bookingId: b.id,
    providerConfirmation: b.hubBookingNumber,
    status,
    statusLabel: labelOf(status),
    roomType: b.roomType,
    ratePlan: b.ratePlan,
    mealPlan: plan ? MEAL_PLANS[plan.mealPlan] : null,
    guest: guest || null,
    adults: b.guestsAdult,
    children: b.guestsChild,
    party: partyOf(b.guestsAdult, b.guestsChild),
    roomCount: roomsIn(b),
    checkin,
    checkout: dateOnly(b.checkout),
    price: { ...amountOf(b.saleAmount ?? b.totalAmount, b.currency), kind: b.saleAmount === null ? 'total' : 'sale' },
    cancellation: {
      policy,
      words: policyWords(policy, freeUntil, b.timezone, now),
      freeUntil,
      fee: cancelled && b.cancellationFee !== null ? amountOf(b.cancellationFee, b.currency) : null,
      refund: cancelled && b.refundAmount !== null ? amountOf(b.refundAmount, b.currency) : null,
      cancelledAt: cancelled ? b.cancelledAt : null,
    },
    specialRequests: b.specialRequests,
  };
}

function roomsIn(b: Booking): number {
  return Array.isArray(b.occupancy) ? Math.max(1, (b.occupancy as unknown as RoomOccupancy[]).length) : 1;
}

function labelOf(status: VisibleStatus): string {
  return status.replace('_', ' ').toUpperCase();
}

const INVALID: ReadonlySet<VisibleStatus> = new Set(['cancelling', 'cancelled', 'failed', 'no_show']);

/** Rooms no longer booked: not counted in the voucher's total (a room being cancelled still is). */
const GONE: ReadonlySet<VisibleStatus> = new Set(['cancelled', 'failed']);

const NOTICES: Record<VisibleStatus, string | null> = {
  pending: 'This booking is awaiting confirmation by the property. It is not confirmed yet.',
  confirmed: null,
  cancelling: 'This booking is being cancelled. This voucher is not valid for a stay.',
  cancelled: 'This booking is CANCELLED. This voucher is not valid for a stay.',
  completed: null,
  failed: 'This booking FAILED: the property could not confirm it. This voucher is not valid for a stay.',
  checked_in: null,
  checked_out: null,
  no_show: 'The guest did not arrive (no-show). This voucher is no longer valid.',
};

const MEAL_PLANS: Record<MealPlan, string> = {
  room_only: 'Room only',
  breakfast: 'Breakfast included',
  half_board: 'Half board (breakfast and dinner)',
  full_board: 'Full board (all meals)',
};

const POLICY_NAMES: Record<CancellationPolicyType, string> = {
  flexible: 'Flexible',
  moderate: 'Moderate',
  strict: 'Strict',
  non_refundable: 'Non-refundable',
};

function policyWords(policy: CancellationPolicyType, freeUntil: Date | null, timezone: string, now: Date): string {
  const penalty = PENALTY_PERCENT[policy];
  if (freeUntil === null) return `${POLICY_NAMES[policy]}: cancelling at any time costs ${penalty}% of the total; nothing is refunded.`;
  const deadline = instantLabel(freeUntil, timezone);
  const free = freeUntil.getTime() > now.getTime() ? `free cancellation until ${deadline}` : `free cancellation ended on ${deadline}`;
  return `${POLICY_NAMES[policy]}: ${free}. After that, cancelling costs ${penalty}% of the total.`;
}

function partyOf(adults: number, children: number): string {
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return children > 0 ? `${plural(adults, 'adult', 'adults')}, ${plural(children, 'child', 'children')}` : plural(adults, 'adult', 'adults');
}

/** "Wed 30 Dec 2026" for a YYYY-MM-DD date. */
function dateLabel(date: string): string {
  return new Intl.DateTimeFormat('en-GB', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' })
    .format(new Date(`${date}T00:00:00Z`))
    .replace(',', '');
}

/** "Tue 29 Dec 2026, 15:00 (Asia/Seoul)": an instant in the property's local time. */
export function instantLabel(at: Date, timezone: string): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone: timezone,
  }).formatToParts(at);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('weekday')} ${part('day')} ${part('month')} ${part('year')}, ${part('hour')}:${part('minute')} (${timezone})`;
}

/** An amount in the currency's minor units as "KRW 182,400" or "USD 1,234.50", without floating point. */
export function amountOf(amount: bigint, currency: string): VoucherAmount {
  const digits = MINOR_DIGITS[currency as Currency] ?? 0;
  const negative = amount < 0n;
  const abs = negative ? -amount : amount;
  const scale = 10n ** BigInt(digits);
  const whole = (abs / scale).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = digits > 0 ? `.${(abs % scale).toString().padStart(digits, '0')}` : '';
  return { amount, currency, label: `${currency} ${negative ? '-' : ''}${whole}${fraction}` };
}
