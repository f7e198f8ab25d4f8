import type { AppDeps } from '../../context.js';
import type { Booking } from '../../generated/prisma/client.js';
import type { UpstreamBooking } from '../../upstream/protocol.js';
import { OPERATOR_REPORTABLE, pathTo, type BookingStatus, type Trigger } from './states.js';
import { applyReported, cancelsUnknownToProvider, completeCancel, failPending, revertCancel } from './cancel.js';
import { cancelAtProvider, settleCreation, voidAttempt } from './create.js';
import { isUuid, requestLeaseMs } from './rules.js';
import { keyOwners, releaseAbandonedKeys } from './idempotency.js';
import { ConflictError, NotFoundError, UpstreamError } from '../kernel/index.js';

/**
 * Keeps bookings and the provider in agreement, and applies what the property reports:
 *   - pending bookings past their payment deadline are cancelled at the provider, then here, with
 *     everything refunded (one the provider does not know is not cancelled in production:
 *     cancelsUnknownToProvider);
 *   - a creation or cancellation cut short by a crash (`processing`, `cancelling` older than the
 *     provider's booking deadline) is settled from the provider's view;
 *   - void attempts the provider may still hold are cancelled there; date changes likewise
 *     (reservations/dateChanges.ts, sweepModifications, run in the same pass by
 *     runBookingSync in reservations/sync.ts, which sits above both modules);
 *   - live bookings take the statuses the provider reports (confirmed, failed, checked in, checked
 *     out, no-show, cancelled), each through the state machine with its events.
 * Every step is a conditional update, so several instances may run it at once. The service runs
 * it every BOOKING_SYNC_INTERVAL_MS; tests and operators call runBookingSync.
 */

export interface SyncReport {
  expired: number;
  settled: number;
  cleaned: number;
  moved: number;
  failures: number;
}

const BATCH = 200;
const PARALLEL = 8;

export function newSyncReport(): SyncReport {
  return { expired: 0, settled: 0, cleaned: 0, moved: 0, failures: 0 };
}

/**
 * The first steps of a sync pass: pending bookings past their payment deadline, and creations and
 * cancellations cut short. The pass itself (runBookingSync, services/reservations/sync.ts) runs
 * these, then the date changes' sweep, then settleLeftoversAndLive, with one `now`.
 */
export async function settleOverdueAndStuck(deps: AppDeps, report: SyncReport, now: Date): Promise<void> {
  const { prisma } = deps.db;
  // Rows whose request cannot still be running: older than the longest a request can take.
  const stale = new Date(now.getTime() - requestLeaseMs(deps));

  // Least recently looked at first, so overdue bookings the provider does not know (kept pending
  // in production for an operator) cannot hold back the others.
  const overdue = await prisma.booking.findMany({
    where: { status: 'pending', paymentDeadline: { lte: now } },
    orderBy: [{ syncedAt: { sort: 'asc', nulls: 'first' } }, { paymentDeadline: 'asc' }, { id: 'asc' }],
    take: BATCH,
  });
  await each(deps, overdue, report, async (booking) => {
    // A provider that confirmed it in time wins: ask first, and apply its answer.
    const provider = await deps.upstream.getBooking(booking.id);
    if (provider && provider.status !== 'pending') {
      if (pathTo(booking.status, provider.status) !== null) report.moved += await applyProviderStatus(deps, booking, provider.status, provider);
      return;
    }
    // Still pending there: cancel at the provider first, so it does not stay booked there while
    // it is cancelled here. If it cannot be told now, the next run tries again.
    const told = await cancelAtProvider(deps, booking.id);
    if (told === 'refused' || told === 'failed') {
      await syncOne(deps, booking);
      return;
    }
    // Unknown there: production refunds nothing without the provider's word. It stays pending
    // (past its deadline) until the provider knows it or an operator reports it (booking:status
    // --to failed refunds it whole, --to confirmed keeps it).
    if (told === 'unknown' && !cancelsUnknownToProvider(deps, booking, 'its payment deadline passed')) {
      await prisma.booking.updateMany({ where: { id: booking.id, status: 'pending' }, data: { syncedAt: deps.clock() } });
      return;
    }
    await completeCancel(deps, booking, now, { waived: true, trigger: 'payment_deadline' });
    report.expired++;
  });

  const stuck = await prisma.booking.findMany({
    where: { OR: [{ status: 'processing', createdAt: { lt: stale } }, { status: 'cancelling', updatedAt: { lt: stale } }] },
    take: BATCH,
  });
  await each(deps, stuck, report, async (booking) => {
    await settleInFlight(deps, booking, now);
    report.settled++;
  });
}

/**
 * Settles a creation (`processing`) or cancellation (`cancelling`) whose request gave no answer,
 * from the provider's view of the reference: the one rule for the sweeper's stale rows and for
 * what recoverInFlight takes over (rows of an instance that is gone, or of a request of this one
 * that died). A booking the provider holds confirmed or pending is settled so, never voided. Every
 * move is conditional, so a request or another instance settling the same row first wins and this
 * changes nothing.
 */
