import { z } from 'zod';
import { Prisma, type Booking } from '../../generated/prisma/client.js';
import { bookingRules } from '../bookings/index.js';
import type { Currency } from '../kernel/index.js';
import { MAX_ROOMS, searchRules } from '../search/index.js';

/**
 * Reservations (docs/spec/channel-api.md §4.8): the OTA-style view of the booking service. A reservation is an
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
 * Input rules, written once: REST (snake_case, rest-adapters/v1/reservations/wire.ts) and GraphQL
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
export const ROOM_ORDER: Prisma.BookingOrderByWithRelationInput[] = [{ itineraryRoom: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }];

export function reservationOf(bookings: Booking[]): Reservation {
  const sorted = [...bookings].sort((a, b) => a.itineraryRoom - b.itineraryRoom);
  const first = sorted[0]!;
  return { id: first.itineraryId, confirmationNumber: first.confirmationNumber, bookings: sorted };
}
