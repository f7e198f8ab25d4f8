import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { checkInvariants } from '../helpers/bookingInvariants.js';
import { isBook, startFaultProxy, startTcpProxy, type FaultProxy, type TcpProxy } from '../helpers/faultProxy.js';
import { day, v1 } from '../helpers/flow.js';
import { expectError } from '../helpers/http.js';
import { eventually, sleep } from '../helpers/receiver.js';
import { apiKey, cleanupEnv, startTestServiceOn, testEnv, type TestService } from '../helpers/service.js';

/**
 * PostgreSQL unreachable for the service under test (its DATABASE_URL through a TCP proxy this
 * file takes down, as a restart does for a few seconds, or freezes): every surface answers 503
 * SERVICE_UNAVAILABLE with Retry-After, not 500 INTERNAL_ERROR; a booking the provider made while
 * the database was away is answered 503 naming it (never 500), reads pending and then confirmed
 * once the database is back; no Idempotency-Key stays IDEMPOTENCY_KEY_IN_PROGRESS; money exact.
 * PostgreSQL only: the embedded database cannot be unreachable.
 */

const START = 80_000_000n;
const HOUR = '3600000';
const booker = { booker_name: 'Outage Booker', guest_first_name: 'Park', guest_last_name: 'Jiwoo' };
/** How long PostgreSQL stays away in these tests: a restart's few seconds. */
const OUTAGE_MS = 5_000;

