import { randomUUID } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import type { Logger } from 'pino';
import type { AppDeps } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { BookingRecord } from '../bookings/index.js';
import { hostOf, isPublicAddress, publicOnlyLookup } from './urls.js';

/**
 * Webhook delivery, at least once (DECISIONS.md, Webhooks):
 *
 * 1. `fanOut` reads outbox events not yet published, with FOR UPDATE SKIP LOCKED under a
 *    transaction-scoped advisory lock (one instance fans out at a time, so subscribers see events
 *    in order), writes one delivery per subscribed endpoint and marks the events published, in one
 *    transaction. The published events go to live subscribers after the commit.
 *    A disabled endpoint's deliveries are written `held`: the claim never reads them.
 * 2. `claimDue` takes due deliveries in one statement (FOR UPDATE SKIP LOCKED), at most
 *    PER_ENDPOINT_IN_FLIGHT in flight per endpoint, and leases each to this instance: the lease
 *    moves `next_attempt_at` past the attempt's deadline, so no other instance attempts it
 *    meanwhile, and a crashed attempt is retried when the lease runs out (logged as interrupted, in
 *    the same statement; a delivery interrupted too often fails there instead).
 * 3. `attemptDelivery` POSTs the body signed per Standard Webhooks (the `standardwebhooks`
 *    library) and records the attempt; the delivery is then delivered, scheduled again (the retry
 *    schedule, with jitter) or failed. An attempt finishing after its lease was taken over changes
 *    nothing but the log.
 * 4. `purgeDeliveries` deletes delivered and failed deliveries DELIVERY_RETENTION_MS after their
 *    last attempt.
 */

/**
 * Attempts in flight per endpoint, across instances: one slow or backlogged receiver cannot take
 * every slot of WEBHOOK_CONCURRENCY, so other partners' deliveries still go out at once.
 */
export const PER_ENDPOINT_IN_FLIGHT = 10;

/** Delivered and failed deliveries (with their attempts) are deleted this long after their last attempt. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * The most attempts a delivery gets between replays, interrupted ones included: twice what its
 * schedule allows. An interrupted attempt does not use up a step of the schedule, so without this
 * a message that kills every instance attempting it would be retried forever.
 */
export function maxTotalAttempts(retrySchedule: readonly number[]): number {
  return 2 * (retrySchedule.length + 1);
}

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
  /** `attempts` at the last replay (0 if never): maxTotalAttempts counts from here. */
  attemptsAtReplay: number;
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
  attempts_at_replay: number;
  schedule_step: number;
  max_attempts: number | null;
  created_at: Date;
}

/** How long an attempt may hold its delivery: twice its deadline and a second, then it is retried. */
export function leaseMs(deps: AppDeps): number {
  return deps.config.webhooks.timeoutMs * 2 + 1_000;
}

const INTERRUPTED = 'interrupted: the instance making this attempt stopped before recording an outcome';

/**
 * Leases up to `limit` due deliveries of enabled endpoints to this instance, at most
 * PER_ENDPOINT_IN_FLIGHT per endpoint counting the leases already running (on any instance).
 *
 * A lease that ran out without an outcome (the instance stopped mid-attempt) is written into the
 * log as an interrupted attempt, in the same statement. The interruption uses up no step of the
 * retry schedule; but a delivery that has had maxTotalAttempts attempts since its last replay is
 * marked failed here instead of being attempted again (it keeps interrupting its instances), and
 * is not returned.
 */
