import type { AppDeps } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
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

/**
 * The message body, built once as text so every attempt sends the same bytes. The fan-out builds
 * the same bytes in SQL (fanOut below): a change here is a change there.
 */
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

    // One statement writes the deliveries and marks the events published; the bodies are built in
    // the database from the stored payloads (the same bytes webhookBody makes: the type and the
    // ISO timestamp as JSON strings, the payload's text as stored), so they never travel here.
    // FOR KEY SHARE: an endpoint read here cannot be deleted before this transaction commits (its
    // deliveries would break the foreign key and roll the whole batch back); the delete waits,
    // then takes the new deliveries with it. Enabling an endpoint locks it FOR UPDATE, so it also
    // waits, and then finds the deliveries written `held` here.
    // An endpoint receives the events that happen after it was made, of the types it chose. The
    // deliveries' created_at are distinct instants that keep each endpoint's delivery log in the
    // order the events happened (ending at now: never in the future, which the disable rule
    // compares with).
    const order = JSON.stringify(events.map((e, index) => ({ id: e.id, place: index })));
    await tx.$executeRaw`
      WITH batch AS (
        SELECT o.id, o.channel_id, o.type, o.payload, o.occurred_at, o.traceparent, b.place
        FROM json_to_recordset(${order}::json) AS b(id uuid, place int)
        JOIN outbox_events o ON o.id = b.id
      ), endpoint AS (
        SELECT id, channel_id, events, disabled_at, created_at FROM webhook_endpoints
        WHERE channel_id IN (SELECT DISTINCT channel_id FROM batch)
        FOR KEY SHARE
      ), written AS (
        INSERT INTO webhook_deliveries (id, endpoint_id, channel_id, event_id, type, body, status, next_attempt_at, created_at, traceparent)
        SELECT gen_random_uuid(), e.id, b.channel_id, b.id, b.type,
          '{"type":' || to_json(b.type)::text
            || ',"timestamp":' || to_json(to_char(b.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
            || ',"data":' || b.payload::text || '}',
          CASE WHEN e.disabled_at IS NULL THEN 'pending' ELSE 'held' END,
          ${now},
          ${now}::timestamptz - make_interval(secs => (${events.length - 1}::int - b.place) / 1000.0),
          b.traceparent
        FROM batch b
        JOIN endpoint e ON e.channel_id = b.channel_id AND b.type = ANY(e.events) AND e.created_at <= b.occurred_at
        ON CONFLICT DO NOTHING
      )
      UPDATE outbox_events SET published_at = ${now} WHERE id IN (SELECT id FROM batch)`;
    return events.map((e) => ({
      id: e.id,
      channelId: e.channel_id,
      type: e.type,
      occurredAt: e.occurred_at.toISOString(),
      booking: JSON.parse(e.payload) as BookingRecord,
    }));
  }, TRANSACTION_OPTIONS);
}
