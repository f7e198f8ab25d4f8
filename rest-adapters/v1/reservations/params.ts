import { z } from '@hono/zod-openapi';
import { NotFoundError, ValidationError } from '../../../src/services/kernel/index.js';

/**
 * What the /reservations routes (reservations/, reservations/changes.ts, reservationVouchers.ts)
 * declare alike: the path id, its error responses, the Idempotency-Key header and amounts.
 * rest-adapters/v1/bookings/ declares the same header and id errors for /bookings.
 */

/** The `{id}` of /reservations/{id}...: up to 64 characters; anything not a uuid of the channel is 404. */
export const ReservationId = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ description: 'The reservation id (the booking id of its first room), or the booking id of one of its rooms (uuid)' }),
});

/** The reason an over-long id is refused, for a 400 description that lists other reasons too. */
export const BAD_ID_REASON = 'the id is longer than 64 characters';

/** The error responses of a reservation path id (for errorResponses). */
export const BAD_ID = [ValidationError, `VALIDATION_ERROR: ${BAD_ID_REASON}`] as const;
export const NO_RESERVATION = [NotFoundError, "NOT_FOUND: no reservation (or booking) of this channel has this id (another channel's is 404 too)"] as const;

/** An amount on the wire: a whole number of the currency's smallest unit. */
export const money = (description: string) => z.number().int().openapi({ description });
