import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLeaseMs } from '../../src/services/bookings/index.js';
import { runBookingSync } from '../../src/services/reservations/index.js';
import { freeCancellationBefore } from '../../src/services/search/index.js';
import { UpstreamError } from '../../src/services/kernel/index.js';
import { topUp, type IssuedCredentials } from '../../src/services/channels/index.js';
import type { CancellationPolicyType } from '../../src/services/catalog/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import type { UpstreamClient } from '../../src/upstream/client.js';
import { checkInvariants, channelState, countBy } from '../helpers/bookingInvariants.js';
import { day, v1 } from '../helpers/flow.js';
import { expectError } from '../helpers/http.js';
import { apiKey, bearerWith, startTestService, type TestService } from '../helpers/service.js';

/**
 * Date changes (POST /channel/v1/reservations/{id}/modify-dates and GraphQL modifyBookingDates)
 * and the fee preview alias GET /channel/v1/reservations/{id}/cancellation-fee, as a partner sees
 * them: the preview changes nothing; a commit re-prices through the provider, charges or refunds
 * the difference through the ledger (production), moves the booking at the provider and sends
 * reservation.modified; refusals, failures and races leave money and provider consistent
 * (checkInvariants after each scenario).
 */

let sandbox: TestService;
let production: TestService;
/** The services' clock: real time shifted by offsetMs, or fixed at `fixedAt`. */
let offsetMs = 0;
let fixedAt: number | null = null;
const clock = () => new Date(fixedAt ?? Date.now() + offsetMs);

beforeAll(async () => {
  [sandbox, production] = await Promise.all([
    startTestService({}, { clock }),
    startTestService({ CHANNEL_ENV: 'production' }, { clock }),
  ]);
});
afterAll(async () => {
  await Promise.all([sandbox?.close(), production?.close()]);
});

type Api = ReturnType<typeof v1>;

const modify = (api: Api, id: string, body: unknown, headers: Record<string, string> = {}) =>
  api.call('POST', `/reservations/${id}/modify-dates`, body, headers);

interface Booked {
  id: string;
  amount: number;
  propertyId: number;
  roomtypeId: string;
  rateplanId: string;
  policy: CancellationPolicyType;
  checkin: string;
  checkout: string;
}

/** A rate's offer for a stay: its free rooms and price_check_token (null when it cannot be booked). */
async function rateFor(api: Api, r: { propertyId: number; roomtypeId: string; rateplanId: string }, checkin: string, checkout: string) {
  const res = await api.call(
    'GET',
    `/search/availability/${r.propertyId}?checkin=${checkin}&checkout=${checkout}&adults=2&roomtype_id=${r.roomtypeId}&rateplan_id=${r.rateplanId}`,
  );
  if (res.status !== 200) return null;
  const room = (await res.json()).data.room_types.find((x: { roomtype_id: string }) => x.roomtype_id === r.roomtypeId);
  return (room?.rates.find((x: { rateplan_id: string }) => x.rateplan_id === r.rateplanId) ?? null) as {
    available_rooms: number;
    price_check_token: string | null;
    pricing: { billable_totals: { inclusive_amount: number } };
  } | null;
}

/** Books one rate for a stay through the price check; null when it cannot be booked. */
async function bookRate(
  api: Api,
  r: { propertyId: number; roomtypeId: string; rateplanId: string; policy: CancellationPolicyType },
  checkin: string,
  checkout: string,
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Promise<Booked | null> {
  const rate = await rateFor(api, r, checkin, checkout);
  if (!rate?.price_check_token) return null;
  const checked = (await (await api.call('GET', `/search/price-check?token=${encodeURIComponent(rate.price_check_token)}`)).json()).data;
  if (!checked?.book_token) return null;
  const res = await api.book({ book_token: checked.book_token, booker_name: 'Date Changer', ...extra }, headers);
  const created = (await res.json()).data;
  expect(res.status).toBe(201);
  return { ...r, id: created.id, amount: checked.pricing.billable_totals.inclusive_amount, checkin, checkout };
}

/**
 * Books a rate of `policy` (flexible unless told) for the stay, from property `from` on, choosing
 * one with a room free over every stay of `free` too (default: the stay and four nights more), so
 * the changes a test makes find rooms. `body`: more fields of POST /bookings (sale_amount, ...).
 */
async function book(
  api: Api,
  q: { from: number; checkin: string; checkout: string; policy?: CancellationPolicyType; free?: [string, string][]; body?: Record<string, unknown> },
  headers: Record<string, string> = {},
): Promise<Booked> {
  const policy = q.policy ?? 'flexible';
  const free = q.free ?? [[q.checkin, day(4, Date.parse(`${q.checkout}T12:00:00Z`))]];
  for (let propertyId = q.from; propertyId < q.from + 60; propertyId++) {
    const res = await api.call('GET', `/search/availability/${propertyId}?checkin=${q.checkin}&checkout=${q.checkout}&adults=2`);
    if (res.status !== 200) continue;
    for (const room of (await res.json()).data.room_types) {
      for (const rate of room.rates) {
        if (rate.cancellation_policy.type !== policy || rate.available_rooms < 1) continue;
        const r = { propertyId, roomtypeId: room.roomtype_id as string, rateplanId: rate.rateplan_id as string, policy };
        let ok = true;
        for (const [checkin, checkout] of free) ok = ok && ((await rateFor(api, r, checkin, checkout))?.available_rooms ?? 0) >= 1;
        if (!ok) continue;
        const booked = await bookRate(api, r, q.checkin, q.checkout, headers, q.body);
        if (booked) return booked;
      }
    }
  }
  throw new Error(`no ${policy} rate free over ${JSON.stringify(free)} from property ${q.from}`);
}

/** A rate's price for a stay as the search shows it (KRW inclusive), to check the re-pricing. */
async function searchedTotal(api: Api, b: Booked, checkin: string, checkout: string): Promise<number> {
  const res = await api.call(
    'GET',
    `/search/availability/${b.propertyId}?checkin=${checkin}&checkout=${checkout}&adults=2&roomtype_id=${b.roomtypeId}&rateplan_id=${b.rateplanId}`,
  );
  const { data } = await res.json();
  const rate = data.room_types.find((r: { roomtype_id: string }) => r.roomtype_id === b.roomtypeId).rates.find((r: { rateplan_id: string }) => r.rateplan_id === b.rateplanId);
  return rate.pricing.billable_totals.inclusive_amount;
}

async function row(t: TestService, id: string) {
  return t.service.deps.db.prisma.booking.findUniqueOrThrow({ where: { id } });
}

async function providerView(t: TestService, id: string) {
  const b = await t.service.deps.upstream.getBooking(id);
  return b && { status: b.status, checkin: b.checkin, checkout: b.checkout, total: b.total };
}

/** Everything a date change could touch, to compare before and after a refusal or a preview. */
async function snapshot(t: TestService, who: IssuedCredentials, id: string) {
  const state = await channelState(t, who.user_id);
  return {
    balance: state.balance,
    ledger: state.ledger.map((e) => [e.kind, e.reference, e.amount]),
    events: state.events.map((e) => [e.type, e.bookingId]),
    modifications: state.modifications.map((m) => [m.id, m.state]),
    booking: await row(t, id),
    provider: await providerView(t, id),
  };
}

/** Replaces one method of the service's provider client until `restore()`. */
function patchUpstream<K extends 'modifyBooking' | 'abortModification' | 'cancelBooking' | 'quoteChange'>(
  t: TestService,
  name: K,
  make: (original: UpstreamClient[K]) => UpstreamClient[K],
): { restore(): void } {
  const upstream = t.service.deps.upstream;
  const original = upstream[name].bind(upstream) as UpstreamClient[K];
  (upstream as unknown as Record<string, unknown>)[name] = make(original);
  return {
    restore() {
      delete (upstream as unknown as Record<string, unknown>)[name];
    },
  };
}

const START = 5_000_000n;

/** Takes the whole balance away through the ledger (a test top-up of the negative balance). */
async function spendAll(t: TestService, who: IssuedCredentials): Promise<void> {
  const { balance } = await t.service.deps.db.prisma.channel.findUniqueOrThrow({ where: { id: who.user_id } });
  await topUp(t.service.deps.db.prisma, who.user_id, -balance, `spend-${who.user_id}`);
}

// ---------------------------------------------------------------------------------------------

describe('POST /reservations/{id}/modify-dates: preview', () => {
  it('answers the new price, the difference and the new policy, and changes nothing (booking, provider, ledger, events)', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 1, checkin: day(40), checkout: day(42) });
    const before = await snapshot(production, who, b.id);
    const expectedTotal = await searchedTotal(api, b, day(40), day(43));

    const res = await modify(api, b.id, { checkin: day(40), checkout: day(43), preview: true });
    expect(res.status).toBe(200);
    const { data } = await res.json();
    const tz = (await row(production, b.id)).timezone;
    expect(data).toEqual({
      booking_id: b.id,
      preview: true,
      modification_id: null,
      previous: { checkin: day(40), checkout: day(42), total_amount: b.amount },
      checkin: day(40),
      checkout: day(43),
      nights: 3,
      pricing: {
        request_currency: 'KRW',
        billable_currency: 'KRW',
        totals: { inclusive_amount: expectedTotal, exclusive_amount: expect.any(Number) },
        billable_totals: { inclusive_amount: expectedTotal, exclusive_amount: expect.any(Number) },
      },
      old_total: b.amount,
      new_total: expectedTotal,
      difference: expectedTotal - b.amount,
      change_fee: 0,
      currency: 'KRW',
      cancellation_policy: { type: 'flexible', free_cancellation_before: freeCancellationBefore('flexible', day(40), tz)!.toISOString() },
      free_change_before: freeCancellationBefore('flexible', day(40), tz)!.toISOString(),
      booking: null,
    });
    expect(data.difference).toBeGreaterThan(0);
    expect(await snapshot(production, who, b.id)).toEqual(before);
    await checkInvariants(production, who.user_id);
  });

  it('previews a cheaper stay with a negative difference, and a moved stay with the new check-in deadline', async () => {
    const api = v1(production, await production.channel({ balance: START }));
    // The moved stay must be bookable too, whatever today's date makes of the simulator's stock.
    const b = await book(api, { from: 3, checkin: day(40), checkout: day(43), policy: 'moderate', free: [[day(40), day(47)], [day(50), day(53)]] });
    const shorter = (await (await modify(api, b.id, { checkin: day(41), checkout: day(43), preview: true })).json()).data;
    expect(shorter.difference).toBe(shorter.new_total - b.amount);
    expect(shorter.difference).toBeLessThan(0);
    const moved = (await (await modify(api, b.id, { checkin: day(50), checkout: day(53), preview: true })).json()).data;
    const tz = (await row(production, b.id)).timezone;
    expect(moved.cancellation_policy).toEqual({ type: 'moderate', free_cancellation_before: freeCancellationBefore('moderate', day(50), tz)!.toISOString() });
    expect(moved.free_change_before).toBe(freeCancellationBefore('moderate', day(40), tz)!.toISOString());
    expect(moved.new_total).toBe(await searchedTotal(api, b, day(50), day(53)));
  });
});

