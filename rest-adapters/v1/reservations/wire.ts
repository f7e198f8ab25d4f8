import { z } from '@hono/zod-openapi';
import { dateOnly, VISIBLE_STATUSES, type Booking } from '../../../src/services/bookings/index.js';
import { amountToNumber } from '../../../src/services/kernel/index.js';
import {
  cancelledTotals,
  createReservation,
  policyOf,
  reservationRules,
  reservationStatus,
  reservationView,
  updateReservation,
  type PolicySummary,
  type Reservation,
  type ReservationCancellation,
} from '../../../src/services/reservations/index.js';
import type { RoomOccupancy } from '../../../src/upstream/protocol.js';
import { intParam } from '../../params.js';
import { CancellationPolicyWire } from '../search/wire.js';
import { money, ReservationId } from './params.js';

/** The wire shapes of the reservation endpoints (docs/spec/channel-api.md §4.8) and their mappers. */

const stringOrNull = z.string().nullable();

const GuestWire = z
  .object({
    first_name: stringOrNull,
    last_name: stringOrNull,
    email: stringOrNull,
    phone: stringOrNull,
    country: stringOrNull.openapi({ description: 'ISO 3166-1 alpha-2' }),
  })
  .openapi('ReservationGuest');

const RoomWire = z
  .object({
    booking_id: z.uuid().openapi({ description: 'The booking of this room (GET /bookings/{id})' }),
    status: z.enum(VISIBLE_STATUSES),
    roomtype_id: z.string(),
    room_type: stringOrNull,
    rateplan_id: z.string(),
    rate_plan: stringOrNull,
    check_in: z.iso.date(),
    check_out: z.iso.date(),
    room_count: z.int().openapi({ description: 'Rooms this booking holds: 1, except a v1 booking made for several rooms' }),
    adults: z.int(),
    children: z.int(),
    children_ages: z.array(z.int()),
    guest: z
      .object({ first_name: stringOrNull, last_name: stringOrNull })
      .openapi({ description: "The guest staying in this room; null names: the reservation's guest" }),
    hub_booking_number: stringOrNull.openapi({ description: "The provider's confirmation number of this room" }),
    price: z.object({
      total: money('What this room was charged (KRW)'),
      currency: z.string(),
      request_total: money('The same in the currency searched in'),
      request_currency: z.string(),
    }),
    cancellation_policy: CancellationPolicyWire,
    cancellation_fee: money('KRW; set once the room is cancelled').nullable(),
    refund_amount: money('KRW; set once the room is cancelled').nullable(),
    cancelled_at: z.iso.datetime().nullable(),
  })
  .openapi('ReservationRoom');

