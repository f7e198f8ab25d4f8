import type { RequestContext } from '../../context.js';
import { Prisma } from '../../generated/prisma/client.js';
import { asRead, isUuid, listedStatuses, VISIBLE_STATUSES } from '../bookings/index.js';
import { cursorOf, keysetSql, NotFoundError, principalOf, ValidationError, type WindowedList } from '../kernel/index.js';
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

/**
 * getReservation to read, whatever became of it: rooms whose creation is in flight read `pending`,
 * rooms that booked nothing `failed` (asRead), so the reservation a BOOK_TOKEN_USED names is
 * always there. Changes (update, cancel) keep to getReservation.
 */
export async function readReservation(ctx: RequestContext, id: string): Promise<Reservation> {
  const channelId = principalOf(ctx).channelId;
  const { prisma } = ctx.deps.db;
  const room = isUuid(id) ? await prisma.booking.findFirst({ where: { id: id.toLowerCase(), channelId }, select: { itineraryId: true } }) : null;
  const bookings = room ? await prisma.booking.findMany({ where: { channelId, itineraryId: room.itineraryId }, orderBy: ROOM_ORDER }) : [];
  if (!bookings.length) throw new NotFoundError(`Reservation ${id} was not found`);
  return reservationOf(bookings.map(asRead));
}

/**
 * Reservations of the caller's channel by their ids (itinerary ids), in the order asked, in one
 * query: null where the channel has none. The batch behind GraphQL's Reservation loader (the
 * reservation of a booking, and Query.node).
 */
export async function getReservations(ctx: RequestContext, ids: readonly string[]): Promise<(Reservation | null)[]> {
  return reservationsOf(ctx, ids.map((id) => (isUuid(id) ? id.toLowerCase() : null)));
}

export interface ReservationFilterValues {
  confirmationNumber?: string | undefined;
  guestEmail?: string | undefined;
  checkInFrom?: string | undefined;
  checkInTo?: string | undefined;
}

export interface ReservationFilters extends ReservationFilterValues {
  page: number;
  perPage: number;
}

/** The list reservations are paged in: newest first. */
const RESERVATION_LIST = 'reservations';

/** A reservation's cursor in the channel's list (keyset: the createdAt and id of its head row, the room whose id it is). */
export function reservationCursor(r: Reservation): string {
  const head = r.bookings.find((b) => b.id === r.id) ?? r.bookings[0]!;
  return cursorOf(RESERVATION_LIST, { at: head.createdAt, id: r.id });
}

/**
 * The caller's reservations, newest first, one page by number (REST); filters combine (all must
 * hold). They apply to the reservation's first room, which carries what the reservation shares:
 * the confirmation number, the guest's e-mail (compared case-insensitively) and the dates.
 */
export async function listReservations(ctx: RequestContext, filters: ReservationFilters): Promise<Page<Reservation>> {
  const where = reservationsWhere(ctx, filters);
  const { prisma } = ctx.deps.db;
  const [total, heads] = await Promise.all([
    countReservations(ctx, where),
    prisma.$queryRaw<{ id: string }[]>`
      SELECT "id" FROM "bookings" WHERE ${where}
      ORDER BY "created_at" DESC, "id" DESC
      LIMIT ${filters.perPage} OFFSET ${(filters.page - 1) * filters.perPage}`,
  ]);
  return pageOf(await foundReservations(ctx, heads.map((h) => h.id)), total, filters.page, filters.perPage);
}

/** The same list in a cursor window (GraphQL's connection); the count is made only when asked for. */
export function reservationWindow(
  ctx: RequestContext,
  filters: ReservationFilterValues,
): WindowedList<Reservation> {
  const where = reservationsWhere(ctx, filters);
  return {
    rows: async (window) => {
      const keyset = keysetSql(RESERVATION_LIST, 'desc', window);
      const heads = await ctx.deps.db.prisma.$queryRaw<{ id: string }[]>`
        SELECT "id" FROM "bookings" WHERE ${Prisma.join([where, ...keyset.conditions], ' AND ')}
        ORDER BY ${keyset.orderBy} LIMIT ${window.limit}`;
      return foundReservations(ctx, heads.map((h) => h.id));
    },
    count: () => countReservations(ctx, where),
  };
}

function reservationsWhere(ctx: RequestContext, filters: ReservationFilterValues): Prisma.Sql {
  const channelId = principalOf(ctx).channelId;
  if (filters.checkInFrom && filters.checkInTo && filters.checkInFrom > filters.checkInTo) {
    throw new ValidationError([{ field: 'check_in_to', reason: 'must not be before check_in_from' }]);
  }
  const conditions = [
    Prisma.sql`"channel_id" = ${channelId}::uuid`,
    Prisma.sql`"id" = "itinerary_id"`,
    Prisma.sql`"status"::text IN (${Prisma.join(listedStatuses())})`,
  ];
  if (filters.confirmationNumber !== undefined) conditions.push(Prisma.sql`"confirmation_number" = ${filters.confirmationNumber.toUpperCase()}`);
  if (filters.guestEmail !== undefined) conditions.push(Prisma.sql`lower("booker_email") = lower(${filters.guestEmail})`);
  if (filters.checkInFrom !== undefined) conditions.push(Prisma.sql`"checkin" >= ${filters.checkInFrom}::date`);
  if (filters.checkInTo !== undefined) conditions.push(Prisma.sql`"checkin" <= ${filters.checkInTo}::date`);
  return Prisma.join(conditions, ' AND ');
}

async function countReservations(ctx: RequestContext, where: Prisma.Sql): Promise<number> {
  const counted = await ctx.deps.db.prisma.$queryRaw<{ total: number }[]>`SELECT count(*)::int AS "total" FROM "bookings" WHERE ${where}`;
  return counted[0]?.total ?? 0;
}

/**
 * The reservations with these ids (their first rooms' ids), in this order, in one query, read as
 * readReservation reads them; null for an id it has none of.
 */
async function reservationsOf(ctx: RequestContext, ids: readonly (string | null)[]): Promise<(Reservation | null)[]> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  const rows = wanted.length
    ? await ctx.deps.db.prisma.booking.findMany({
        where: { channelId: principalOf(ctx).channelId, itineraryId: { in: wanted } },
        orderBy: ROOM_ORDER,
      })
    : [];
  return ids.map((id) => {
    const rooms = rows.filter((b) => b.itineraryId === id).map(asRead);
    return rooms.length ? reservationOf(rooms) : null;
  });
}

/** Reservations the list query found: each is there. */
async function foundReservations(ctx: RequestContext, ids: string[]): Promise<Reservation[]> {
  return (await reservationsOf(ctx, ids)).filter((r): r is Reservation => r !== null);
}
