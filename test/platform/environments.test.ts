import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createService } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { reportStatus, requestLeaseMs } from '../../src/services/bookings/index.js';
import { runBookingSync } from '../../src/services/reservations/index.js';
import { EnvironmentMismatchError } from '../../src/services/kernel/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { derivedSigningKey, offerClaims } from '../../src/services/access/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { channelState } from '../helpers/bookingInvariants.js';
import { day, v1 } from '../helpers/flow.js';
import { apiKey, cleanupEnv, startTestService, startTestServiceOn, testEnv, TEST_ORIGIN, type TestService } from '../helpers/service.js';

/**
 * Issue 15, finding 1: a sandbox instance pointed at the production database moved production
 * money. Four defences, each tested on its own:
 *   - a database belongs to the environment that first started on it; the other refuses to start;
 *   - booking money moves only on a production instance, whatever a row's `charged` says;
 *   - each environment signs flow tokens with its own key (configured or stored secret);
 *   - production does not cancel a booking the provider does not know.
 * The last three are tested with the environment lock out of the way, as on a database from
 * before it: the record of the database's environment is deleted between two starts.
 *
 * On PostgreSQL the instances share DATABASE_URL and DATABASE_SCHEMA and run side by side, as in
 * the issue; on PGlite one process holds DATA_DIR at a time, so the first instance closes before
 * the other opens the same directory.
 */

const execFileAsync = promisify(execFile);
const concurrent = Boolean(process.env.DATABASE_URL);
const START = 50_000_000n;
const SECRET = 'one-configured-secret-shared-by-both-instances-0123456789';
const booker = { booker_name: 'Env Booker', guest_first_name: 'Lee', guest_last_name: 'Jiwoo' };

let envs: Record<string, string>[] = [];
let running: TestService[] = [];

/** A database of its own for one test (removed after it). */
function database(overrides: Record<string, string> = {}): Record<string, string> {
  // Either environment may start on it: production's PUBLIC_BASE_URL is set for both.
  const env = testEnv({ PUBLIC_BASE_URL: TEST_ORIGIN, ...overrides });
  envs.push(env);
  return env;
}

async function start(env: Record<string, string>, channelEnv: 'sandbox' | 'production'): Promise<TestService> {
  const t = await startTestServiceOn({ ...env, CHANNEL_ENV: channelEnv });
  running.push(t);
  return t;
}

async function stop(t: TestService): Promise<void> {
  running = running.filter((r) => r !== t);
  await t.close();
}

/**
 * Makes the database look like one from before the environment rule (no record of its
 * environment), so another environment's instance may start on it; on PGlite `t` closes first.
 */
async function forgetEnvironment(t: TestService): Promise<void> {
  await t.service.deps.db.prisma.setting.delete({ where: { key: 'environment' } });
  if (!concurrent) await stop(t);
}

afterEach(async () => {
  for (const t of running.splice(0)) await t.close();
  for (const env of envs.splice(0)) await cleanupEnv(env);
});

async function settingsOf(t: TestService) {
  return t.service.deps.db.prisma.setting.findMany({ orderBy: { key: 'asc' } });
}

/** A channel with START on its balance and a confirmed, charged production booking of it. */
async function chargedBooking(production: TestService, checkinDay = 30) {
  const who = await production.channel({ balance: START });
  const offer = await v1(production, who).offer({ checkin: day(checkinDay), checkout: day(checkinDay + 1) });
  const res = await v1(production, who).book({ book_token: offer.bookToken, ...booker });
  expect(res.status).toBe(201);
  const booking = (await res.json()).data;
  expect(booking.status).toBe('confirmed');
  const state = await channelState(production, who.user_id);
  expect(state.balance).toBe(START - BigInt(offer.amount));
  expect(state.bookings[0]!.charged).toBe(true);
  return { who, booking, amount: BigInt(offer.amount) };
}

/** Tests that start instances one after another on one PGlite directory take several starts' time. */
const SEVERAL_STARTS = { timeout: 180_000 };

