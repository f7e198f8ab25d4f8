import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  principalOf,
  AppError,
  ConflictError,
  NotFoundError,
  ValidationError,
  type ErrorDetails,
  type FieldIssue,
  type Amount,
  type Currency,
} from '../kernel/index.js';
import type { RequestContext } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
import { Prisma, type Booking } from '../../generated/prisma/client.js';
import type { RoomOccupancy } from '../../upstream/protocol.js';
import { VISIBLE_STATUSES, type BookingStatus, type VisibleStatus } from '../bookings/states.js';
import {
  AlreadyCancelledError,
  bookingRules,
  bookOffers,
  BookTokenError,
  cancelBooking,
  changedGuestFields,
  isUuid,
  NotModifiableError,
  recordEvents,
  refuseCancel,
  refuseModify,
  SoldOutError,
  verifyBookToken,
  type GuestDetails,
  type OfferToBook,
  type RoomToBook,
} from '../bookings/bookings.js';
import { bookClaims, repriceOffer } from '../search/priceCheck.js';
import { findRoomType, getProperty, type CancellationPolicyType } from '../catalog/properties.js';
import { MAX_ROOMS, normalizeStay, offerOf, pageOf, propertyAvailability, searchRules, type FieldNames, type Page } from '../search/search.js';

/**
 * Reservations (spec §4.8): the OTA-style view of the booking service. A reservation is an
 * itinerary: one booking per room, made together, sharing one confirmation number; its id is the
 * itinerary id, which is also the id of its first room. Every v1 booking is a reservation of one
 * room and every v2 itinerary a reservation too, so all of a channel's bookings can be found here.
 *
 * Nothing here moves money or changes a status by itself: rooms are booked with bookOffers (all or
 * nothing, one charge per room through the ledger), changed by the rules of updateBooking (all
 * rooms in one transaction) and cancelled with cancelBooking (fee per room by its policy, refund
 * through the ledger, events per booking).
 *
 * REST (/channel/v1/reservations) and GraphQL (reservation, reservations, createReservation,
 * updateReservation, cancelReservation) both come here. Field names in errors are the REST ones
 * (snake_case); the GraphQL fields rename them to their own arguments (src/schema/reservations.ts).
 */

/**
 * Input rules, written once: REST (snake_case, rest-adapters/v1/reservations.ts) and GraphQL
 * (camelCase, src/schema/reservations.ts) build their inputs from these and bookingRules.
 */
export const reservationRules = {
  /** A reservation id, or the booking id of one of its rooms (anything else is 404, not 400). */
  id: z.string().min(1).max(64),
  /** The party of one room (normalizeStay checks the same, and the room type's capacity). */
  roomAdults: z.int().min(1).max(8),
  roomChildren: z.int().min(0).max(6),
  childrenAges: z.array(z.int().min(0).max(17)).max(6),
  /** Rooms of one reservation. */
  roomCount: MAX_ROOMS,
  roomtypeId: searchRules.roomtypeId,
  rateplanId: searchRules.rateplanId,
  propertyId: searchRules.propertyId,
  checkIn: searchRules.checkin,
  checkOut: searchRules.checkout,
  currency: searchRules.currency,
  /** Filter by confirmation number: exact, in any case. */
  confirmationNumber: z
    .string()
    .trim()
    .regex(/^[0-9A-Za-z]{1,32}$/, 'letters and digits'),
  /** The rooms to cancel: their booking ids. */
  roomIds: z.array(z.string().min(1).max(64)).min(1).max(MAX_ROOMS),
  page: z.int().min(1).max(1_000_000),
  perPage: z.int().min(1).max(100),
  personName: bookingRules.personName,
  email: bookingRules.email,
  phone: bookingRules.phone,
  country: bookingRules.country,
  specialRequests: bookingRules.specialRequests,
  arrivalTime: bookingRules.arrivalTime,
  channelBookingNumber: bookingRules.channelBookingNumber,
  bookToken: bookingRules.bookToken,
  date: bookingRules.date,
};