describe('POST /reservations/{id}/modify-dates: commit (production, the balance pays)', () => {
  it('a longer stay: the difference charged exactly once, the booking and the provider moved, reservation.modified sent', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 5, checkin: day(40), checkout: day(42) });
    const newTotal = await searchedTotal(api, b, day(40), day(44));
    const difference = newTotal - b.amount;
    expect(difference).toBeGreaterThan(0);

    const res = await modify(api, b.id, { checkin: day(40), checkout: day(44) });
    expect(res.status).toBe(200);
    const { data } = await res.json();
    const tz = (await row(production, b.id)).timezone;
    expect(data).toMatchObject({ booking_id: b.id, preview: false, old_total: b.amount, new_total: newTotal, difference, change_fee: 0, nights: 4 });
    expect(data.modification_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(data.booking).toMatchObject({
      id: b.id,
      status: 'confirmed',
      checkin: day(40),
      checkout: day(44),
      totalAmount: String(newTotal),
      netAmount: String(newTotal),
      cancellationPolicy: 'flexible',
      cancellationDeadline: freeCancellationBefore('flexible', day(40), tz)!.toISOString(),
    });
    expect((await (await api.get(b.id)).json()).data).toEqual(data.booking);

    const state = await checkInvariants(production, who.user_id);
    expect(state.balance).toBe(START - BigInt(newTotal));
    expect(state.ledger.filter((e) => e.kind.startsWith('booking_') || e.kind.startsWith('modification_')).map((e) => [e.kind, e.reference, e.amount])).toEqual([
      ['booking_charge', b.id, -BigInt(b.amount)],
      ['modification_charge', data.modification_id, -BigInt(difference)],
    ]);
    expect(await providerView(production, b.id)).toEqual({ status: 'confirmed', checkin: day(40), checkout: day(44), total: newTotal });

    const modified = state.events.filter((e) => e.type === 'reservation.modified');
    expect(modified).toHaveLength(1);
    expect(modified[0]!.payload).toMatchObject({ id: b.id, checkin: day(40), checkout: day(44), totalAmount: String(newTotal), status: 'confirmed' });
    expect(state.events.map((e) => e.type)).toEqual(['reservation.created', 'reservation.confirmed', 'reservation.modified']);
  });

  it('a shorter stay: the difference refunded once; a later cancellation refunds from the new total', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 7, checkin: day(40), checkout: day(43) });
    const res = await modify(api, b.id, { checkin: day(41), checkout: day(43) });
    expect(res.status).toBe(200);
    const { data } = await res.json();
    expect(data.difference).toBeLessThan(0);
    let state = await checkInvariants(production, who.user_id);
    expect(state.balance).toBe(START - BigInt(data.new_total));
    expect(state.ledger.filter((e) => e.kind.startsWith('modification_')).map((e) => [e.kind, e.reference, e.amount])).toEqual([
      ['modification_refund', data.modification_id, BigInt(-data.difference)],
    ]);

    const cancelled = (await (await api.cancel(b.id)).json()).data;
    expect(cancelled).toMatchObject({ cancellation_fee: 0, refund_amount: data.new_total });
    state = await checkInvariants(production, who.user_id);
    expect(state.balance).toBe(START);
  });

  it('the same price: no ledger entry, the dates still move (sale_amount kept) and reservation.modified is sent', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    // Two single nights with the same price for one refundable rate, from the nightly lines of /search/rates.
    const found = await equalNights(api, 9);
    const b = (await bookRate(api, found, found.night, nextDay(found.night), {}, { sale_amount: 77_000 }))!;
    const res = await modify(api, b.id, { checkin: found.other, checkout: nextDay(found.other) });
    expect(res.status).toBe(200);
    const { data } = await res.json();
    expect(data).toMatchObject({
      difference: 0,
      old_total: b.amount,
      new_total: b.amount,
      booking: { checkin: found.other, checkout: nextDay(found.other), saleAmount: '77000' },
    });
    const state = await checkInvariants(production, who.user_id);
    expect(state.balance).toBe(START - BigInt(b.amount));
    expect(state.ledger.filter((e) => e.kind.startsWith('modification_'))).toEqual([]);
    expect(state.modifications.map((m) => m.state)).toEqual(['applied']);
    expect(state.events.map((e) => e.type)).toContain('reservation.modified');
    expect(await providerView(production, b.id)).toMatchObject({ checkin: found.other, total: b.amount });
  });

  it('sale_amount: a commit stores the one given; without one, a new total clears the old customer price and the voucher prints the total paid', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const voucherPrice = async (id: string) => {
      const res = await api.call('GET', `/reservations/${id}/voucher?format=html`);
      expect(res.status).toBe(200);
      return /data-field="price">([^<]*)</.exec(await res.text())?.[1];
    };
    const krw = (n: number) => `KRW ${n.toLocaleString('en-US')}`;
    const b = await book(api, { from: 72, checkin: day(40), checkout: day(42), body: { sale_amount: 999_000 } });
    expect(await voucherPrice(b.id)).toBe(krw(999_000));

    // A preview changes nothing, sale_amount or not.
    expect((await modify(api, b.id, { checkin: day(40), checkout: day(43), preview: true, sale_amount: 5_000 })).status).toBe(200);
    expect((await (await api.get(b.id)).json()).data.saleAmount).toBe('999000');

    // Given: stored with the new dates and printed on the voucher.
    let res = await modify(api, b.id, { checkin: day(40), checkout: day(43), sale_amount: 1_234_000 });
    expect(res.status).toBe(200);
    let data = (await res.json()).data;
    expect(data.booking).toMatchObject({ checkout: day(43), saleAmount: '1234000' });
    expect((await (await api.get(b.id)).json()).data.saleAmount).toBe('1234000');
    expect(await voucherPrice(b.id)).toBe(krw(1_234_000));

    // Not given, and the total changes: the old customer price is cleared; the voucher prints what was paid.
    res = await modify(api, b.id, { checkin: day(40), checkout: day(42) });
    expect(res.status).toBe(200);
    data = (await res.json()).data;
    expect(data.difference).not.toBe(0);
    expect(data.booking).toMatchObject({ checkout: day(42), saleAmount: null, totalAmount: String(data.new_total) });
    expect((await (await api.get(b.id)).json()).data.saleAmount).toBeNull();
    expect(await voucherPrice(b.id)).toBe(krw(data.new_total));

    const state = await checkInvariants(production, who.user_id);
    const modified = state.events.filter((e) => e.type === 'reservation.modified');
    expect(modified.map((e) => (e.payload as { saleAmount: string | null }).saleAmount)).toEqual(['1234000', null]);
  });

  it('402 INSUFFICIENT_BALANCE when the balance does not cover the difference: nothing changes, the provider is not asked', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const created = await book(api, { from: 11, checkin: day(40), checkout: day(41) });
    await spendAll(production, who);
    const before = await snapshot(production, who, created.id);
    expect(before.balance).toBe(0n);

    let modifyCalls = 0;
    const spy = patchUpstream(production, 'modifyBooking', (original) => (...args) => {
      modifyCalls++;
      return original(...args);
    });
    try {
      const error = await expectError(await modify(api, created.id, { checkin: day(40), checkout: day(43) }), 402, 'INSUFFICIENT_BALANCE');
      expect(error.details).toMatchObject({ available: 0 });
      expect(error.details!.required).toBeGreaterThan(0);
    } finally {
      spy.restore();
    }
    expect(modifyCalls).toBe(0);
    expect(await snapshot(production, who, created.id)).toEqual(before);
    await checkInvariants(production, who.user_id);
  });

  it('an Idempotency-Key retry gives the first answer again and charges once', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 13, checkin: day(40), checkout: day(42) });
    const body = { checkin: day(40), checkout: day(45) };
    const first = await modify(api, b.id, body, { 'idempotency-key': `change-${b.id}` });
    const firstBody = await first.json();
    expect(first.status).toBe(200);
    const again = await modify(api, b.id, { checkout: day(45), checkin: day(40) }, { 'idempotency-key': `change-${b.id}` });
    const againBody = await again.json();
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(againBody.data).toEqual(firstBody.data);
    await expectError(await modify(api, b.id, { checkin: day(41), checkout: day(45) }, { 'idempotency-key': `change-${b.id}` }), 409, 'IDEMPOTENCY_KEY_REUSED');
    // Without the key, the same change is no change at all.
    await expectError(await modify(api, b.id, body), 400, 'VALIDATION_ERROR');

    const state = await checkInvariants(production, who.user_id);
    expect(countBy(state.ledger, (e) => e.kind)).toEqual({ opening_balance: 1, booking_charge: 1, modification_charge: 1 });
    expect(state.balance).toBe(START - BigInt(firstBody.data.new_total));
    expect(state.events.filter((e) => e.type === 'reservation.modified')).toHaveLength(1);
  });

  it('two changes in a row each charge their own difference from the total the one before left', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 15, checkin: day(40), checkout: day(41) });
    const one = (await (await modify(api, b.id, { checkin: day(40), checkout: day(43) })).json()).data;
    const two = (await (await modify(api, b.id, { checkin: day(40), checkout: day(42) })).json()).data;
    expect(two.old_total).toBe(one.new_total);
    const state = await checkInvariants(production, who.user_id);
    expect(state.balance).toBe(START - BigInt(two.new_total));
    expect(state.events.filter((e) => e.type === 'reservation.modified')).toHaveLength(2);
  });
});

