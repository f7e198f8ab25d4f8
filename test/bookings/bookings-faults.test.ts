import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { requestLeaseMs } from '../../src/services/bookings/index.js';
import { runBookingSync } from '../../src/services/reservations/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import type { UpstreamBooking } from '../../src/upstream/protocol.js';
import { bookAtProvider, channelState, checkInvariants, insertProcessingBooking } from '../helpers/bookingInvariants.js';
import { isBook, isCancel, startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { day, v1 } from '../helpers/flow.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The booking flow when the provider fails, hangs, loses answers or the process stops between
 * steps; after each scenario `checkInvariants` (test/helpers/bookingInvariants.ts) states what
 * must hold whatever happened:
 *   (a) balance = sum of the channel's ledger entries, >= 0;
 *   (b) one booking_charge of -total per charged booking; a void one has its booking_void of
 *       +total; a cancelled/failed one at most one booking_refund = refundAmount (none when 0);
 *   (c) nothing left `processing` or `cancelling` once the request returned (or the sweeper ran);
 *   (d) the provider agrees with each booking; it holds nothing live for a void attempt;
 *   (e) each booking has the outbox events of its history, a void one none.
 *
 * Money moves only in production, and production ignores X-Test-Scenario, so the production
 * service reaches the provider (a simulator of this file) through a proxy the test controls
 * (helpers/faultProxy.ts). For pending bookings in production the proxy adds
 * `X-Test-Scenario: pending` to the provider-side request, so the provider genuinely holds a
 * pending booking (rewriting its answer instead would leave the provider and the service
 * disagreeing, which is not the situation under test). The sandbox scenario header itself is
 * covered by a sandbox service at the end, where no money moves.
 */

const BOOKING_TIMEOUT_MS = 1_000;
const START = 50_000_000n;
const booker = { booker_name: 'Fault Booker', guest_first_name: 'Lee', guest_last_name: 'Jiwoo' };

let simulator: RunningSimulator;
let proxy: FaultProxy;
let t: TestService;
/** The service's clock runs this far ahead of the wall clock. */
let clockOffsetMs = 0;

beforeAll(async () => {
  simulator = await startSimulator({ port: 0, onError: () => {} });
  proxy = await startFaultProxy(simulator.url);
  t = await startTestService(
    {
      CHANNEL_ENV: 'production',
      UPSTREAM_URL: proxy.url,
      UPSTREAM_BOOKING_TIMEOUT_MS: String(BOOKING_TIMEOUT_MS),
      // The scenarios fail many calls in a row on purpose; an open circuit would turn every
      // later call (compensations, the sweeper) into a fast failure and hide what is under test.
      UPSTREAM_BREAKER_THRESHOLD: '100000',
    },
    { clock: () => new Date(Date.now() + clockOffsetMs) },
  );
});
afterEach(async () => {
  proxy.heal();
  clockOffsetMs = 0;
  await proxy.settled();
});
afterAll(async () => {
  await t?.close();
  await proxy?.close();
  await simulator?.close();
});

/** The provider's own view, straight from the simulator (not through the proxy or the service). */
async function atProvider(id: string): Promise<UpstreamBooking | null> {
  const res = await fetch(`${simulator.url}/bookings/${id}`);
  return res.status === 404 ? null : ((await res.json()) as UpstreamBooking);
}

async function setProviderStatus(id: string, status: string): Promise<void> {
  const res = await fetch(`${simulator.url}/_control/bookings/${id}/status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status }),
  });
  expect(res.status).toBe(200);
}

let nextDay = 20;
/** A channel of its own with START on its balance, and a stay no other scenario books. */
async function scenario(): Promise<{ who: IssuedCredentials; api: ReturnType<typeof v1>; checkin: string; checkout: string }> {
  const who = await t.channel({ balance: START });
  const n = nextDay++;
  return { who, api: v1(t, who), checkin: day(n), checkout: day(n + 1) };
}

async function only(who: IssuedCredentials) {
  const { bookings } = await channelState(t, who.user_id);
  expect(bookings).toHaveLength(1);
  return bookings[0]!;
}

/**
 * A sweeper pass once any booking request of the attempts so far can no longer reach the
 * provider (the clock moved well past twice the booking deadline).
 */
async function sweepOnceNothingCanArrive(): Promise<void> {
  clockOffsetMs = 2 * BOOKING_TIMEOUT_MS + 60_000;
  await runBookingSync(t.service.deps);
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

describe('the provider fails during the booking (production)', () => {
  it('5xx on every attempt: 502, void, charge given back; the same book_token then books', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    proxy.rule = (r) => (isBook(r) ? 'fail' : 'forward');

    const res = await api.book({ book_token: offer.bookToken, ...booker });
    expect(res.status).toBe(502);
    expect((await res.json()).error.code).toBe('UPSTREAM_ERROR');

    const voided = await only(who);
    expect(voided).toMatchObject({ status: 'void', bookTokenJti: null });
    // A void attempt reads `failed`, never 404 (a BOOK_TOKEN_USED may have named it while it was
    // being made: issue 18, item 8), and is not listed.
    const read = await api.get(voided.id);
    expect(read.status).toBe(200);
    expect((await read.json()).data).toMatchObject({ id: voided.id, status: 'failed' });
    expect((await (await api.call('GET', '/bookings')).json()).data).toEqual([]);
    // The compensation was sent: the provider told to cancel whatever it might hold.
    expect(proxy.hits.some((h) => isCancel(h) && h.path.includes(voided.id))).toBe(true);
    let state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(START);
    // The attempt is not watched for ever: once no late request can arrive, the sweeper is done with it.
    await sweepOnceNothingCanArrive();
    expect(await only(who)).toMatchObject({ status: 'void', upstreamCleanup: false });
    clockOffsetMs = 0;

    // The token is free again: retrying it once the provider is back books.
    proxy.heal();
    const retry = await api.book({ book_token: offer.bookToken, ...booker });
    expect(retry.status).toBe(201);
    const booking = (await retry.json()).data;
    expect(booking.status).toBe('confirmed');
    state = await checkInvariants(t, who.user_id);
    expect(state.bookings.map((b) => b.status).sort()).toEqual(['confirmed', 'void']);
    expect(state.balance).toBe(START - BigInt(offer.amount));
  });

  it('with an Idempotency-Key: the 502 does not hold the key, the retry books, and a further retry is its replay', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    const body = { book_token: offer.bookToken, ...booker };
    const key = { 'idempotency-key': `faults-${who.user_id}` };
    proxy.rule = (r) => (isBook(r) ? 'fail' : 'forward');
    expect((await api.book(body, key)).status).toBe(502);

    proxy.heal();
    const retry = await api.book(body, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const booking = (await retry.json()).data;
    const replay = await api.book(body, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await replay.json()).data.id).toBe(booking.id);

    const state = await checkInvariants(t, who.user_id);
    expect(state.bookings.map((b) => b.status).sort()).toEqual(['confirmed', 'void']);
    expect(state.balance).toBe(START - BigInt(offer.amount));
  });

  it.each([
    ['sold_out', 409, 'SOLD_OUT'],
    ['price_changed', 409, 'PRICE_CHANGED'],
  ])('the provider refuses (%s): %i %s, void, charge given back, the token books again', async (refusal, status, code) => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    proxy.rule = (r) => (isBook(r) ? { forward: true, scenario: refusal } : 'forward');

    const res = await api.book({ book_token: offer.bookToken, ...booker });
    expect(res.status).toBe(status);
    expect((await res.json()).error.code).toBe(code);
    expect(await only(who)).toMatchObject({ status: 'void', upstreamCleanup: false });
    let state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(START);

    proxy.heal();
    expect((await api.book({ book_token: offer.bookToken, ...booker })).status).toBe(201);
    state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(START - BigInt(offer.amount));
  });

  it('the partner goes away while the provider is booking: the booking is still made and settled, not left behind', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    const client = new AbortController();
    // The caller hangs up once the provider call is on its way (the row and charge are written).
    proxy.rule = (r) => {
      if (!isBook(r)) return 'forward';
      client.abort();
      return { forward: true, delayMs: 300 };
    };
    await t
      .request('/channel/v1/bookings', {
        method: 'POST',
        headers: { 'x-api-key': who.api_key, 'content-type': 'application/json' },
        body: JSON.stringify({ book_token: offer.bookToken, ...booker }),
        signal: client.signal,
      })
      .catch(() => null);
    await proxy.settled();
    for (let i = 0; i < 50 && (await only(who)).status === 'processing'; i++) await new Promise((r) => setTimeout(r, 100));

    const state = await checkInvariants(t, who.user_id);
    expect(state.bookings.map((b) => b.status)).toEqual(['confirmed']);
    expect(state.balance).toBe(START - BigInt(offer.amount));
  });

  it('no answer within UPSTREAM_BOOKING_TIMEOUT_MS: 502 after the deadline, void, charge given back', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    proxy.rule = (r) => (isBook(r) ? 'hang' : 'forward');

    const { value: res, ms } = await timed(() => api.book({ book_token: offer.bookToken, ...booker }));
    expect(res.status).toBe(502);
    expect(ms).toBeGreaterThanOrEqual(BOOKING_TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(BOOKING_TIMEOUT_MS * 4);

    expect((await only(who)).status).toBe('void');
    let state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(START);
    await sweepOnceNothingCanArrive();
    expect(await only(who)).toMatchObject({ status: 'void', upstreamCleanup: false });
    state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(START);
  });

  it('the provider books but every answer is lost: 502, void, charge given back, the provider booking cancelled', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    proxy.rule = (r) => (isBook(r) ? 'forward-then-drop' : 'forward');

    const res = await api.book({ book_token: offer.bookToken, ...booker });
    expect(res.status).toBe(502);

    const voided = await only(who);
    expect(voided.status).toBe('void');
    // It did book there (and was cancelled by the compensation at once, or else by the sweeper).
    if (voided.upstreamCleanup) await runBookingSync(t.service.deps);
    expect((await atProvider(voided.id))?.status).toBe('cancelled');
    const state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(START);
  });

  it('the first answer is lost, the retry gets the same booking: 201, one provider booking, one charge', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    let lost = 0;
    proxy.rule = (r) => (isBook(r) && lost++ === 0 ? 'forward-then-drop' : 'forward');

    const res = await api.book({ book_token: offer.bookToken, ...booker });
    expect(res.status).toBe(201);
    const booking = (await res.json()).data;
    expect(booking.status).toBe('confirmed');
    expect(proxy.hits.filter((h) => isBook(h)).length).toBeGreaterThanOrEqual(2);
    expect((await atProvider(booking.id))?.status).toBe('confirmed');
    const state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(START - BigInt(offer.amount));
  });

  it('the provider is unreachable for the compensation too: void with upstream_cleanup; the sweeper cancels it there once it is back', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    proxy.rule = (r) => (isBook(r) ? 'forward-then-drop' : isCancel(r) ? 'drop' : 'forward');

    const res = await api.book({ book_token: offer.bookToken, ...booker });
    expect(res.status).toBe(502);

    const voided = await only(who);
    expect(voided).toMatchObject({ status: 'void', upstreamCleanup: true });
    expect((await channelState(t, who.user_id)).balance).toBe(START);
    // The provider still holds the booking it made: the sweeper has something to clean up.
    expect((await atProvider(voided.id))?.status).toBe('confirmed');

    // Still unreachable: the sweeper keeps the flag and tries again later.
    await runBookingSync(t.service.deps);
    expect((await only(who)).upstreamCleanup).toBe(true);

    proxy.heal();
    await runBookingSync(t.service.deps);
    expect(await only(who)).toMatchObject({ status: 'void', upstreamCleanup: false });
    expect((await atProvider(voided.id))?.status).toBe('cancelled');
    const state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(START);
  });

  it('the booking request reaches the provider only after the deadline: the provider must not be left holding a booking for a void attempt', async () => {
    // A slow provider (or network) delivers the booking after the service gave up. The service's
    // compensation (cancel) can arrive first and find nothing; the booking is made right after.
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    proxy.rule = (r) => (isBook(r) ? { forward: true, delayMs: BOOKING_TIMEOUT_MS + 1_500 } : 'forward');

    const res = await api.book({ book_token: offer.bookToken, ...booker });
    expect(res.status).toBe(502);
    const voided = await only(who);
    expect(voided.status).toBe('void');
    expect((await channelState(t, who.user_id)).balance).toBe(START);

    // A sweep while the request is still on its way: the provider knows nothing yet, and that
    // must not end the watch.
    expect(proxy.inFlight()).toBe(1);
    await runBookingSync(t.service.deps);
    expect(await atProvider(voided.id)).toBeNull();
    expect(proxy.inFlight(), 'the late request was still on its way during that sweep').toBe(1);

    // The late booking reaches the provider, which books it.
    await proxy.settled();
    proxy.heal();
    expect((await atProvider(voided.id))?.status).toBe('confirmed');
    // The next passes cancel it there and then stop watching.
    await runBookingSync(t.service.deps);
    await sweepOnceNothingCanArrive();
    expect(await only(who)).toMatchObject({ status: 'void', upstreamCleanup: false });
    // Nothing charged, nothing booked here: the provider must not keep a confirmed booking nobody pays for.
    await checkInvariants(t, who.user_id);
  });
});

describe('the provider fails during a cancellation (production)', () => {
  async function confirmedBooking() {
    const s = await scenario();
    const offer = await s.api.offer({ checkin: s.checkin, checkout: s.checkout, policy: 'flexible' });
    const res = await s.api.book({ book_token: offer.bookToken, ...booker });
    expect(res.status).toBe(201);
    return { ...s, offer, booking: (await res.json()).data as { id: string; status: string } };
  }

  it('the cancel fails at the provider: 502, the booking is confirmed again, no refund; a later cancel refunds once', async () => {
    const { who, api, offer, booking } = await confirmedBooking();
    proxy.rule = (r) => (isCancel(r) ? 'fail' : 'forward');

    const res = await api.cancel(booking.id);
    expect(res.status).toBe(502);
    expect((await (await api.get(booking.id)).json()).data.status).toBe('confirmed');
    let state = await checkInvariants(t, who.user_id);
    expect(state.ledger.filter((e) => e.kind === 'booking_refund')).toEqual([]);
    expect(state.balance).toBe(START - BigInt(offer.amount));

    proxy.heal();
    const again = await api.cancel(booking.id);
    expect(again.status).toBe(200);
    state = await checkInvariants(t, who.user_id);
    expect(state.bookings[0]!.status).toBe('cancelled');
    expect(state.balance).toBe(START);
  });

  it('a cancellation that failed does not fix the fee of a later one: the later cancel charges what the preview says', async () => {
    // Flexible, checking in in three days: free now, 100 % once within 24 h of 15:00 on the day.
    const s = await scenario();
    const offer = await s.api.offer({ checkin: day(3), checkout: day(4), policy: 'flexible' });
    const res = await s.api.book({ book_token: offer.bookToken, ...booker });
    expect(res.status).toBe(201);
    const booking = (await res.json()).data;
    expect(booking.cancellationDeadline).not.toBeNull();

    proxy.rule = (r) => (isCancel(r) ? 'fail' : 'forward');
    expect((await s.api.cancel(booking.id)).status).toBe(502);
    expect((await only(s.who)).status).toBe('confirmed');
    proxy.heal();

    // Past the free period the partner cancels again: the preview names the full fee...
    clockOffsetMs = Date.parse(booking.cancellationDeadline) + 3_600_000 - Date.now();
    const preview = (await (await s.api.call('GET', `/bookings/${booking.id}/cancellation-fee`)).json()).data;
    expect(preview).toMatchObject({ cancellation_fee: offer.amount, refund_amount: 0 });
    // ...and the cancellation charges it: the earlier attempt was undone and fixes nothing.
    const cancelled = await s.api.cancel(booking.id);
    expect(cancelled.status).toBe(200);
    expect((await cancelled.json()).data).toMatchObject({ cancellation_fee: preview.cancellation_fee, refund_amount: preview.refund_amount });
    const state = await checkInvariants(t, s.who.user_id);
    expect(state.balance).toBe(START - BigInt(offer.amount));
  });

  it('the provider refuses to cancel (the guest checked in): 409 BOOKING_NOT_CANCELLABLE, no refund; the sweeper brings the status over', async () => {
    const { who, api, booking } = await confirmedBooking();
    await setProviderStatus(booking.id, 'checked_in');

    const res = await api.cancel(booking.id);
    expect(res.status).toBe(409);
    expect((await res.json()).error.code).toBe('BOOKING_NOT_CANCELLABLE');
    expect((await only(who)).status).toBe('confirmed');

    await runBookingSync(t.service.deps);
    const state = await checkInvariants(t, who.user_id);
    expect(state.bookings[0]!.status).toBe('checked_in');
    expect(state.ledger.filter((e) => e.kind === 'booking_refund')).toEqual([]);
  });

  it('the provider cancels but the answer is lost: 502 and confirmed here; the sweeper sees it cancelled and completes it with one refund', async () => {
    const { who, api, offer, booking } = await confirmedBooking();
    proxy.rule = (r) => (isCancel(r) ? 'forward-then-drop' : 'forward');

    const res = await api.cancel(booking.id);
    expect(res.status).toBe(502);
    expect((await only(who)).status).toBe('confirmed');
    expect((await atProvider(booking.id))?.status).toBe('cancelled');
    expect((await channelState(t, who.user_id)).balance).toBe(START - BigInt(offer.amount));

    proxy.heal();
    // Two instances sweeping at once still refund once.
    await Promise.all([runBookingSync(t.service.deps), runBookingSync(t.service.deps)]);
    const state = await checkInvariants(t, who.user_id);
    expect(state.bookings[0]!.status).toBe('cancelled');
    expect(state.ledger.filter((e) => e.kind === 'booking_refund').map((e) => e.amount)).toEqual([BigInt(offer.amount)]);
    expect(state.events.filter((e) => e.type === 'reservation.cancelled')).toHaveLength(1);
    expect(state.balance).toBe(START);

    // A second pass changes nothing.
    await runBookingSync(t.service.deps);
    expect((await checkInvariants(t, who.user_id)).ledger).toHaveLength(state.ledger.length);
  });
});

describe('the partner and the sweeper at once (production)', () => {
  it('after a lost cancel answer, partner retries and two sweeps racing: cancelled once, refunded once', async () => {
    const s = await scenario();
    const offer = await s.api.offer({ checkin: s.checkin, checkout: s.checkout, policy: 'flexible' });
    const booking = (await (await s.api.book({ book_token: offer.bookToken, ...booker })).json()).data;
    proxy.rule = (r) => (isCancel(r) ? 'forward-then-drop' : 'forward');
    expect((await s.api.cancel(booking.id)).status).toBe(502);
    proxy.heal();

    const [partner] = await Promise.all([
      Promise.all(Array.from({ length: 5 }, () => s.api.cancel(booking.id).then((r) => r.status))),
      runBookingSync(t.service.deps),
      runBookingSync(t.service.deps),
    ]);
    // Each partner call either did the cancellation or found it done or under way.
    expect(partner.every((status) => status === 200 || status === 409)).toBe(true);
    expect(partner.filter((status) => status === 200).length).toBeLessThanOrEqual(1);
    const state = await checkInvariants(t, s.who.user_id);
    expect(state.bookings[0]!.status).toBe('cancelled');
    expect(state.ledger.filter((e) => e.kind === 'booking_refund')).toHaveLength(1);
    expect(state.events.filter((e) => e.type === 'reservation.cancelled')).toHaveLength(1);
    expect(state.balance).toBe(START);
  });
});

describe('a crash between the steps (production)', () => {
  // Older than the longest a request can take (its lease): no request can still be running for it.
  const old = () => new Date(t.service.deps.clock().getTime() - requestLeaseMs(t.service.deps) - 1_000);

  it('a processing row the provider holds: the sweeper confirms it, with its events', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    const row = await insertProcessingBooking(t, who, offer.bookToken, { createdAt: old(), charged: true });
    expect((await bookAtProvider(simulator.url, row)).status).toBe(201);

    await runBookingSync(t.service.deps);
    const state = await checkInvariants(t, who.user_id);
    expect(state.bookings[0]).toMatchObject({ id: row.id, status: 'confirmed' });
    expect(state.bookings[0]!.hubBookingNumber).toBe((await atProvider(row.id))!.confirmation_number);
    expect(state.events.map((e) => e.type)).toEqual(['reservation.created', 'reservation.confirmed']);
    expect(state.balance).toBe(START - BigInt(offer.amount));
    // The partner, who got no answer, retries: the token is used, and names the booking.
    const retry = await api.book({ book_token: offer.bookToken, ...booker });
    expect(retry.status).toBe(422);
    expect((await retry.json()).error).toMatchObject({ code: 'BOOK_TOKEN_USED', details: { booking_id: row.id } });
    expect((await api.get(row.id)).status).toBe(200);
  });

  it('a processing row the provider does not know: void, charge given back', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    await insertProcessingBooking(t, who, offer.bookToken, { createdAt: old(), charged: true });

    await runBookingSync(t.service.deps);
    const state = await checkInvariants(t, who.user_id);
    expect(state.bookings[0]!.status).toBe('void');
    expect(state.balance).toBe(START);
    // And the token books again.
    expect((await api.book({ book_token: offer.bookToken, ...booker })).status).toBe(201);
    await checkInvariants(t, who.user_id);
  });

  it('a recent processing row is left alone (its request may still be running)', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    const row = await insertProcessingBooking(t, who, offer.bookToken, { createdAt: t.service.deps.clock(), charged: true });
    await runBookingSync(t.service.deps);
    expect((await only(who)).status).toBe('processing');
    // Settle it for the invariants: once old, the sweeper voids it.
    clockOffsetMs = requestLeaseMs(t.service.deps) + 1_000;
    await runBookingSync(t.service.deps);
    expect((await only(who)).status).toBe('void');
    expect(row.id).toBe((await only(who)).id);
    await checkInvariants(t, who.user_id);
  });

  it('a cancelling row: completed with one refund when the provider cancelled it, put back when it did not', async () => {
    const a = await scenario();
    const offerA = await a.api.offer({ checkin: a.checkin, checkout: a.checkout, policy: 'flexible' });
    const bookedA = (await (await a.api.book({ book_token: offerA.bookToken, ...booker })).json()).data;
    const b = await scenario();
    const offerB = await b.api.offer({ checkin: b.checkin, checkout: b.checkout, policy: 'flexible' });
    const bookedB = (await (await b.api.book({ book_token: offerB.bookToken, ...booker })).json()).data;
    // As a process that stopped after moving them to cancelling would leave them; A was
    // cancelled at the provider before the stop, B was not.
    const at = old();
    for (const id of [bookedA.id, bookedB.id]) {
      await t.service.deps.db.prisma.booking.update({
        where: { id },
        data: { status: 'cancelling', previousStatus: 'confirmed', cancelRequestedAt: at, updatedAt: at },
      });
    }
    await fetch(`${simulator.url}/bookings/${bookedA.id}/cancel`, { method: 'POST' });

    await runBookingSync(t.service.deps);
    const stateA = await checkInvariants(t, a.who.user_id);
    expect(stateA.bookings[0]!.status).toBe('cancelled');
    expect(stateA.balance).toBe(START);
    const stateB = await checkInvariants(t, b.who.user_id);
    expect(stateB.bookings[0]!.status).toBe('confirmed');
    expect(stateB.balance).toBe(START - BigInt(offerB.amount));
  });
});

describe('pending bookings (production)', () => {
  it('past its payment deadline a pending booking is cancelled by the sweeper, everything refunded', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    proxy.rule = (r) => (isBook(r) ? { forward: true, scenario: 'pending' } : 'forward');

    const res = await api.book({ book_token: offer.bookToken, ...booker });
    expect(res.status).toBe(201);
    const booking = (await res.json()).data;
    expect(booking.status).toBe('pending');
    const row = await only(who);
    expect(row.paymentDeadline).not.toBeNull();
    await checkInvariants(t, who.user_id);

    // Before the deadline nothing happens.
    proxy.heal();
    await runBookingSync(t.service.deps);
    expect((await only(who)).status).toBe('pending');

    clockOffsetMs = row.paymentDeadline!.getTime() - Date.now() + 60_000;
    await Promise.all([runBookingSync(t.service.deps), runBookingSync(t.service.deps)]);
    const state = await checkInvariants(t, who.user_id);
    expect(state.bookings[0]).toMatchObject({ status: 'cancelled', cancellationFee: 0n, refundAmount: BigInt(offer.amount) });
    expect(state.events.map((e) => e.type)).toEqual(['reservation.created', 'reservation.cancelled']);
    expect(state.balance).toBe(START);
  });

  it('a pending booking the provider reports failed: failed, everything refunded', async () => {
    const { who, api, checkin, checkout } = await scenario();
    const offer = await api.offer({ checkin, checkout });
    proxy.rule = (r) => (isBook(r) ? { forward: true, scenario: 'pending' } : 'forward');
    const booking = (await (await api.book({ book_token: offer.bookToken, ...booker })).json()).data;
    expect(booking.status).toBe('pending');
    proxy.heal();

    await setProviderStatus(booking.id, 'failed');
    await runBookingSync(t.service.deps);
    const state = await checkInvariants(t, who.user_id);
    expect(state.bookings[0]).toMatchObject({ status: 'failed', refundAmount: BigInt(offer.amount) });
    expect(state.balance).toBe(START);
  });
});

describe('sandbox scenarios (no money)', () => {
  let sandbox: TestService;

  beforeAll(async () => {
    sandbox = await startTestService({ UPSTREAM_URL: simulator.url, UPSTREAM_BOOKING_TIMEOUT_MS: String(BOOKING_TIMEOUT_MS) });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('X-Test-Scenario: pending gives a pending booking with a payment deadline; the provider confirming it is applied by the sweeper', async () => {
    const who = await sandbox.channel({});
    const api = v1(sandbox, who);
    const offer = await api.offer({ checkin: day(70), checkout: day(71) });
    const res = await api.book({ book_token: offer.bookToken, ...booker }, { 'x-test-scenario': 'pending' });
    expect(res.status).toBe(201);
    const booking = (await res.json()).data;
    expect(booking.status).toBe('pending');
    const [row] = (await channelState(sandbox, who.user_id)).bookings;
    expect(row!.paymentDeadline).not.toBeNull();
    expect(row!.charged).toBe(false);
    await checkInvariants(sandbox, who.user_id);

    await setProviderStatus(booking.id, 'confirmed');
    await runBookingSync(sandbox.service.deps);
    const state = await checkInvariants(sandbox, who.user_id);
    expect(state.bookings[0]!.status).toBe('confirmed');
    expect(state.events.map((e) => e.type)).toEqual(['reservation.created', 'reservation.confirmed']);
    expect(state.ledger).toEqual([]);
  });

  it('X-Test-Scenario: upstream_error: 502, void, nothing left at the provider, no ledger entry; the token books afterwards', async () => {
    const who = await sandbox.channel({});
    const api = v1(sandbox, who);
    const offer = await api.offer({ checkin: day(71), checkout: day(72) });
    const res = await api.book({ book_token: offer.bookToken, ...booker }, { 'x-test-scenario': 'upstream_error' });
    expect(res.status).toBe(502);
    let state = await checkInvariants(sandbox, who.user_id);
    expect(state.bookings.map((b) => b.status)).toEqual(['void']);
    expect(state.ledger).toEqual([]);

    expect((await api.book({ book_token: offer.bookToken, ...booker })).status).toBe(201);
    state = await checkInvariants(sandbox, who.user_id);
    expect(state.bookings.map((b) => b.status).sort()).toEqual(['confirmed', 'void']);
  });
});