async function settleInFlight(deps: AppDeps, booking: Booking, now: Date): Promise<void> {
  const provider = await deps.upstream.getBooking(booking.id);
  if (booking.status === 'processing') {
    // No answer was given for it (the process stopped): the provider's view decides.
    if (provider) await settleCreation(deps, booking, provider);
    // Keep watching the reference: a booking request may still reach the provider late.
    else await voidAttempt(deps, booking, true);
  } else if (provider?.status === 'cancelled' || (provider === null && cancelsUnknownToProvider(deps, booking, 'a cancellation was cut short'))) {
    await completeCancel(deps, booking, booking.cancelRequestedAt ?? now);
  } else {
    // The provider holds it live, or (production) does not know it: back as it was.
    await revertCancel(deps, booking);
  }
}

/**
 * Takes over what requests that died left in flight: bookings (`processing`), cancellations
 * (`cancelling`) and Idempotency-Keys held without an answer. Whose they are is the row's owner
 * (leaseOwner):
 *   - this instance's own that none of its requests holds any more (InFlight: the request died
 *     with the database unreachable under it) are settled at once;
 *   - another instance's once that instance is gone: its liveness lock free on every look over
 *     LIVENESS_GRACE_MS (db/client.ts; a previous run of this instance is such an owner too), so a
 *     connection blip of a living owner is never taken for its death.
 * Rows of a living owner stay with it (and, should its request have died, its own recovery or the
 * sweeper's request lease settles them); rows without an owner (written before owners were
 * recorded) are the sweeper's. A row is settled from the provider's answer (settleInFlight): one
 * the provider holds becomes what it holds, never void. Keys are released (a retry runs again);
 * answers a request could not store are stored first (InFlight.later). The service runs it at
 * start and every BOOKING_RECOVERY_INTERVAL_MS (jobs.ts). Returns the report (settled: rows taken over).
 */
export async function recoverInFlight(deps: AppDeps, report: SyncReport = newSyncReport()): Promise<SyncReport> {
  const { prisma } = deps.db;
  const inFlight = { status: { in: ['processing', 'cancelling'] as BookingStatus[] }, leaseOwner: { not: null } };
  const now = deps.clock();
  await deps.inFlight.retryPending();
  const own = await prisma.booking.findMany({ where: { ...inFlight, leaseOwner: deps.instanceId }, orderBy: { createdAt: 'asc' }, take: BATCH });
  const abandoned = own.filter((b) => !deps.inFlight.has(b.id));
  await each(deps, abandoned, report, async (booking) => {
    await settleInFlight(deps, booking, now);
    report.settled++;
  });
  const owners = await prisma.booking.findMany({
    where: { ...inFlight, NOT: { leaseOwner: deps.instanceId } },
    distinct: ['leaseOwner'],
    select: { leaseOwner: true },
  });
  const candidates = [...new Set([...owners.map((o) => o.leaseOwner!), ...(await keyOwners(deps))])];
  const gone = candidates.length ? await deps.db.goneInstances(candidates) : [];
  for (;;) {
    if (!gone.length) break;
    const rows = await prisma.booking.findMany({ where: { ...inFlight, leaseOwner: { in: gone } }, orderBy: { createdAt: 'asc' }, take: BATCH });
    if (!rows.length) break;
    const before = report.failures;
    await each(deps, rows, report, async (booking) => {
      await settleInFlight(deps, booking, now);
      report.settled++;
    });
    // A row that could not be settled now (the provider did not answer) waits for the next run.
    if (report.failures > before || rows.length < BATCH) break;
  }
  const released = await releaseAbandonedKeys(deps, gone);
  if (report.settled || released) {
    deps.logger.info({ gone, abandoned: abandoned.length, settled: report.settled, keysReleased: released }, 'took over what requests that died left in flight');
  }
  return report;
}

/** The last steps of a sync pass: void attempts the provider may still hold, then live bookings. */
export async function settleLeftoversAndLive(deps: AppDeps, report: SyncReport, now: Date): Promise<void> {
  const { prisma } = deps.db;
  // Void attempts whose booking request may have reached the provider. Done when the provider
  // holds the booking cancelled; when it holds nothing, only once a late request can no longer
  // arrive (the booking deadline, twice, after the attempt was voided).
  const settledBefore = new Date(now.getTime() - 2 * deps.config.upstream.bookingTimeoutMs - 30_000);
  const leftovers = await prisma.booking.findMany({ where: { status: 'void', upstreamCleanup: true }, take: BATCH });
  await each(deps, leftovers, report, async (booking) => {
    const told = await cancelAtProvider(deps, booking.id);
    if (told === 'failed') return;
    if (told === 'unknown' && booking.updatedAt > settledBefore) return;
    if (told === 'refused') {
      // A live provider booking nobody paid for: an operator must look. Kept marked, so it shows.
      deps.logger.error({ booking: booking.id }, 'the provider refuses to cancel a booking of a void attempt');
      return;
    }
    await prisma.booking.updateMany({ where: { id: booking.id, upstreamCleanup: true }, data: { upstreamCleanup: false } });
    report.cleaned++;
  });

  const live = await prisma.booking.findMany({
    where: { status: { in: ['pending', 'confirmed', 'checked_in'] } },
    orderBy: [{ syncedAt: { sort: 'asc', nulls: 'first' } }, { id: 'asc' }],
    take: BATCH,
  });
  await each(deps, live, report, async (booking) => {
    report.moved += await syncOne(deps, booking);
  });
}

