import type { AppDeps } from '../context.js';
import { attemptDelivery, claimDue, fanOut } from '../services/webhooks/index.js';
import type { EventBus } from './bus.js';

/**
 * The outbox dispatcher of one instance. It wakes when a transaction that wrote outbox events
 * commits (LISTEN/NOTIFY), when a delivery is replayed or a webhook re-enabled here, when one of
 * its own attempts finishes, and otherwise every EVENTS_POLL_INTERVAL_MS (retries fall due by
 * time, and a lost notification must not strand an event). Each round publishes new outbox events
 * (webhook deliveries and live subscribers) and starts due attempts, up to WEBHOOK_CONCURRENCY in
 * flight. Any number of instances may run one; the row locks in webhookDelivery.ts keep them apart.
 */

const FAN_OUT_BATCH = 500;
const ERROR_PAUSE_MS = 1_000;

export class Dispatcher {
  private running = false;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly deps: AppDeps,
    private readonly bus: EventBus,
  ) {}

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const schema = this.deps.config.databaseUrl ? this.deps.config.databaseSchema : null;
    // Never fails: without notifications (for now) polling still delivers.
    this.unlisten = await this.deps.db.listen('outbox_events', (payload) => {
      if (schema === null || payload === schema) this.wake();
    });
    this.loop = this.run();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops starting attempts, and waits for those in flight (each bounded by WEBHOOK_TIMEOUT_MS). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wake();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    await this.unlisten?.();
  }

  /** One round: publish new events, start due attempts. True when there may be more work at once. */
  async round(): Promise<boolean> {
    const { deps } = this;
    const published = await fanOut(deps, FAN_OUT_BATCH);
    for (const event of published) {
      try {
        this.bus.publish(event);
      } catch (error) {
        deps.logger.warn({ err: error, eventId: event.id }, 'live event not published');
      }
    }
    const free = deps.config.webhooks.concurrency - this.inFlight.size;
    let claimed = 0;
    if (free > 0) {
      const due = await claimDue(deps, free);
      claimed = due.length;
      for (const delivery of due) {
        const attempt = attemptDelivery(deps, delivery)
          .catch((error: unknown) => deps.logger.error({ err: error, deliveryId: delivery.id }, 'webhook attempt not recorded'))
          .finally(() => {
            this.inFlight.delete(attempt);
            this.wake();
          });
        this.inFlight.add(attempt);
      }
    }
    return published.length === FAN_OUT_BATCH || (free > 0 && claimed === free);
  }

  /** Runs rounds until nothing is published or due and no attempt is in flight (tests, benchmarks). */
  async drain(): Promise<void> {
    for (;;) {
      const more = await this.round();
      if (more) continue;
      if (this.inFlight.size === 0) return;
      // Attempts that finish may schedule retries or free slots for due work: look again after one.
      await Promise.race([...this.inFlight]);
    }
  }

  private async run(): Promise<void> {
    const interval = this.deps.config.events.pollIntervalMs;
    while (this.running) {
      this.woken = false;
      let more = false;
      let pause = interval;
      try {
        more = await this.round();
      } catch (error) {
        if (!this.running) break;
        this.deps.logger.error({ err: error }, 'outbox dispatch round failed');
        pause = Math.max(interval, ERROR_PAUSE_MS);
      }
      if (more || this.woken || !this.running) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }
}
