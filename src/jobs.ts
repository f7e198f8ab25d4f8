import type { AppDeps } from './context.js';
import type { Dispatcher } from './events/dispatcher.js';
import { purgeExpired, recoverInFlight } from './services/bookings/index.js';
import { runBookingSync } from './services/reservations/index.js';
import { isDatabaseUnavailable } from './services/kernel/index.js';
import { purgeDeliveries } from './services/webhooks/index.js';

export interface Jobs {
  /** Stops the timers and waits for a pass under way, then stops the dispatcher. */
  stop(): Promise<void>;
}

/** Starts this instance's periodic work: the outbox dispatcher, the recovery of bookings left in flight, and the booking sync with the purges. */
export async function startJobs(deps: AppDeps, dispatcher: Dispatcher): Promise<Jobs> {
  const { config, logger } = deps;
  if (config.events.pollIntervalMs > 0) await dispatcher.start();

  // Bookings follow the provider (confirmations, stays, no-shows), overdue pending ones are
  // cancelled, expired Idempotency-Keys dropped, and webhook deliveries past their retention
  // purged. One pass at a time per instance; passes of several instances may overlap safely
  // (every change is a conditional update).
  let syncing: Promise<unknown> | undefined;
  const syncTimer =
    config.bookings.syncIntervalMs > 0
      ? setInterval(() => {
          syncing ??= Promise.all([runBookingSync(deps), purgeExpired(deps), purgeDeliveries(deps, deps.clock())])
            .catch((error: unknown) => logger.error({ err: error }, 'booking sync failed'))
            .finally(() => (syncing = undefined));
        }, config.bookings.syncIntervalMs).unref()
      : undefined;

  // Bookings, cancellations and Idempotency-Keys left in flight by requests that died (this
  // instance's own, with the database away under them) or by instances that are gone (a previous
  // run of this one included) are settled from the provider's answer at once, then looked for
  // every BOOKING_RECOVERY_INTERVAL_MS; one pass at a time.
  let recovering: Promise<unknown> | undefined;
  const recover = () => {
    recovering ??= recoverInFlight(deps)
      // The database being away is why there is something to recover: tried again next pass.
      .catch((error: unknown) => logger[isDatabaseUnavailable(error) ? 'warn' : 'error']({ err: error }, 'recovery of bookings left in flight failed'))
      .finally(() => (recovering = undefined));
  };
  const recoveryTimer = config.bookings.recoveryIntervalMs > 0 ? setInterval(recover, config.bookings.recoveryIntervalMs).unref() : undefined;
  if (recoveryTimer) recover();

  return {
    async stop() {
      clearInterval(syncTimer);
      clearInterval(recoveryTimer);
      await recovering;
      await syncing;
      await dispatcher.stop();
    },
  };
}
