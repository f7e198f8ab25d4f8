import { z } from 'zod';
import { principalOf, AppError, ValidationError, MINOR_DIGITS, type Currency } from '../kernel/index.js';
import type { AppDeps, RequestContext } from '../../context.js';
import type { MealPlan, RoomOccupancy } from '../../upstream/protocol.js';
import { isVisible, type VisibleStatus } from '../bookings/states.js';
import { bookingRules, dateOnly, getBooking, type Booking } from '../bookings/bookings.js';
import { CHECKIN_HOUR, freeCancellationBefore, PENALTY_PERCENT } from '../search/cancellation.js';
import { sendMail } from './mail.js';
import type { CancellationPolicyType, Property } from '../catalog/properties.js';
import { createRateLimiter, type RateLimiter } from '../access/index.js';
import { getReservation, leadRoom, reservationStatus } from '../reservations/reservations.js';
import { renderVoucherHtml } from './html.js';
import { renderVoucherPdf } from './pdf.js';

/**
 * Booking vouchers (spec §4.7, GET /reservations/{id}/voucher): one model of what a voucher says,
 * built here from the booking and the property's content, and rendered as HTML (voucherHtml.ts)
 * or PDF (voucherPdf.ts) from that model alone, so both formats always say the same.
 */

export const VOUCHER_FORMATS = ['pdf', 'html'] as const;
export type VoucherFormat = (typeof VOUCHER_FORMATS)[number];

export const VOUCHER_MEDIA_TYPES: Record<VoucherFormat, string> = {
  pdf: 'application/pdf',
  html: 'text/html; charset=utf-8',
};

/**
 * What the voucher response sends as Content-Security-Policy: the page is self-contained (one
 * inline <style>, no script, no external resource), so nothing else may load or run.
 */
export const VOUCHER_HTML_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

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

/** A voucher rendered for a response or an e-mail attachment. */
export interface RenderedVoucher {
  format: VoucherFormat;
  body: Uint8Array;
  /** The Content-Type to send it with. */
  mediaType: string;
  filename: string;
}

