import type { RequestContext } from '../../context.js';
import { Prisma } from '../../generated/prisma/client.js';
import { isUuid, VISIBLE_STATUSES } from '../bookings/index.js';
import { NotFoundError, principalOf, ValidationError } from '../kernel/index.js';
import { pageOf, type Page } from '../search/index.js';
import { ROOM_ORDER, type Reservation, reservationOf } from './rules.js';

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
