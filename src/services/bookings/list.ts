import type { RequestContext } from '../../context.js';
import { Prisma, type Booking } from '../../generated/prisma/client.js';
import { VISIBLE_STATUSES, type VisibleStatus } from './states.js';
import { NotFoundError, principalOf, ValidationError } from '../kernel/index.js';
import { pageOf, type Page } from '../search/index.js';
import { dateValue } from './record.js';
import { isUuid } from './rules.js';

// ---------------------------------------------------------------------------------------------
// Read

/** A booking of the caller's channel; anything else (another channel's, malformed id) is 404. */
export async function getBooking(ctx: RequestContext, id: string): Promise<Booking> {
  const channelId = principalOf(ctx).channelId;
  const booking = isUuid(id)
    ? await ctx.deps.db.prisma.booking.findFirst({ where: { id: id.toLowerCase(), channelId, status: { in: [...VISIBLE_STATUSES] } } })
    : null;
  if (!booking) throw new NotFoundError(`Booking ${id} was not found`);
  return booking;
}


export interface BookingFilters {
  status?: VisibleStatus | undefined;
  checkinFrom?: string | undefined;
  checkinTo?: string | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  channelBookingNumber?: string | undefined;
  page: number;
  perPage: number;
}

export type BookingPage = Page<Booking>;

/** Filter names as each surface spells them, for cross-field errors. */
export type FilterNames = Record<'checkinFrom' | 'checkinTo' | 'createdFrom' | 'createdTo', string>;

/** The caller's bookings, newest first. Date bounds are inclusive days; `created_*` days are UTC. */
export async function listBookings(ctx: RequestContext, filters: BookingFilters, names: FilterNames): Promise<BookingPage> {
  const channelId = principalOf(ctx).channelId;
  const issues = [];
  if (filters.checkinFrom && filters.checkinTo && filters.checkinFrom > filters.checkinTo) {
    issues.push({ field: names.checkinTo, reason: `must not be before ${names.checkinFrom}` });
  }
  if (filters.createdFrom && filters.createdTo && filters.createdFrom > filters.createdTo) {
    issues.push({ field: names.createdTo, reason: `must not be before ${names.createdFrom}` });
  }
  if (issues.length) throw new ValidationError(issues);
  const where: Prisma.BookingWhereInput = {
    channelId,
    status: filters.status ?? { in: [...VISIBLE_STATUSES] },
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
  return pageOf(items, total, filters.page, filters.perPage);
}