export async function claimDue(deps: AppDeps, limit: number): Promise<ClaimedDelivery[]> {
  const now = deps.clock();
  const until = new Date(now.getTime() + leaseMs(deps));
  const leaseId = randomUUID();
  const cap = maxTotalAttempts(deps.config.webhooks.retrySchedule);
  // `ranked` numbers each endpoint's due deliveries in the order they fell due; an endpoint with
  // `busy` leases running gets the first PER_ENDPOINT_IN_FLIGHT - busy of them. A delivery locked
  // or just leased by another instance's claim is skipped, and its place is not given to the next
  // one, so two claims at once stay within the cap too.
  const rows = await deps.db.prisma.$queryRaw<ClaimRow[]>`
    WITH busy AS (
      SELECT endpoint_id, count(*)::int AS leases
      FROM webhook_deliveries
      WHERE status = 'pending' AND lease_id IS NOT NULL AND next_attempt_at > ${now}
      GROUP BY endpoint_id
    ), ranked AS (
      SELECT d.id, d.endpoint_id, d.next_attempt_at,
        row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS place
      FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= ${now} AND e.disabled_at IS NULL
    ), due AS (
      SELECT d.id, d.lease_id AS previous_lease, d.attempts - d.attempts_at_replay >= ${cap}::int AS spent
      FROM ranked r
      JOIN webhook_deliveries d ON d.id = r.id
      LEFT JOIN busy b ON b.endpoint_id = r.endpoint_id
      WHERE r.place <= ${PER_ENDPOINT_IN_FLIGHT}::int - coalesce(b.leases, 0)
        -- Checked again on the row as locked: one leased by a claim that committed after this
        -- statement began is no longer due, and is skipped.
        AND d.status = 'pending' AND d.next_attempt_at <= ${now}
      ORDER BY r.next_attempt_at, r.id
      LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED
    ), claimed AS (
      UPDATE webhook_deliveries d
      SET status = CASE WHEN due.spent THEN 'failed' ELSE 'pending' END,
        lease_id = CASE WHEN due.spent THEN NULL ELSE ${leaseId}::uuid END,
        next_attempt_at = CASE WHEN due.spent THEN d.next_attempt_at ELSE ${until} END,
        attempts = d.attempts + CASE WHEN due.spent THEN 0 ELSE 1 END
      FROM due
      WHERE d.id = due.id
      RETURNING d.id, d.endpoint_id, d.body, d.attempts, d.attempts_at_replay, d.schedule_step, d.max_attempts,
        d.created_at, due.spent, due.previous_lease
    ), interrupted AS (
      INSERT INTO webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, error)
      SELECT gen_random_uuid(), c.id, CASE WHEN c.spent THEN c.attempts ELSE c.attempts - 1 END, ${now}, 0, ${INTERRUPTED}
      FROM claimed c WHERE c.previous_lease IS NOT NULL
    )
    SELECT c.id, c.endpoint_id, e.url, e.secret, c.body, c.attempts, c.attempts_at_replay, c.schedule_step,
      c.max_attempts, c.created_at
    FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id
    WHERE NOT c.spent`;
  return rows.map((r) => ({
    id: r.id,
    endpointId: r.endpoint_id,
    url: r.url,
    secret: r.secret,
    body: r.body,
    attempt: r.attempts,
    scheduleStep: r.schedule_step,
    maxAttempts: r.max_attempts,
    attemptsAtReplay: r.attempts_at_replay,
    createdAt: r.created_at,
    leaseId,
  }));
}

/**
 * Holds an endpoint's deliveries that are waiting (pending, not in flight: never leased, or the
 * lease ran out), on disabling it. The attempts in flight finish; one that is to be retried stays
 * pending, which the claim skips while the endpoint is disabled.
 */
export async function holdDeliveries(tx: Prisma.TransactionClient, endpointId: string, now: Date): Promise<number> {
  const { count } = await tx.webhookDelivery.updateMany({
    where: { endpointId, status: 'pending', OR: [{ leaseId: null }, { nextAttemptAt: { lte: now } }] },
    data: { status: 'held' },
  });
  return count;
}

/** Makes an endpoint's held deliveries pending and due now, on enabling it. */
export async function releaseHeld(tx: Prisma.TransactionClient, endpointId: string, now: Date): Promise<number> {
  const { count } = await tx.webhookDelivery.updateMany({
    where: { endpointId, status: 'held' },
    data: { status: 'pending', nextAttemptAt: now },
  });
  return count;
}

