import { randomUUID } from 'node:crypto';
import type { RequestContext } from '../../context.js';
import type { RoomOccupancy } from '../../upstream/protocol.js';
import { bookOffers, BookTokenError, SoldOutError, verifyBookToken, type OfferToBook, type RoomToBook } from '../bookings/index.js';
import { NotFoundError, ValidationError, type FieldIssue } from '../kernel/index.js';
import { bookClaims, normalizeStay, offerOf, propertyAvailability, repriceOffer, type FieldNames } from '../search/index.js';
import { findRoomType, getProperty } from '../catalog/index.js';
import { type CreateReservationInput, type Reservation, type ReservationRoomInput, reservationOf } from './rules.js';

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