/** Applies the provider's status of one booking; the number of transitions made. */
export async function syncOne(deps: AppDeps, booking: Booking): Promise<number> {
  const provider = await deps.upstream.getBooking(booking.id);
  if (!provider) {
    // The sandbox's simulator forgets its bookings on restart; in production an operator must
    // look. Marked as looked at, so the next passes take the bookings not looked at longest first.
    deps.logger[deps.config.env === 'production' ? 'error' : 'warn']({ booking: booking.id, status: booking.status }, 'the provider does not know a live booking');
    await deps.db.prisma.booking.updateMany({ where: { id: booking.id }, data: { syncedAt: deps.clock() } });
    return 0;
  }
  // The provider may lag behind what the operator recorded (checked in here, still confirmed
  // there): not news. A status neither ahead nor behind (failed there, confirmed here) is a
  // disagreement the table cannot resolve: reported for an operator.
  let moved = 0;
  if (pathTo(booking.status, provider.status) !== null) {
    moved = await applyProviderStatus(deps, booking, provider.status, provider);
  } else if (pathTo(provider.status, booking.status) === null) {
    deps.logger.warn({ booking: booking.id, here: booking.status, provider: provider.status }, 'the provider disagrees about a booking status');
  }
  await deps.db.prisma.booking.updateMany({ where: { id: booking.id }, data: { syncedAt: deps.clock() } });
  return moved;
}

/**
 * Takes `booking` to `status` along the state machine's table, one transition (and its events)
 * at a time. Returns the number of transitions; a status the table cannot reach is refused.
 */
export async function applyProviderStatus(
  deps: AppDeps,
  booking: Booking,
  status: BookingStatus,
  provider?: UpstreamBooking,
): Promise<number> {
  const path = pathTo(booking.status, status);
  if (path === null) throw new ConflictError('INVALID_TRANSITION', `A booking that is ${booking.status} cannot become ${status}`, { from: booking.status, to: status });
  let current: Booking | null = booking;
  let moved = 0;
  for (const trigger of path) {
    current = await step(deps, current, trigger, provider);
    if (!current) throw new ConflictError('BOOKING_CHANGED', 'The booking changed meanwhile; read it and retry');
    moved++;
  }
  return moved;
}

async function step(deps: AppDeps, booking: Booking, trigger: Trigger, provider?: UpstreamBooking): Promise<Booking | null> {
  if (trigger === 'cancelled') {
    const at = booking.cancelRequestedAt ?? (provider?.cancelled_at ? new Date(provider.cancelled_at) : deps.clock());
    const done = await completeCancel(deps, booking, at);
    return done.status === 'cancelled' ? done : null;
  }
  if (trigger === 'provider_failed') return failPending(deps, booking);
  return applyReported(deps, booking, trigger);
}

/** The operator's `booking:status`: a status the property reports, with its events. */
export async function reportStatus(deps: AppDeps, id: string, status: BookingStatus): Promise<Booking> {
  const booking = isUuid(id) ? await deps.db.prisma.booking.findUnique({ where: { id } }) : null;
  if (!booking || booking.status === 'processing' || booking.status === 'void') throw new NotFoundError(`Booking ${id} was not found`);
  if (!(OPERATOR_REPORTABLE as readonly string[]).includes(status)) {
    throw new ConflictError('INVALID_TRANSITION', `A property cannot report ${status}`, { from: booking.status, to: status });
  }
  await applyProviderStatus(deps, booking, status);
  return deps.db.prisma.booking.findUniqueOrThrow({ where: { id } });
}

/** Runs fn over the rows a few at a time; one booking failing is logged and counted, not fatal. */
async function each(deps: AppDeps, rows: Booking[], report: SyncReport, fn: (booking: Booking) => Promise<void>): Promise<void> {
  for (let i = 0; i < rows.length; i += PARALLEL) {
    await Promise.all(
      rows.slice(i, i + PARALLEL).map((booking) =>
        fn(booking).catch((error: unknown) => {
          report.failures++;
          const expected = error instanceof UpstreamError || error instanceof ConflictError;
          deps.logger[expected ? 'warn' : 'error']({ err: error, booking: booking.id }, 'booking sync step failed');
        }),
      ),
    );
  }
}
