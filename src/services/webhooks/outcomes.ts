import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { ClaimedDelivery } from './claims.js';

// ---------------------------------------------------------------------------------------------
// 3b. Recording successful attempts, in batches

/** A successful attempt's outcome as the log keeps it. */
export interface SuccessOutcome {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
}

/** An endpoint's `last_success_at` is written at most this often per instance; later successes wait for the next write. */
export const LAST_SUCCESS_EVERY_MS = 1_000;

/** The most outcomes one statement records. */
const MAX_BATCH = 500;

interface Pending {
  row: {
    id: string;
    delivery_id: string;
    lease_id: string;
    attempt: number;
    started_at: string;
    duration_ms: number;
    status_code: number | null;
    response_body: string | null;
  };
  endpointId: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Outcomes taken for one statement (OutcomeRecorder.prepare). */
export interface OutcomeBatch {
  size: number;
  /** The delivery ids whose outcomes it records. */
  deliveryIds: string[];
  /**
   * The statement's common table expressions that record them: `outcome` (the rows: delivery_id,
   * lease_id, ...), then the attempts logged, the deliveries whose lease is still the attempt's
   * marked delivered, and last_success_at of the endpoints due a write. To be followed by a comma
   * and more CTEs (or a final SELECT).
   */
  ctes: Prisma.Sql;
  /** The statement committed: resolves each outcome's `success`. */
  done(): void;
  /** The statement failed: records each outcome alone (only the failing ones are rejected). */
  failed(): Promise<void>;
}

/** Who writes the batches while a dispatcher runs: its next round, with its claim (DeliveryWork). */
export interface OutcomeFlusher {
  /** Outcomes are waiting: run a round soon. */
  outcomesWaiting(): void;
}

/**
 * Records the successful attempts of one instance (pings' and the dispatcher's alike) in batches:
 * the outcomes that arrive while a statement is under way go together into the next one (one
 * round trip, one commit: the attempts logged, the deliveries delivered where the lease is still
 * theirs). Nothing waits for a timer: a lone outcome is written at once, and a burst makes bigger
 * batches. While this instance's dispatcher runs, its rounds write the batches in the statement
 * that claims the next due deliveries (claims.ts), so a batch and the claim of the slots it frees
 * are one round trip; otherwise (no dispatcher, or stopping) the recorder writes them itself.
 * `success` resolves once its outcome is committed.
 *
 * The endpoint's `last_success_at` is shared by all its deliveries, so it is not written with
 * every success: the first success of an endpoint not written by this instance in the last
 * LAST_SUCCESS_EVERY_MS goes into the batch's statement, and the later ones are kept in memory and
 * written together LAST_SUCCESS_EVERY_MS after the previous write (so the field is never more
 * than that late). Nothing serialises on the endpoint's row.
 */
export class OutcomeRecorder {
  private queue: Pending[] = [];
  private flushing = false;
  private scheduled = false;
  private flusher: OutcomeFlusher | undefined;
  /** When this instance last wrote each endpoint's last_success_at (ms). */
  private readonly written = new Map<string, number>();
  /** Successes not yet written: endpoint → the latest one's time. */
  private readonly deferred = new Map<string, Date>();
  private timer: NodeJS.Timeout | undefined;
  private deferredWrite: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: () => Date,
    private readonly logger: Logger,
  ) {}

