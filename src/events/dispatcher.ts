import type { AppDeps } from '../context.js';

/**
 * The outbox dispatcher of one instance: the wake-up loop. It wakes when a transaction that wrote
 * outbox events commits (LISTEN/NOTIFY), when a delivery is replayed or a webhook re-enabled here,
 * when one of its own attempts finishes, and otherwise every EVENTS_POLL_INTERVAL_MS (retries fall
 * due by time, and a lost notification must not strand an event). Each wake-up runs a round of the
 * delivery work (services/webhooks/dispatch.ts: publish new outbox events, start due attempts, up to
 * WEBHOOK_CONCURRENCY in flight). Any number of instances may run one; the row locks in
 * services/webhooks/claims.ts keep them apart.
 */

const ERROR_PAUSE_MS = 1_000;

/** What the dispatcher runs when it wakes (services/webhooks' DeliveryWork). */
export interface DispatchWork {
  /** One round; true when there may be more work at once. */
  round(): Promise<boolean>;
  /** Rounds until nothing is left to do and nothing is in flight. */
  drain(): Promise<void>;
  /** Waits for the work in flight. */
  settle(): Promise<void>;
  /** New outbox events were committed (a notification): the next round must read the outbox. */
  outboxChanged(): void;
  /** Something changed elsewhere (a replay, an enabled webhook): the next round looks at everything. */
  lookAgain(): void;
  /** The loop runs (rounds will come when woken). */
  start(): void;
}

export class Dispatcher {
  private running = false;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private readonly work: DispatchWork;

  /** `work` builds the delivery work, given how to wake this dispatcher when an attempt finishes. */
  constructor(
    private readonly deps: AppDeps,
    work: (wake: () => void) => DispatchWork,
  ) {
    this.work = work(() => this.resume());
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const schema = this.deps.config.databaseUrl ? this.deps.config.databaseSchema : null;
    // Never fails: without notifications (for now) polling still delivers.
    this.unlisten = await this.deps.db.listen('outbox_events', (payload) => {
      if (schema === null || payload === schema) {
        this.work.outboxChanged();
        this.resume();
      }
    });
    this.work.start();
    this.loop = this.run();
  }

  /** Look for work now: a replay, a re-enabled webhook. */
  wake(): void {
    this.work.lookAgain();
    this.resume();
  }

  /** Runs a round soon (the work's own events: an attempt finished, outcomes wait). */
  private resume(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops starting attempts, and waits for those in flight (each bounded by WEBHOOK_TIMEOUT_MS). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.resume();
    await this.loop;
    await this.work.settle();
    await this.unlisten?.();
  }

  /** One round: publish new events, start due attempts. True when there may be more work at once. */
  round(): Promise<boolean> {
    return this.work.round();
  }

  /** Runs rounds until nothing is published or due and no attempt is in flight (tests, benchmarks). */
  drain(): Promise<void> {
    return this.work.drain();
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
