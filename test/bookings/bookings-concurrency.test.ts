import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topUp } from '../../src/services/channels/index.js';
import { burst, checkInvariants, countBy, sameRateTokens } from '../helpers/bookingInvariants.js';
import { day, v1 } from '../helpers/flow.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The booking flow under concurrent requests, in production (money moves): one book_token books
 * once, the balance is never overdrawn, a booking is cancelled and refunded once, and an
 * Idempotency-Key runs its request once. Runs on the embedded PGlite by default and on
 * PostgreSQL with DATABASE_URL (and Redis with REDIS_URL).
 */

let t: TestService;

beforeAll(async () => {
  t = await startTestService({ CHANNEL_ENV: 'production' });
});
afterAll(async () => {
  await t.close();
});

const START = 100_000_000n;
const booker = { booker_name: 'Concurrent Booker', guest_first_name: 'Kim', guest_last_name: 'Minji' };

describe('concurrent bookings and cancellations (production)', () => {
  it('50 parallel POST /bookings with one book_token: one 201, 49 × 422 BOOK_TOKEN_USED naming it, one row, one charge', async () => {
    const who = await t.channel({ balance: START });
    const api = v1(t, who);
    const offer = await api.offer({ checkin: day(40), checkout: day(42) });

    const results = await burst(50, () => api.book({ book_token: offer.bookToken, ...booker }));

    expect(countBy(results, (r) => r.status)).toEqual({ 201: 1, 422: 49 });
    const created = results.find((r) => r.status === 201)!.body.data;
    expect(created.status).toBe('confirmed');
    expect(created.totalAmount).toBe(String(offer.amount));
    for (const r of results.filter((r) => r.status === 422)) {
      expect(r.body.error.code).toBe('BOOK_TOKEN_USED');
      expect(r.body.error.details.booking_id).toBe(created.id);
    }

    const state = await checkInvariants(t, who.user_id);
    expect(state.bookings.map((b) => [b.id, b.status])).toEqual([[created.id, 'confirmed']]);
    expect(state.ledger.filter((e) => e.kind === 'booking_charge').map((e) => [e.reference, e.amount])).toEqual([[created.id, -BigInt(offer.amount)]]);
    expect(state.balance).toBe(START - BigInt(offer.amount));
    expect(state.events.map((e) => e.type)).toEqual(['reservation.created', 'reservation.confirmed']);
  });

  it('20 parallel bookings against a balance that covers 5: 5 × 201, 15 × 402 INSUFFICIENT_BALANCE, nothing left of the refused ones', async () => {
    const who = await t.channel({});
    // Twenty tokens of one rate and stay, so every booking charges the same amount and exactly
    // five fit; the rate has at least five rooms free so the provider can take all five.
    const rate = await sameRateTokens(t, who, 20, { checkin: day(50), checkout: day(51), minRooms: 5, from: 3 });
    const amount = BigInt(rate.amount);
    // Five fit; a sixth is short by 1 KRW.
    const start = amount * 6n - 1n;
    await topUp(t.service.deps.db.prisma, who.user_id, start, 'concurrency-test');
    const api = v1(t, who);

    const results = await burst(20, (i) => api.book({ book_token: rate.bookTokens[i], ...booker }));

    expect(countBy(results, (r) => r.status)).toEqual({ 201: 5, 402: 15 });
    const confirmed = results.filter((r) => r.status === 201).map((r) => r.body.data);
    expect(confirmed.every((b) => b.status === 'confirmed' && b.totalAmount === String(amount))).toBe(true);
    for (const r of results.filter((r) => r.status === 402)) {
      expect(r.body.error.code).toBe('INSUFFICIENT_BALANCE');
      expect(r.body.error.details.required).toBe(rate.amount);
    }

    const state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(start - 5n * amount);
    expect(state.balance).toBe(amount - 1n);
    // A 402 rolls back the whole first step: no row at all, void or otherwise, and no entry.
    expect(state.bookings.map((b) => b.id).sort()).toEqual(confirmed.map((b) => b.id).sort());
    expect(state.bookings.every((b) => b.status === 'confirmed')).toBe(true);
    expect(countBy(state.ledger, (e) => e.kind)).toEqual({ top_up: 1, booking_charge: 5 });
  });

  it('20 parallel PUT /bookings/{id}/cancel: one 200, 19 × 409 BOOKING_ALREADY_CANCELLED, one refund, one reservation.cancelled', async () => {
    const who = await t.channel({ balance: START });
    const api = v1(t, who);
    // Flexible and 45 days out: cancelling is free, so the refund is the whole amount.
    const offer = await api.offer({ checkin: day(45), checkout: day(46), policy: 'flexible' });
    const res = await api.book({ book_token: offer.bookToken, ...booker });
    expect(res.status).toBe(201);
    const booking = (await res.json()).data;

    const results = await burst(20, () => api.cancel(booking.id));

    expect(countBy(results, (r) => r.status)).toEqual({ 200: 1, 409: 19 });
    const done = results.find((r) => r.status === 200)!.body.data;
    expect(done).toMatchObject({ booking_id: booking.id, status: 'cancelled', cancellation_fee: 0, refund_amount: offer.amount });
    for (const r of results.filter((r) => r.status === 409)) {
      expect(r.body.error.code).toBe('BOOKING_ALREADY_CANCELLED');
      expect(r.body.error.details.booking_id).toBe(booking.id);
    }

    const state = await checkInvariants(t, who.user_id);
    expect(state.bookings.map((b) => b.status)).toEqual(['cancelled']);
    expect(state.ledger.filter((e) => e.kind === 'booking_refund').map((e) => e.amount)).toEqual([BigInt(done.refund_amount)]);
    expect(state.events.filter((e) => e.type === 'reservation.cancelled')).toHaveLength(1);
    expect(state.balance).toBe(START - BigInt(offer.amount) + BigInt(done.refund_amount));
    expect(state.balance).toBe(START);
  });

  it('Idempotency-Key: 10 parallel POSTs with one key and body make one booking; other answers are replays or IN_PROGRESS; another body is REUSED', async () => {
    const who = await t.channel({ balance: START });
    const api = v1(t, who);
    const offer = await api.offer({ checkin: day(47), checkout: day(48) });
    const body = { book_token: offer.bookToken, ...booker };
    const key = { 'idempotency-key': `concurrency-${who.user_id}` };

    const results = await burst(10, () => api.book(body, key));

    const byOutcome = countBy(results, (r) =>
      r.status === 201 ? (r.headers.get('idempotent-replayed') === 'true' ? 'replayed' : 'first') : `${r.status} ${r.body.error?.code}`,
    );
    // Exactly one request ran; every other one is a replay of it or was told to retry.
    expect(byOutcome.first).toBe(1);
    expect(Object.keys(byOutcome).every((k) => ['first', 'replayed', '409 IDEMPOTENCY_KEY_IN_PROGRESS'].includes(k))).toBe(true);
    const ids = new Set(results.filter((r) => r.status === 201).map((r) => r.body.data.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    for (const r of results.filter((r) => r.status === 409)) expect(r.headers.get('retry-after')).toBe('1');

    // Once the first has finished, the same request is a replay of it.
    const again = await api.book(body, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await again.json()).data.id).toBe(id);

    // The same key with another body is refused, and books nothing.
    const other = await api.book({ ...body, booker_name: 'Someone Else' }, key);
    expect(other.status).toBe(409);
    expect((await other.json()).error.code).toBe('IDEMPOTENCY_KEY_REUSED');

    const state = await checkInvariants(t, who.user_id);
    expect(state.bookings.map((b) => [b.id, b.status])).toEqual([[id, 'confirmed']]);
    expect(state.ledger.filter((e) => e.kind === 'booking_charge')).toHaveLength(1);
    expect(state.balance).toBe(START - BigInt(offer.amount));
  });
});