/**
 * 409 BOOKING_ALREADY_CANCELLED for a whole reservation: every room is cancelled (or failed).
 * An AlreadyCancelledError, so GraphQL answers it as BookingAlreadyCancelledError (its bookingId
 * the reservation id); REST details carry reservation_id too.
 */
export class ReservationAlreadyCancelledError extends AlreadyCancelledError {
  override readonly details: ErrorDetails;
  constructor(reservationId: string, status: BookingStatus) {
    super(reservationId, status);
    this.message = 'The reservation is already cancelled';
    this.details = { booking_id: reservationId, reservation_id: reservationId, status };
  }
}

export interface Reservation {
  /** The itinerary id (= the first room's booking id). */
  id: string;
  confirmationNumber: string;
  /** The rooms, in their itinerary order (visible bookings only). */
  bookings: Booking[];
}

export interface ReservationGuest {
  firstName: string;
  lastName: string;
  email: string;
  phone?: string | undefined;
  country?: string | undefined;
}

export interface ReservationRoomInput {
  roomtypeId?: string | undefined;
  rateplanId?: string | undefined;
  adults?: number | undefined;
  children?: number | undefined;
  childrenAges?: number[] | undefined;
  /** The guest staying in this room, when not the reservation's guest (never for the first room). */
  guest?: { firstName: string; lastName: string } | undefined;
}

export interface CreateReservationInput {
  /** A book_token from GET /search/price-check: books its offer at the price it carries. */
  bookToken?: string | undefined;
  propertyId?: number | undefined;
  checkIn?: string | undefined;
  checkOut?: string | undefined;
  /** The room type and rate plan of a one-room reservation, or of every room that names none. */
  roomtypeId?: string | undefined;
  rateplanId?: string | undefined;
  /** The party of a one-room reservation (without `rooms`). */
  adults?: number | undefined;
  children?: number | undefined;
  childrenAges?: number[] | undefined;
  rooms?: ReservationRoomInput[] | undefined;
  currency?: Currency | undefined;
  guest: ReservationGuest;
  specialRequests?: string | undefined;
  arrivalTime?: string | undefined;
  channelBookingNumber?: string | undefined;
}

/** The rooms of an itinerary in their order: the first room (the itinerary's id) first. */
const ROOM_ORDER: Prisma.BookingOrderByWithRelationInput[] = [{ itineraryRoom: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }];

function reservationOf(bookings: Booking[]): Reservation {
  const sorted = [...bookings].sort((a, b) => a.itineraryRoom - b.itineraryRoom);
  const first = sorted[0]!;
  return { id: first.itineraryId, confirmationNumber: first.confirmationNumber, bookings: sorted };
}

// ---------------------------------------------------------------------------------------------
// Create

/**
 * POST /reservations. Either the offer of a `book_token` (its price), or property, rooms and dates
 * priced now exactly as a partner would: the search (availability and stock) and the price check
 * of each room, whose latest price is what is charged. Amounts from the client never enter.
 */
export async function createReservation(ctx: RequestContext, input: CreateReservationInput): Promise<Reservation> {
  const issues: FieldIssue[] = [];
  if (input.rooms?.[0]?.guest !== undefined) {
    issues.push({ field: 'rooms.0.guest', reason: "the first room is the reservation guest's; give guests for the other rooms only" });
  }
  const offers = input.bookToken !== undefined ? await offerOfToken(ctx, input, issues) : await priceRooms(ctx, input, issues);
  try {
    return reservationOf(await bookOffers(ctx, offers));
  } catch (error) {
    if (error instanceof BookTokenError && error.code === 'BOOK_TOKEN_USED') {
      const id = (error.details as { booking_id: string | null } | null)?.booking_id ?? null;
      throw new BookTokenError('BOOK_TOKEN_USED', 'This book_token has already made a reservation', { booking_id: id, reservation_id: id });
    }
    throw error;
  }
}

