import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoverInFlight, requestLeaseMs } from '../../src/services/bookings/index.js';
import { runBookingSync } from '../../src/services/reservations/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { bookAtProvider, channelState, checkInvariants, insertProcessingBooking } from '../helpers/bookingInvariants.js';
import { isBook, startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { day, v1 } from '../helpers/flow.js';
import { apiKey, cleanupEnv, startTestServiceOn, testEnv, type TestService } from '../helpers/service.js';

/**
 * Recovery in seconds (issue 18, item 8). A booking or cancellation whose request died with its
 * instance is settled from the provider's answer as soon as the instance is known to be gone (its
 * liveness lock free over LIVENESS_GRACE_MS on PostgreSQL; at once on PGlite, one process's own),
 * not after the sweeper's request lease (about 150 s): by the instance started again on the same
 * database at its start, and by another running instance within BOOKING_RECOVERY_INTERVAL_MS. Meanwhile the partner reads the booking as `pending`, and one that
 * booked nothing then reads `failed`: every BOOK_TOKEN_USED names a booking it can read. The sync
 * runs once an hour here, so only the recovery can settle anything within the test.
 */

const START = 50_000_000n;
const HOUR = '3600000';
const booker = { booker_name: 'Recovery Booker', guest_first_name: 'Kim', guest_last_name: 'Minji' };

let simulator: RunningSimulator;
beforeAll(async () => {
  simulator = await startSimulator({ port: 0, onError: () => {} });
});
afterAll(async () => {
  await simulator?.close();
});

/** Reads the booking through the partner's API until its status is no longer `from`, for up to `ms`. */
async function settledRead(api: ReturnType<typeof v1>, id: string, ms: number, from = 'pending'): Promise<{ status: string; elapsedMs: number }> {
  const started = performance.now();
  for (;;) {
    const res = await api.get(id);
    expect(res.status).toBe(200);
    const { status } = (await res.json()).data;
    const elapsedMs = performance.now() - started;
    if (status !== from || elapsedMs > ms) return { status, elapsedMs };
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('an instance started again on the same database', () => {
  // UPSTREAM_URL: this file's simulator, set once it runs, so the provider outlives the instances.
  const env = testEnv({ CHANNEL_ENV: 'production', BOOKING_SYNC_INTERVAL_MS: HOUR });
  let first: TestService | undefined;
  let second: TestService | undefined;
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await cleanupEnv(env);
  });

  it('settles what its previous run left in flight at its start, and the partner reads pending until then', async () => {
    env.UPSTREAM_URL = simulator.url;
    first = await startTestServiceOn(env);
    const who = await first.channel({ balance: START });
    const api = v1(first, who);
    const offerA = await api.offer({ checkin: day(30), checkout: day(31) });
    const offerB = await api.offer({ checkin: day(32), checkout: day(33) });
    const offerC = await api.offer({ checkin: day(34), checkout: day(35), policy: 'flexible' });
    const offerD = await api.offer({ checkin: day(36), checkout: day(37) });
    const owner = first.service.deps.instanceId;
    const now = first.service.deps.clock();

    // What a process killed mid-request leaves: A booked at the provider (its answer lost), B not
    // known there, C's cancellation done at the provider but not here.
    const rowA = await insertProcessingBooking(first, who, offerA.bookToken, { createdAt: now, charged: true, leaseOwner: owner });
    expect((await bookAtProvider(simulator.url, rowA)).status).toBe(201);
    const rowB = await insertProcessingBooking(first, who, offerB.bookToken, { createdAt: now, charged: true, leaseOwner: owner });
    // D has no owner, as a row written before owners were recorded: it keeps the request lease.
    const rowD = await insertProcessingBooking(first, who, offerD.bookToken, { createdAt: now, charged: true });
    const booked = await api.book({ book_token: offerC.bookToken, ...booker });
    expect(booked.status).toBe(201);
    const rowC = (await booked.json()).data;
    await first.service.deps.db.prisma.booking.update({
      where: { id: rowC.id },
      data: { status: 'cancelling', previousStatus: 'confirmed', cancelRequestedAt: now, updatedAt: now, leaseOwner: owner },
    });
    expect((await fetch(`${simulator.url}/bookings/${rowC.id}/cancel`, { method: 'POST' })).status).toBe(200);

    // The partner retries: the token is used and names a booking it can read, as pending.
    const retry = await api.book({ book_token: offerA.bookToken, ...booker });
    expect(retry.status).toBe(422);
    const named = (await retry.json()).error;
    expect(named).toMatchObject({ code: 'BOOK_TOKEN_USED', details: { booking_id: rowA.id } });
    for (const id of [rowA.id, rowB.id]) {
      const read = await api.get(id);
      expect(read.status).toBe(200);
      expect((await read.json()).data).toMatchObject({ id, status: 'pending' });
    }
    const listed = await api.call('GET', '/bookings?status=pending');
    expect((await listed.json()).data.map((b: { id: string }) => b.id).sort()).toEqual([rowA.id, rowB.id, rowD.id].sort());
    // Nothing can be done to it yet: no cancellation quote (cancelling it is 404 until settled).
    const gql = await first.graphql(`query($id: ID!) { booking(id: $id) { bookingId status cancellationQuote { refundAmount } } }`, { id: rowA.id }, apiKey(who));
    expect(gql.data).toEqual({ booking: { bookingId: rowA.id, status: 'PENDING', cancellationQuote: null } });
    expect((await api.cancel(rowA.id)).status).toBe(404);
    const reservation = await api.call('GET', `/reservations/${rowA.id}`);
    expect(reservation.status).toBe(200);
    expect((await reservation.json()).data.status).toBe('pending');

    // Its owner is alive and its requests still run (they hold the rows): nobody takes them over.
    const running = first.service.deps.inFlight.hold([rowA.id, rowB.id, rowC.id]);
    expect((await recoverInFlight(first.service.deps)).settled).toBe(0);
    expect((await api.get(rowA.id)).status).toBe(200);
    expect((await channelState(first, who.user_id)).bookings.map((b) => b.status).sort()).toEqual(['cancelling', 'processing', 'processing', 'processing']);

    // The instance goes away (its liveness lock with it) and starts again; the start's recovery
    // pass settles everything, once the grace has passed (the next pass would be an hour later).
    running();
    await first.close();
    first = undefined;
    let offsetMs = 0;
    second = await startTestServiceOn({ ...env, BOOKING_RECOVERY_INTERVAL_MS: HOUR }, { clock: () => new Date(Date.now() + offsetMs) });
    const again = v1(second, who);
    const a = await settledRead(again, rowA.id, 20_000);
    expect(a.status).toBe('confirmed');
    expect((await settledRead(again, rowB.id, 20_000)).status).toBe('failed');
    expect((await settledRead(again, rowC.id, 20_000, 'cancelling')).status).toBe('cancelled');

    // The row without an owner is still the sweeper's, once the request lease has passed.
    expect((await channelState(second, who.user_id)).bookings.find((b) => b.id === rowD.id)?.status).toBe('processing');
    offsetMs = requestLeaseMs(second.service.deps) + 1_000;
    await runBookingSync(second.service.deps);
    offsetMs = 0;
    expect((await (await again.get(rowD.id)).json()).data.status).toBe('failed');

    const state = await checkInvariants(second, who.user_id);
    expect(state.bookings.find((b) => b.id === rowA.id)).toMatchObject({ status: 'confirmed', leaseOwner: null });
    expect(state.bookings.find((b) => b.id === rowB.id)).toMatchObject({ status: 'void' });
    expect(state.events.filter((e) => e.bookingId === rowA.id).map((e) => e.type)).toEqual(['reservation.created', 'reservation.confirmed']);
    expect(state.events.filter((e) => e.bookingId === rowC.id).map((e) => e.type)).toEqual([
      'reservation.created',
      'reservation.confirmed',
      'reservation.cancelled',
    ]);
    // A booking that failed is read, not listed; its token books again.
    const list = (await (await again.call('GET', '/bookings')).json()).data.map((b: { id: string }) => b.id);
    expect(list).toContain(rowA.id);
    expect(list).not.toContain(rowB.id);
    expect((await again.book({ book_token: offerB.bookToken, ...booker })).status).toBe(201);
    expect(list).not.toContain(rowD.id);
    await checkInvariants(second, who.user_id);
  }, 180_000);
});

/**
 * Two instances on one PostgreSQL database: the first runs as a child process (`node --import
 * tsx src/main.ts`) and is killed with SIGKILL while the provider holds its booking request; the
 * second, in this process, takes the booking over within its recovery interval.
 */
describe.runIf(process.env.DATABASE_URL)('another instance, when one is killed', () => {
  const env = testEnv({ CHANNEL_ENV: 'production', BOOKING_SYNC_INTERVAL_MS: HOUR, BOOKING_RECOVERY_INTERVAL_MS: '1000' });
  let proxy: FaultProxy;
  let survivor: TestService;
  let child: ChildProcessWithoutNullStreams | undefined;
  beforeAll(async () => {
    proxy = await startFaultProxy(simulator.url);
    env.UPSTREAM_URL = proxy.url;
    survivor = await startTestServiceOn(env);
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await survivor?.close();
    await proxy?.close();
    await cleanupEnv(env);
  });

  /** The service as a child process on the same database; resolves with its address once it listens. */
  async function startChild(): Promise<string> {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, ...env, LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0' },
    });
    child = proc;
    const output: string[] = [];
    proc.stderr.on('data', (d) => output.push(String(d)));
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`child did not start in 90 s:\n${output.join('\n')}`)), 90_000);
      proc.once('exit', (code) => reject(new Error(`child exited (${code}):\n${output.join('\n')}`)));
      createInterface({ input: proc.stdout }).on('line', (line) => {
        output.push(line);
        if (!line.includes('"listening"')) return;
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`);
      });
    });
  }

  it('settles the killed instance’s booking promptly; the retried token names a booking read pending, then failed', async () => {
    const who: IssuedCredentials = await survivor.channel({ balance: START });
    const api = v1(survivor, who);
    const offer = await api.offer({ checkin: day(50), checkout: day(51) });
    const baseUrl = await startChild();

    // The provider never answers the child's booking request (nor passes it on).
    proxy.rule = (r) => (isBook(r) ? 'hang' : 'forward');
    const remote = v1({ request: (path: string, init: RequestInit = {}) => fetch(`${baseUrl}${path}`, init) } as unknown as TestService, who);
    void remote.book({ book_token: offer.bookToken, ...booker }).catch(() => {});
    let row;
    for (let i = 0; i < 100 && !row; i++) {
      row = (await channelState(survivor, who.user_id)).bookings.find((b) => b.status === 'processing');
      if (!row) await new Promise((r) => setTimeout(r, 100));
    }
    expect(row?.leaseOwner).toBeTruthy();
    expect(row!.leaseOwner).not.toBe(survivor.service.deps.instanceId);

    // Alive: the other instance leaves it alone, and the partner reads it pending.
    expect((await recoverInFlight(survivor.service.deps)).settled).toBe(0);
    const retry = await api.book({ book_token: offer.bookToken, ...booker });
    expect(retry.status).toBe(422);
    expect((await retry.json()).error).toMatchObject({ code: 'BOOK_TOKEN_USED', details: { booking_id: row!.id } });
    expect((await (await api.get(row!.id)).json()).data.status).toBe('pending');

    child!.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    child = undefined;
    // Within the liveness grace (5 s) and a recovery interval or two (1 s here), not the request
    // lease's 150 s; bounded generously for a loaded machine.
    const read = await settledRead(api, row!.id, 25_000);
    expect(read.status).toBe('failed');
    proxy.heal();
    const state = await checkInvariants(survivor, who.user_id);
    expect(state.bookings.find((b) => b.id === row!.id)?.status).toBe('void');
    expect(state.balance).toBe(START);
    expect((await api.book({ book_token: offer.bookToken, ...booker })).status).toBe(201);
    await checkInvariants(survivor, who.user_id);
  }, 180_000);
});