  /** Records a successful attempt of `claimed`; resolves when it is committed. */
  success(claimed: Pick<ClaimedDelivery, 'id' | 'endpointId' | 'attempt' | 'leaseId'>, outcome: SuccessOutcome): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({
        row: {
          id: randomUUID(),
          delivery_id: claimed.id,
          lease_id: claimed.leaseId,
          attempt: claimed.attempt,
          started_at: outcome.startedAt.toISOString(),
          duration_ms: outcome.durationMs,
          status_code: outcome.statusCode,
          response_body: outcome.responseBody,
        },
        endpointId: claimed.endpointId,
        resolve,
        reject,
      });
      this.schedule();
    });
  }

  /** Outcomes waiting to be written. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Lets `flusher` write the batches (a running dispatcher), or takes the job back (undefined). */
  attach(flusher: OutcomeFlusher | undefined): void {
    this.flusher = flusher;
    if (this.queue.length) this.schedule();
  }

  /**
   * Takes the waiting outcomes (up to MAX_BATCH) for a statement of the caller's, at `now`; null
   * when none wait. The caller runs `ctes` in one statement and calls `done` or `failed`.
   */
  prepare(now: Date): OutcomeBatch | null {
    if (!this.queue.length) return null;
    return this.build(this.queue.splice(0, MAX_BATCH), now);
  }

  private build(batch: Pending[], now: Date): OutcomeBatch {
    const nowMs = now.getTime();
    // Endpoints whose last_success_at this statement writes (not written within the interval).
    const writeNow = new Set<string>();
    for (const { endpointId } of batch) {
      if (nowMs - (this.written.get(endpointId) ?? Number.NEGATIVE_INFINITY) >= LAST_SUCCESS_EVERY_MS) writeNow.add(endpointId);
    }
    const rows = JSON.stringify(batch.map((p) => p.row));
    const ctes = Prisma.sql`
      outcome AS (
        SELECT * FROM json_to_recordset(${rows}::json) AS o(id uuid, delivery_id uuid, lease_id uuid, attempt int,
          started_at timestamptz, duration_ms int, status_code int, response_body text)
      ), attempt AS (
        INSERT INTO webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, response_body)
        SELECT id, delivery_id, attempt, started_at, duration_ms, status_code, response_body FROM outcome
      ), delivered AS (
        UPDATE webhook_deliveries d SET status = 'delivered', delivered_at = ${now}, lease_id = NULL
        FROM outcome o
        WHERE d.id = o.delivery_id AND d.lease_id = o.lease_id
        RETURNING d.endpoint_id
      ), endpoint AS (
        UPDATE webhook_endpoints SET last_success_at = ${now}
        WHERE id IN (SELECT endpoint_id FROM delivered)
          AND id = ANY(${[...writeNow]}::text[]::uuid[])
          AND (last_success_at IS NULL OR last_success_at < ${now})
      )`;
    return {
      size: batch.length,
      deliveryIds: batch.map((p) => p.row.delivery_id),
      ctes,
      done: () => {
        for (const endpointId of writeNow) this.written.set(endpointId, nowMs);
        for (const { endpointId } of batch) {
          if (!writeNow.has(endpointId)) this.defer(endpointId, now);
        }
        for (const one of batch) one.resolve();
      },
      failed: async () => {
        if (batch.length === 1) {
          await this.writeAlone(batch);
          return;
        }
        // One outcome can fail the statement (its webhook was deleted meanwhile: a foreign key):
        // each is then written alone, so only that one fails.
        await Promise.all(batch.map((one) => this.writeAlone([one])));
      },
    };
  }

  /** Writes the successes kept in memory (on shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.deferredWrite;
    await this.writeDeferred(true);
  }

  private schedule(): void {
    if (this.flusher) {
      this.flusher.outcomesWaiting();
      return;
    }
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    // The outcomes given in the same turn go into one batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing || this.flusher || !this.queue.length) return;
    this.flushing = true;
    try {
      const batch = this.prepare(this.clock());
      if (batch) await this.run(batch);
    } finally {
      this.flushing = false;
      if (this.queue.length) this.schedule();
    }
  }

  private async run(batch: OutcomeBatch): Promise<void> {
    try {
      await this.prisma.$executeRaw`WITH ${batch.ctes} SELECT 1`;
    } catch {
      await batch.failed();
      return;
    }
    batch.done();
  }

  /** One outcome in a statement of its own: resolves or rejects it. */
  private async writeAlone(one: Pending[]): Promise<void> {
    const batch = this.build(one, this.clock());
    try {
      await this.prisma.$executeRaw`WITH ${batch.ctes} SELECT 1`;
    } catch (error) {
      for (const p of one) p.reject(error);
      return;
    }
    batch.done();
  }

  private defer(endpointId: string, at: Date): void {
    const previous = this.deferred.get(endpointId);
    if (!previous || previous < at) this.deferred.set(endpointId, at);
    this.arm();
  }

  /** Sets the timer for the earliest deferred write. */
  private arm(): void {
    if (this.timer || this.closed || !this.deferred.size) return;
    let earliest = Number.POSITIVE_INFINITY;
    for (const endpointId of this.deferred.keys()) {
      earliest = Math.min(earliest, (this.written.get(endpointId) ?? 0) + LAST_SUCCESS_EVERY_MS);
    }
    const wait = Math.max(0, earliest - this.clock().getTime());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.deferredWrite = this.writeDeferred(false).finally(() => {
        this.deferredWrite = undefined;
        this.arm();
      });
    }, wait).unref();
  }

  /** Writes the deferred successes that are due (all of them with `all`), in one statement. */
  private async writeDeferred(all: boolean): Promise<void> {
    const nowMs = this.clock().getTime();
    const due: { id: string; at: string }[] = [];
    for (const [endpointId, at] of this.deferred) {
      if (all || nowMs - (this.written.get(endpointId) ?? 0) >= LAST_SUCCESS_EVERY_MS) {
        due.push({ id: endpointId, at: at.toISOString() });
        this.deferred.delete(endpointId);
        this.written.set(endpointId, nowMs);
      }
    }
    if (!due.length) return;
    try {
      await this.prisma.$executeRaw`
        UPDATE webhook_endpoints e SET last_success_at = s.at
        FROM json_to_recordset(${JSON.stringify(due)}::json) AS s(id uuid, at timestamptz)
        WHERE e.id = s.id AND (e.last_success_at IS NULL OR e.last_success_at < s.at)`;
    } catch (error) {
      // A later success writes it again; the disable rule also reads the deliveries themselves.
      this.logger.warn({ err: error, endpoints: due.length }, 'webhook last_success_at not written');
    }
  }
}
