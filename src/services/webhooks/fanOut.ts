import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { BookingRecord } from '../bookings/index.js';

/** The event message of webhooks and live subscribers, and fan-out from the outbox (step 1 in dispatch.ts). */

/** A booking event as live subscribers receive it. */
export interface BookingEventMessage {
  id: string;
  channelId: string;
  type: string;
  occurredAt: string;
  booking: BookingRecord;
}

export const PING_EVENT_TYPE = 'webhook.ping';

/** The message body, built once as text so every attempt sends the same bytes. */
export function webhookBody(type: string, timestamp: Date, dataJson: string): string {
  return `{"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(timestamp.toISOString())},"data":${dataJson}}`;
}

// ---------------------------------------------------------------------------------------------
// 1. Outbox to deliveries

interface OutboxRow {
  id: string;
  channel_id: string;
  type: string;
  payload: string;
  occurred_at: Date;
}

interface EndpointRow {
  id: string;
  channel_id: string;
  events: string[];
  disabled_at: Date | null;
  created_at: Date;
}

// Two-key advisory lock: a constant for "outbox fan-out" and the schema, so services sharing a
// database in different schemas do not wait for each other.
const FAN_OUT_LOCK = 0x6f7574; // "out"

/** Publishes up to `limit` outbox events; returns them in order (empty when another instance holds the turn). */
export async function fanOut(deps: AppDeps, limit: number): Promise<BookingEventMessage[]> {
  const now = deps.clock();
  return deps.db.prisma.$transaction(async (tx) => {
    const [turn] = await tx.$queryRaw<{ locked: boolean }[]>`
      SELECT pg_try_advisory_xact_lock(${FAN_OUT_LOCK}::int, hashtext(current_schema())) AS locked`;
    if (!turn?.locked) return [];
    const events = await tx.$queryRaw<OutboxRow[]>`
      SELECT id, channel_id, type, payload::text AS payload, occurred_at
      FROM outbox_events WHERE published_at IS NULL
      ORDER BY occurred_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
    if (!events.length) return [];

    const channelIds = [...new Set(events.map((e) => e.channel_id))];
    // FOR KEY SHARE: an endpoint read here cannot be deleted before this transaction commits (its
    // deliveries would break the foreign key and roll the whole batch back); the delete waits,
    // then takes the new deliveries with it. Enabling an endpoint locks it FOR UPDATE, so it also
    // waits, and then finds the deliveries written `held` here.
    const endpoints = await tx.$queryRaw<EndpointRow[]>`
      SELECT id, channel_id, events, disabled_at, created_at FROM webhook_endpoints
      WHERE channel_id IN (${Prisma.join(channelIds.map((id) => Prisma.sql`${id}::uuid`))})
      FOR KEY SHARE`;
    const deliveries: Prisma.WebhookDeliveryCreateManyInput[] = [];
    for (const [index, event] of events.entries()) {
      for (const endpoint of endpoints) {
        // An endpoint receives the events that happen after it was made, of the types it chose.
        if (endpoint.channel_id !== event.channel_id || !endpoint.events.includes(event.type)) continue;
        if (endpoint.created_at > event.occurred_at) continue;
        deliveries.push({
          id: randomUUID(),
          endpointId: endpoint.id,
          channelId: event.channel_id,
          eventId: event.id,
          type: event.type,
          body: webhookBody(event.type, event.occurred_at, event.payload),
          status: endpoint.disabled_at ? 'held' : 'pending',
          nextAttemptAt: now,
          // Distinct instants keep each endpoint's delivery log in the order the events happened
          // (ending at now: never in the future, which the disable rule compares with).
          createdAt: new Date(now.getTime() - (events.length - 1 - index)),
        });
      }
    }
    if (deliveries.length) await tx.webhookDelivery.createMany({ data: deliveries, skipDuplicates: true });
    await tx.outboxEvent.updateMany({ where: { id: { in: events.map((e) => e.id) } }, data: { publishedAt: now } });
    return events.map((e) => ({
      id: e.id,
      channelId: e.channel_id,
      type: e.type,
      occurredAt: e.occurred_at.toISOString(),
      booking: JSON.parse(e.payload) as BookingRecord,
    }));
  }, TRANSACTION_OPTIONS);
}