describe.runIf(process.env.DATABASE_URL)('PostgreSQL unreachable', () => {
  let simulator: RunningSimulator;
  let provider: FaultProxy;
  let db: TcpProxy;
  let env: Record<string, string>;
  let direct: string;
  let t: TestService;

  beforeAll(async () => {
    simulator = await startSimulator({ port: 0, onError: () => {} });
    provider = await startFaultProxy(simulator.url);
    env = testEnv({ CHANNEL_ENV: 'production', BOOKING_SYNC_INTERVAL_MS: HOUR, BOOKING_RECOVERY_INTERVAL_MS: '500', UPSTREAM_URL: provider.url });
    direct = env.DATABASE_URL!;
    const url = new URL(direct);
    db = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    env.DATABASE_URL = db.through(direct);
    t = await startTestServiceOn(env);
  });
  afterAll(async () => {
    await db?.up();
    db?.thaw();
    await t?.close();
    await db?.close();
    await provider?.close();
    await simulator?.close();
    if (env) await cleanupEnv({ ...env, DATABASE_URL: direct });
  });

  /** Takes PostgreSQL away for `ms`, then back; resolves when it is back. */
  async function outage(ms = OUTAGE_MS): Promise<void> {
    await db.down();
    await sleep(ms);
    await db.up();
  }

  async function expectOutage(res: Response): Promise<void> {
    const error = await expectError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers.get('retry-after')).toBe('5');
    expect(error.details).toMatchObject({ retry_after: 5 });
  }

  /** /readyz, and how long it took. */
  async function ready(): Promise<{ status: number; checks: Record<string, string>; ms: number }> {
    const started = performance.now();
    const res = await t.request('/readyz');
    return { status: res.status, checks: (await res.json()).checks, ms: performance.now() - started };
  }

  it('every surface answers 503 SERVICE_UNAVAILABLE with Retry-After; /readyz says database: failing within 1 s', async () => {
    const who = await t.channel({ balance: START });
    const api = v1(t, who);
    const booked = await api.book({ book_token: (await api.offer({ checkin: day(20), checkout: day(21) })).bookToken, ...booker });
    expect(booked.status).toBe(201);
    const id = (await booked.json()).data.id;
    // A credential seen just now is cached (AUTH_CACHE_TTL_MS): its requests reach the handlers.
    expect((await api.get(id)).status).toBe(200);
    // One never seen is looked up in the database.
    const stranger: IssuedCredentials = await t.channel();

    await db.down();
    try {
      // In the handlers: v1 and GraphQL read the booking.
      await expectOutage(await api.get(id));
      const gql = await t.graphql('query($id: ID!) { booking(id: $id) { status } }', { id }, apiKey(who));
      expect(gql.errors?.[0]?.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { retry_after: 5 } });
      // At the credential check: v1, v2 and GraphQL.
      await expectOutage(await t.request('/channel/v1/channels/me', { headers: apiKey(stranger) }));
      await expectOutage(await t.request('/api/channel/v2/properties?per_page=1', { headers: apiKey(stranger) }));
      const anonymous = await t.graphql('{ channel { name } }', undefined, apiKey(stranger));
      expect(anonymous.errors?.map((e) => e.extensions?.code)).toEqual(['SERVICE_UNAVAILABLE']);
      // The token endpoint in its RFC 6749 form.
      const token = await t.request('/channel/v1/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: stranger.client_id, client_secret: stranger.client_secret }),
      });
      expect(token.status).toBe(503);
      expect(token.headers.get('retry-after')).toBe('5');
      expect(await token.json()).toMatchObject({ error: 'temporarily_unavailable' });

      const probe = await ready();
      expect(probe.ms).toBeLessThan(1_000);
      expect(probe).toMatchObject({ status: 503, checks: { database: 'failing', upstream: 'ok' } });
    } finally {
      await db.up();
    }
    await eventually(async () => (await ready()).status === 200, 15_000, '/readyz ready again');
    expect((await t.request('/channel/v1/channels/me', { headers: apiKey(stranger) })).status).toBe(200);
  }, 60_000);

  it('frozen (connections open, nothing answered): /readyz says database: failing within 1 s', async () => {
    db.freeze();
    try {
      const probe = await ready();
      expect(probe.ms).toBeLessThan(1_000);
      expect(probe).toMatchObject({ status: 503, checks: { database: 'failing' } });
    } finally {
      db.thaw();
    }
    await eventually(async () => (await ready()).status === 200, 15_000, '/readyz ready again');
  }, 30_000);

  it('a booking the provider made while PostgreSQL was away answers 503 naming it, reads pending, then confirmed; its key is freed', async () => {
    const who = await t.channel({ balance: START });
    const api = v1(t, who);
    const offer = await api.offer({ checkin: day(22), checkout: day(23) });
    // PostgreSQL goes away the moment the provider takes the booking: the provider books it,
    // the service cannot record that.
    let away: Promise<void> | undefined;
    provider.rule = (r) => {
      if (isBook(r)) away ??= outage();
      return 'forward';
    };
    const key = { 'idempotency-key': `outage-${who.user_id}` };
    const answer = await api.book({ book_token: offer.bookToken, ...booker }, key);
    provider.heal();
    await expectOutage(answer.clone());
    const { details } = (await answer.json()).error;
    expect(details.booking_id).toEqual(expect.any(String));
    expect((await t.service.deps.upstream.getBooking(details.booking_id))?.status).toBe('confirmed');
    await away;

    // Back: recovery settles it from the provider's answer within seconds; the partner reads it.
    const read = await eventually(async () => {
      const res = await api.get(details.booking_id);
      if (res.status !== 200) return null;
      const { data } = await res.json();
      return data.status === 'pending' ? null : data;
    }, 20_000, 'the booking settled');
    expect(read.status).toBe('confirmed');
    // The key its request held is freed: the retry runs, and its token names the booking.
    const retry = await eventually(async () => {
      const res = await api.book({ book_token: offer.bookToken, ...booker }, key);
      return res.status === 409 ? null : res;
    }, 20_000, 'the Idempotency-Key freed');
    const used = await expectError(retry, 422, 'BOOK_TOKEN_USED');
    expect(used.details).toMatchObject({ booking_id: details.booking_id });
    const state = await checkInvariants(t, who.user_id);
    const made = state.bookings.find((b) => b.id === details.booking_id)!;
    expect(made).toMatchObject({ status: 'confirmed', leaseOwner: null });
    expect(state.balance).toBe(START - made.totalAmount);
    expect(state.events.filter((e) => e.bookingId === details.booking_id).map((e) => e.type)).toEqual(['reservation.created', 'reservation.confirmed']);
  }, 90_000);

  it('bookings and searches under load through a 5 s outage: no 500, every booking the provider holds confirmed, no key left in progress', async () => {
    const who = await t.channel({ balance: START });
    const api = v1(t, who);
    const offers = [];
    for (let i = 0; i < 16; i++) offers.push(await api.offer({ checkin: day(40 + 2 * i), checkout: day(41 + 2 * i) }));
    // The provider takes a moment to book, so that many bookings are in flight when it goes.
    provider.rule = (r) => (isBook(r) ? { forward: true, delayMs: 600 } : 'forward');
    const keyOf = (i: number) => ({ 'idempotency-key': `load-${who.user_id}-${i}` });
    const away = sleep(800).then(() => outage());
    const bookings = offers.map(async (offer, i) => {
      await sleep(i * 250);
      const res = await api.book({ book_token: offer.bookToken, ...booker }, keyOf(i));
      return { i, status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after') };
    });
    const searches = Array.from({ length: 24 }, async (_, i) => {
      await sleep(i * 250);
      const res = await api.call('GET', `/search/availability/${1 + (i % 5)}?checkin=${day(90)}&checkout=${day(91)}&adults=2`);
      return res.status;
    });
    const answers = await Promise.all(bookings);
    const searched = await Promise.all(searches);
    await away;
    provider.heal();

    // Never a 500: a booking is made (201) or the outage is said (503 with Retry-After).
    expect(new Set(searched.filter((s) => s !== 200 && s !== 503))).toEqual(new Set());
    expect(answers.filter((a) => a.status !== 201 && a.status !== 503).map((a) => `${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
    const outages = answers.filter((a) => a.status === 503);
    expect(outages.length).toBeGreaterThan(0);
    for (const a of outages) expect([a.retryAfter, a.body.error.code]).toEqual(['5', 'SERVICE_UNAVAILABLE']);

    // Within seconds of PostgreSQL's return nothing is left in flight, no key is held.
    const prisma = t.service.deps.db.prisma;
    await eventually(
      async () =>
        (await prisma.booking.count({ where: { channelId: who.user_id, status: { in: ['processing', 'cancelling'] } } })) === 0 &&
        (await prisma.idempotencyKey.count({ where: { channelId: who.user_id, responseStatus: null } })) === 0,
      20_000,
      'bookings settled and keys freed',
    );
    // Every booking the provider holds is confirmed here (the invariants: the provider agrees with
    // every row, void rows hold nothing live there), money exact; every 201 is a confirmed booking.
    let state = await checkInvariants(t, who.user_id);
    for (const a of answers.filter((x) => x.status === 201)) {
      expect(state.bookings.find((b) => b.id === a.body.data.id)?.status).toBe('confirmed');
    }
    // A retry of each 503 with its key runs again: the booking it named (422) or, when nothing was
    // written, the booking now (201); never IDEMPOTENCY_KEY_IN_PROGRESS.
    for (const a of outages) {
      const retry = await api.book({ book_token: offers[a.i]!.bookToken, ...booker }, keyOf(a.i));
      const body = await retry.json();
      expect([201, 422], JSON.stringify(body)).toContain(retry.status);
      if (retry.status === 422) {
        expect(body.error.code).toBe('BOOK_TOKEN_USED');
        if (a.body.error.details.booking_id) expect(body.error.details.booking_id).toBe(a.body.error.details.booking_id);
      }
    }
    state = await checkInvariants(t, who.user_id);
    const confirmed = state.bookings.filter((b) => b.status === 'confirmed');
    expect(state.balance).toBe(START - confirmed.reduce((sum, b) => sum + b.totalAmount, 0n));
  }, 180_000);
});
