import { randomUUID } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import type { Logger } from 'pino';
import type { AppDeps } from '../context.js';
import { TRANSACTION_OPTIONS } from '../db/client.js';
import { Prisma } from '../generated/prisma/client.js';
import type { BookingRecord } from './bookings.js';
import { hostOf, isPublicAddress, publicOnlyLookup } from './webhookUrls.js';

/**
 * Webhook delivery, at least once (DECISIONS.md, Webhooks):
 *
 * 1. `fanOut` reads outbox events not yet published, with FOR UPDATE SKIP LOCKED under a
 *    transaction-scoped advisory lock (one instance fans out at a time, so subscribers see events
 *    in order), writes one delivery per subscribed endpoint and marks the events published, in one
 *    transaction. The published events go to live subscribers after the commit.
 * 2. `claimDue` takes due deliveries in one statement (FOR UPDATE SKIP LOCKED) and leases each to
 *    this instance: the lease moves `next_attempt_at` past the attempt's deadline, so no other
 *    instance attempts it meanwhile, and a crashed attempt is retried when the lease runs out.
 * 3. `attemptDelivery` POSTs the body signed per Standard Webhooks (the `standardwebhooks`
 *    library) and records the attempt; the delivery is then delivered, scheduled again (the retry
 *    schedule, with jitter) or failed. An attempt finishing after its lease was taken over changes
 *    nothing but the log.
 */

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
    const endpoints = await tx.webhookEndpoint.findMany({
      where: { channelId: { in: channelIds } },
      select: { id: true, channelId: true, events: true, createdAt: true },
    });
    const deliveries: Prisma.WebhookDeliveryCreateManyInput[] = [];
    for (const [index, event] of events.entries()) {
      for (const endpoint of endpoints) {
        // An endpoint receives the events that happen after it was made, of the types it chose.
        if (endpoint.channelId !== event.channel_id || !endpoint.events.includes(event.type)) continue;
        if (endpoint.createdAt > event.occurred_at) continue;
        deliveries.push({
          id: randomUUID(),
          endpointId: endpoint.id,
          channelId: event.channel_id,
          eventId: event.id,
          type: event.type,
          body: webhookBody(event.type, event.occurred_at, event.payload),
          status: 'pending',
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

// ---------------------------------------------------------------------------------------------
// 2. Leasing due deliveries

export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  url: string;
  secret: string;
  body: string;
  /** The attempt about to be made (1 for the first). */
  attempt: number;
  scheduleStep: number;
  maxAttempts: number | null;
  createdAt: Date;
  leaseId: string;
}

interface ClaimRow {
  id: string;
  endpoint_id: string;
  url: string;
  secret: string;
  body: string;
  attempts: number;
  schedule_step: number;
  max_attempts: number | null;
  created_at: Date;
  previous_lease: string | null;
}

/** How long an attempt may hold its delivery: twice its deadline and a second, then it is retried. */
export function leaseMs(deps: AppDeps): number {
  return deps.config.webhooks.timeoutMs * 2 + 1_000;
}

/**
 * Leases up to `limit` due deliveries of enabled endpoints to this instance. A lease that ran out
 * without an outcome (the instance stopped mid-attempt) is written into the log as an interrupted
 * attempt.
 */
export async function claimDue(deps: AppDeps, limit: number): Promise<ClaimedDelivery[]> {
  const now = deps.clock();
  const until = new Date(now.getTime() + leaseMs(deps));
  const leaseId = randomUUID();
  const rows = await deps.db.prisma.$queryRaw<ClaimRow[]>`
    WITH due AS (
      SELECT d.id, d.lease_id AS previous_lease
      FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= ${now} AND e.disabled_at IS NULL
      ORDER BY d.next_attempt_at LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED
    )
    UPDATE webhook_deliveries d
    SET next_attempt_at = ${until}, lease_id = ${leaseId}::uuid, attempts = d.attempts + 1,
      -- An interrupted attempt uses up its step of the schedule, so a delivery that keeps
      -- interrupting its instance still fails in the end instead of being retried forever.
      schedule_step = d.schedule_step + CASE WHEN due.previous_lease IS NULL THEN 0 ELSE 1 END
    FROM due, webhook_endpoints e
    WHERE d.id = due.id AND e.id = d.endpoint_id
    RETURNING d.id, d.endpoint_id, e.url, e.secret, d.body, d.attempts, d.schedule_step, d.max_attempts,
      d.created_at, due.previous_lease`;
  const interrupted = rows.filter((r) => r.previous_lease !== null);
  if (interrupted.length) {
    await deps.db.prisma.webhookAttempt.createMany({
      data: interrupted.map((r) => ({
        id: randomUUID(),
        deliveryId: r.id,
        attempt: r.attempts - 1,
        startedAt: now,
        durationMs: 0,
        error: 'interrupted: the instance making this attempt stopped before recording an outcome',
      })),
    });
  }
  return rows.map((r) => ({
    id: r.id,
    endpointId: r.endpoint_id,
    url: r.url,
    secret: r.secret,
    body: r.body,
    attempt: r.attempts,
    scheduleStep: r.schedule_step,
    maxAttempts: r.max_attempts,
    createdAt: r.created_at,
    leaseId,
  }));
}

// ---------------------------------------------------------------------------------------------
// 3. Attempts

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  startedAt: Date;
  durationMs: number;
}

const RESPONSE_KEEP_BYTES = 1024;

/** Signs and POSTs webhook bodies; one connection pool for every endpoint. */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(
    private readonly options: { timeoutMs: number; allowHttp: boolean; allowPrivateUrls: boolean; connections: number },
  ) {
    this.agent = new Agent({
      connections: options.connections,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 10_000,
      connect: {
        timeout: options.timeoutMs,
        ...(options.allowPrivateUrls ? {} : { lookup: publicOnlyLookup }),
      },
    });
  }

  /** One attempt: 2xx is success; anything else, a timeout or a refused address is a failure. */
  async send(delivery: Pick<ClaimedDelivery, 'id' | 'url' | 'secret' | 'body'>): Promise<AttemptOutcome> {
    const startedAt = new Date();
    const started = performance.now();
    const done = (outcome: Omit<AttemptOutcome, 'startedAt' | 'durationMs'>): AttemptOutcome => ({
      ...outcome,
      startedAt,
      durationMs: Math.round(performance.now() - started),
    });
    try {
      this.checkTarget(delivery.url);
      // The signed timestamp is the real time of sending: receivers check it against their clocks.
      const signature = new Webhook(delivery.secret).sign(delivery.id, startedAt, delivery.body);
      const response = await request(delivery.url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'channel-service-webhooks/1',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(Math.floor(startedAt.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body: delivery.body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const responseBody = await readPrefix(response.body, RESPONSE_KEEP_BYTES);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return done({ ok, statusCode: response.statusCode, responseBody, error: ok ? null : `HTTP ${response.statusCode}` });
    } catch (error) {
      return done({ ok: false, statusCode: null, responseBody: null, error: describe(error, this.options.timeoutMs) });
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Checks a saved URL against today's policy; names are checked at connection time by the lookup. */
  private checkTarget(raw: string): void {
    const url = new URL(raw);
    if (url.protocol !== 'https:' && !(this.options.allowHttp && url.protocol === 'http:')) {
      throw new Error(`refused: ${url.protocol} URLs are not allowed`);
    }
    const host = hostOf(url);
    if (!this.options.allowPrivateUrls && ipaddr.isValid(host) && !isPublicAddress(host)) {
      throw new Error(`refused: ${host} is not a public address`);
    }
  }
}

async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return storable(Buffer.concat(chunks).subarray(0, limit).toString('utf8'));
}

/** PostgreSQL text cannot hold NUL; a receiver's answer may. */
function storable(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD');
}

function describe(error: unknown, timeoutMs: number): string {
  return storable(explain(error, timeoutMs)).slice(0, 1_000);
}

function explain(error: unknown, timeoutMs: number): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return `timeout: no complete answer within ${timeoutMs} ms`;
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) return `${error.message}: ${cause.message}`;
    return error.message;
  }
  return String(error);
}

/** The wait before retry number `step` (0-based) with ±10 % jitter, or null when the schedule is over. */
export function retryDelayMs(schedule: readonly number[], step: number, random = Math.random): number | null {
  const base = schedule[step];
  if (base === undefined) return null;
  return Math.round(base * (0.9 + random() * 0.2));
}

/**
 * Makes one attempt of a claimed delivery and records it with its consequence. Returns the outcome.
 * A delivery that runs out of retries without a success since it was made disables its endpoint:
 * it has then failed for the whole schedule (more than 24 hours by default).
 */
export async function attemptDelivery(
  deps: AppDeps,
  claimed: ClaimedDelivery,
  logger: Logger = deps.logger,
): Promise<AttemptOutcome> {
  const outcome = await deps.webhookSender.send(claimed);
  const now = deps.clock();
  await deps.db.prisma.$transaction(async (tx) => {
    await tx.webhookAttempt.create({
      data: {
        id: randomUUID(),
        deliveryId: claimed.id,
        attempt: claimed.attempt,
        startedAt: outcome.startedAt,
        durationMs: outcome.durationMs,
        statusCode: outcome.statusCode,
        responseBody: outcome.responseBody,
        error: outcome.error,
      },
    });
    const mine = { id: claimed.id, leaseId: claimed.leaseId };
    if (outcome.ok) {
      const { count } = await tx.webhookDelivery.updateMany({
        where: mine,
        data: { status: 'delivered', deliveredAt: now, leaseId: null },
      });
      // At most once a second per endpoint: the row is shared by every delivery to it, and
      // locking it on each success would make its deliveries commit one at a time.
      if (count) {
        await tx.webhookEndpoint.updateMany({
          where: {
            id: claimed.endpointId,
            OR: [{ lastSuccessAt: null }, { lastSuccessAt: { lt: new Date(now.getTime() - 1_000) } }],
          },
          data: { lastSuccessAt: now },
        });
      }
      return;
    }
    const delay =
      claimed.maxAttempts !== null && claimed.attempt >= claimed.maxAttempts
        ? null
        : retryDelayMs(deps.config.webhooks.retrySchedule, claimed.scheduleStep);
    if (delay !== null) {
      await tx.webhookDelivery.updateMany({
        where: mine,
        data: { nextAttemptAt: new Date(now.getTime() + delay), scheduleStep: { increment: 1 }, leaseId: null },
      });
      return;
    }
    const { count } = await tx.webhookDelivery.updateMany({ where: mine, data: { status: 'failed', leaseId: null } });
    if (count && claimed.maxAttempts === null) {
      const disabled = await tx.webhookEndpoint.updateMany({
        where: {
          id: claimed.endpointId,
          disabledAt: null,
          OR: [{ lastSuccessAt: null }, { lastSuccessAt: { lt: claimed.createdAt } }],
        },
        data: {
          disabledAt: now,
          disabledReason: `delivery ${claimed.id} failed on every attempt of its retry schedule`,
          updatedAt: now,
        },
      });
      if (disabled.count) logger.warn({ endpointId: claimed.endpointId, deliveryId: claimed.id }, 'webhook endpoint disabled');
    }
  }, TRANSACTION_OPTIONS);
  return outcome;
}
