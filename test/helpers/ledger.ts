import type { TestService } from './service.js';

/** What the database holds of a channel's money, its bookings and their events, for tests to assert. */

export async function balanceOf(t: TestService, channelId: string): Promise<bigint> {
  return (await t.service.deps.db.prisma.channel.findUniqueOrThrow({ where: { id: channelId } })).balance;
}

/** The ledger entries of `reference` (a booking or reservation id), oldest first, as [kind, amount]. */
export async function ledgerOf(t: TestService, reference: string): Promise<[string, bigint][]> {
  const rows = await t.service.deps.db.prisma.ledgerEntry.findMany({ where: { reference }, orderBy: { createdAt: 'asc' } });
  return rows.map((r) => [r.kind, r.amount]);
}

/** The outbox event types of a booking, oldest first. */
export async function eventsOf(t: TestService, bookingId: string): Promise<string[]> {
  const rows = await t.service.deps.db.prisma.outboxEvent.findMany({ where: { bookingId }, orderBy: { occurredAt: 'asc' } });
  return rows.map((r) => r.type);
}

/** How many bookings a channel has; with `excludeVoid`, only those whose status is not void. */
export async function bookingCount(t: TestService, channelId: string, { excludeVoid = false }: { excludeVoid?: boolean } = {}): Promise<number> {
  return t.service.deps.db.prisma.booking.count({ where: { channelId, ...(excludeVoid ? { status: { not: 'void' as const } } : {}) } });
}
