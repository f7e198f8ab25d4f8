import type { z } from '@hono/zod-openapi';
import { cancelReservation, cancelReservationRoom, createReservation, listReservations, readReservation, updateReservation } from '../../../src/services/reservations/index.js';
import { ok } from '../../envelope.js';
import type { AppRouteHandler } from '../../env.js';
import { paginationToWire } from '../search/wire.js';
import type * as routes from './routes.js';
import {
  cancellationToWire,
  createReservationInput,
  reservationToWire,
  updateReservationInput,
  type CancelReservationWire,
} from './wire.js';

/** The reservation handlers (docs/spec/channel-api.md §4.8): parse, call the reservation service, map to the wire. */

export const create: AppRouteHandler<typeof routes.createRoute> = async (c) => {
  const reservation = await createReservation(c.get('ctx'), createReservationInput(c.req.valid('json')));
  c.header('Location', `/channel/v1/reservations/${reservation.id}`);
  return ok(c, reservationToWire(reservation), 201);
};

export const list: AppRouteHandler<typeof routes.listRoute> = async (c) => {
  const q = c.req.valid('query');
  const page = await listReservations(c.get('ctx'), {
    confirmationNumber: q.confirmation_number,
    guestEmail: q.guest_email,
    checkInFrom: q.check_in_from,
    checkInTo: q.check_in_to,
    page: q.page,
    perPage: q.per_page,
  });
  return ok(c, page.items.map(reservationToWire), 200, { pagination: paginationToWire(page) });
};

export const get: AppRouteHandler<typeof routes.getRoute> = async (c) =>
  ok(c, reservationToWire(await readReservation(c.get('ctx'), c.req.valid('param').id)));

export const patch: AppRouteHandler<typeof routes.patchRoute> = async (c) => {
  const reservation = await updateReservation(c.get('ctx'), c.req.valid('param').id, updateReservationInput(c.req.valid('json')));
  return ok(c, reservationToWire(reservation));
};

export const cancel: AppRouteHandler<typeof routes.cancelRoute> = async (c) => {
  // The body is optional: without one, the whole reservation.
  const body = (c.req.valid('json') ?? {}) as z.infer<typeof CancelReservationWire>;
  return ok(c, cancellationToWire(await cancelReservation(c.get('ctx'), c.req.valid('param').id, body.room_ids)));
};

export const cancelRoom: AppRouteHandler<typeof routes.cancelRoomRoute> = async (c) => {
  const { id, booking_id } = c.req.valid('param');
  return ok(c, cancellationToWire(await cancelReservationRoom(c.get('ctx'), id, booking_id)));
};