describe('a database belongs to one environment', SEVERAL_STARTS, () => {
  it.each([
    ['production', 'sandbox'],
    ['sandbox', 'production'],
  ] as const)('recorded as %s at its first start, it refuses a %s instance with a message naming both, writing nothing', async (first, other) => {
    const env = database();
    const owner = await start(env, first);
    expect((await owner.service.deps.db.prisma.setting.findUnique({ where: { key: 'environment' } }))?.value).toBe(first);
    const settings = await settingsOf(owner);
    const channels = await owner.service.deps.db.prisma.channel.count();
    if (!concurrent) await stop(owner);

    const refused = createService(loadConfig({ ...env, CHANNEL_ENV: other }));
    await expect(refused).rejects.toBeInstanceOf(EnvironmentMismatchError);
    await expect(refused).rejects.toBeInstanceOf(ConfigError);
    await expect(refused).rejects.toThrow(`this database belongs to the ${first} environment; CHANNEL_ENV is ${other}`);

    // Nothing of the refused instance was written (no demo channel, no signing secret of its own),
    // and the owner (still running on PostgreSQL, started again on PGlite) carries on.
    const again = concurrent ? owner : await start(env, first);
    expect(await settingsOf(again)).toEqual(settings);
    expect(await again.service.deps.db.prisma.channel.count()).toBe(channels);
    expect((await again.request('/readyz')).status).toBe(200);
  });

  it('npm start prints the refusal and exits 2, like a bad configuration', async () => {
    const env = database({ LOG_LEVEL: 'silent' });
    await stop(await start(env, 'production'));
    const failed = await execFileAsync('node_modules/.bin/tsx', ['src/main.ts'], { env: { ...process.env, ...env, CHANNEL_ENV: 'sandbox' } }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain('this database belongs to the production environment; CHANNEL_ENV is sandbox');
  });

  it('a database without the record (from before this rule) is claimed by the first instance that starts', async () => {
    const env = database();
    const old = await start(env, 'production');
    await forgetEnvironment(old);
    const claimant = await start(env, 'sandbox');
    expect((await claimant.service.deps.db.prisma.setting.findUnique({ where: { key: 'environment' } }))?.value).toBe('sandbox');
    if (concurrent) await stop(old);
    await stop(claimant);
    await expect(createService(loadConfig({ ...env, CHANNEL_ENV: 'production' }))).rejects.toThrow(
      'this database belongs to the sandbox environment; CHANNEL_ENV is production',
    );
  });

  it.skipIf(!concurrent)('instances of both environments starting together on a new database: one wins, the other is refused', async () => {
    const env = database();
    const results = await Promise.allSettled([
      createService(loadConfig({ ...env, CHANNEL_ENV: 'production' })),
      createService(loadConfig({ ...env, CHANNEL_ENV: 'sandbox' })),
    ]);
    const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    for (const s of started) await s.close();
    expect(started).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(EnvironmentMismatchError);
    expect(String(refused[0].message)).toContain(`this database belongs to the ${started[0]!.deps.config.env} environment`);
  });
});

describe('booking money moves only in production (whatever a row says)', SEVERAL_STARTS, () => {
  it('a charged production booking cancelled through a sandbox instance credits nothing', async () => {
    const env = database();
    const production = await start(env, 'production');
    const { who, booking } = await chargedBooking(production);
    const before = await channelState(production, who.user_id);
    await forgetEnvironment(production);

    const sandbox = await start(env, 'sandbox');
    // The sandbox's own simulator does not know the booking; the sandbox cancels it here, as the
    // issue saw, but the refund of a charged row is not credited by a sandbox.
    const res = await v1(sandbox, who).cancel(booking.id);
    expect(res.status).toBe(200);
    const after = await channelState(sandbox, who.user_id);
    expect(after.bookings[0]).toMatchObject({ status: 'cancelled', charged: true });
    expect(after.balance).toBe(before.balance);
    expect(after.ledger).toEqual(before.ledger);
  });

  it('a charged pending production booking reported failed through a sandbox instance credits nothing', async () => {
    const env = database();
    const production = await start(env, 'production');
    const { who, booking } = await chargedBooking(production, 31);
    // A pending booking (what the provider's pending answer leaves), charged on production.
    await production.service.deps.db.prisma.booking.update({ where: { id: booking.id }, data: { status: 'pending' } });
    const before = await channelState(production, who.user_id);
    await forgetEnvironment(production);

    const sandbox = await start(env, 'sandbox');
    const failed = await reportStatus(sandbox.service.deps, booking.id, 'failed');
    expect(failed).toMatchObject({ status: 'failed', charged: true });
    const after = await channelState(sandbox, who.user_id);
    expect(after.balance).toBe(before.balance);
    expect(after.ledger).toEqual(before.ledger);
  });
});

describe('each environment signs with its own key', SEVERAL_STARTS, () => {
  /**
   * A book_token issued by a sandbox instance on the production database, then presented to the
   * production instance: 422 BOOK_TOKEN_INVALID, nothing booked, nothing charged.
   */
  async function sandboxTokenRefusedByProduction(overrides: Record<string, string>) {
    const env = database(overrides);
    let production = await start(env, 'production');
    const who = await production.channel({ balance: START });
    const own = await v1(production, who).offer({ checkin: day(33), checkout: day(34) });
    await forgetEnvironment(production);

    const sandbox = await start(env, 'sandbox');
    const foreign = await v1(sandbox, who).offer({ checkin: day(33), checkout: day(34) });
    if (!concurrent) {
      await forgetEnvironment(sandbox);
      production = await start(env, 'production');
    }

    const before = await channelState(production, who.user_id);
    const res = await v1(production, who).book({ book_token: foreign.bookToken, ...booker });
    expect(res.status).toBe(422);
    expect((await res.json()).error.code).toBe('BOOK_TOKEN_INVALID');
    const after = await channelState(production, who.user_id);
    expect(after.bookings).toEqual([]);
    expect(after.balance).toBe(before.balance);
    expect(after.ledger).toEqual(before.ledger);

    // Production's own token of the same offer books (the refusal is the key, not the offer).
    expect((await v1(production, who).book({ book_token: own.bookToken, ...booker })).status).toBe(201);
    return { production, who };
  }

  it('the same configured TOKEN_SIGNING_SECRET on both: a sandbox book_token is refused by production', async () => {
    await sandboxTokenRefusedByProduction({ TOKEN_SIGNING_SECRET: SECRET });
  });

  it('the secret kept in the database: a sandbox book_token is refused by production', async () => {
    await sandboxTokenRefusedByProduction({});
  });

  it("the database's own environment adopts the secret of an older version, so its live tokens keep working; the other gets its own", async () => {
    const env = database();
    let production = await start(env, 'production');
    const who = await production.channel({ balance: START });
    const prisma = () => production.service.deps.db.prisma;
    // A database of the version before: one `token_signing_secret` row, no record of the environment.
    const secret = await prisma().setting.findUniqueOrThrow({ where: { key: 'token_signing_secret:production' } });
    await prisma().setting.delete({ where: { key: secret.key } });
    await prisma().setting.create({ data: { key: 'token_signing_secret', value: secret.value } });
    await prisma().setting.delete({ where: { key: 'environment' } });
    const issuedBefore = await v1(production, who).offer({ checkin: day(36), checkout: day(37) });
    await stop(production);

    production = await start(env, 'production');
    const settings = await settingsOf(production);
    expect(settings.find((s) => s.key === 'token_signing_secret:production')?.value).toBe(secret.value);
    expect(settings.some((s) => s.key === 'token_signing_secret')).toBe(false);
    expect((await v1(production, who).book({ book_token: issuedBefore.bookToken, ...booker })).status).toBe(201);

    await forgetEnvironment(production);
    const sandbox = await start(env, 'sandbox');
    const sandboxSecret = await sandbox.service.deps.db.prisma.setting.findUniqueOrThrow({ where: { key: 'token_signing_secret:sandbox' } });
    expect(sandboxSecret.value).not.toBe(secret.value);
  });

  describe('tokens signed under a configured secret before the upgrade', () => {
    let t: TestService;
    let who: IssuedCredentials;
    let bookingId: string;
    const legacyKey = new TextEncoder().encode(SECRET);
    const sign = (claims: Record<string, unknown>, key: Uint8Array, ttlSeconds?: number) => {
      const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setJti('legacy-token-0001');
      if (ttlSeconds) jwt.setExpirationTime(`${ttlSeconds}s`);
      return jwt.sign(key);
    };

    beforeAll(async () => {
      t = await startTestService({ CHANNEL_ENV: 'production', TOKEN_SIGNING_SECRET: SECRET });
      who = await t.channel({ balance: START });
      const offer = await v1(t, who).offer({ checkin: day(38), checkout: day(39) });
      const res = await v1(t, who).book({ book_token: offer.bookToken, ...booker });
      bookingId = (await res.json()).data.id;
    });
    afterAll(() => t?.close());

    it('a v2 retrieve link (never expires) keeps working; one signed with the sandbox key is refused', async () => {
      const claims = { kind: 'v2_retrieve', channel_id: who.user_id, itinerary_id: bookingId };
      const legacy = await sign(claims, legacyKey);
      const res = await t.request(`/api/channel/v2/bookings/retrieve?token=${legacy}`, { headers: apiKey(who) });
      expect(res.status).toBe(200);
      expect((await res.json()).itinerary_id).toBe(bookingId);

      const sandbox = await sign(claims, derivedSigningKey(SECRET, 'sandbox'));
      const refused = await t.request(`/api/channel/v2/bookings/retrieve?token=${sandbox}`, { headers: apiKey(who) });
      expect(refused.status).toBe(400);
      expect((await refused.json()).error.code).toBe('INVALID_TOKEN');
    });

    it('other kinds are refused (a price check gives a new book_token); a cancel link signed so is refused too', async () => {
      const offer = await v1(t, who).offer({ checkin: day(40), checkout: day(41) });
      const verified = await t.service.deps.tokens.verify('book', offer.bookToken, offerClaims, { now: new Date(), channelId: who.user_id });
      const { jti: _jti, iat: _iat, exp: _exp, ...claims } = verified;
      const legacyBook = await sign({ ...claims, kind: 'book' }, legacyKey, 600);
      const before = await channelState(t, who.user_id);
      const res = await v1(t, who).book({ book_token: legacyBook, ...booker });
      expect(res.status).toBe(422);
      expect((await res.json()).error.code).toBe('BOOK_TOKEN_INVALID');
      expect((await channelState(t, who.user_id)).ledger).toEqual(before.ledger);

      const legacyCancel = await sign({ kind: 'v2_cancel', channel_id: who.user_id, itinerary_id: bookingId }, legacyKey, 600);
      const cancel = await t.request(`/api/channel/v2/bookings/cancel?token=${legacyCancel}`, { method: 'PUT', headers: apiKey(who) });
      expect(cancel.status).toBe(400);
      expect((await t.service.deps.db.prisma.booking.findUniqueOrThrow({ where: { id: bookingId } })).status).toBe('confirmed');
    });
  });
});

describe('production does not cancel a booking the provider does not know', SEVERAL_STARTS, () => {
  let simulator: RunningSimulator;
  let t: TestService;

  beforeAll(async () => {
    simulator = await startSimulator({ port: 0, onError: () => {} });
    t = await startTestService({ CHANNEL_ENV: 'production', UPSTREAM_URL: simulator.url });
  });
  afterAll(async () => {
    await t?.close();
    await simulator?.close();
  });

  /** A charged, confirmed booking the provider then forgets (the simulator is reset). */
  async function forgotten(checkinDay: number) {
    const { who, booking, amount } = await chargedBooking(t, checkinDay);
    simulator.reset();
    expect((await fetch(`${simulator.url}/bookings/${booking.id}`)).status).toBe(404);
    return { who, booking, amount, before: await channelState(t, who.user_id) };
  }

  /** The booking, its money and its events are as they were. */
  async function unchanged(who: IssuedCredentials, before: Awaited<ReturnType<typeof channelState>>) {
    const after = await channelState(t, who.user_id);
    expect(after.bookings.map((b) => ({ ...b, updatedAt: null, syncedAt: null }))).toEqual(before.bookings.map((b) => ({ ...b, updatedAt: null, syncedAt: null })));
    expect(after.bookings[0]).toMatchObject({ refundAmount: null, cancellationFee: null, cancelledAt: null, previousStatus: null });
    expect(after.balance).toBe(before.balance);
    expect(after.ledger).toEqual(before.ledger);
    expect(after.events.map((e) => e.type)).toEqual(before.events.map((e) => e.type));
    expect(after.events.some((e) => e.type === 'reservation.cancelled')).toBe(false);
  }

  function expectNotConfirmed(body: { error: { code: string; message: string; details: unknown } }, id: string, status = 'confirmed') {
    expect(body.error.code).toBe('UPSTREAM_ERROR');
    expect(body.error.details).toEqual({ booking_id: id, status, reason: 'provider_does_not_confirm_cancellation' });
    expect(body.error.message).toContain(`the booking stays ${status} and nothing is refunded`);
  }

  it('v1 cancel: 502, the booking stays as it was (status, no refund, no ledger entry, no event), and the sync does not complete it', async () => {
    const { who, booking, before } = await forgotten(50);
    const res = await v1(t, who).cancel(booking.id);
    expect(res.status).toBe(502);
    expectNotConfirmed(await res.json(), booking.id);
    await unchanged(who, before);
    expect((await (await v1(t, who).get(booking.id)).json()).data).toMatchObject({ status: 'confirmed', refundAmount: null });

    await runBookingSync(t.service.deps);
    await unchanged(who, before);
  });

  it('GraphQL cancelBooking, reservation cancel (whole and one room) and the v2 cancel link: 502, nothing changes', async () => {
    const { who, booking, before } = await forgotten(52);
    const gql = await t.graphql(
      'mutation($id: ID!) { cancelBooking(id: $id) { __typename ... on CancelBookingSuccess { booking { status } } } }',
      { id: booking.id },
      apiKey(who),
    );
    expect(gql.errors?.[0]?.extensions).toMatchObject({
      code: 'UPSTREAM_ERROR',
      details: { booking_id: booking.id, status: 'confirmed', reason: 'provider_does_not_confirm_cancellation' },
    });
    await unchanged(who, before);

    const whole = await v1(t, who).call('POST', `/reservations/${booking.id}/cancel`);
    expect(whole.status).toBe(502);
    expectNotConfirmed(await whole.json(), booking.id);
    await unchanged(who, before);

    const room = await v1(t, who).call('DELETE', `/reservations/${booking.id}/rooms/${booking.id}`);
    expect(room.status).toBe(502);
    expectNotConfirmed(await room.json(), booking.id);
    await unchanged(who, before);

    // The cancel link the booking's v2 answer carries (the service's own signer makes it).
    const link = await t.service.deps.tokens.sign('v2_cancel', { channel_id: who.user_id, itinerary_id: booking.id }, { now: new Date(), ttlSeconds: 3600 });
    const v2 = await t.request(`/api/channel/v2/bookings/cancel?token=${link}`, { method: 'PUT', headers: apiKey(who) });
    expect(v2.status).toBe(502);
    expect((await v2.json()).error.code).toBe('UPSTREAM_ERROR');
    await unchanged(who, before);
  });

  it('a cancellation cut short (cancelling) that the provider does not know goes back, not to cancelled', async () => {
    const { who, booking, before } = await forgotten(54);
    const requestedAt = new Date(Date.now() - requestLeaseMs(t.service.deps) - 60_000);
    await t.service.deps.db.prisma.booking.update({
      where: { id: booking.id },
      data: { status: 'cancelling', previousStatus: 'confirmed', cancelRequestedAt: requestedAt, updatedAt: requestedAt },
    });
    await runBookingSync(t.service.deps);
    await unchanged(who, before);
  });

  it('a pending booking past its payment deadline that the provider does not know stays pending, unrefunded, until an operator reports it failed', async () => {
    const { who, booking } = await forgotten(56);
    const deadline = new Date(Date.now() - 60_000);
    await t.service.deps.db.prisma.booking.update({ where: { id: booking.id }, data: { status: 'pending', paymentDeadline: deadline } });
    const before = await channelState(t, who.user_id);

    const report = await runBookingSync(t.service.deps);
    expect(report.expired).toBe(0);
    await unchanged(who, before);
    expect(before.bookings[0]!.status).toBe('pending');

    // The operator's word (the property reports it failed) refunds it whole.
    const failed = await reportStatus(t.service.deps, booking.id, 'failed');
    expect(failed).toMatchObject({ status: 'failed', refundAmount: failed.totalAmount });
    expect((await channelState(t, who.user_id)).balance).toBe(START);
  });

  it('the sandbox keeps cancelling a booking its provider forgot (its bundled simulator forgets on restart); no money moves there', async () => {
    const sandbox = await startTestService({ CHANNEL_ENV: 'sandbox', UPSTREAM_URL: simulator.url });
    try {
      const who = await sandbox.channel({ balance: START });
      const offer = await v1(sandbox, who).offer({ checkin: day(58), checkout: day(59) });
      const booking = (await (await v1(sandbox, who).book({ book_token: offer.bookToken, ...booker })).json()).data;
      simulator.reset();
      const res = await v1(sandbox, who).cancel(booking.id);
      expect(res.status).toBe(200);
      expect((await res.json()).data.status).toBe('cancelled');
      const state = await channelState(sandbox, who.user_id);
      expect(state.balance).toBe(START);
      expect(state.events.map((e) => e.type)).toContain('reservation.cancelled');
    } finally {
      await sandbox.close();
    }
  });
});
