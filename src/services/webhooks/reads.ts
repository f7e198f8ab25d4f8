import type { RequestContext } from '../../context.js';
import { Prisma } from '../../generated/prisma/client.js';
import { cursorOf, isUuid, keysetQuery, keysetSql, principalOf, rowsById, type CursorWindow, type WindowedList } from '../kernel/index.js';
import { ATTEMPT_LOG, deliveryView, view, type DeliveryStatus, type DeliveryView, type WebhookView } from './endpoints.js';

/**
 * The reads GraphQL's graph makes of webhooks, each one query for a whole batch: webhooks and
 * deliveries by id (Query.node, edges), the channel's webhooks in a cursor window, and the
 * delivery logs of several webhooks at once (`webhooks { deliveries(first: 5) }` makes one query
 * for all of them, not one per webhook). Channel-scoped as every read: another channel's are null.
 */

const WEBHOOK_LIST = 'webhooks';
const DELIVERY_LIST = 'deliveries';

/** A webhook's cursor in the channel's list (oldest first: createdAt, id). */
export const webhookCursor = (w: WebhookView): string => cursorOf(WEBHOOK_LIST, { at: w.createdAt, id: w.id });

/** A delivery's cursor in its webhook's log (newest first: createdAt, id). */
export const deliveryCursor = (d: DeliveryView): string => cursorOf(DELIVERY_LIST, { at: d.createdAt, id: d.id });

/** The caller's webhooks by id, in the order asked; null where the channel has none. */
export async function getWebhooks(ctx: RequestContext, ids: readonly string[]): Promise<(WebhookView | null)[]> {
  const channelId = principalOf(ctx).channelId;
  const rows = await rowsById(ids, (wanted) => ctx.deps.db.prisma.webhookEndpoint.findMany({ where: { id: { in: wanted }, channelId } }));
  return rows.map((row) => row && view(row));
}

/** The caller's webhooks, oldest first, in a cursor window; the count is made only when asked for. */
export function webhookWindow(ctx: RequestContext): WindowedList<WebhookView> {
  const where = { channelId: principalOf(ctx).channelId };
  const { prisma } = ctx.deps.db;
  return {
    rows: async (window) => {
      const keyset = keysetQuery(WEBHOOK_LIST, 'asc', window);
      const rows = await prisma.webhookEndpoint.findMany({ where: { AND: [where, ...keyset.where] }, orderBy: keyset.orderBy, take: window.limit });
      return rows.map(view);
    },
    count: () => prisma.webhookEndpoint.count({ where }),
  };
}

/** The caller's deliveries by id (of any of its webhooks), with their attempts; null where it has none. */
export async function getDeliveries(ctx: RequestContext, ids: readonly string[]): Promise<(DeliveryView | null)[]> {
  const channelId = principalOf(ctx).channelId;
  const rows = await rowsById(ids, (wanted) => ctx.deps.db.prisma.webhookDelivery.findMany({ where: { id: { in: wanted }, channelId }, include: ATTEMPT_LOG }));
  return rows.map((row) => row && deliveryView(row));
}

export interface DeliveryLogFilter {
  status?: DeliveryStatus | undefined;
}

/**
 * One window of the delivery log (newest first) of each of the caller's webhooks in `webhookIds`,
 * in two queries whatever their number: the ids of each log's window (a window function over all
 * of them), then those deliveries with their attempts.
 */
export async function deliveryLogs(
  ctx: RequestContext,
  webhookIds: readonly string[],
  filter: DeliveryLogFilter,
  window: CursorWindow,
): Promise<DeliveryView[][]> {
  const wanted = [...new Set(webhookIds.filter(isUuid).map((id) => id.toLowerCase()))];
  if (!wanted.length) return webhookIds.map(() => []);
  const { prisma } = ctx.deps.db;
  const keyset = keysetSql(DELIVERY_LIST, 'desc', window);
  const conditions = [
    Prisma.sql`"channel_id" = ${principalOf(ctx).channelId}::uuid`,
    Prisma.sql`"endpoint_id" IN (${Prisma.join(wanted.map((id) => Prisma.sql`${id}::uuid`))})`,
    ...(filter.status ? [Prisma.sql`"status" = ${filter.status}`] : []),
    ...keyset.conditions,
  ];
  const picked = await prisma.$queryRaw<{ id: string }[]>`
    SELECT "id" FROM (
      SELECT "id", row_number() OVER (PARTITION BY "endpoint_id" ORDER BY ${keyset.orderBy}) AS "place"
      FROM "webhook_deliveries" WHERE ${Prisma.join(conditions, ' AND ')}
    ) AS "windows" WHERE "place" <= ${window.limit}`;
  const rows = picked.length
    ? await prisma.webhookDelivery.findMany({ where: { id: { in: picked.map((p) => p.id) } }, include: ATTEMPT_LOG })
    : [];
  return webhookIds.map((id) =>
    rows
      .filter((row) => row.endpointId === id.toLowerCase())
      .sort(byPosition(window.inverted))
      .map(deliveryView),
  );
}

/** How many deliveries each of the caller's webhooks in `webhookIds` has under `filter`, in one query. */
export async function deliveryCounts(ctx: RequestContext, webhookIds: readonly string[], filter: DeliveryLogFilter): Promise<number[]> {
  const wanted = [...new Set(webhookIds.filter(isUuid).map((id) => id.toLowerCase()))];
  const counts = wanted.length
    ? await ctx.deps.db.prisma.webhookDelivery.groupBy({
        by: ['endpointId'],
        where: { channelId: principalOf(ctx).channelId, endpointId: { in: wanted }, ...(filter.status && { status: filter.status }) },
        _count: { _all: true },
      })
    : [];
  const byId = new Map(counts.map((c) => [c.endpointId, c._count._all]));
  return webhookIds.map((id) => byId.get(id.toLowerCase()) ?? 0);
}

/** Newest first (createdAt, id), or oldest first for an inverted window. */
function byPosition(inverted: boolean) {
  const sign = inverted ? 1 : -1;
  return (a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }) =>
    sign * (a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
