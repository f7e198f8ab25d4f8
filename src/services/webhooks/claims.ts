import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../context.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { OutcomeBatch } from './outcomes.js';

/**
 * Attempts in flight per endpoint, across instances: one slow or backlogged receiver cannot take
 * every slot of WEBHOOK_CONCURRENCY, so other partners' deliveries still go out at once.
 */
export const PER_ENDPOINT_IN_FLIGHT = 10;

/**
 * The most attempts a delivery gets between replays, interrupted ones included: twice what its
 * schedule allows. An interrupted attempt does not use up a step of the schedule, so without this
 * a message that kills every instance attempting it would be retried forever.
 */
export function maxTotalAttempts(retrySchedule: readonly number[]): number {
  return 2 * (retrySchedule.length + 1);
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
  /** The W3C traceparent of the trace that wrote the event (null for a ping, or when tracing was off). */
  traceparent: string | null;
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
  traceparent: string | null;
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
 *
 * With `recording` (a batch of successful outcomes, outcomes.ts), the same statement records them
 * first: one round trip and one commit for the outcomes and the claim of the slots they free (their
 * leases do not count as running).
 */
export async function claimDue(deps: AppDeps, limit: number, recording?: OutcomeBatch): Promise<ClaimedDelivery[]> {
  const now = deps.clock();
  const until = new Date(now.getTime() + leaseMs(deps));
  const leaseId = randomUUID();
  const cap = maxTotalAttempts(deps.config.webhooks.retrySchedule);
  // `ranked` numbers each endpoint's due deliveries in the order they fell due; an endpoint with
  // `busy` leases running gets the first PER_ENDPOINT_IN_FLIGHT - busy of them. A delivery locked
  // or just leased by another instance's claim is skipped, and its place is not given to the next
  // one, so two claims at once stay within the cap too.
  const record = recording ? Prisma.sql`${recording.ctes},` : Prisma.empty;
  const released = recording
    ? Prisma.sql`AND (id, lease_id) NOT IN (SELECT delivery_id, lease_id FROM outcome)`
    : Prisma.empty;
  const rows = await deps.db.prisma.$queryRaw<ClaimRow[]>`
    WITH ${record} busy AS (
      SELECT endpoint_id, count(*)::int AS leases
      FROM webhook_deliveries
      WHERE status = 'pending' AND lease_id IS NOT NULL AND next_attempt_at > ${now} ${released}
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
        d.created_at, d.traceparent, due.spent, due.previous_lease
    ), interrupted AS (
      INSERT INTO webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, error)
      SELECT gen_random_uuid(), c.id, CASE WHEN c.spent THEN c.attempts ELSE c.attempts - 1 END, ${now}, 0, ${INTERRUPTED}
      FROM claimed c WHERE c.previous_lease IS NOT NULL
    )
    SELECT c.id, c.endpoint_id, e.url, e.secret, c.body, c.attempts, c.attempts_at_replay, c.schedule_step,
      c.max_attempts, c.created_at, c.traceparent
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
    traceparent: r.traceparent,
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
