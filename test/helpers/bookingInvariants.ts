import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Booking, BookingModification, LedgerEntry, OutboxEvent } from '../../src/generated/prisma/client.js';
import { postBookingMoney } from '../../src/services/bookings/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { offerClaims } from '../../src/services/access/index.js';
import { v1 } from './flow.js';
import type { TestService } from './service.js';

/**
 * The money and state invariants of the booking flow, checked against the database and the
 * provider after each scenario of test/bookings-*.test.ts, and the few helpers those tests share.
 */

export interface ChannelState {
  balance: bigint;
  bookings: Booking[];
  ledger: LedgerEntry[];
  events: OutboxEvent[];
  /** Date changes of the channel's bookings, oldest first. */
  modifications: BookingModification[];
}

export async function channelState(t: TestService, channelId: string): Promise<ChannelState> {
  const prisma = t.service.deps.db.prisma;
  const [channel, bookings, ledger, events, modifications] = await Promise.all([
    prisma.channel.findUniqueOrThrow({ where: { id: channelId }, select: { balance: true } }),
    prisma.booking.findMany({ where: { channelId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
    prisma.ledgerEntry.findMany({ where: { channelId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
    prisma.outboxEvent.findMany({ where: { channelId }, orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }] }),
    prisma.bookingModification.findMany({ where: { channelId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
  ]);
  return { balance: channel.balance, bookings, ledger, events, modifications };
}

const LIVE_AT_PROVIDER = new Set(['confirmed', 'pending', 'checked_in', 'checked_out', 'no_show']);

/** The outbox histories a booking in each status may have (reservation.modified aside). */
const HISTORIES: Record<string, string[][]> = {
  void: [[]],
  pending: [['reservation.created']],
  confirmed: [['reservation.created', 'reservation.confirmed']],
  cancelled: [
    ['reservation.created', 'reservation.cancelled'],
    ['reservation.created', 'reservation.confirmed', 'reservation.cancelled'],
  ],
  failed: [['reservation.created', 'reservation.failed']],
  checked_in: [['reservation.created', 'reservation.confirmed', 'reservation.checked_in']],
  checked_out: [['reservation.created', 'reservation.confirmed', 'reservation.checked_in', 'reservation.checked_out']],
  no_show: [['reservation.created', 'reservation.confirmed', 'reservation.no_show']],
};

/**
 * (a) the balance is the sum of the channel's ledger entries, and never negative (nor any balance after);
 * (b) a charged booking has exactly one booking_charge of -(its total as booked); a void one a
 *     booking_void of +totalAmount; a cancelled or failed one at most one booking_refund, equal to
 *     refundAmount (none when that is 0); no other booking entries, none for an uncharged booking,
 *     none without a booking. Date changes (modifications): an applied one moved the total from its
 *     fromTotal to its toTotal (applied ones chain from the booked total to totalAmount) and has a
 *     modification_charge of the difference when dearer, a modification_refund when cheaper; a void
 *     one a charge and a modification_void of the same difference when dearer, else nothing; none
 *     when the booking was not charged, none without a change of the channel;
 * (c) no booking is left `processing` or `cancelling`, no date change `processing`;
 * (d) the provider agrees: same status, dates and total for each live booking, nothing live for a void one;
 * (e) the outbox holds each booking's history: created (+confirmed) (+cancelled | failed); none when void.
 */
export async function checkInvariants(t: TestService, channelId: string): Promise<ChannelState> {
  const state = await channelState(t, channelId);
  const { balance, bookings, ledger, events } = state;

  // (a)
  const sum = ledger.reduce((acc, e) => acc + e.amount, 0n);
  expect(balance, '(a) balance = sum of ledger entries').toBe(sum);
  expect(balance >= 0n, `(a) balance ${balance} >= 0`).toBe(true);
  for (const e of ledger) expect(e.balanceAfter >= 0n, `(a) ledger entry ${e.kind} ${e.reference} balance_after ${e.balanceAfter} >= 0`).toBe(true);

  // (b)
  const byBooking = new Map(bookings.map((b) => [b.id, b]));
  const byModification = new Map(state.modifications.map((m) => [m.id, m]));
  for (const e of ledger) {
    if (e.kind.startsWith('modification_')) {
      expect(e.reference !== null && byModification.has(e.reference), `(b) ${e.kind} of ${e.amount} refers to a date change of the channel (${e.reference})`).toBe(true);
    }
    if (!e.kind.startsWith('booking_')) continue;
    expect(e.reference !== null && byBooking.has(e.reference), `(b) ${e.kind} of ${e.amount} refers to a booking of the channel (${e.reference})`).toBe(true);
  }
  for (const b of bookings) {
    const mine = ledger.filter((e) => e.reference === b.id);
    const of = (kind: string) => mine.filter((e) => e.kind === kind);
    const label = `booking ${b.id} (${b.status}, charged=${b.charged})`;
    const changes = state.modifications.filter((m) => m.bookingId === b.id);
    const applied = changes.filter((m) => m.state === 'applied').sort((x, y) => x.settledAt!.getTime() - y.settledAt!.getTime());
    let booked = b.totalAmount;
    if (applied.length) {
      for (let i = 1; i < applied.length; i++) {
        expect(applied[i]!.fromTotal, `(b) ${label}: applied date change ${applied[i]!.id} starts from the total the one before left`).toBe(applied[i - 1]!.toTotal);
      }
      expect(applied.at(-1)!.toTotal, `(b) ${label}: the last applied date change left totalAmount`).toBe(b.totalAmount);
      booked = applied[0]!.fromTotal;
    }
    for (const m of changes) {
      const entries = ledger.filter((e) => e.reference === m.id).map((e) => [e.kind, e.amount]);
      const difference = m.toTotal - m.fromTotal;
      const mLabel = `${label}, date change ${m.id} (${m.state}, ${m.fromTotal} -> ${m.toTotal})`;
      expect(m.charged, `(b) ${mLabel}: charged like its booking`).toBe(b.charged);
      let expected: [string, bigint][] = [];
      if (b.charged && m.state === 'applied' && difference > 0n) expected = [['modification_charge', -difference]];
      if (b.charged && m.state === 'applied' && difference < 0n) expected = [['modification_refund', -difference]];
      if (b.charged && m.state === 'void' && difference > 0n) expected = [['modification_charge', -difference], ['modification_void', difference]];
      const sort = (rows: unknown[][]) => rows.map((r) => r.join(':')).sort();
      expect(sort(entries), `(b) ${mLabel}: its ledger entries`).toEqual(sort(expected));
    }
    if (!b.charged) {
      expect(mine.map((e) => e.kind), `(b) ${label}: no ledger entries when not charged`).toEqual([]);
      continue;
    }
    expect(of('booking_charge').map((e) => e.amount), `(b) ${label}: one booking_charge of -(total as booked)`).toEqual([-booked]);
    if (b.status === 'void') {
      expect(of('booking_void').map((e) => e.amount), `(b) ${label}: one booking_void of +total`).toEqual([b.totalAmount]);
    } else {
      expect(of('booking_void'), `(b) ${label}: no booking_void`).toEqual([]);
    }
    if (b.status === 'cancelled' || b.status === 'failed') {
      expect(b.refundAmount, `(b) ${label}: refundAmount recorded`).not.toBeNull();
      expect(b.cancellationFee, `(b) ${label}: cancellationFee recorded`).not.toBeNull();
      expect(b.refundAmount! + b.cancellationFee!, `(b) ${label}: refund + fee = total`).toBe(b.totalAmount);
      const expected = b.refundAmount! > 0n ? [b.refundAmount!] : [];
      expect(of('booking_refund').map((e) => e.amount), `(b) ${label}: booking_refund = refundAmount`).toEqual(expected);
    } else {
      expect(of('booking_refund'), `(b) ${label}: no booking_refund`).toEqual([]);
    }
    const other = mine.filter((e) => !['booking_charge', 'booking_void', 'booking_refund'].includes(e.kind));
    expect(other, `(b) ${label}: no other entries`).toEqual([]);
  }

  // (c)
  const stuck = bookings.filter((b) => b.status === 'processing' || b.status === 'cancelling').map((b) => `${b.id}:${b.status}`);
  expect(stuck, '(c) no booking left processing or cancelling').toEqual([]);
  const changing = state.modifications.filter((m) => m.state === 'processing').map((m) => `${m.bookingId}:${m.id}`);
  expect(changing, '(c) no date change left processing').toEqual([]);

  // (d)
  for (const b of bookings) {
    const provider = await t.service.deps.upstream.getBooking(b.id);
    if (b.status === 'void') {
      const live = provider !== null && LIVE_AT_PROVIDER.has(provider.status);
      expect(live ? provider!.status : 'nothing live', `(d) void booking ${b.id} (upstream_cleanup=${b.upstreamCleanup}): the provider holds nothing live`).toBe(
        'nothing live',
      );
    } else {
      expect(provider?.status ?? null, `(d) booking ${b.id}: the provider's status`).toBe(b.status);
      expect(provider!.total, `(d) booking ${b.id}: the provider's total`).toBe(Number(b.totalAmount));
      expect([provider!.checkin, provider!.checkout], `(d) booking ${b.id}: the provider's dates`).toEqual([
        b.checkin.toISOString().slice(0, 10),
        b.checkout.toISOString().slice(0, 10),
      ]);
    }
  }

  // (e)
  for (const b of bookings) {
    const mine = events.filter((e) => e.bookingId === b.id && e.type !== 'reservation.modified');
    const types = mine.map((e) => e.type);
    const allowed = HISTORIES[b.status];
    expect(allowed, `(e) no history is defined for status ${b.status}`).toBeDefined();
    expect(allowed!.map((h) => h.join(',')), `(e) booking ${b.id} (${b.status}) has the events of its history, got [${types.join(', ')}]`).toContain(
      types.join(','),
    );
    const last = mine.at(-1);
    if (last) expect((last.payload as { status: string }).status, `(e) booking ${b.id}: the last event carries the status`).toBe(b.status);
  }
  const strays = events.filter((e) => !byBooking.has(e.bookingId));
  expect(strays, '(e) no events of bookings of other channels').toEqual([]);
  return state;
}

// ---------------------------------------------------------------------------------------------
// Offers and rows

export interface RateTokens {
  propertyId: number;
  roomtypeId: string;
  rateplanId: string;
  policy: string;
  checkin: string;
  checkout: string;
  /** KRW, what each booking charges. */
  amount: number;
  availableRooms: number;
  bookTokens: string[];
}

/**
 * `count` book_tokens for one rate and stay (so each charges the same amount), from a rate that
 * has at least `minRooms` rooms free. Each price check signs a fresh token (its own jti).
 */
export async function sameRateTokens(
  t: TestService,
  who: IssuedCredentials,
  count: number,
  q: { from?: number; checkin: string; checkout: string; minRooms?: number; policy?: string },
): Promise<RateTokens> {
  const api = v1(t, who);
  const start = q.from ?? 1;
  const stay = `checkin=${q.checkin}&checkout=${q.checkout}&adults=2`;
  for (let propertyId = start; propertyId < start + 60; propertyId++) {
    const res = await api.call('GET', `/search/availability/${propertyId}?${stay}`);
    if (res.status !== 200) continue;
    const { data } = await res.json();
    for (const room of data.room_types) {
      for (const rate of room.rates) {
        if (q.policy && rate.cancellation_policy.type !== q.policy) continue;
        if (rate.available_rooms < (q.minRooms ?? 1)) continue;
        let token = rate.price_check_token as string | null;
        if (!token) {
          const again = await api.call('GET', `/search/availability/${propertyId}?${stay}&roomtype_id=${room.roomtype_id}&rateplan_id=${rate.rateplan_id}`);
          token =
            (await again.json()).data.room_types
              .find((r: { roomtype_id: string }) => r.roomtype_id === room.roomtype_id)
              ?.rates.find((r: { rateplan_id: string }) => r.rateplan_id === rate.rateplan_id)?.price_check_token ?? null;
        }
        if (!token) continue;
        const bookTokens: string[] = [];
        const amounts = new Set<number>();
        for (let i = 0; i < count; i++) {
          const checked = await api.call('GET', `/search/price-check?token=${encodeURIComponent(token)}`);
          const result = (await checked.json()).data;
          if (!result?.book_token) break;
          bookTokens.push(result.book_token);
          amounts.add(result.pricing.billable_totals.inclusive_amount);
        }
        if (bookTokens.length < count || amounts.size !== 1) continue;
        return {
          propertyId,
          roomtypeId: room.roomtype_id,
          rateplanId: rate.rateplan_id,
          policy: rate.cancellation_policy.type,
          checkin: q.checkin,
          checkout: q.checkout,
          amount: [...amounts][0]!,
          availableRooms: rate.available_rooms,
          bookTokens,
        };
      }
    }
  }
  throw new Error(`no rate with ${q.minRooms ?? 1} free rooms from property ${start}`);
}

/**
 * Writes what step 1 of a creation writes (the `processing` row and, when `charged` on a
 * production service, the charge) for the offer of `bookToken`, as a process that stopped before
 * the provider's answer would leave it. `createdAt` lets the row look old enough for the sweeper;
 * `leaseOwner` names the instance whose request it is (none: a row from before owners were kept).
 */
export async function insertProcessingBooking(
  t: TestService,
  who: IssuedCredentials,
  bookToken: string,
  options: { createdAt: Date; charged: boolean; leaseOwner?: string },
): Promise<Booking> {
  const { deps } = t.service;
  const offer = await deps.tokens.verify('book', bookToken, offerClaims, { now: deps.clock(), channelId: who.user_id });
  const property = await deps.upstream.getProperty(offer.property_id);
  const room = property!.room_types!.find((r) => r.id === offer.roomtype_id)!;
  const plan = room.rate_plans.find((p) => p.id === offer.rateplan_id)!;
  const amount = BigInt(offer.total_inclusive);
  const id = randomUUID();
  return deps.db.prisma.$transaction(async (tx) => {
    const booking = await tx.booking.create({
      data: {
        id,
        channelId: who.user_id,
        appId: who.app_id,
        bookTokenJti: offer.jti,
        itineraryId: id,
        status: 'processing',
        propertyId: offer.property_id,
        propertyName: property!.name,
        roomtypeId: room.id,
        roomType: room.name['ko-KR'],
        rateplanId: plan.id,
        ratePlan: plan.name['ko-KR'],
        checkin: new Date(`${offer.checkin}T00:00:00.000Z`),
        checkout: new Date(`${offer.checkout}T00:00:00.000Z`),
        timezone: property!.timezone,
        occupancy: offer.occupancy,
        guestsAdult: offer.occupancy.reduce((n, r) => n + r.adults, 0),
        guestsChild: offer.occupancy.reduce((n, r) => n + r.children_ages.length, 0),
        bookerName: 'Crash Test',
        totalAmount: amount,
        netAmount: amount,
        currency: 'KRW',
        requestCurrency: offer.currency,
        requestAmount: amount,
        charged: options.charged,
        cancellationPolicy: plan.cancellation_policy,
        createdAt: options.createdAt,
        updatedAt: options.createdAt,
        leaseOwner: options.leaseOwner ?? null,
      },
    });
    await postBookingMoney(tx, deps.config.env, booking, -amount, 'booking_charge');
    return booking;
  });
}

/** Tells the provider directly (not through the service) to book `booking` under its id. */
export async function bookAtProvider(providerUrl: string, booking: Booking, scenario?: string): Promise<Response> {
  const occupancy = booking.occupancy as { adults: number; children_ages: number[] }[];
  return fetch(`${providerUrl}/bookings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(scenario ? { 'x-test-scenario': scenario } : {}) },
    body: JSON.stringify({
      reference: booking.id,
      property_id: booking.propertyId,
      roomtype_id: booking.roomtypeId,
      rateplan_id: booking.rateplanId,
      checkin: booking.checkin.toISOString().slice(0, 10),
      checkout: booking.checkout.toISOString().slice(0, 10),
      occupancy,
      total: Number(booking.totalAmount),
      guest: { first_name: null, last_name: null, name: booking.bookerName },
    }),
  });
}

/** Sends `n` copies of a request at once and returns the responses with their parsed bodies. */
export async function burst(n: number, send: (i: number) => Promise<Response>): Promise<{ status: number; headers: Headers; body: any }[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await send(i);
      return { status: res.status, headers: res.headers, body: await res.json() };
    }),
  );
}

export function countBy<T>(items: T[], key: (item: T) => string | number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}