/** What each room's booking records: the reservation guest as booker and contact, the room's own guest. */
function roomDetails(input: CreateReservationInput, index: number, roomGuest?: ReservationRoomInput['guest']): RoomToBook['details'] {
  const { guest } = input;
  const own = index === 0 ? { firstName: guest.firstName, lastName: guest.lastName } : roomGuest;
  return {
    bookerName: `${guest.firstName} ${guest.lastName}`,
    bookerEmail: guest.email,
    guestFirstName: own?.firstName ?? null,
    guestLastName: own?.lastName ?? null,
    guestPhone: guest.phone ?? null,
    guestCountry: guest.country ?? null,
    specialRequests: input.specialRequests,
    arrivalTime: input.arrivalTime,
    channelBookingNumber: input.channelBookingNumber,
  };
}

const TOKEN_FIELDS = [
  ['propertyId', 'property_id'],
  ['checkIn', 'check_in'],
  ['checkOut', 'check_out'],
  ['roomtypeId', 'roomtype_id'],
  ['rateplanId', 'rateplan_id'],
  ['adults', 'adults'],
  ['children', 'children'],
  ['childrenAges', 'children_ages'],
  ['currency', 'currency'],
] as const;

const ROOM_FIELDS = [
  ['roomtypeId', 'roomtype_id'],
  ['rateplanId', 'rateplan_id'],
  ['adults', 'adults'],
  ['children', 'children'],
  ['childrenAges', 'children_ages'],
] as const;

/** With a book_token, the offer (property, room, rate, dates, party, price) is the token's; one booking per room it holds. */
async function offerOfToken(ctx: RequestContext, input: CreateReservationInput, issues: FieldIssue[]): Promise<OfferToBook[]> {
  for (const [key, field] of TOKEN_FIELDS) {
    if (input[key] !== undefined) issues.push({ field, reason: 'comes from the book_token; do not send it with one' });
  }
  input.rooms?.forEach((room, i) => {
    for (const [key, field] of ROOM_FIELDS) {
      if (room[key] !== undefined) issues.push({ field: `rooms.${i}.${field}`, reason: 'comes from the book_token; with one, rooms give guests only' });
    }
  });
  if (issues.length) throw new ValidationError(issues);
  const offer = await verifyBookToken(ctx, input.bookToken!);
  const occupancy = offer.occupancy as RoomOccupancy[];
  if (input.rooms !== undefined && input.rooms.length !== occupancy.length) {
    throw new ValidationError([{ field: 'rooms', reason: `the book_token holds ${occupancy.length} room(s): give one entry per room, or none` }]);
  }
  return [{ offer, rooms: occupancy.map((room, i) => ({ occupancy: [room], details: roomDetails(input, i, input.rooms?.[i]?.guest) })) }];
}

interface RoomRequest extends ReservationRoomInput {
  /** How this room's fields are named in errors: '' (the top-level one-room form) or 'rooms.<i>.'. */
  prefix: string;
}

function stayNames(prefix: string): FieldNames {
  return {
    checkin: 'check_in',
    checkout: 'check_out',
    adults: `${prefix}adults`,
    occupancy: `${prefix}adults`,
    children: `${prefix}children`,
    childrenAges: `${prefix}children_ages`,
    rooms: `${prefix}adults`,
    priceMin: 'price_min',
    priceMax: 'price_max',
  };
}

/** The rooms asked for, each with its room type, rate plan and party; field errors collected. */
function roomsOf(input: CreateReservationInput, issues: FieldIssue[]): RoomRequest[] {
  if (input.rooms === undefined) {
    if (input.roomtypeId === undefined) issues.push({ field: 'roomtype_id', reason: 'required (or give rooms, or a book_token)' });
    if (input.rateplanId === undefined) issues.push({ field: 'rateplan_id', reason: 'required (or give rooms, or a book_token)' });
    if (input.adults === undefined) issues.push({ field: 'adults', reason: 'required (or give rooms, or a book_token)' });
    return [{ roomtypeId: input.roomtypeId, rateplanId: input.rateplanId, adults: input.adults, children: input.children, childrenAges: input.childrenAges, prefix: '' }];
  }
  for (const field of ['adults', 'children', 'children_ages'] as const) {
    const key = field === 'children_ages' ? 'childrenAges' : field;
    if (input[key] !== undefined) issues.push({ field, reason: 'with rooms, give the party of each room in rooms' });
  }
  return input.rooms.map((room, i) => {
    const prefix = `rooms.${i}.`;
    const roomtypeId = room.roomtypeId ?? input.roomtypeId;
    const rateplanId = room.rateplanId ?? input.rateplanId;
    if (roomtypeId === undefined) issues.push({ field: `${prefix}roomtype_id`, reason: 'required (here or at the top level)' });
    if (rateplanId === undefined) issues.push({ field: `${prefix}rateplan_id`, reason: 'required (here or at the top level)' });
    if (room.adults === undefined) issues.push({ field: `${prefix}adults`, reason: 'required' });
    return { ...room, roomtypeId, rateplanId, prefix };
  });
}

