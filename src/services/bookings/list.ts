import type { RequestContext } from '../../context.js';
import { Prisma, type Booking } from '../../generated/prisma/client.js';
import { listedStatuses, VISIBLE_STATUSES, type VisibleStatus } from './states.js';
import { cursorOf, keysetQuery, NotFoundError, principalOf, rowsById, ValidationError, type WindowedList } from '../kernel/index.js';
import { pageOf, type Page } from '../search/index.js';
import { asRead, dateValue, type BookingRecord } from './record.js';
import { isUuid } from './rules.js';

// ---------------------------------------------------------------------------------------------
// Read

/**
 * A booking of the caller's channel to act on (cancel, modify, quote): settled, so one whose
 * creation is still in flight or booked nothing is 404 here; anything else (another channel's,
 * malformed id) is 404 too.
 */
export async function getBooking(ctx: RequestContext, id: string): Promise<Booking> {
  const channelId = principalOf(ctx).channelId;
  const booking = isUuid(id)
    ? await ctx.deps.db.prisma.booking.findFirst({ where: { id: id.toLowerCase(), channelId, status: { in: [...VISIBLE_STATUSES] } } })
    : null;
  if (!booking) throw new NotFoundError(`Booking ${id} was not found`);
  return booking;
}

/**
 * A booking of the caller's channel to read, whatever became of it: one whose creation is in
 * flight reads `pending`, one that booked nothing `failed` (asRead), so the booking a
 * BOOK_TOKEN_USED names is always there. Another channel's or a malformed id is 404.
 */
export async function readBooking(ctx: RequestContext, id: string): Promise<Booking> {
  const channelId = principalOf(ctx).channelId;
  const booking = isUuid(id) ? await ctx.deps.db.prisma.booking.findFirst({ where: { id: id.toLowerCase(), channelId } }) : null;
  if (!booking) throw new NotFoundError(`Booking ${id} was not found`);
  return asRead(booking);
}

/**
 * Bookings of the caller's channel by id, in the order asked, in one query, as readBooking reads
 * them: null where the channel has none (another channel's, a malformed id). The batch behind
 * GraphQL's Booking loader.
 */
export function getBookings(ctx: RequestContext, ids: readonly string[]): Promise<(Booking | null)[]> {
  const channelId = principalOf(ctx).channelId;
  return rowsById(ids, async (wanted) => (await ctx.deps.db.prisma.booking.findMany({ where: { id: { in: wanted }, channelId } })).map(asRead));
}


export interface BookingFilterValues {
  status?: VisibleStatus | undefined;
  checkinFrom?: string | undefined;
  checkinTo?: string | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  channelBookingNumber?: string | undefined;
}

export interface BookingFilters extends BookingFilterValues {
  page: number;
  perPage: number;
}

export type BookingPage = Page<Booking>;

/** The list bookings are paged in: newest first (REST pages by number, GraphQL by cursor). */
const BOOKING_LIST = 'bookings';

/** A booking's cursor in the channel's list (keyset: createdAt, id). */
export const bookingCursor = (b: Booking): string => cursorOf(BOOKING_LIST, { at: b.createdAt, id: b.id });

/** Filter names as each surface spells them, for cross-field errors. */
export type FilterNames = Record<'checkinFrom' | 'checkinTo' | 'createdFrom' | 'createdTo', string>;

/** The caller's bookings, newest first, one page by number (REST). */
export async function listBookings(ctx: RequestContext, filters: BookingFilters, names: FilterNames): Promise<BookingPage> {
  const where = bookingsWhere(ctx, filters, names);
  const { prisma } = ctx.deps.db;
  const [total, items] = await Promise.all([
    prisma.booking.count({ where }),
    prisma.booking.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: (filters.page - 1) * filters.perPage,
      take: filters.perPage,
    }),
  ]);
  return pageOf(items.map(asRead), total, filters.page, filters.perPage);
}

/**
 * The caller's bookings, newest first, in a cursor window (GraphQL's connection); the count is
 * made only when asked for.
 */