/** 406: the Accept header names neither voucher format, and no `format` was given. */
export class VoucherNotAcceptableError extends AppError {
  constructor() {
    super(406, 'NOT_ACCEPTABLE', 'The voucher is available as application/pdf or text/html: send one of them in Accept, or ?format=pdf|html', {
      available: ['application/pdf', 'text/html'],
    });
  }
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

// ---------------------------------------------------------------------------------------------
// The layout both formats draw

export interface VoucherRow {
  label: string;
  value: string;
  /** A stable name for the value (the HTML's data-field), so a page can be checked field by field. */
  field?: string;
}

export interface VoucherSection {
  title: string;
  rows: VoucherRow[];
  /** The price section is drawn larger. */
  emphasis?: boolean;
}

function rows(entries: [label: string, value: string | number | null | undefined, field?: string][]): VoucherRow[] {
  return entries.flatMap(([label, value, field]) =>
    value === null || value === undefined || value === '' ? [] : [{ label, value: String(value), ...(field ? { field } : {}) }],
  );
}

function utcMinute(at: Date): string {
  return `${at.toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

/** What the voucher says, in order: the HTML and the PDF draw exactly these sections. */
export function voucherSections(v: Voucher): VoucherSection[] {
  const one = v.rooms.length === 1 ? v.rooms[0]! : null;
  const roomDetails = (r: VoucherRoom, prefix: string) =>
    rows([
      ['Room type', r.roomType, `${prefix}room-type`],
      ['Rate plan', r.ratePlan, `${prefix}rate-plan`],
      ['Meals', r.mealPlan, `${prefix}meals`],
    ]);
  const cancellation = (r: VoucherRoom, prefix: string) =>
    rows([
      ['Cancellation policy', r.cancellation.words, `${prefix}policy`],
      ['Cancelled on', r.cancellation.cancelledAt ? utcMinute(r.cancellation.cancelledAt) : null],
      ['Cancellation fee', r.cancellation.fee?.label, `${prefix}cancellation-fee`],
      ['Refund', r.cancellation.refund?.label, `${prefix}refund`],
    ]);

  const sections: VoucherSection[] = [
    {
      title: 'Booking',
      rows: rows([
        [one ? 'Booking number' : 'Reservation number', v.reservationId, 'booking-number'],
        ['Confirmation number', v.confirmationNumber, 'confirmation-number'],
        ['Provider confirmation', one ? (one.providerConfirmation ?? 'not yet issued') : null, 'provider-confirmation'],
        ['Your reference', v.partnerReference, 'partner-reference'],
        ['Status', v.statusLabel, 'status'],
      ]),
    },
    {
      title: 'Property',
      rows: rows([
        ['Name', v.property.name, 'property-name'],
        ['Address', v.property.address, 'property-address'],
        ['City', [v.property.city, v.property.country].filter(Boolean).join(', ')],
        ['Time zone', v.property.timezone, 'timezone'],
      ]),
    },
    {
      title: 'Stay',
      rows: [
        ...rows([
          ['Check-in', `${v.checkin.label} (${v.checkin.date}), from ${v.checkin.time}`, 'checkin'],
          ['Expected arrival', v.arrivalTime, 'arrival-time'],
          ['Check-out', `${v.checkout.label} (${v.checkout.date})`, 'checkout'],
          ['Nights', v.nights, 'nights'],
          ['Rooms', v.roomCount, 'rooms'],
        ]),
        ...(one ? roomDetails(one, '') : []),
      ],
    },
    {
      title: 'Guests',
      rows: rows([
        ['Booked by', v.booker.name, 'booker'],
        ['Guest', one?.guest, 'guest'],
        ['Party', v.party, 'party'],
        ['E-mail', v.booker.email, 'email'],
        ['Phone', v.booker.phone, 'phone'],
      ]),
    },
  ];
  if (!one) {
    const unit = v.rooms.every((r) => r.roomCount === 1) ? 'Room' : 'Booking';
    v.rooms.forEach((r, i) => {
      const prefix = `room-${i + 1}-`;
      sections.push({
        title: `${unit} ${i + 1} of ${v.rooms.length}`,
        rows: [
          ...rows([
            ['Booking number', r.bookingId, `${prefix}booking-number`],
            ['Provider confirmation', r.providerConfirmation, `${prefix}provider-confirmation`],
            ['Status', r.statusLabel, `${prefix}status`],
            ['Rooms', r.roomCount > 1 ? r.roomCount : null],
          ]),
          ...roomDetails(r, prefix),
          ...rows([
            ['Guest', r.guest, `${prefix}guest`],
            ['Party', r.party, `${prefix}party`],
            ['Dates', r.checkin !== v.checkin.date || r.checkout !== v.checkout.date ? `${r.checkin} to ${r.checkout}` : null],
            [r.price.kind === 'sale' ? 'Price' : 'Paid', r.price.label, `${prefix}price`],
          ]),
          ...cancellation(r, prefix),
          ...rows([['Special requests', r.specialRequests, `${prefix}special-requests`]]),
        ],
      });
    });
  }
  sections.push({
    title: 'Price',
    emphasis: true,
    rows: rows([
      [priceLabel(v.price), v.price.label, 'price'],
      [
        'Not included',
        v.excludedRooms > 0 ? `${v.excludedRooms} cancelled ${v.excludedRooms === 1 ? 'room' : 'rooms'} (fee and refund shown with each room)` : null,
        'price-excludes',
      ],
    ]),
  });
  if (one) {
    sections.push({ title: 'Cancellation', rows: cancellation(one, '') });
    sections.push({ title: 'Special requests', rows: rows([['Requests', one.specialRequests, 'special-requests']]) });
  }
  return sections.filter((s) => s.rows.length > 0);
}

function priceLabel(price: Voucher['price']): string {
  if (price.covers === 'booked') return price.kind === 'sale' ? 'Price when booked' : 'Paid when booked';
  return price.kind === 'sale' ? 'Total price' : 'Total paid';
}

/** The small print under the sections. */
export function voucherFooter(v: Voucher): string {
  return (
    `Issued ${utcMinute(v.issuedAt)}. Check-in and cancellation times are the property's local time ` +
    `(${v.property.timezone}). Please show this voucher at check-in.`
  );
}

// ---------------------------------------------------------------------------------------------
// Choosing and rendering a format