describe('refusals', () => {
  it('409 SOLD_OUT when the provider has no room for the new dates (preview and commit), 502 when it fails; nothing changed', async () => {
    const who = await sandbox.channel();
    const api = v1(sandbox, who);
    const b = await book(api, { from: 20, checkin: day(40), checkout: day(42) });
    const before = await snapshot(sandbox, who, b.id);
    await expectError(await modify(api, b.id, { checkin: day(40), checkout: day(43), preview: true }, { 'x-test-scenario': 'sold_out' }), 409, 'SOLD_OUT');
    await expectError(await modify(api, b.id, { checkin: day(40), checkout: day(43) }, { 'x-test-scenario': 'sold_out' }), 409, 'SOLD_OUT');
    await expectError(await modify(api, b.id, { checkin: day(40), checkout: day(43) }, { 'x-test-scenario': 'upstream_error' }), 502, 'UPSTREAM_ERROR');
    expect(await snapshot(sandbox, who, b.id)).toEqual(before);
    await checkInvariants(sandbox, who.user_id);
  });

  it('409 SOLD_OUT when the rooms are really gone: another booking took the last room on a new night', async () => {
    const who = await production.channel({ balance: 100_000_000n });
    const api = v1(production, who);
    const b = await book(api, { from: 22, checkin: day(60), checkout: day(61) });
    // Take every other room of that rate's room type on the next night.
    let taken = 0;
    for (;;) {
      const res = await api.call(
        'GET',
        `/search/availability/${b.propertyId}?checkin=${day(61)}&checkout=${day(62)}&adults=2&roomtype_id=${b.roomtypeId}&rateplan_id=${b.rateplanId}`,
      );
      const rate = (await res.json()).data.room_types.find((r: { roomtype_id: string }) => r.roomtype_id === b.roomtypeId).rates.find(
        (r: { rateplan_id: string }) => r.rateplan_id === b.rateplanId,
      );
      if (!rate.price_check_token) break;
      const checked = (await (await api.call('GET', `/search/price-check?token=${encodeURIComponent(rate.price_check_token)}`)).json()).data;
      expect((await api.book({ book_token: checked.book_token, booker_name: 'Filler' })).status).toBe(201);
      taken++;
      expect(taken).toBeLessThan(40);
    }
    const before = await snapshot(production, who, b.id);
    await expectError(await modify(api, b.id, { checkin: day(60), checkout: day(62) }), 409, 'SOLD_OUT');
    expect(await snapshot(production, who, b.id)).toEqual(before);
    // Its own room counts as free: moving within the nights it holds is fine.
    await checkInvariants(production, who.user_id);
  });

  it('409 MODIFICATION_NOT_ALLOWED once checked in, here or at the provider', async () => {
    const who = await sandbox.channel();
    const api = v1(sandbox, who);
    const control = (id: string, status: string) =>
      fetch(`${sandbox.service.simulatorUrl}/_control/bookings/${id}/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status }),
      });

    const here = await book(api, { from: 24, checkin: day(40), checkout: day(42) });
    expect((await control(here.id, 'checked_in')).status).toBe(200);
    await runBookingSync(sandbox.service.deps);
    expect((await (await api.get(here.id)).json()).data.status).toBe('checked_in');
    let error = await expectError(await modify(api, here.id, { checkin: day(40), checkout: day(43) }), 409, 'MODIFICATION_NOT_ALLOWED');
    expect(error.details).toEqual({ booking_id: here.id, status: 'checked_in', reason: 'checked_in' });
    await expectError(await modify(api, here.id, { checkin: day(40), checkout: day(43), preview: true }), 409, 'MODIFICATION_NOT_ALLOWED');

    // The property reported it, the sync has not run yet: the provider's refusal says the same.
    const there = await book(api, { from: 26, checkin: day(40), checkout: day(42) });
    expect((await control(there.id, 'checked_in')).status).toBe(200);
    error = await expectError(await modify(api, there.id, { checkin: day(40), checkout: day(43) }), 409, 'MODIFICATION_NOT_ALLOWED');
    expect(error.details).toMatchObject({ reason: 'checked_in', status: 'confirmed' });
    expect((await row(sandbox, there.id)).checkout.toISOString().slice(0, 10)).toBe(day(42));
  });

  it('409 on the check-in day and after the free-cancellation deadline (and never for non-refundable)', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 28, checkin: day(10), checkout: day(12) });
    const checkin = day(10);
    try {
      // Noon in Asia on the check-in day.
      fixedAt = Date.parse(`${checkin}T03:00:00Z`);
      let error = await expectError(await modify(api, b.id, { checkin: day(1, fixedAt), checkout: day(3, fixedAt) }), 409, 'MODIFICATION_NOT_ALLOWED');
      expect(error.details!.reason).toBe('check_in_day_reached');
      // The evening before (past the flexible 24 hours): the free period is over.
      fixedAt = Date.parse(`${checkin}T00:00:00Z`) - 12 * 3_600_000;
      error = await expectError(await modify(api, b.id, { checkin: day(2, fixedAt), checkout: day(3, fixedAt) }), 409, 'MODIFICATION_NOT_ALLOWED');
      expect(error.details).toEqual({ booking_id: b.id, status: 'confirmed', reason: 'free_change_period_ended' });
    } finally {
      fixedAt = null;
    }
    const nr = await book(api, { from: 30, checkin: day(40), checkout: day(41), policy: 'non_refundable' });
    const error = await expectError(await modify(api, nr.id, { checkin: day(41), checkout: day(42), preview: true }), 409, 'MODIFICATION_NOT_ALLOWED');
    expect(error.details!.reason).toBe('free_change_period_ended');
    await checkInvariants(production, who.user_id);
  });

  it('409 MODIFICATION_NOT_ALLOWED for a cancelled or a pending booking', async () => {
    const who = await sandbox.channel();
    const api = v1(sandbox, who);
    const b = await book(api, { from: 32, checkin: day(40), checkout: day(42) });
    expect((await api.cancel(b.id)).status).toBe(200);
    let error = await expectError(await modify(api, b.id, { checkin: day(40), checkout: day(43) }), 409, 'MODIFICATION_NOT_ALLOWED');
    expect(error.details).toEqual({ booking_id: b.id, status: 'cancelled', reason: 'not_confirmed' });
    const pending = await book(api, { from: 34, checkin: day(40), checkout: day(42) }, { 'x-test-scenario': 'pending' });
    error = await expectError(await modify(api, pending.id, { checkin: day(40), checkout: day(43) }), 409, 'MODIFICATION_NOT_ALLOWED');
    expect(error.details).toMatchObject({ status: 'pending', reason: 'not_confirmed' });
    await checkInvariants(sandbox, who.user_id);
  });

  it.each([
    [{ checkin: '2027-13-01', checkout: '2027-13-03' }, 'checkin'],
    [{ checkin: 'tomorrow', checkout: day(42) }, 'checkin'],
    [{ checkout: day(43) }, 'checkin'],
    [{ checkin: day(40) }, 'checkout'],
    [{ checkin: day(43), checkout: day(41) }, 'checkout'],
    [{ checkin: day(41), checkout: day(41) }, 'checkout'],
    [{ checkin: day(40), checkout: day(71) }, 'checkout'],
    [{ checkin: day(-3), checkout: day(2) }, 'checkin'],
    [{ checkin: day(600), checkout: day(601) }, 'checkin'],
    [{ checkin: day(40), checkout: day(42) }, 'checkin'],
    [{ checkin: day(40), checkout: day(43), preview: 'yes' }, 'preview'],
    [{ checkin: day(40), checkout: day(43), adults: 3 }, '(body)'],
    // The party stays the one paid for: a date change takes no guest counts (issue 15, finding 4).
    [{ checkin: day(40), checkout: day(43), guests_adult: 12 }, '(body)'],
    [{ checkin: day(40), checkout: day(43), guests_child: 5 }, '(body)'],
    [{ checkin: day(40), checkout: day(43), sale_amount: 0 }, 'sale_amount'],
    [{ checkin: day(40), checkout: day(43), sale_amount: -5 }, 'sale_amount'],
    [{ checkin: day(40), checkout: day(43), sale_amount: 12.5 }, 'sale_amount'],
    [{ checkin: day(40), checkout: day(43), sale_amount: 'lots' }, 'sale_amount'],
  ])('400 VALIDATION_ERROR for %j, naming %s; nothing changed', async (body, field) => {
    const who = await sandbox.channel();
    const api = v1(sandbox, who);
    const b = await book(api, { from: 36, checkin: day(40), checkout: day(42) });
    const before = await snapshot(sandbox, who, b.id);
    const error = await expectError(await modify(api, b.id, body), 400, 'VALIDATION_ERROR');
    const fields = error.details!.fields.map((f: { field: string }) => f.field);
    if (field === '(body)') expect(fields.length).toBeGreaterThan(0);
    else expect(fields).toContain(field);
    expect(await snapshot(sandbox, who, b.id)).toEqual(before);
  });

  it('400 for a malformed JSON body', async () => {
    const who = await sandbox.channel();
    const res = await sandbox.request(`/channel/v1/reservations/00000000-0000-4000-8000-000000000000/modify-dates`, {
      method: 'POST',
      headers: { ...apiKey(who), 'content-type': 'application/json' },
      body: '{"checkin": ',
    });
    await expectError(res, 400, 'VALIDATION_ERROR');
  });

  it('401 without a credential, 403 without reservations:write, 404 for another channel’s booking or an unknown id', async () => {
    const owner = await sandbox.channel();
    const api = v1(sandbox, owner);
    const b = await book(api, { from: 38, checkin: day(40), checkout: day(42) });
    const before = await snapshot(sandbox, owner, b.id);
    const body = { checkin: day(40), checkout: day(43) };

    await expectError(await sandbox.request(`/channel/v1/reservations/${b.id}/modify-dates`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }), 401, 'UNAUTHORIZED');
    const reader = v1(sandbox, await sandbox.channel({ scopes: ['reservations:read'] }));
    const error = await expectError(await modify(reader, b.id, { ...body, preview: true }), 403, 'INSUFFICIENT_SCOPE');
    expect(error.details).toEqual({ required_scope: 'reservations:write' });
    const stranger = v1(sandbox, await sandbox.channel());
    await expectError(await modify(stranger, b.id, body), 404, 'NOT_FOUND');
    await expectError(await modify(stranger, b.id, { ...body, preview: true }), 404, 'NOT_FOUND');
    await expectError(await modify(api, '00000000-0000-4000-8000-000000000000', body), 404, 'NOT_FOUND');
    await expectError(await modify(api, 'not-a-uuid', body), 404, 'NOT_FOUND');
    expect(await snapshot(sandbox, owner, b.id)).toEqual(before);
  });

  it('a multi-room reservation: 409 multi_room while another room is live; a cancelled room is not_confirmed and never moves another; the last live room changes alone', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    // A flexible rate with two rooms free over the stay and the change.
    const b = await book(api, { from: 40, checkin: day(40), checkout: day(42), free: [[day(40), day(44)]] });
    expect((await api.cancel(b.id)).status).toBe(200);
    const res = await api.call('POST', '/reservations', {
      property_id: b.propertyId,
      roomtype_id: b.roomtypeId,
      rateplan_id: b.rateplanId,
      check_in: day(40),
      check_out: day(42),
      rooms: [{ adults: 2 }, { adults: 1 }],
      guest: { first_name: 'Minji', last_name: 'Kim', email: 'minji@example.com' },
    });
    expect(res.status).toBe(201);
    const reservation = (await res.json()).data;
    const [first, second] = reservation.rooms.map((room: { booking_id: string }) => room.booking_id);
    expect(first).toBe(reservation.id);
    for (const id of [first, second]) {
      const error = await expectError(await modify(api, id, { checkin: day(40), checkout: day(43), preview: true }), 409, 'MODIFICATION_NOT_ALLOWED');
      expect(error.details).toEqual({ reason: 'multi_room', booking_id: id, status: 'confirmed' });
    }
    // The first room (whose id is the reservation's) cancelled alone: its id names that cancelled
    // room, and the other room is left alone (dates, money, provider).
    expect((await api.call('DELETE', `/reservations/${reservation.id}/rooms/${first}`)).status).toBe(200);
    const before = await snapshot(production, who, second);
    for (const preview of [true, false]) {
      const error = await expectError(await modify(api, reservation.id, { checkin: day(40), checkout: day(43), preview }), 409, 'MODIFICATION_NOT_ALLOWED');
      expect(error.details).toEqual({ booking_id: first, status: 'cancelled', reason: 'not_confirmed' });
    }
    expect(await snapshot(production, who, second)).toEqual(before);
    // The other room, now the only live one, changes by its own id.
    const changed = await modify(api, second, { checkin: day(40), checkout: day(43) });
    expect(changed.status).toBe(200);
    const { data } = await changed.json();
    expect(data).toMatchObject({ booking_id: second, booking: { id: second, checkout: day(43) } });
    expect((await row(production, first)).checkout.toISOString().slice(0, 10)).toBe(day(42));
    expect(await providerView(production, second)).toMatchObject({ checkout: day(43) });
    await checkInvariants(production, who.user_id);
  });

  it('a booking made for several rooms (one book_token) changes as a whole: all its rooms re-priced and moved', async () => {
    // Two rooms for three nights may cost more than START on some dates: a balance that covers them.
    const balance = 4n * START;
    const who = await production.channel({ balance });
    const api = v1(production, who);
    const offer = await api.offer({ from: 74, checkin: day(40), checkout: day(43), adults: 4, policy: 'flexible', query: '&rooms=2' });
    const booked = await api.book({ book_token: offer.bookToken, booker_name: 'Two Rooms' });
    expect(booked.status).toBe(201);
    const id = (await booked.json()).data.id as string;
    const stay = (checkin: string, checkout: string, party: string) =>
      `/search/availability/${offer.propertyId}?checkin=${checkin}&checkout=${checkout}&${party}&roomtype_id=${offer.roomtypeId}&rateplan_id=${offer.rateplanId}`;
    const rateOf = async (path: string) =>
      (await (await api.call('GET', path)).json()).data.room_types
        .find((r: { roomtype_id: string }) => r.roomtype_id === offer.roomtypeId)
        .rates.find((r: { rateplan_id: string }) => r.rateplan_id === offer.rateplanId) as { available_rooms: number; pricing: { billable_totals: { inclusive_amount: number } } };
    const expected = (await rateOf(stay(day(41), day(43), 'adults=4&rooms=2'))).pricing.billable_totals.inclusive_amount;
    const freeFirstNight = (await rateOf(stay(day(40), day(41), 'adults=2'))).available_rooms;

    // Within the nights it holds (its own rooms count as free): the first night given up.
    const res = await modify(api, id, { checkin: day(41), checkout: day(43) });
    expect(res.status).toBe(200);
    const { data } = await res.json();
    expect(data).toMatchObject({ new_total: expected, old_total: offer.amount, nights: 2, booking: { checkin: day(41), guestsAdult: 4 } });
    expect(await providerView(production, id)).toEqual({ status: 'confirmed', checkin: day(41), checkout: day(43), total: expected });
    // Both rooms of the first night came back to the provider's stock.
    expect((await rateOf(stay(day(40), day(41), 'adults=2'))).available_rooms).toBe(freeFirstNight + 2);
    const reservation = (await (await api.call('GET', `/reservations/${id}`)).json()).data;
    expect(reservation.rooms.map((r: { booking_id: string; room_count: number }) => [r.booking_id, r.room_count])).toEqual([[id, 2]]);
    const state = await checkInvariants(production, who.user_id);
    expect(state.balance).toBe(balance - BigInt(expected));
  });
});

describe('provider failures and races', () => {
  it('502 when the provider fails while changing: it is told to abort, the charge comes back, nothing changed', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 42, checkin: day(40), checkout: day(42) });
    const before = await snapshot(production, who, b.id);
    // The provider applies the change but the answer is lost.
    const lost = patchUpstream(production, 'modifyBooking', (original) => async (...args) => {
      await original(...args);
      throw new UpstreamError();
    });
    try {
      await expectError(await modify(api, b.id, { checkin: day(40), checkout: day(44) }), 502, 'UPSTREAM_ERROR');
    } finally {
      lost.restore();
    }
    const after = await snapshot(production, who, b.id);
    expect({ ...after, ledger: undefined, modifications: undefined }).toEqual({ ...before, ledger: undefined, modifications: undefined });
    const state = await checkInvariants(production, who.user_id);
    expect(state.modifications.map((m) => [m.state, m.upstreamCleanup])).toEqual([['void', false]]);
    expect(state.ledger.filter((e) => e.kind.startsWith('modification_')).map((e) => e.kind)).toEqual(['modification_charge', 'modification_void']);
    // The same change can be made again.
    expect((await modify(api, b.id, { checkin: day(40), checkout: day(44) })).status).toBe(200);
    await checkInvariants(production, who.user_id);
  });

  it('when the abort fails too, the sweeper aborts later; meanwhile another change is 409 MODIFICATION_IN_PROGRESS', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 44, checkin: day(40), checkout: day(42) });
    const lost = patchUpstream(production, 'modifyBooking', (original) => async (...args) => {
      await original(...args);
      throw new UpstreamError();
    });
    const down = patchUpstream(production, 'abortModification', () => async () => {
      throw new UpstreamError();
    });
    try {
      await expectError(await modify(api, b.id, { checkin: day(40), checkout: day(44) }), 502, 'UPSTREAM_ERROR');
    } finally {
      lost.restore();
      down.restore();
    }
    // Here nothing changed and the charge came back; the provider still holds the change.
    expect((await row(production, b.id)).checkout.toISOString().slice(0, 10)).toBe(day(42));
    expect(await providerView(production, b.id)).toMatchObject({ checkout: day(44) });
    await expectError(await modify(api, b.id, { checkin: day(40), checkout: day(43) }), 409, 'MODIFICATION_IN_PROGRESS');

    const report = await runBookingSync(production.service.deps);
    expect(report.cleaned).toBeGreaterThanOrEqual(1);
    expect(await providerView(production, b.id)).toMatchObject({ checkout: day(42), total: b.amount });
    await checkInvariants(production, who.user_id);
    expect((await modify(api, b.id, { checkin: day(40), checkout: day(43) })).status).toBe(200);
    await checkInvariants(production, who.user_id);
  });

  it('a process stopping after the provider changed: the sweeper aborts it there and gives the charge back', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 46, checkin: day(40), checkout: day(42) });
    const crash = patchUpstream(production, 'modifyBooking', (original) => async (...args) => {
      await original(...args);
      throw new Error('the process stopped here');
    });
    try {
      await expectError(await modify(api, b.id, { checkin: day(40), checkout: day(45) }), 500, 'INTERNAL_ERROR');
    } finally {
      crash.restore();
    }
    let state = await channelState(production, who.user_id);
    expect(state.modifications.map((m) => m.state)).toEqual(['processing']);
    // Within the request's lease the sweeper leaves it alone.
    await runBookingSync(production.service.deps);
    expect((await channelState(production, who.user_id)).modifications.map((m) => m.state)).toEqual(['processing']);
    try {
      offsetMs = requestLeaseMs(production.service.deps) + 1_000;
      await runBookingSync(production.service.deps);
    } finally {
      offsetMs = 0;
    }
    state = await checkInvariants(production, who.user_id);
    expect(state.modifications.map((m) => m.state)).toEqual(['void']);
    expect(state.balance).toBe(START - BigInt(b.amount));
    expect(await providerView(production, b.id)).toEqual({ status: 'confirmed', checkin: day(40), checkout: day(42), total: b.amount });
  });

  it('a cancellation while the provider is changing the dates wins; the change is compensated and its charge given back', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 48, checkin: day(40), checkout: day(42) });
    let cancel: Response | undefined;
    const race = patchUpstream(production, 'modifyBooking', (original) => async (...args) => {
      const answer = await original(...args);
      cancel = await api.cancel(b.id);
      return answer;
    });
    let res: Response;
    try {
      res = await modify(api, b.id, { checkin: day(40), checkout: day(44) });
    } finally {
      race.restore();
    }
    expect(cancel!.status).toBe(200);
    const error = await expectError(res, 409, 'MODIFICATION_NOT_ALLOWED');
    expect(error.details).toMatchObject({ status: 'cancelled', reason: 'not_confirmed' });
    const state = await checkInvariants(production, who.user_id);
    expect(state.bookings[0]).toMatchObject({ status: 'cancelled', totalAmount: BigInt(b.amount), refundAmount: BigInt(b.amount) });
    expect(state.balance).toBe(START);
    expect(state.events.map((e) => e.type)).not.toContain('reservation.modified');
  });

  it('a change while the provider is cancelling is refused; the cancellation completes', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 50, checkin: day(40), checkout: day(42) });
    let change: Response | undefined;
    const race = patchUpstream(production, 'cancelBooking', (original) => async (...args) => {
      change = await modify(api, b.id, { checkin: day(40), checkout: day(44) });
      return original(...args);
    });
    try {
      expect((await api.cancel(b.id)).status).toBe(200);
    } finally {
      race.restore();
    }
    const error = await expectError(change!, 409, 'MODIFICATION_NOT_ALLOWED');
    expect(error.details).toMatchObject({ status: 'cancelling', reason: 'not_confirmed' });
    const state = await checkInvariants(production, who.user_id);
    expect(state.modifications).toEqual([]);
    expect(state.balance).toBe(START);
  });

  it('a change and a cancellation sent at once: never both applied to the same booking; money consistent', async () => {
    const who = await production.channel({ balance: 100_000_000n });
    const api = v1(production, who);
    for (let round = 0; round < 4; round++) {
      const b = await book(api, { from: 52 + round, checkin: day(40), checkout: day(42) });
      const [changed, cancelled] = await Promise.all([modify(api, b.id, { checkin: day(40), checkout: day(44) }), api.cancel(b.id)]);
      const changeBody = await changed.json();
      const cancelBody = await cancelled.json();
      const final = await row(production, b.id);
      if (changed.status === 200 && cancelled.status === 200) {
        // One after the other: the cancellation refunded the changed total.
        expect(cancelBody.data.refund_amount).toBe(changeBody.data.new_total);
      } else {
        expect([changed.status, cancelled.status].sort()).toEqual([200, 409]);
        if (cancelled.status === 200) {
          expect(changeBody.error.code).toMatch(/^(MODIFICATION_NOT_ALLOWED|BOOKING_CHANGED)$/);
          expect(final.totalAmount).toBe(BigInt(b.amount));
        }
      }
      expect(final.status).toBe(cancelled.status === 200 ? 'cancelled' : 'confirmed');
    }
    await checkInvariants(production, who.user_id);
  });

  it('five changes of one booking at once: one applies, the others are refused, one charge', async () => {
    const who = await production.channel({ balance: 100_000_000n });
    const api = v1(production, who);
    const b = await book(api, { from: 60, checkin: day(40), checkout: day(41) });
    const results = await Promise.all([42, 43, 44, 45, 46].map((n) => modify(api, b.id, { checkin: day(40), checkout: day(n) })));
    const bodies = await Promise.all(results.map((r) => r.json()));
    const statuses = results.map((r) => r.status);
    // All five read the booking before any of them changed it: one applies.
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    for (const [i, r] of results.entries()) {
      if (r.status !== 200) {
        expect(r.status).toBe(409);
        expect(bodies[i].error.code).toMatch(/^(MODIFICATION_IN_PROGRESS|BOOKING_CHANGED)$/);
      }
    }
    const state = await checkInvariants(production, who.user_id);
    expect(state.modifications.filter((m) => m.state === 'applied')).toHaveLength(statuses.filter((s) => s === 200).length);
    expect(state.events.filter((e) => e.type === 'reservation.modified')).toHaveLength(statuses.filter((s) => s === 200).length);
  });
});

describe('GET /reservations/{id}/cancellation-fee (alias)', () => {
  it('answers exactly what GET /bookings/{id}/cancellation-fee answers, with reservations:read', async () => {
    const owner = await sandbox.channel();
    const api = v1(sandbox, owner);
    const b = await book(api, { from: 62, checkin: day(40), checkout: day(42), policy: 'moderate' });
    const reader = v1(sandbox, await sandbox.channel({ scopes: ['reservations:read'] }));
    const alias = await api.call('GET', `/reservations/${b.id}/cancellation-fee`);
    const original = await api.call('GET', `/bookings/${b.id}/cancellation-fee`);
    expect(alias.status).toBe(200);
    const aliasBody = await alias.json();
    expect(aliasBody.data).toEqual((await original.json()).data);
    expect(aliasBody.data).toMatchObject({ booking_id: b.id, cancellation_fee: 0, refund_amount: b.amount, currency: 'KRW', cancellation_policy: { type: 'moderate' } });
    // Another channel's booking is 404 for the alias as for the original; a cancelled one gives what it cost.
    await expectError(await reader.call('GET', `/reservations/${b.id}/cancellation-fee`), 404, 'NOT_FOUND');
    expect((await api.cancel(b.id)).status).toBe(200);
    expect((await (await api.call('GET', `/reservations/${b.id}/cancellation-fee`)).json()).data).toEqual(
      (await (await api.call('GET', `/bookings/${b.id}/cancellation-fee`)).json()).data,
    );
  });

  it('403 without reservations:read, 401 without a credential, 409 once checked in', async () => {
    const owner = await sandbox.channel();
    const api = v1(sandbox, owner);
    const b = await book(api, { from: 64, checkin: day(40), checkout: day(42) });
    const writer = v1(sandbox, await sandbox.channel({ scopes: ['reservations:write'] }));
    const error = await expectError(await writer.call('GET', `/reservations/${b.id}/cancellation-fee`), 403, 'INSUFFICIENT_SCOPE');
    expect(error.details).toEqual({ required_scope: 'reservations:read' });
    await expectError(await sandbox.request(`/channel/v1/reservations/${b.id}/cancellation-fee`), 401, 'UNAUTHORIZED');
    await sandbox.request(`/admin/v1/bookings/${b.id}/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.service.adminToken.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'checked_in' }),
    });
    await expectError(await api.call('GET', `/reservations/${b.id}/cancellation-fee`), 409, 'BOOKING_NOT_CANCELLABLE');
  });
});

