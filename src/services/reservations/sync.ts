import type { AppDeps } from '../../context.js';
import { newSyncReport, settleLeftoversAndLive, settleOverdueAndStuck, type SyncReport } from '../bookings/index.js';
import { sweepModifications } from './dateChanges.js';

/**
 * One sync pass (bookings/sync.ts says what it keeps in agreement): the bookings' first steps, the
 * date changes a stopped process left in flight (and void ones the provider may still hold), then
 * the bookings' last steps, all with one `now`. It lives here because date changes are part of
 * reservations, which build on bookings; bookings know nothing of them. The service runs it every
 * BOOKING_SYNC_INTERVAL_MS (src/jobs.ts); tests and operators call it directly.
 */
export async function runBookingSync(deps: AppDeps): Promise<SyncReport> {
  const report = newSyncReport();
  const now = deps.clock();
  await settleOverdueAndStuck(deps, report, now);

  const changes = await sweepModifications(deps);
  report.settled += changes.settled;
  report.cleaned += changes.cleaned;
  report.failures += changes.failures;

  await settleLeftoversAndLive(deps, report, now);
  return report;
}