/**
 * Deletes delivered and failed deliveries, with their attempts, whose last attempt is more than
 * DELIVERY_RETENTION_MS before `now` (`next_attempt_at` is then the end of that attempt's lease).
 * In batches of `batchSize`, skipping rows another instance is deleting. Returns how many went.
 */
export async function purgeDeliveries(deps: AppDeps, now: Date, batchSize = 5_000): Promise<number> {
  const before = new Date(now.getTime() - DELIVERY_RETENTION_MS);
  let total = 0;
  for (;;) {
    const deleted = await deps.db.prisma.$executeRaw`
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries
        WHERE status IN ('delivered', 'failed') AND next_attempt_at < ${before}
        LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)`;
    total += deleted;
    if (deleted < batchSize) return total;
  }
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
 * it has then failed for the whole schedule (more than 24 hours by default); the endpoint's
 * waiting deliveries are then held. A failure that reaches maxTotalAttempts (after interruptions)
 * fails the delivery without disabling anything.
 */
export async function attemptDelivery(
  deps: AppDeps,
  claimed: ClaimedDelivery,
  logger: Logger = deps.logger,
): Promise<AttemptOutcome> {
  const outcome = await deps.webhookSender.send(claimed);
  const now = deps.clock();
  if (outcome.ok) {
    // The common case in one statement (one round trip, no interactive transaction): the attempt,
    // the delivery delivered if the lease is still ours, and the endpoint's last success at most
    // once a second (the row is shared by every delivery to it; locking it on each success would
    // make its deliveries commit one at a time).
    await deps.db.prisma.$executeRaw`
      WITH attempt AS (
        INSERT INTO webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, response_body)
        VALUES (${randomUUID()}::uuid, ${claimed.id}::uuid, ${claimed.attempt}, ${outcome.startedAt},
          ${outcome.durationMs}, ${outcome.statusCode}, ${outcome.responseBody})
      ), delivered AS (
        UPDATE webhook_deliveries SET status = 'delivered', delivered_at = ${now}, lease_id = NULL
        WHERE id = ${claimed.id}::uuid AND lease_id = ${claimed.leaseId}::uuid
        RETURNING endpoint_id
      )
      UPDATE webhook_endpoints SET last_success_at = ${now}
      WHERE id IN (SELECT endpoint_id FROM delivered)
        AND (last_success_at IS NULL OR last_success_at < ${new Date(now.getTime() - 1_000)})`;
    return outcome;
  }
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
    const { retrySchedule } = deps.config.webhooks;
    const scheduled = retryDelayMs(retrySchedule, claimed.scheduleStep);
    const attemptsOver =
      (claimed.maxAttempts !== null && claimed.attempt >= claimed.maxAttempts) ||
      claimed.attempt - claimed.attemptsAtReplay >= maxTotalAttempts(retrySchedule);
    const delay = attemptsOver ? null : scheduled;
    if (delay !== null) {
      await tx.webhookDelivery.updateMany({
        where: mine,
        data: { nextAttemptAt: new Date(now.getTime() + delay), scheduleStep: { increment: 1 }, leaseId: null },
      });
      return;
    }
    const { count } = await tx.webhookDelivery.updateMany({ where: mine, data: { status: 'failed', leaseId: null } });
    // Only a schedule run out disables (not a ping, nor the cap on interrupted attempts).
    if (count && claimed.maxAttempts === null && scheduled === null) {
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
      if (disabled.count) {
        const held = await holdDeliveries(tx, claimed.endpointId, now);
        logger.warn({ endpointId: claimed.endpointId, deliveryId: claimed.id, held }, 'webhook endpoint disabled');
      }
    }
  }, TRANSACTION_OPTIONS);
  return outcome;
}