describe('GraphQL modifyBookingDates', () => {
  const MODIFY = `mutation($id: ID!, $input: ModifyBookingDatesInput!) {
    modifyBookingDates(id: $id, input: $input) {
      __typename
      ... on ModifyBookingDatesSuccess {
        change {
          preview modificationId previousCheckin previousCheckout checkin checkout nights
          oldTotal newTotal difference changeFee currency
          pricing { billableInclusiveAmount requestCurrency }
          cancellationPolicy { type freeCancellationBefore }
          freeChangeBefore
          booking { bookingId checkin checkout totalAmount saleAmount status }
        }
      }
      ... on DomainError { code message }
      ... on ModificationNotAllowedError { bookingId status reason }
      ... on InsufficientBalanceError { required available }
    }
  }`;

  it('previews and commits through the same service as REST, with the same money effects and saleAmount', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const b = await book(api, { from: 66, checkin: day(40), checkout: day(42), body: { sale_amount: 300_000 } });
    const gql = (input: Record<string, unknown>) => production.graphql(MODIFY, { id: b.id, input }, apiKey(who));

    const preview = await gql({ checkin: day(40), checkout: day(43), preview: true });
    expect(preview.errors).toBeUndefined();
    const p = (preview.data!.modifyBookingDates as any).change;
    expect(p).toMatchObject({ preview: true, modificationId: null, previousCheckin: day(40), checkout: day(43), nights: 3, oldTotal: b.amount, changeFee: 0 });
    expect(p.difference).toBe(p.newTotal - b.amount);
    // A preview answers no booking, as REST's (booking: null): reading it needs reservations:read.
    expect(p.booking).toBeNull();
    expect((await channelState(production, who.user_id)).modifications).toEqual([]);

    const done = await gql({ checkin: day(40), checkout: day(43), saleAmount: 450_000 });
    const c = (done.data!.modifyBookingDates as any).change;
    expect(c).toMatchObject({
      preview: false,
      newTotal: p.newTotal,
      difference: p.difference,
      booking: { checkout: day(43), totalAmount: p.newTotal, saleAmount: 450_000, status: 'CONFIRMED' },
    });
    expect(c.modificationId).toBeTruthy();
    const state = await checkInvariants(production, who.user_id);
    expect(state.balance).toBe(START - BigInt(p.newTotal));

    // Without saleAmount, a new total clears the old one.
    const back = await gql({ checkin: day(40), checkout: day(42), saleAmount: null });
    expect((back.data!.modifyBookingDates as any).change.booking).toMatchObject({ checkout: day(42), saleAmount: null });
    const invalid = await gql({ checkin: day(40), checkout: day(43), saleAmount: 0 });
    expect(invalid.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(invalid.errors?.[0]?.extensions?.details)).toContain('input.saleAmount');
    await checkInvariants(production, who.user_id);
  });

  it("a preview with reservations:write alone reads none of the booking's guest data (REST's preview answers booking: null)", async () => {
    const who = await production.channel({ balance: START });
    const b = await book(v1(production, who), { from: 70, checkin: day(40), checkout: day(42), body: { booker_email: 'private@guest.example', guest_phone: '+82-10-5555-0100' } });
    const writer = await bearerWith(production, who, ['reservations:write']);
    const PREVIEW = `mutation($id: ID!, $input: ModifyBookingDatesInput!) {
      modifyBookingDates(id: $id, input: $input) { ... on ModifyBookingDatesSuccess { change { preview newTotal booking { bookerName bookerEmail guestPhone } } } }
    }`;
    const res = await production.graphql(PREVIEW, { id: b.id, input: { checkin: day(40), checkout: day(43), preview: true } }, writer);
    expect(res.errors).toBeUndefined();
    expect((res.data!.modifyBookingDates as any).change).toMatchObject({ preview: true, booking: null });
    for (const secret of ['private@guest.example', '+82-10-5555-0100', 'Date Changer']) expect(JSON.stringify(res)).not.toContain(secret);
    // The same token is refused the booking itself, on both surfaces.
    expect((await production.request(`/channel/v1/bookings/${b.id}`, { headers: writer })).status).toBe(403);
    const read = await production.graphql('query($id: ID!) { booking(id: $id) { bookerEmail } }', { id: b.id }, writer);
    expect(read.errors?.[0]?.extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'reservations:read' } });
  });

  it('expected refusals are union members; scope, validation and unknown ids are top-level errors', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const nr = await book(api, { from: 68, checkin: day(40), checkout: day(41), policy: 'non_refundable' });
    const refused = await production.graphql(MODIFY, { id: nr.id, input: { checkin: day(41), checkout: day(42) } }, apiKey(who));
    expect(refused.data!.modifyBookingDates).toMatchObject({
      __typename: 'ModificationNotAllowedError',
      code: 'MODIFICATION_NOT_ALLOWED',
      bookingId: nr.id,
      status: 'CONFIRMED',
      reason: 'FREE_CHANGE_PERIOD_ENDED',
    });

    const reader = await production.channel({ scopes: ['reservations:read'] });
    const denied = await production.graphql(MODIFY, { id: nr.id, input: { checkin: day(41), checkout: day(42), preview: true } }, apiKey(reader));
    expect(denied.errors?.[0]?.extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'reservations:write' } });

    const invalid = await production.graphql(MODIFY, { id: nr.id, input: { checkin: day(41), checkout: day(41) } }, apiKey(who));
    expect(invalid.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(invalid.errors?.[0]?.extensions?.details)).toContain('input.checkout');
    // A check-in that is not a calendar day is refused as the variables are read, naming its path.
    const badDate = await production.graphql(MODIFY, { id: nr.id, input: { checkin: 'soon', checkout: day(41) } }, apiKey(who));
    expect(badDate.status).toBe(400);
    expect(badDate.data).toBeUndefined();
    expect(badDate.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(badDate.errors?.[0]?.message).toContain('"input.checkin"');

    const stranger = await production.channel({ balance: START });
    const foreign = await production.graphql(MODIFY, { id: nr.id, input: { checkin: day(41), checkout: day(42) } }, apiKey(stranger));
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    await checkInvariants(production, who.user_id);
  });

  it('InsufficientBalanceError when the balance does not cover the difference', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const created = await book(api, { from: 70, checkin: day(40), checkout: day(41) });
    await spendAll(production, who);
    const res = await production.graphql(MODIFY, { id: created.id, input: { checkin: day(40), checkout: day(42) } }, apiKey(who));
    expect(res.data!.modifyBookingDates).toMatchObject({ __typename: 'InsufficientBalanceError', code: 'INSUFFICIENT_BALANCE', available: 0 });
    await checkInvariants(production, who.user_id);
  });
});