export const ReservationWire = z
  .object({
    id: z.uuid().openapi({ description: 'The reservation id: the booking id of its first room' }),
    confirmation_number: z.string().openapi({ description: 'Shared by every room of the reservation', example: '7K2M9QX4D8RT' }),
    status: z.enum(VISIBLE_STATUSES).openapi({
      description: "The rooms' status when they agree (rooms cancelled while others remain do not count); otherwise the first of pending, confirmed, cancelling, checked_in, checked_out, no_show",
    }),
    property_id: z.int(),
    property_name: stringOrNull,
    check_in: z.iso.date(),
    check_out: z.iso.date(),
    adults: z.int().openapi({ description: 'Every room together' }),
    children: z.int(),
    guest: GuestWire.openapi({ description: 'The lead guest and contact (e-mail, phone) of the reservation' }),
    rooms: z.array(RoomWire),
    price: z
      .object({
        total: money('What the rooms were charged together (KRW); the charge is the server-side price, never an amount sent by the client'),
        currency: z.string().openapi({ example: 'KRW' }),
        request_total: money('The same in the currency searched in').nullable(),
        request_currency: z.string().nullable().openapi({ description: 'Null when the rooms were priced in different currencies' }),
        cancellation_fee: money('Kept of the rooms cancelled so far'),
        refund_amount: money('Given back for the rooms cancelled so far'),
      })
      .openapi('ReservationPrice'),
    cancellation_policy: CancellationPolicyWire.openapi({
      description: "Cancelling the whole reservation: the rooms' policy, or, when they differ, the one whose free cancellation ends first",
    }),
    special_requests: stringOrNull,
    arrival_time: stringOrNull.openapi({ description: 'Expected arrival, local time at the property (HH:MM)' }),
    channel_booking_number: stringOrNull.openapi({ description: "The partner's own reference" }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Reservation');

export const CancelledWire = z
  .object({
    reservation_id: z.uuid(),
    confirmation_number: z.string(),
    status: z.enum(VISIBLE_STATUSES).openapi({ description: "The reservation's status after the cancellation" }),
    cancelled_rooms: z.array(
      z.object({
        booking_id: z.uuid(),
        status: z.enum(VISIBLE_STATUSES),
        cancellation_fee: money('KRW'),
        refund_amount: money('KRW; credited to the balance in production'),
      }),
    ),
    cancellation_fee: money('Of the rooms this request cancelled (KRW)'),
    refund_amount: money('Of the rooms this request cancelled (KRW)'),
    currency: z.string(),
    reservation: ReservationWire,
  })
  .openapi('ReservationCancellation');

// ---------------------------------------------------------------------------------------------
// Requests

// The input rules are the service's (reservationRules), shared with GraphQL.
const rules = reservationRules;
const personName = rules.personName;

const CreateGuestWire = z.object({
  first_name: personName,
  last_name: personName,
  email: rules.email,
  phone: rules.phone.optional(),
  country: rules.country.optional().openapi({ description: 'ISO 3166-1 alpha-2', example: 'KR' }),
});

const roomAdults = rules.roomAdults;
const roomChildren = rules.roomChildren;
const childAges = rules.childrenAges;

const RoomRequestWire = z.object({
  roomtype_id: rules.roomtypeId.optional().openapi({ description: 'Default: the top-level roomtype_id' }),
  rateplan_id: rules.rateplanId.optional().openapi({ description: 'Default: the top-level rateplan_id' }),
  adults: roomAdults.optional().openapi({ description: 'Required without a book_token' }),
  children: roomChildren.optional().openapi({ description: 'Taken as 8 years old unless children_ages says' }),
  children_ages: childAges.optional(),
  guest: z
    .object({ first_name: personName, last_name: personName })
    .optional()
    .openapi({ description: "Who stays in this room, when not the reservation's guest; not for the first room (the guest's own)" }),
});

const propertyId = z
  .union([z.int(), z.string().regex(/^\d{1,10}$/, 'an integer id').transform(Number)])
  .pipe(rules.propertyId)
  .openapi({ type: 'integer', minimum: 1, description: 'The property (an integer; a string of digits is taken too)', example: 12 });

export const CreateReservationWire = z
  .object({
    book_token: rules.bookToken.optional().openapi({
      description:
        'From GET /search/price-check: books its offer (property, room, rate, dates, party) at the price it carries. ' +
        'Without it, property_id, the dates and the rooms are priced now by the search and the price check',
    }),
    property_id: propertyId.optional(),
    check_in: rules.checkIn.optional().openapi({ example: '2027-01-10' }),
    check_out: rules.checkOut.optional().openapi({ example: '2027-01-12' }),
    roomtype_id: rules.roomtypeId.optional().openapi({ description: 'One room, or the default of each room in rooms' }),
    rateplan_id: rules.rateplanId.optional(),
    adults: roomAdults.optional().openapi({ description: 'The party of a one-room reservation (without rooms)' }),
    children: roomChildren.optional(),
    children_ages: childAges.optional(),
    rooms: z
      .array(RoomRequestWire)
      .min(1)
      .max(rules.roomCount)
      .optional()
      .openapi({ description: `Several rooms (at most ${rules.roomCount}), one booking each, sharing one confirmation number` }),
    currency: rules.currency.optional().openapi({ description: 'Currency to show prices in (default KRW); the channel is billed in KRW' }),
    guest: CreateGuestWire.openapi({ description: 'The lead guest and contact' }),
    special_requests: rules.specialRequests.optional(),
    arrival_time: rules.arrivalTime.optional().openapi({ example: '18:30' }),
    channel_booking_number: rules.channelBookingNumber.optional().openapi({ description: "The partner's own reference" }),
  })
  .openapi('CreateReservation');

export const UpdateReservationWire = z
  .object({
    guest: z
      .object({
        first_name: personName.optional(),
        last_name: personName.optional(),
        email: rules.email.optional(),
        phone: rules.phone.nullable().optional(),
        country: rules.country.nullable().optional(),
      })
      .strict()
      .refine((g) => Object.values(g).some((v) => v !== undefined), { message: 'give at least one guest field to change' })
      .optional(),
    special_requests: rules.specialRequests.nullable().optional().openapi({ description: 'Only before check-in; null clears' }),
    arrival_time: rules.arrivalTime.nullable().optional().openapi({ description: 'Only before check-in; null clears', example: '21:00' }),
  })
  .strict()
  .refine((body) => Object.values(body).some((v) => v !== undefined), { message: 'give at least one field to change' })
  .openapi('UpdateReservation');

export const CancelReservationWire = z
  .object({
    room_ids: rules.roomIds
      .optional()
      .openapi({ description: 'booking_id of each room to cancel; omitted: the whole reservation' }),
  })
  .strict()
  .openapi('CancelReservation');

export const RoomPath = ReservationId.extend({ booking_id: rules.id.openapi({ description: 'The booking id of the room' }) });

export const ListQuery = z.object({
  page: intParam(rules.page).optional().default(1),
  per_page: intParam(rules.perPage).optional().default(20),
  confirmation_number: rules.confirmationNumber
    .optional()
    .openapi({ description: 'Exact, in any case' }),
  guest_email: rules.email.optional().openapi({ description: "The guest's e-mail, compared case-insensitively" }),
  check_in_from: rules.date.optional().openapi({ description: 'Check-in on or after' }),
  check_in_to: rules.date.optional().openapi({ description: 'Check-in on or before' }),
});

export function createReservationInput(b: z.infer<typeof CreateReservationWire>): Parameters<typeof createReservation>[1] {
  return {
    bookToken: b.book_token,
    propertyId: b.property_id,
    checkIn: b.check_in,
    checkOut: b.check_out,
    roomtypeId: b.roomtype_id,
    rateplanId: b.rateplan_id,
    adults: b.adults,
    children: b.children,
    childrenAges: b.children_ages,
    rooms: b.rooms?.map((r) => ({
      roomtypeId: r.roomtype_id,
      rateplanId: r.rateplan_id,
      adults: r.adults,
      children: r.children,
      childrenAges: r.children_ages,
      guest: r.guest && { firstName: r.guest.first_name, lastName: r.guest.last_name },
    })),
    currency: b.currency,
    guest: { firstName: b.guest.first_name, lastName: b.guest.last_name, email: b.guest.email, phone: b.guest.phone, country: b.guest.country },
    specialRequests: b.special_requests,
    arrivalTime: b.arrival_time,
    channelBookingNumber: b.channel_booking_number,
  };
}

export function updateReservationInput(b: z.infer<typeof UpdateReservationWire>): Parameters<typeof updateReservation>[2] {
  return {
    guest: b.guest && {
      firstName: b.guest.first_name,
      lastName: b.guest.last_name,
      email: b.guest.email,
      phone: b.guest.phone,
      country: b.guest.country,
    },
    specialRequests: b.special_requests,
    arrivalTime: b.arrival_time,
  };
}

// ---------------------------------------------------------------------------------------------
// Shapes

function policyToWire(p: PolicySummary): z.infer<typeof CancellationPolicyWire> {
  return { type: p.type, free_cancellation_before: p.freeCancellationBefore?.toISOString() ?? null };
}

function amountOrNull(amount: bigint | null): number | null {
  return amount === null ? null : amountToNumber(amount);
}

function roomToWire(b: Booking): z.infer<typeof RoomWire> {
  const occupancy = b.occupancy as unknown as RoomOccupancy[];
  return {
    booking_id: b.id,
    status: b.status as z.infer<typeof RoomWire>['status'],
    roomtype_id: b.roomtypeId,
    room_type: b.roomType,
    rateplan_id: b.rateplanId,
    rate_plan: b.ratePlan,
    check_in: dateOnly(b.checkin),
    check_out: dateOnly(b.checkout),
    room_count: occupancy.length,
    adults: b.guestsAdult,
    children: b.guestsChild,
    children_ages: occupancy.flatMap((r) => r.children_ages),
    guest: { first_name: b.guestFirstName, last_name: b.guestLastName },
    hub_booking_number: b.hubBookingNumber,
    price: {
      total: amountToNumber(b.totalAmount),
      currency: b.currency,
      request_total: amountToNumber(b.requestAmount),
      request_currency: b.requestCurrency,
    },
    cancellation_policy: policyToWire(policyOf(b)),
    cancellation_fee: amountOrNull(b.cancellationFee),
    refund_amount: amountOrNull(b.refundAmount),
    cancelled_at: b.cancelledAt?.toISOString() ?? null,
  };
}

export function reservationToWire(r: Reservation): z.infer<typeof ReservationWire> {
  const v = reservationView(r);
  return {
    id: v.id,
    confirmation_number: v.confirmationNumber,
    status: v.status,
    property_id: v.propertyId,
    property_name: v.propertyName,
    check_in: dateOnly(v.checkin),
    check_out: dateOnly(v.checkout),
    adults: v.adults,
    children: v.children,
    guest: { first_name: v.guest.firstName, last_name: v.guest.lastName, email: v.guest.email, phone: v.guest.phone, country: v.guest.country },
    rooms: v.rooms.map(roomToWire),
    price: {
      total: amountToNumber(v.totals.total),
      currency: v.totals.currency,
      request_total: amountOrNull(v.totals.requestTotal),
      request_currency: v.totals.requestCurrency,
      cancellation_fee: amountToNumber(v.totals.cancellationFee),
      refund_amount: amountToNumber(v.totals.refundAmount),
    },
    cancellation_policy: policyToWire(v.policy),
    special_requests: v.specialRequests,
    arrival_time: v.arrivalTime,
    channel_booking_number: v.channelBookingNumber,
    created_at: v.createdAt.toISOString(),
    updated_at: v.updatedAt.toISOString(),
  };
}

export function cancellationToWire({ reservation, cancelled }: ReservationCancellation): z.infer<typeof CancelledWire> {
  const totals = cancelledTotals(cancelled);
  return {
    reservation_id: reservation.id,
    confirmation_number: reservation.confirmationNumber,
    status: reservationStatus(reservation.bookings),
    cancelled_rooms: cancelled.map((b) => ({
      booking_id: b.id,
      status: b.status as z.infer<typeof RoomWire>['status'],
      cancellation_fee: amountToNumber(b.cancellationFee ?? 0n),
      refund_amount: amountToNumber(b.refundAmount ?? 0n),
    })),
    cancellation_fee: amountToNumber(totals.cancellationFee),
    refund_amount: amountToNumber(totals.refundAmount),
    currency: reservation.bookings[0]!.currency,
    reservation: reservationToWire(reservation),
  };
}
