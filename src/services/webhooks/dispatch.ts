import type { AppDeps } from '../../context.js';
import { attemptDelivery } from './attempts.js';
import { claimDue, type ClaimedDelivery } from './claims.js';
import { fanOut, type BookingEventMessage } from './fanOut.js';
import type { OutcomeFlusher } from './outcomes.js';

/**
 * Webhook delivery, at least once (docs/spec/DECISIONS.md, Webhooks), in the files of this module:
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
 *    nothing but the log. Successes are recorded in batches (outcomes.ts, `OutcomeRecorder`): the
 *    attempts that finish while one batch is written go into the next statement, and the
 *    endpoint's `last_success_at` is written at most once a second; when a batch commits, its
 *    attempts free their slots together and the next round claims for all of them at once.
 * 4. `purgeDeliveries` deletes delivered and failed deliveries DELIVERY_RETENTION_MS after their
 *    last attempt.
 */

const FAN_OUT_BATCH = 500;

/**
 * The delivery work of one instance's outbox dispatcher (src/events/dispatcher.ts runs it when it
 * wakes): each round publishes new outbox events (webhook deliveries and live subscribers) and
 * starts due attempts, up to WEBHOOK_CONCURRENCY in flight. `wakeUp` asks the dispatcher for a
 * round: when an attempt finishes (it may have scheduled a retry or freed a slot for due work) and
 * when successes wait to be recorded.
 */
export class DeliveryWork implements OutcomeFlusher {
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The deliveries of the attempts in flight. */
  private readonly inFlightIds = new Set<string>();
  /** Whether the outbox may hold unpublished events; the first round always looks. */
  private outboxDirty = true;
  private lastFanOut = 0;
  /** Whether a claim may find something: slots freed, new deliveries, a wake-up from outside. */
  private claimDirty = true;
  private lastClaim = 0;
  /** Attempts whose slot a claim already counted free (their outcome was recorded by it). */
  private readonly credited = new Set<string>();
  private roundAsked = false;

  constructor(
    private readonly deps: AppDeps,
    private readonly bus: { publish(event: BookingEventMessage): void },
    private readonly wakeUp: () => void,
  ) {}

  /** The dispatcher's loop runs: its rounds write the recorder's batches with their claims. */
  start(): void {
    this.deps.webhookOutcomes.attach(this);
  }

  /**
   * Outcomes wait to be recorded: a round records them with the next claim. It starts after the
   * answers that have already come in are read (setImmediate runs after this turn's I/O), so the
   * outcomes of one burst of answers share its statement.
   */
  outcomesWaiting(): void {
    if (this.roundAsked) return;
    this.roundAsked = true;
    setImmediate(() => {
      this.roundAsked = false;
      this.wakeUp();
    });
  }

  /**
   * One round: publish new events, record the successes that wait and claim due deliveries for
   * the free slots (one statement), start their attempts. True when there may be more work at once.
   * The outbox is read only when it may hold something: after a notification (outboxChanged), when
   * the last fan-out filled its batch, and at least every EVENTS_POLL_INTERVAL_MS (a lost
   * notification); a claim is made when slots were freed, deliveries written or due, or at least
   * every EVENTS_POLL_INTERVAL_MS (retries fall due by time).
   */
  async round(): Promise<boolean> {
    const { deps } = this;
    const poll = deps.config.events.pollIntervalMs;
    let published: BookingEventMessage[] = [];
    const nowMs = Date.now();
    if (this.outboxDirty || nowMs - this.lastFanOut >= poll) {
      this.outboxDirty = false;
      this.lastFanOut = nowMs;
      published = await fanOut(deps, FAN_OUT_BATCH).catch((error: unknown) => {
        this.outboxDirty = true;
        throw error;
      });
      if (published.length === FAN_OUT_BATCH) this.outboxDirty = true;
      if (published.length) this.claimDirty = true;
    }
    for (const event of published) {
      try {
        this.bus.publish(event);
      } catch (error) {
        deps.logger.warn({ err: error, eventId: event.id }, 'live event not published');
      }
    }
    const recording = deps.webhookOutcomes.prepare(deps.clock());
    // The outcomes of this work's attempts (not a ping's): their slots are free once recorded.
    const mine = recording ? recording.deliveryIds.filter((id) => this.inFlightIds.has(id)) : [];
    // Slots: those not taken by attempts, and those of the attempts this statement records.
    const free = deps.config.webhooks.concurrency - (this.inFlight.size - this.credited.size) + mine.length;
    const claiming = free > 0 && (this.claimDirty || recording !== null || nowMs - this.lastClaim >= poll);
    let claimed = 0;
    if (claiming || recording) {
      const limit = claiming ? free : 0;
      this.claimDirty = false;
      this.lastClaim = nowMs;
      let due: ClaimedDelivery[];
      try {
        due = await claimDue(deps, limit, recording ?? undefined);
        if (recording) {
          for (const id of mine) this.credited.add(id);
          recording.done();
        }
      } catch (error) {
        this.claimDirty = true;
        if (!recording) throw error;
        // The outcomes alone (a webhook deleted meanwhile fails only its own), then the claim.
        await recording.failed();
        due = await claimDue(deps, limit);
      }
      claimed = due.length;
      // A full claim may leave more due deliveries behind.
      if (claiming && claimed === limit) this.claimDirty = true;
      for (const delivery of due) this.start1(delivery);
    }
    return published.length === FAN_OUT_BATCH || (claiming && claimed === free) || deps.webhookOutcomes.waiting > 0;
  }

  private start1(delivery: ClaimedDelivery): void {
    const { deps } = this;
    const attempt = attemptDelivery(deps, delivery)
      .catch((error: unknown) => deps.logger.error({ err: error, deliveryId: delivery.id }, 'webhook attempt not recorded'))
      .finally(() => {
        this.inFlight.delete(attempt);
        this.inFlightIds.delete(delivery.id);
        // A slot a claim did not count yet: the next round claims for it.
        if (!this.credited.delete(delivery.id)) this.claimDirty = true;
        this.wakeUp();
      });
    this.inFlight.add(attempt);
    this.inFlightIds.add(delivery.id);
  }

  /** New outbox events were committed (a notification): the next round reads the outbox. */
  outboxChanged(): void {
    this.outboxDirty = true;
  }

  /** Asked from outside (a replay, an enabled webhook, a notification): the next round looks everywhere. */
  lookAgain(): void {
    this.outboxDirty = true;
    this.claimDirty = true;
  }

  /** Runs rounds until nothing is published or due and no attempt is in flight (tests, benchmarks). */
  async drain(): Promise<void> {
    this.lookAgain();
    for (;;) {
      const more = await this.round();
      if (more) continue;
      if (this.inFlight.size === 0) return;
      // Attempts that finish may schedule retries or free slots for due work: look again after one.
      await Promise.race([...this.inFlight]);
    }
  }

  /** Waits for the attempts in flight (each bounded by WEBHOOK_TIMEOUT_MS); their outcomes are recorded without rounds. */
  async settle(): Promise<void> {
    this.deps.webhookOutcomes.attach(undefined);
    await Promise.allSettled([...this.inFlight]);
  }
}