// ---------------------------------------------------------------------------------------------
// The provider's side of a date change, straight against a simulator

describe('simulator: change-quote, modify and abort', () => {
  let simulator: RunningSimulator;
  beforeAll(async () => {
    simulator = await startSimulator({ port: 0 });
  });
  afterAll(async () => {
    await simulator?.close();
  });
  const post = async (path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${simulator.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  const stay = (checkin: string, checkout: string) => ({ property_id: 1, roomtype_id: '1-r1', rateplan_id: '1-r1-p1', checkin, checkout, occupancy: [{ adults: 2, children_ages: [] }] });

  it('quotes new dates counting the booking’s own rooms as free; modify is idempotent on its id; abort undoes and refuses it for ever', async () => {
    const quote = await post('/price-check', { ...stay('2027-03-02', '2027-03-04'), expected_total: 0 });
    const total = quote.body.rate.total_base + quote.body.rate.total_tax_and_fees;
    const free = quote.body.rate.available_rooms as number;
    expect((await post('/bookings', { reference: 'm-1', ...stay('2027-03-02', '2027-03-04'), total, guest: { first_name: null, last_name: null, name: 'X' } })).status).toBe(201);

    const changed = await post('/bookings/m-1/change-quote', { checkin: '2027-03-02', checkout: '2027-03-05' });
    expect(changed.status).toBe(200);
    expect(changed.body.status).toBe('available');
    // The nights the booking holds count its room as free.
    const plain = await post('/price-check', { ...stay('2027-03-02', '2027-03-04'), expected_total: 0 });
    expect(plain.body.rate.available_rooms).toBe(free - 1);
    const newTotal = changed.body.rate.total_base + changed.body.rate.total_tax_and_fees;

    expect((await post('/bookings/m-1/modify', { modification_id: 'c1', checkin: '2027-03-02', checkout: '2027-03-05', total: 1 })).body.error.code).toBe('price_mismatch');
    const applied = await post('/bookings/m-1/modify', { modification_id: 'c1', checkin: '2027-03-02', checkout: '2027-03-05', total: newTotal });
    expect(applied).toMatchObject({ status: 200, body: { checkin: '2027-03-02', checkout: '2027-03-05', total: newTotal } });
    expect((await post('/bookings/m-1/modify', { modification_id: 'c1', checkin: '2027-03-02', checkout: '2027-03-05', total: newTotal })).status).toBe(200);
    const night = await post('/price-check', { ...stay('2027-03-04', '2027-03-05'), expected_total: 0 });
    const takenThird = night.body.rate.available_rooms as number;

    const aborted = await post('/bookings/m-1/modifications/c1/abort');
    expect(aborted.body).toMatchObject({ checkin: '2027-03-02', checkout: '2027-03-04', total });
    expect((await post('/price-check', { ...stay('2027-03-04', '2027-03-05'), expected_total: 0 })).body.rate.available_rooms).toBe(takenThird + 1);
    // Aborting again changes nothing; a late duplicate of the change is refused.
    expect((await post('/bookings/m-1/modifications/c1/abort')).body).toMatchObject({ checkout: '2027-03-04' });
    expect((await post('/bookings/m-1/modify', { modification_id: 'c1', checkin: '2027-03-02', checkout: '2027-03-05', total: newTotal })).body.error.code).toBe(
      'modification_aborted',
    );
    // An abort that overtook its change: the change never applies.
    expect((await post('/bookings/m-1/modifications/c2/abort')).status).toBe(200);
    expect((await post('/bookings/m-1/modify', { modification_id: 'c2', checkin: '2027-03-02', checkout: '2027-03-05', total: newTotal })).status).toBe(409);
  });

  it('refuses unknown bookings (404), checked-in ones (409 not_modifiable), sold-out dates and bad bodies', async () => {
    expect((await post('/bookings/nobody/change-quote', { checkin: '2027-03-02', checkout: '2027-03-03' })).status).toBe(404);
    expect((await post('/bookings/nobody/modify', { modification_id: 'x', checkin: '2027-03-02', checkout: '2027-03-03', total: 1 })).status).toBe(404);
    expect((await post('/bookings/nobody/modifications/x/abort')).status).toBe(404);
    const quote = await post('/price-check', { ...stay('2027-04-02', '2027-04-03'), expected_total: 0 });
    const total = quote.body.rate.total_base + quote.body.rate.total_tax_and_fees;
    await post('/bookings', { reference: 'm-2', ...stay('2027-04-02', '2027-04-03'), total, guest: { first_name: null, last_name: null, name: 'X' } });
    expect((await post('/bookings/m-2/change-quote', { checkin: '2027-04-02', checkout: '2027-04-04' }, { 'x-test-scenario': 'sold_out' })).body).toEqual({ status: 'sold_out', rate: null });
    expect((await post('/bookings/m-2/change-quote', { checkin: '2027-04-04', checkout: '2027-04-02' })).status).toBe(400);
    expect((await post('/bookings/m-2/modify', { modification_id: 'y', checkin: '2027-04-02', checkout: '2027-04-04' })).status).toBe(400);
    await post('/_control/bookings/m-2/status', { status: 'checked_in' });
    const refused = await post('/bookings/m-2/change-quote', { checkin: '2027-04-02', checkout: '2027-04-04' });
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'not_modifiable' } } });
  });
});

