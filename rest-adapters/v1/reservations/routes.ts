import { z } from '@hono/zod-openapi';
import { dataEnvelope, errorResponses, Meta } from '../../envelope.js';
import { scopedRoute } from '../../routing.js';
import { idempotency, idempotencyHeader } from '../../idempotency.js';
import { Pagination } from '../search/wire.js';
import { BAD_ID, BAD_ID_REASON, NO_RESERVATION, ReservationId } from './params.js';
import {
  CancelledWire,
  CancelReservationWire,
  CreateReservationWire,
  ListQuery,
  ReservationWire,
  RoomPath,
  UpdateReservationWire,
} from './wire.js';
import { ConflictError, NotFoundError, UnprocessableError, UpstreamError, ValidationError } from '../../../src/services/kernel/index.js';
import { InsufficientBalanceError } from '../../../src/services/bookings/index.js';

/** The OpenAPI definitions of the reservation endpoints (docs/spec/channel-api.md §4.8); wire shapes in wire.ts. */

const TAGS = ['Bookings'];

const IDEMPOTENCY_409 = 'IDEMPOTENCY_KEY_REUSED, or IDEMPOTENCY_KEY_IN_PROGRESS (with Retry-After)';

// ---------------------------------------------------------------------------------------------
// Routes

export const createRoute = scopedRoute('reservation.create', {
  method: 'post',
  path: '/reservations',
  operationId: 'createReservation',
  tags: TAGS,
  summary: 'Reserve one or several rooms, with a nested guest',
  description:
    'Either a `book_token` (its offer at its price), or `property_id`, `check_in`, `check_out` and the rooms: `roomtype_id`, ' +
    '`rateplan_id` and `adults` for one room, or `rooms` for several (each its room type, rate plan and party). Without a ' +
    'token each room is priced now by the search and the price check, and that price is charged: amounts in the body never ' +
    'change the charge. Every room is one booking (also in GET /bookings), all booked together or none, sharing one ' +
    'confirmation number; in production each room is paid from the balance (402 INSUFFICIENT_BALANCE when short). ' +
    'Unknown property, room type or rate plan: 404. 409 SOLD_OUT or PRICE_CHANGED when the provider refuses, 502 when it ' +
    'fails: nothing is booked or charged.',
  request: { headers: idempotencyHeader, body: { required: true, content: { 'application/json': { schema: CreateReservationWire } } } },
  responses: {
    201: {
      description: 'The reservation (status confirmed, or pending when the provider confirms later)',
      headers: { Location: { description: 'The reservation: /channel/v1/reservations/{id}', schema: { type: 'string' } } },
      content: { 'application/json': { schema: dataEnvelope(ReservationWire) } },
    },
    ...errorResponses(
      [ValidationError, 'VALIDATION_ERROR: a bad or missing field, fields that do not go together (details.fields), a malformed JSON body or Idempotency-Key'],
      InsufficientBalanceError,
      [NotFoundError, 'NOT_FOUND: no such property, room type or rate plan'],
      [ConflictError, `SOLD_OUT or PRICE_CHANGED (nothing booked or charged), ${IDEMPOTENCY_409}`],
      [UnprocessableError, 'BOOK_TOKEN_USED (details.reservation_id), BOOK_TOKEN_INVALID or BOOK_TOKEN_EXPIRED'],
      [UpstreamError, 'UPSTREAM_ERROR: the provider failed; nothing is booked or charged'],
    ),
  },
}, [idempotency()]);

export const listRoute = scopedRoute('reservations.list', {
  method: 'get',
  path: '/reservations',
  operationId: 'listReservations',
  tags: TAGS,
  summary: "The channel's reservations, newest first",
  description:
    'Every booking belongs to one reservation (a v1 booking is a reservation of one room; a v2 itinerary is one too). ' +
    'Filters combine: confirmation_number, guest_email (case-insensitive), check_in_from and check_in_to (inclusive). ' +
    "Only the channel's own reservations are ever listed.",
  request: { query: ListQuery },
  responses: {
    200: {
      description: 'A page of reservations',
      content: { 'application/json': { schema: z.object({ data: z.array(ReservationWire), pagination: Pagination, meta: Meta }) } },
    },
    ...errorResponses([ValidationError, 'VALIDATION_ERROR: a bad query parameter, or check_in_to before check_in_from (details.fields)']),
  },
});

export const getRoute = scopedRoute('reservation.read', {
  method: 'get',
  path: '/reservations/{id}',
  operationId: 'getReservation',
  tags: TAGS,
  summary: 'One reservation with its rooms',
  request: { params: ReservationId },
  responses: {
    200: { description: 'The reservation', content: { 'application/json': { schema: dataEnvelope(ReservationWire) } } },
    ...errorResponses(BAD_ID, NO_RESERVATION),
  },
});

