import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoverInFlight } from '../../src/services/bookings/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { channelState, checkInvariants } from '../helpers/bookingInvariants.js';
import { isBook, startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { day, v1, type Offer } from '../helpers/flow.js';
import { eventually, sleep } from '../helpers/receiver.js';
import { cleanupEnv, startTestServiceOn, testEnv, type TestService } from '../helpers/service.js';

/**
 * A database connection blip must not make one living instance take over another's bookings in
 * flight. Two instances on one PostgreSQL schema, both running the recovery of bookings in flight
 * every 200 ms, book under load while the provider takes its time; the test terminates one
 * instance's backends (pg_terminate_backend of every connection whose application_name is that
 * instance's, its liveness connection included), again and again. A terminated liveness
 * connection frees the instance's lock until it is made again: that must not pass for the
 * instance's death (LIVENESS_GRACE_MS), so nothing the provider accepted is voided or cancelled,
 * every such booking is answered 201 (or 503 naming it, then read confirmed), money exact.
 * PostgreSQL only (the embedded database is one process's own).
 */

const START = 200_000_000n;
const HOUR = '3600000';
const booker = { booker_name: 'Blip Booker', guest_first_name: 'Lee', guest_last_name: 'Seojun' };

describe.runIf(process.env.DATABASE_URL)('two instances, their connections terminated under booking load', () => {
  let simulator: RunningSimulator;
  let provider: FaultProxy;
  let env: Record<string, string>;
  let admin: pg.Client;
  const instances: TestService[] = [];

  beforeAll(async () => {
    simulator = await startSimulator({ port: 0, onError: () => {} });
    provider = await startFaultProxy(simulator.url);
    env = testEnv({ CHANNEL_ENV: 'production', BOOKING_SYNC_INTERVAL_MS: HOUR, BOOKING_RECOVERY_INTERVAL_MS: '200', UPSTREAM_URL: provider.url });
    // The second starts after the first migrated the schema.
    for (let i = 0; i < 2; i++) instances.push(await startTestServiceOn(env));
    admin = new pg.Client({ connectionString: env.DATABASE_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    for (const t of instances) await t.close();
    await provider?.close();
    await simulator?.close();
    if (env) await cleanupEnv(env);
  });

  /** Terminates every backend of `t` (its pool, LISTEN and liveness connections); how many. */
  async function terminate(t: TestService): Promise<number> {
    const { rows } = await admin.query<{ done: boolean }>(
      'SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
      [`channel-service ${t.service.deps.instanceId}`],
    );
    return rows.filter((r) => r.done).length;
  }

  async function offers(t: TestService, who: IssuedCredentials, n: number, from: number): Promise<Offer[]> {
    const api = v1(t, who);
    const found: Offer[] = [];
    for (let i = 0; i < n; i++) found.push(await api.offer({ checkin: day(from + 2 * i), checkout: day(from + 2 * i + 1) }));
    return found;
  }

  it('a living instance whose connections were all terminated keeps its booking in flight: the other takes nothing over', async () => {
    const [a, b] = instances as [TestService, TestService];
    const who = await a.channel({ balance: START });
    const [offer] = await offers(b, who, 1, 20);
    // The provider holds the booking request a while (it is on its way there).
    provider.rule = (r) => (isBook(r) ? { forward: true, delayMs: 3_000 } : 'forward');
    const answer = v1(b, who).book({ book_token: offer!.bookToken, ...booker });
    const row = await eventually(async () => (await channelState(a, who.user_id)).bookings.find((x) => x.status === 'processing'), 10_000, 'the booking in flight');
    expect(row.leaseOwner).toBe(b.service.deps.instanceId);

    // Every connection of b ends, its liveness lock with it: for a moment nobody holds it.
    expect(await terminate(b)).toBeGreaterThanOrEqual(1);
    const taken = await recoverInFlight(a.service.deps);
    expect(taken.settled).toBe(0);
    expect((await channelState(a, who.user_id)).bookings.find((x) => x.id === row.id)?.status).toBe('processing');

    const res = await answer;
    provider.heal();
    expect(res.status).toBe(201);
    expect((await res.json()).data).toMatchObject({ id: row.id, status: 'confirmed' });
    const state = await checkInvariants(a, who.user_id);
    expect(state.bookings.map((x) => x.status)).toEqual(['confirmed']);
    expect(state.balance).toBe(START - state.bookings[0]!.totalAmount);
  }, 90_000);

  it('bookings on both instances while each one’s backends are terminated four times: every booking the provider accepted is confirmed and answered', async () => {
    const [a, b] = instances as [TestService, TestService];
    const who = await a.channel({ balance: START });
    const n = 12;
    const tokens = [...(await offers(a, who, n, 60)), ...(await offers(b, who, n, 60 + 2 * n))];
    // Each booking spends a second and a half at the provider: many are in flight at any moment.
    provider.rule = (r) => (isBook(r) ? { forward: true, delayMs: 1_500 } : 'forward');
    const sent = tokens.map(async (offer, i) => {
      const t = i < n ? a : b;
      await sleep((i % n) * 250);
      const res = await v1(t, who).book({ book_token: offer.bookToken, ...booker });
      return { offer, status: res.status, body: await res.json() };
    });
    // Four blips, each instance's backends in turn, while the bookings run.
    let terminated = 0;
    for (let round = 0; round < 4; round++) {
      await sleep(700);
      terminated += await terminate(round % 2 === 0 ? b : a);
    }
    const answers = await Promise.all(sent);
    provider.heal();
    expect(terminated).toBeGreaterThanOrEqual(4);

    // Answered: booked (201), or the outage said with the booking named (503), never 500.
    expect(answers.filter((x) => x.status !== 201 && x.status !== 503).map((x) => `${x.status} ${JSON.stringify(x.body)}`)).toEqual([]);
    await eventually(
      async () => (await channelState(a, who.user_id)).bookings.every((x) => x.status !== 'processing' && x.status !== 'cancelling'),
      30_000,
      'nothing left in flight',
    );
    const state = await checkInvariants(a, who.user_id);
    // Nothing the provider accepted was voided (every request reached it): every row confirmed,
    // and the provider holds each confirmed (checkInvariants: the provider agrees).
    expect(state.bookings.filter((x) => x.status !== 'confirmed').map((x) => `${x.id} ${x.status}`)).toEqual([]);
    for (const x of answers) {
      if (x.status === 201) {
        expect(x.body.data.status).toBe('confirmed');
        continue;
      }
      // A 503 names the booking it made (read confirmed now); one that names none is retried: its
      // token books now (nothing was written) or names the booking it made.
      const named = x.body.error.details?.booking_id as string | undefined;
      if (named) {
        expect(state.bookings.find((y) => y.id === named)?.status).toBe('confirmed');
        continue;
      }
      const retry = await v1(a, who).book({ book_token: x.offer.bookToken, ...booker });
      const body = await retry.json();
      if (retry.status === 201) expect(body.data.status).toBe('confirmed');
      else expect([retry.status, body.error.code, state.bookings.find((y) => y.id === body.error.details?.booking_id)?.status]).toEqual([422, 'BOOK_TOKEN_USED', 'confirmed']);
    }
    const final = await checkInvariants(a, who.user_id);
    expect(final.bookings.filter((x) => x.status !== 'confirmed')).toEqual([]);
    expect(final.bookings.length).toBe(tokens.length);
    expect(final.balance).toBe(START - final.bookings.reduce((sum, x) => sum + x.totalAmount, 0n));
    // Every confirmed booking's events went out once: created, confirmed.
    for (const x of final.bookings) {
      expect(final.events.filter((e) => e.bookingId === x.id).map((e) => e.type)).toEqual(['reservation.created', 'reservation.confirmed']);
    }
  }, 240_000);
});