// ---------------------------------------------------------------------------------------------
// Helpers for the same-price test

function nextDay(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

interface EqualNights {
  propertyId: number;
  roomtypeId: string;
  rateplanId: string;
  policy: CancellationPolicyType;
  night: string;
  other: string;
}

/**
 * Two single nights priced the same for one flexible rate, each with a room free, from property
 * `from` on (the nightly lines of /search/rates over 30 nights).
 */
async function equalNights(api: Api, from: number): Promise<EqualNights> {
  for (let propertyId = from; propertyId < from + 40; propertyId++) {
    const res = await api.call('GET', `/search/rates?property_id=${propertyId}&checkin=${day(41)}&checkout=${day(71)}&adults=2`);
    if (res.status !== 200) continue;
    const { data } = await res.json();
    for (const room of data.room_types) {
      for (const rate of room.rates) {
        if (rate.cancellation_policy.type !== 'flexible') continue;
        const r = { propertyId, roomtypeId: room.roomtype_id as string, rateplanId: rate.rateplan_id as string, policy: 'flexible' as const };
        const byPrice = new Map<string, string[]>();
        for (const night of rate.nightly as { date: string; base_rate: number; tax_and_service_fee: number }[]) {
          const key = `${night.base_rate}/${night.tax_and_service_fee}`;
          byPrice.set(key, [...(byPrice.get(key) ?? []), night.date]);
        }
        for (const dates of byPrice.values()) {
          const free = [];
          for (const date of dates) if (((await rateFor(api, r, date, nextDay(date)))?.available_rooms ?? 0) >= 1) free.push(date);
          if (free.length >= 2) return { ...r, night: free[0]!, other: free[1]! };
        }
      }
    }
  }
  throw new Error(`no rate with two free nights of the same price from property ${from}`);
}