/**
 * The format of a GET: `format` when given (it wins over Accept), else the Accept header's
 * preference between application/pdf and text/html (q-values; a more specific range wins over
 * a wildcard); PDF when Accept is absent, `*\/*`, or likes both equally. An Accept that allows
 * neither: 406 NOT_ACCEPTABLE.
 */
export function chooseVoucherFormat(format: VoucherFormat | undefined, accept: string | undefined): VoucherFormat {
  if (format) return format;
  if (!accept?.trim()) return 'pdf';
  const ranges = accept.split(',').flatMap((entry) => {
    const [range = '', ...params] = entry.split(';').map((s) => s.trim().toLowerCase());
    if (!range) return [];
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    return Number.isFinite(q) ? [{ range, q: Math.min(1, Math.max(0, q)) }] : [];
  });
  const quality = (media: string) => {
    const [type] = media.split('/');
    const match =
      ranges.find((r) => r.range === media) ?? ranges.find((r) => r.range === `${type}/*`) ?? ranges.find((r) => r.range === '*/*' || r.range === '*');
    return match?.q ?? 0;
  };
  const pdf = quality('application/pdf');
  const html = quality('text/html');
  if (pdf === 0 && html === 0) throw new VoucherNotAcceptableError();
  return html > pdf ? 'html' : 'pdf';
}

export async function renderVoucher(ctx: RequestContext, voucher: Voucher, format: VoucherFormat): Promise<RenderedVoucher> {
  const body =
    format === 'pdf'
      ? await renderVoucherPdf(voucher, { fontFile: ctx.deps.config.vouchers.pdfFont })
      : new TextEncoder().encode(renderVoucherHtml(voucher));
  return { format, body, mediaType: VOUCHER_MEDIA_TYPES[format], filename: `voucher-${voucher.reservationId}.${format}` };
}

/** The voucher of the reservation of a booking of the caller's channel, rendered. */
export async function getVoucher(ctx: RequestContext, id: string, format: VoucherFormat): Promise<RenderedVoucher> {
  const built = await buildVoucher(ctx, id);
  const rendered = await renderVoucher(ctx, built.voucher, format);
  // Named after the id asked for (the reservation's, or one of its rooms').
  return { ...rendered, filename: `voucher-${built.id}.${format}` };
}

/** Where the REST voucher of a booking is (relative, like v2's links): GraphQL gives these. */
export function voucherPaths(bookingId: string): Record<VoucherFormat, string> {
  const base = `/channel/v1/reservations/${encodeURIComponent(bookingId)}/voucher`;
  return { pdf: `${base}?format=pdf`, html: `${base}?format=html` };
}

// ---------------------------------------------------------------------------------------------
// Sending

/** Input rules of send-voucher, written once for REST and GraphQL. */
export const voucherRules = {
  format: z.enum(VOUCHER_FORMATS, { error: 'pdf or html' }),
  /** One plain address (no display name, no list, no line breaks): the booker e-mail's own rule. */
  to: bookingRules.email,
};

/** Voucher e-mails one reservation may send per hour, so a booking cannot be made a spam relay. */
export const VOUCHER_MAILS_PER_HOUR = 10;

/**
 * Voucher e-mails one channel may send, all its reservations together, per hour and per day: the
 * marketplace's domain is not a channel's mailing service (sandbox reservations cost nothing).
 * Deployment settings when config.vouchers carries them (see voucherMailLimits), else these.
 */
export const VOUCHER_MAILS_PER_CHANNEL_HOUR = 100;
export const VOUCHER_MAILS_PER_CHANNEL_DAY = 500;

export interface VoucherMailLimits {
  perReservationHour: number;
  perChannelHour: number;
  perChannelDay: number;
}

/**
 * The limits of this deployment: VOUCHER_MAILS_PER_CHANNEL_HOUR / _DAY (src/config.ts, whose
 * defaults are the constants above).
 */
export function voucherMailLimits(config: AppDeps['config']): VoucherMailLimits {
  return {
    perReservationHour: VOUCHER_MAILS_PER_HOUR,
    perChannelHour: config.vouchers.mailsPerChannelHour,
    perChannelDay: config.vouchers.mailsPerChannelDay,
  };
}