function addIssues(issues: FieldIssue[], more: FieldIssue[]): void {
  for (const issue of more) {
    if (!issues.some((i) => i.field === issue.field && i.reason === issue.reason)) issues.push(issue);
  }
}

/**
 * Each room priced as a partner would price it: the search (its room type, rate plan and party;
 * unknown ids are 404, no stock is 409 SOLD_OUT), then the price check, whose latest price is
 * the room's charge. One booking per room, all booked together.
 */
async function priceRooms(ctx: RequestContext, input: CreateReservationInput, issues: FieldIssue[]): Promise<OfferToBook[]> {
  if (input.propertyId === undefined) issues.push({ field: 'property_id', reason: 'required (or send a book_token)' });
  if (input.checkIn === undefined) issues.push({ field: 'check_in', reason: 'required (or send a book_token)' });
  if (input.checkOut === undefined) issues.push({ field: 'check_out', reason: 'required (or send a book_token)' });
  const rooms = roomsOf(input, issues);
  if (issues.length) throw new ValidationError(issues);

  // Dates and each room's party, by the search's rules (dates, at most 8 adults and 6 children a room).
  const now = ctx.deps.clock();
  const occupancy: RoomOccupancy[] = [];
  for (const room of rooms) {
    try {
      const stay = normalizeStay(
        { checkin: input.checkIn!, checkout: input.checkOut!, adults: room.adults, children: room.children, childrenAges: room.childrenAges, rooms: 1 },
        now,
        stayNames(room.prefix),
      );
      occupancy.push(stay.occupancy[0]!);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      addIssues(issues, (error.details as { fields: FieldIssue[] }).fields);
    }
  }
  if (issues.length) throw new ValidationError(issues);

  const property = await getProperty(ctx, input.propertyId!);
  const plans = rooms.map((room, i) => {
    const type = findRoomType(property, room.roomtypeId!);
    const plan = type.ratePlans.find((p) => p.id === room.rateplanId);
    if (!plan) throw new NotFoundError(`Rate plan ${room.rateplanId} was not found for room type ${type.id} at property ${property.id}`);
    const guests = occupancy[i]!.adults + occupancy[i]!.children_ages.length;
    if (guests > type.maxOccupancy) {
      issues.push({ field: `${room.prefix}adults`, reason: `room type ${type.id} takes at most ${type.maxOccupancy} guests (adults and children)` });
    }
    return plan;
  });
  if (issues.length) throw new ValidationError(issues);

  // The search: stock and the current price of each room.
  const searched = await Promise.all(
    rooms.map(async (room, i) => {
      const found = await propertyAvailability(
        ctx,
        {
          propertyId: property.id,
          checkin: input.checkIn!,
          checkout: input.checkOut!,
          occupancy: [occupancy[i]!],
          roomtypeId: room.roomtypeId,
          rateplanId: room.rateplanId,
          currency: input.currency,
        },
        { names: stayNames(room.prefix), withTokens: false },
      );
      const rate = found.roomTypes.find((r) => r.roomtypeId === room.roomtypeId)?.rates.find((r) => r.rateplanId === room.rateplanId);
      if (!rate || !rate.bookable) throw new SoldOutError();
      return { rate, stay: found.stay };
    }),
  );
  // Rooms of one type share its stock, whichever rate plan they take.
  const wanted = new Map<string, { rooms: number; available: number }>();
  searched.forEach(({ rate }) => {
    const entry = wanted.get(rate.roomtypeId) ?? { rooms: 0, available: rate.availableRooms };
    wanted.set(rate.roomtypeId, { rooms: entry.rooms + 1, available: Math.min(entry.available, rate.availableRooms) });
  });
  if ([...wanted.values()].some((w) => w.rooms > w.available)) throw new SoldOutError();

  // The price check: the price the provider confirms now is the charge.
  return Promise.all(
    searched.map(async ({ rate, stay }, i): Promise<OfferToBook> => {
      const quoted = offerOf(ctx, property, plans[i]!, stay, rate.pricing);
      const repriced = await repriceOffer(ctx, quoted);
      if (repriced.status === 'sold_out') throw new SoldOutError();
      // No token was issued: a fresh id stands for one, so the booking's token columns stay unique.
      const offer = { ...bookClaims(quoted, repriced), jti: `reservation:${randomUUID()}` };
      return { offer, rooms: [{ occupancy: stay.occupancy, details: roomDetails(input, i, rooms[i]!.guest) }] };
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Read

/**
 * A reservation of the caller's channel by its id (the itinerary id, which is its first room's
 * booking id) or by the booking id of any of its rooms, as the other /reservations/{id} routes
 * take it. Anything else (another channel's, a malformed id) is 404.
 */
export async function getReservation(ctx: RequestContext, id: string): Promise<Reservation> {
  const channelId = principalOf(ctx).channelId;
  const { prisma } = ctx.deps.db;
  const visible = { in: [...VISIBLE_STATUSES] };
  const room = isUuid(id)
    ? await prisma.booking.findFirst({ where: { id: id.toLowerCase(), channelId, status: visible }, select: { itineraryId: true } })
    : null;
  const bookings = room ? await prisma.booking.findMany({ where: { channelId, itineraryId: room.itineraryId, status: visible }, orderBy: ROOM_ORDER }) : [];
  if (!bookings.length) throw new NotFoundError(`Reservation ${id} was not found`);
  return reservationOf(bookings);
}

export interface ReservationFilters {
  confirmationNumber?: string | undefined;
  guestEmail?: string | undefined;
  checkInFrom?: string | undefined;
  checkInTo?: string | undefined;
  page: number;
  perPage: number;
}

/**
 * The caller's reservations, newest first; filters combine (all must hold). They apply to the
 * reservation's first room, which carries what the reservation shares: the confirmation number,
 * the guest's e-mail (compared case-insensitively) and the dates.
 */
export async function listReservations(ctx: RequestContext, filters: ReservationFilters): Promise<Page<Reservation>> {
  const channelId = principalOf(ctx).channelId;
  if (filters.checkInFrom && filters.checkInTo && filters.checkInFrom > filters.checkInTo) {
    throw new ValidationError([{ field: 'check_in_to', reason: 'must not be before check_in_from' }]);
  }
  const conditions = [
    Prisma.sql`"channel_id" = ${channelId}::uuid`,
    Prisma.sql`"id" = "itinerary_id"`,
    Prisma.sql`"status"::text IN (${Prisma.join([...VISIBLE_STATUSES])})`,
  ];
  if (filters.confirmationNumber !== undefined) conditions.push(Prisma.sql`"confirmation_number" = ${filters.confirmationNumber.toUpperCase()}`);
  if (filters.guestEmail !== undefined) conditions.push(Prisma.sql`lower("booker_email") = lower(${filters.guestEmail})`);
  if (filters.checkInFrom !== undefined) conditions.push(Prisma.sql`"checkin" >= ${filters.checkInFrom}::date`);
  if (filters.checkInTo !== undefined) conditions.push(Prisma.sql`"checkin" <= ${filters.checkInTo}::date`);
  const where = Prisma.join(conditions, ' AND ');
  const { prisma } = ctx.deps.db;
  const [counted, heads] = await Promise.all([
    prisma.$queryRaw<{ total: number }[]>`SELECT count(*)::int AS "total" FROM "bookings" WHERE ${where}`,
    prisma.$queryRaw<{ id: string }[]>`
      SELECT "id" FROM "bookings" WHERE ${where}
      ORDER BY "created_at" DESC, "id" DESC
      LIMIT ${filters.perPage} OFFSET ${(filters.page - 1) * filters.perPage}`,
  ]);
  const ids = heads.map((h) => h.id);
  const rows = ids.length
    ? await prisma.booking.findMany({ where: { channelId, itineraryId: { in: ids }, status: { in: [...VISIBLE_STATUSES] } }, orderBy: ROOM_ORDER })
    : [];
  const items = ids.map((id) => reservationOf(rows.filter((b) => b.itineraryId === id)));
  return pageOf(items, counted[0]?.total ?? 0, filters.page, filters.perPage);
}

// ---------------------------------------------------------------------------------------------
// What a reservation shows

/** Rooms that are no longer part of the stay. */
const DROPPED: ReadonlySet<string> = new Set(['cancelled', 'failed']);

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

export function policyOf(b: Booking): PolicySummary {
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

// ---------------------------------------------------------------------------------------------
// Modify

export interface ReservationPatch {
  guest?: {
    firstName?: string | undefined;
    lastName?: string | undefined;
    email?: string | undefined;
    phone?: string | null | undefined;
    country?: string | null | undefined;
  } | undefined;
  specialRequests?: string | null | undefined;
  arrivalTime?: string | null | undefined;
}

/**
 * PATCH /reservations/{id}: the guest (any time the rooms are live), special requests and arrival
 * time (before check-in), by the rules of PATCH /bookings/{id} (refuseModify), applied to every
 * room still live (pending, confirmed or checked in). All or nothing: one transaction locks the
 * reservation's rooms (FOR UPDATE, in id order), reads them as they are now, checks every room,
 * then changes each with a conditional update (its status as read) and writes its
 * reservation.modified. A refusal (409 BOOKING_NOT_MODIFIABLE), or any failure on a later room,
 * rolls back every room and every event: nothing changes. A cancellation or check-in racing the
 * PATCH is ordered before it (its room is no longer live, or refuses) or after it, never between
 * two rooms. A room whose values already are the patch's is not written and writes no event.
 */
export async function updateReservation(ctx: RequestContext, id: string, patch: ReservationPatch): Promise<Reservation> {
  const { id: itineraryId } = await getReservation(ctx, id);
  const channelId = principalOf(ctx).channelId;
  const now = ctx.deps.clock();
  await ctx.deps.db.prisma.$transaction(async (tx) => {
    // Every room of the reservation, locked in one order so that two PATCHes never deadlock; a
    // cancellation or a reported check-in of a room waits for this transaction, or went first.
    await tx.$queryRaw`
      SELECT "id" FROM "bookings" WHERE "channel_id" = ${channelId}::uuid AND "itinerary_id" = ${itineraryId}::uuid
      ORDER BY "id" FOR UPDATE`;
    const bookings = await tx.booking.findMany({
      where: { channelId, itineraryId, status: { in: [...VISIBLE_STATUSES] } },
      orderBy: ROOM_ORDER,
    });
    if (!bookings.length) throw new NotFoundError(`Reservation ${id} was not found`);
    for (const [booking, change] of reservationChanges(bookings, patch, now)) {
      const changes = changedGuestFields(booking, change);
      if (!Object.keys(changes).length) continue;
      const { count } = await tx.booking.updateMany({
        where: { id: booking.id, status: booking.status },
        data: { ...changes, updatedAt: now },
      });
      // Not while the rows are locked; kept as the guard PATCH /bookings/{id} has.
      if (count === 0) throw new ConflictError('BOOKING_CHANGED', 'The reservation changed while it was being updated; read it and retry');
      const updated = await tx.booking.findUniqueOrThrow({ where: { id: booking.id } });
      await recordEvents(tx, updated, ['reservation.modified'], now);
    }
  }, TRANSACTION_OPTIONS);
  return getReservation(ctx, id);
}

/**
 * What the patch changes on each live room of `bookings` (as they are now), every room checked
 * by refuseModify first: the first room that refuses refuses the whole patch.
 */
function reservationChanges(bookings: Booking[], patch: ReservationPatch, now: Date): [Booking, GuestDetails][] {
  const live = bookings.filter((b) => {
    try {
      refuseModify(b, {}, now);
      return true;
    } catch {
      return false;
    }
  });
  const status = reservationStatus(bookings);
  if (!live.length) throw new NotModifiableError(bookings[0]!.itineraryId, `A reservation that is ${status} cannot be modified`, status);

  const lead = leadRoom(bookings);
  const guest = patch.guest ?? {};
  const first = guest.firstName ?? lead.guestFirstName ?? bookings[0]!.guestFirstName;
  const last = guest.lastName ?? lead.guestLastName ?? bookings[0]!.guestLastName;
  const renamed = guest.firstName !== undefined || guest.lastName !== undefined;
  const changes = live.map((b): [Booking, GuestDetails] => [
    b,
    {
      ...(renamed && { bookerName: [first, last].filter(Boolean).join(' ') }),
      // The guest's name is the lead room's; other rooms keep their own guests.
      ...(b.id === lead.id && guest.firstName !== undefined && { guestFirstName: guest.firstName }),
      ...(b.id === lead.id && guest.lastName !== undefined && { guestLastName: guest.lastName }),
      ...(guest.email !== undefined && { bookerEmail: guest.email }),
      ...(guest.phone !== undefined && { guestPhone: guest.phone }),
      ...(guest.country !== undefined && { guestCountry: guest.country }),
      ...(patch.specialRequests !== undefined && { specialRequests: patch.specialRequests }),
      ...(patch.arrivalTime !== undefined && { arrivalTime: patch.arrivalTime }),
    },
  ]);
  for (const [b, change] of changes) refuseModify(b, change, now);
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Cancel

export interface ReservationCancellation {
  reservation: Reservation;
  /** The rooms this request cancelled, as they are now. */
  cancelled: Booking[];
}

/**
 * Cancels the whole reservation (every room not already cancelled or failed) or the rooms named
 * by `roomIds`, each through the booking service's cancellation: its own fee by its policy, its
 * refund credited once through the ledger (production), its reservation.cancelled event. Every
 * room is checked first: a room that cannot be cancelled (checked in, or already cancelled when
 * named) refuses the whole request with 409 and nothing is cancelled. If the provider fails on a
 * room (502), the rooms cancelled before it stay cancelled and the same request cancels the rest.
 */
export async function cancelReservation(ctx: RequestContext, id: string, roomIds?: string[]): Promise<ReservationCancellation> {
  const { bookings } = await getReservation(ctx, id);
  let targets: Booking[];
  if (roomIds === undefined) {
    targets = bookings.filter((b) => !DROPPED.has(b.status));
    if (!targets.length) {
      throw new ReservationAlreadyCancelledError(bookings[0]!.itineraryId, reservationStatus(bookings));
    }
  } else {
    const issues: FieldIssue[] = [];
    targets = [];
    roomIds.forEach((roomId, i) => {
      const room = bookings.find((b) => b.id === roomId.toLowerCase());
      if (!room) issues.push({ field: `room_ids.${i}`, reason: 'not a room of this reservation' });
      else if (targets.includes(room)) issues.push({ field: `room_ids.${i}`, reason: 'listed twice' });
      else targets.push(room);
    });
    if (issues.length) throw new ValidationError(issues);
  }
  for (const b of targets) refuseCancel(b);

  const cancelled: Booking[] = [];
  for (const b of targets) {
    try {
      cancelled.push(await cancelBooking(ctx, b.id));
    } catch (error) {
      // A room someone cancelled meanwhile is as good as cancelled by this request.
      if (!(error instanceof AppError && error.code === 'BOOKING_ALREADY_CANCELLED')) throw error;
    }
  }
  return { reservation: await getReservation(ctx, id), cancelled };
}

/** DELETE /reservations/{id}/rooms/{bookingId}: one room; a booking that is not a room of the reservation is 404. */
export async function cancelReservationRoom(ctx: RequestContext, id: string, bookingId: string): Promise<ReservationCancellation> {
  const { bookings } = await getReservation(ctx, id);
  if (!bookings.some((b) => b.id === bookingId.toLowerCase())) {
    throw new NotFoundError(`Room ${bookingId} is not a room of reservation ${id}`);
  }
  return cancelReservation(ctx, id, [bookingId]);
}