export const patchRoute = scopedRoute('reservation.update', {
  method: 'patch',
  path: '/reservations/{id}',
  operationId: 'updateReservation',
  tags: TAGS,
  summary: 'Change the guest, special requests or arrival time',
  description:
    'Applied to every room still pending, confirmed or checked in, by the rules of PATCH /bookings/{id}: the guest at any ' +
    'time; special_requests and arrival_time only before check-in (15:00 local on the check-in date, and not once checked ' +
    'in). null clears phone, country, special_requests and arrival_time. All or nothing: the rooms change in one transaction, ' +
    'each checked as it is then, so a refusal (409 BOOKING_NOT_MODIFIABLE) changes nothing, and a cancellation or check-in ' +
    'of a room arriving meanwhile lands wholly before the change (that room is no longer live, or refuses) or after it. ' +
    'Each room that changes writes reservation.modified. Dates: ' +
    'POST /reservations/{id}/modify-dates.',
  request: { params: ReservationId, body: { required: true, content: { 'application/json': { schema: UpdateReservationWire } } } },
  responses: {
    200: { description: 'The updated reservation', content: { 'application/json': { schema: dataEnvelope(ReservationWire) } } },
    ...errorResponses(
      [ValidationError, `VALIDATION_ERROR: a bad or unknown field, an empty change, ${BAD_ID_REASON} (details.fields), or a malformed JSON body`],
      NO_RESERVATION,
      [ConflictError, 'BOOKING_NOT_MODIFIABLE (details.status: cancelled, past check-in...), or BOOKING_CHANGED: read it and retry'],
    ),
  },
});

export const cancelRoute = scopedRoute('reservation.cancel', {
  method: 'post',
  path: '/reservations/{id}/cancel',
  operationId: 'cancelReservation',
  tags: TAGS,
  summary: 'Cancel the whole reservation, or some of its rooms',
  description:
    'Without a body (or without room_ids): every room not already cancelled. With room_ids: those rooms. Each room is ' +
    'cancelled by its own policy (fee measured from 15:00 on the check-in date, property time) and its refund credited ' +
    'once in production; each writes reservation.cancelled. A room that cannot be cancelled (checked in; or named and ' +
    'already cancelled) refuses the request and nothing is cancelled. 502: the provider failed on a room, or (production) ' +
    'does not confirm its cancellation because it does not know it; rooms cancelled ' +
    'before it stay cancelled, and the same request cancels the rest.',
  request: {
    params: ReservationId,
    headers: idempotencyHeader,
    body: { required: false, content: { 'application/json': { schema: CancelReservationWire } } },
  },
  responses: {
    200: { description: 'Cancelled', content: { 'application/json': { schema: dataEnvelope(CancelledWire) } } },
    ...errorResponses(
      [ValidationError, `VALIDATION_ERROR: a room_ids entry that is not a room of this reservation or is repeated, ${BAD_ID_REASON}, a malformed body or Idempotency-Key (details.fields)`],
      NO_RESERVATION,
      [
        ConflictError,
        'BOOKING_ALREADY_CANCELLED (the reservation, or a room named), BOOKING_NOT_CANCELLABLE (a room checked in, checked ' +
          `out, no-show or failed; details.booking_id, details.status), BOOKING_CHANGED, ${IDEMPOTENCY_409}`,
      ],
      [UpstreamError, 'UPSTREAM_ERROR: the provider failed, or does not confirm the cancellation (production; details.reason); the room it failed on is unchanged'],
    ),
  },
}, [idempotency()]);

export const cancelRoomRoute = scopedRoute('reservation.cancel', {
  method: 'delete',
  path: '/reservations/{id}/rooms/{booking_id}',
  operationId: 'cancelReservationRoom',
  tags: TAGS,
  summary: 'Cancel one room of a reservation',
  description: 'The same as POST /reservations/{id}/cancel with room_ids [booking_id].',
  request: { params: RoomPath, headers: idempotencyHeader },
  responses: {
    200: { description: 'Cancelled', content: { 'application/json': { schema: dataEnvelope(CancelledWire) } } },
    ...errorResponses(
      [ValidationError, `VALIDATION_ERROR: ${BAD_ID_REASON}, or a bad Idempotency-Key (details.fields)`],
      [NotFoundError, "NOT_FOUND: no reservation of this channel has this id, or the booking is not one of its rooms"],
      [ConflictError, `BOOKING_ALREADY_CANCELLED, BOOKING_NOT_CANCELLABLE (details.status), BOOKING_CHANGED, ${IDEMPOTENCY_409}`],
      [UpstreamError, 'UPSTREAM_ERROR: the provider failed, or does not confirm the cancellation (production; details.reason); the room is unchanged'],
    ),
  },
}, [idempotency()]);