type MailLimitScope = 'reservation' | 'channel';

/**
 * 429: the voucher of this reservation (scope "reservation"), or this channel's vouchers all
 * together (scope "channel", per hour or per day), were e-mailed as often as allowed; retry later.
 */
export class VoucherMailLimitError extends AppError {
  constructor(scope: MailLimitScope, window: 'hour' | 'day', limit: number, retryAfterSeconds: number) {
    super(
      429,
      'VOUCHER_MAIL_LIMIT_EXCEEDED',
      scope === 'reservation'
        ? `This reservation's voucher was e-mailed ${limit} times within the ${window}; retry later`
        : `This channel's vouchers were e-mailed ${limit} times within the ${window}; retry later`,
      { scope, window, limit, retry_after: retryAfterSeconds },
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

/** 422: a sandbox sending through real SMTP mails a reservation's voucher to its own booker/guest addresses only. */
export class VoucherRecipientNotAllowedError extends AppError {
  constructor(field: string) {
    super(
      422,
      'VOUCHER_RECIPIENT_NOT_ALLOWED',
      "This sandbox sends real e-mail: a voucher goes only to the reservation's own booker or guest e-mail address",
      { field, allowed: 'booker_or_guest_email' },
    );
  }
}

interface MailLimiters {
  reservation: RateLimiter;
  channelHour: RateLimiter;
  channelDay: RateLimiter;
}

/** Shared through Redis when the service has it, like the API's limit. */
const mailLimiters = new WeakMap<AppDeps, MailLimiters>();

/** The voucher e-mail limiters of a service (exported for tests, which fill a window directly). */
export function voucherMailLimiters(deps: AppDeps): MailLimiters {
  let limiters = mailLimiters.get(deps);
  if (!limiters) {
    const limits = voucherMailLimits(deps.config);
    const make = (name: string, points: number, durationSeconds: number) =>
      createRateLimiter({ name, points, durationSeconds, redis: deps.redis });
    limiters = {
      reservation: make('voucher-mail', limits.perReservationHour, 3_600),
      channelHour: make('voucher-mail-channel-hour', limits.perChannelHour, 3_600),
      channelDay: make('voucher-mail-channel-day', limits.perChannelDay, 86_400),
    };
    mailLimiters.set(deps, limiters);
  }
  return limiters;
}

/**
 * Charges one e-mail to the reservation, then to the channel's hour, then its day; the first
 * refusal is the answer (what an earlier limit already counted stays counted).
 */
async function chargeVoucherMail(deps: AppDeps, reservationId: string, channelId: string): Promise<void> {
  const limiters = voucherMailLimiters(deps);
  const checks: [RateLimiter, string, MailLimitScope, 'hour' | 'day'][] = [
    [limiters.reservation, reservationId, 'reservation', 'hour'],
    [limiters.channelHour, channelId, 'channel', 'hour'],
    [limiters.channelDay, channelId, 'channel', 'day'],
  ];
  for (const [limiter, key, scope, window] of checks) {
    const decision = await limiter.consume(key);
    if (!decision.allowed) throw new VoucherMailLimitError(scope, window, decision.limit, decision.resetSeconds);
  }
}

export interface SendVoucherInput {
  /** Default: the booking's booker e-mail. */
  to?: string | undefined;
  /** Default: pdf. */
  format?: VoucherFormat | undefined;
}

export interface SendVoucherOptions {
  /** How errors name the recipient field: `to` on REST, `input.to` on GraphQL. */
  toField?: string;
}

export interface VoucherDelivery {
  messageId: string;
  to: string;
  format: VoucherFormat;
  sentAt: Date;
}

/** Whether this deployment may mail a voucher to any address: not a sandbox sending through real SMTP. */
export function anyRecipientAllowed(config: AppDeps['config']): boolean {
  return config.env === 'production' || !config.mail.smtpUrl;
}

/**
 * E-mails the voucher of a booking of the caller's channel, attached in `format`, to `to` or the
 * booker's e-mail. A cancelled booking's voucher can be sent too: it says CANCELLED (the subject
 * as well), which is how a guest learns of it.
 *
 * Limits: VOUCHER_MAILS_PER_HOUR per reservation, and the channel's hourly and daily limits
 * (voucherMailLimits), 429 VOUCHER_MAIL_LIMIT_EXCEEDED. A sandbox with SMTP_URL mails only the
 * reservation's own booker/guest addresses (422 VOUCHER_RECIPIENT_NOT_ALLOWED); the file
 * transport writes to any address (nothing leaves the machine).
 */
export async function sendVoucher(
  ctx: RequestContext,
  id: string,
  input: SendVoucherInput,
  options: SendVoucherOptions = {},
): Promise<VoucherDelivery> {
  const toField = options.toField ?? 'to';
  const reservation = await reservationRooms(ctx, id);
  const { rooms } = reservation;
  const recipient = input.to ?? leadRoom(rooms).bookerEmail;
  if (!recipient) throw new ValidationError([{ field: toField, reason: 'required: the booking has no booker e-mail' }]);
  const checked = voucherRules.to.safeParse(recipient);
  if (!checked.success) throw new ValidationError([{ field: toField, reason: 'an e-mail address' }]);
  const format = input.format ?? 'pdf';

  if (!anyRecipientAllowed(ctx.deps.config)) {
    // The reservation's own addresses (a /reservations guest's e-mail is its rooms' booker e-mail).
    const own = new Set(rooms.flatMap((b) => (b.bookerEmail ? [b.bookerEmail.toLowerCase()] : [])));
    if (!own.has(checked.data.toLowerCase())) throw new VoucherRecipientNotAllowedError(toField);
  }

  // Per reservation, whichever of its ids is used; then per channel.
  await chargeVoucherMail(ctx.deps, rooms[0]!.itineraryId, principalOf(ctx).channelId);

  const property = await ctx.loaders.property.load(rooms[0]!.propertyId);
  const voucher = voucherOf(rooms, property, ctx.deps.clock());
  const rendered = { ...(await renderVoucher(ctx, voucher, format)), filename: `voucher-${reservation.id}.${format}` };
  const sent = await sendMail(ctx.deps, {
    to: checked.data,
    subject: `${voucher.valid ? 'Booking voucher' : `${voucher.statusLabel}: booking voucher`}: ${voucher.property.name}, ${voucher.checkin.date} to ${voucher.checkout.date}`,
    text: mailText(voucher, rendered.filename),
    attachments: [{ filename: rendered.filename, content: rendered.body, contentType: rendered.mediaType }],
  });
  return { messageId: sent.messageId, to: sent.to, format, sentAt: sent.sentAt };
}

function mailText(v: Voucher, attachment: string): string {
  const lines = [
    'Booking voucher',
    '',
    ...(v.notice ? [v.notice, ''] : []),
    `Status: ${v.statusLabel}`,
    `Booking number: ${v.reservationId}`,
    `Confirmation number: ${v.confirmationNumber}`,
    ...(v.rooms.length > 1 ? [`Rooms: ${v.rooms.map((r) => `${r.roomType ?? 'room'} (${r.statusLabel.toLowerCase()})`).join(', ')}`] : []),
    ...(v.partnerReference ? [`Reference: ${v.partnerReference}`] : []),
    `Property: ${v.property.name}${v.property.address ? `, ${v.property.address}` : ''}`,
    `Check-in: ${v.checkin.label}, from ${v.checkin.time} (${v.property.timezone})`,
    `Check-out: ${v.checkout.label}`,
    `Guests: ${v.party}`,
    ...(v.rooms.length === 1 ? [`Cancellation: ${v.rooms[0]!.cancellation.words}`] : []),
    '',
    `The voucher is attached (${attachment}). Please show it at check-in.`,
  ];
  return lines.join('\n');
}

export interface VoucherLinks {
  bookingId: string;
  reservationId: string;
  pdfUrl: string;
  htmlUrl: string;
}

/** Where the voucher of a booking of the caller's channel is (404 for any other id): GraphQL's voucher field. */
export async function voucherLinks(ctx: RequestContext, id: string): Promise<VoucherLinks> {
  const booking = await getBooking(ctx, id);
  const paths = voucherPaths(booking.id);
  return { bookingId: booking.id, reservationId: booking.itineraryId, pdfUrl: paths.pdf, htmlUrl: paths.html };
}