export function bookingWindow(
  ctx: RequestContext,
  filters: BookingFilterValues,
  names: FilterNames,
): WindowedList<Booking> {
  const where = bookingsWhere(ctx, filters, names);
  const { prisma } = ctx.deps.db;
  return {
    rows: async (window) => {
      const keyset = keysetQuery(BOOKING_LIST, 'desc', window);
      const rows = await prisma.booking.findMany({ where: { AND: [where, ...keyset.where] }, orderBy: keyset.orderBy, take: window.limit });
      return rows.map(asRead);
    },
    count: () => prisma.booking.count({ where }),
  };
}

/**
 * Which bookings a list shows (listedStatuses: a booking in flight is there as `pending`). Date
 * bounds are inclusive days; `created_*` days are UTC.
 */
function bookingsWhere(ctx: RequestContext, filters: BookingFilterValues, names: FilterNames): Prisma.BookingWhereInput {
  const channelId = principalOf(ctx).channelId;
  const issues = [];
  if (filters.checkinFrom && filters.checkinTo && filters.checkinFrom > filters.checkinTo) {
    issues.push({ field: names.checkinTo, reason: `must not be before ${names.checkinFrom}` });
  }
  if (filters.createdFrom && filters.createdTo && filters.createdFrom > filters.createdTo) {
    issues.push({ field: names.createdTo, reason: `must not be before ${names.createdFrom}` });
  }
  if (issues.length) throw new ValidationError(issues);
  return {
    channelId,
    status: { in: listedStatuses(filters.status) },
    checkin: {
      ...(filters.checkinFrom && { gte: dateValue(filters.checkinFrom) }),
      ...(filters.checkinTo && { lte: dateValue(filters.checkinTo) }),
    },
    createdAt: {
      ...(filters.createdFrom && { gte: dateValue(filters.createdFrom) }),
      ...(filters.createdTo && { lt: new Date(dateValue(filters.createdTo).getTime() + 86_400_000) }),
    },
    ...(filters.channelBookingNumber !== undefined && { channelBookingNumber: filters.channelBookingNumber }),
  };
}

// ---------------------------------------------------------------------------------------------
// Event history

/** A booking event from the outbox: what happened, when, and the booking record as it was then. */
export interface BookingEventEntry {
  id: string;
  type: string;
  occurredAt: Date;
  booking: BookingRecord;
}

/**
 * The newest `first` events of each of the caller's bookings in `bookingIds`, newest first, in one
 * query (at most `first` rows per booking leave the database): the outbox keeps every event
 * written with a change (docs/spec/DECISIONS.md, Webhooks). Another channel's booking has none.
 */
export async function bookingEvents(ctx: RequestContext, bookingIds: readonly string[], first: number): Promise<BookingEventEntry[][]> {
  const channelId = principalOf(ctx).channelId;
  const wanted = [...new Set(bookingIds.filter(isUuid).map((id) => id.toLowerCase()))];
  const rows =
    wanted.length && first > 0
      ? await ctx.deps.db.prisma.$queryRaw<{ id: string; bookingId: string; type: string; occurredAt: Date; payload: unknown }[]>`
          SELECT "id", "booking_id" AS "bookingId", "type", "occurred_at" AS "occurredAt", "payload" FROM (
            SELECT "id", "booking_id", "type", "occurred_at", "payload",
              row_number() OVER (PARTITION BY "booking_id" ORDER BY "occurred_at" DESC, "id" DESC) AS "position"
            FROM "outbox_events"
            WHERE "channel_id" = ${channelId}::uuid AND "booking_id" IN (${Prisma.join(wanted.map((id) => Prisma.sql`${id}::uuid`))})
          ) AS "newest"
          WHERE "position" <= ${first}
          ORDER BY "occurred_at" DESC, "id" DESC`
      : [];
  const byBooking = new Map<string, BookingEventEntry[]>();
  for (const row of rows) {
    const entry = { id: row.id, type: row.type, occurredAt: new Date(row.occurredAt), booking: payloadOf(row.payload) };
    const entries = byBooking.get(row.bookingId);
    if (entries) entries.push(entry);
    else byBooking.set(row.bookingId, [entry]);
  }
  return bookingIds.map((id) => byBooking.get(id.toLowerCase()) ?? []);
}

/** A `json` column as the raw query hands it over: parsed by the driver, or its text. */
function payloadOf(payload: unknown): BookingRecord {
  return (typeof payload === 'string' ? JSON.parse(payload) : payload) as BookingRecord;
}
