import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestContext, type RequestContext } from '../../src/context.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { authenticate } from '../../src/services/access/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { cancelReservation, runBookingSync, updateReservation } from '../../src/services/reservations/index.js';
import { checkInvariants } from '../helpers/bookingInvariants.js';
import { day, findRate, type FoundRate, v1 } from '../helpers/flow.js';
import { expectError } from '../helpers/http.js';
import { balanceOf, bookingCount, eventsOf, ledgerOf } from '../helpers/ledger.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * The reservation endpoints of docs/spec/channel-api.md §4.8 as a partner sees them: create (one room, several rooms
 * sharing a confirmation number, or a book_token), look up, change the guest, special requests
 * and arrival time, cancel in whole or in part; money in production (balance and ledger exact),
 * events, validation, scopes and the tenant rule.
 */

let sandbox: TestService;
let production: TestService;
/** Shift of the services' clocks, to pass check-in. */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
const START = 50_000_000n;

beforeAll(async () => {
  [sandbox, production] = await Promise.all([startTestService({}, { clock }), startTestService({ CHANNEL_ENV: 'production' }, { clock })]);
});
afterAll(async () => {
  await Promise.all([sandbox?.close(), production?.close()]);
});

type Json = Record<string, any>;

function api(t: TestService, who: IssuedCredentials) {
  const base = v1(t, who);
  return {
    ...base,
    reserve: (body: unknown, headers: Record<string, string> = {}) => base.call('POST', '/reservations', body, headers),
    get: (id: string) => base.call('GET', `/reservations/${id}`),
    list: (query = '') => base.call('GET', `/reservations${query}`),
    patch: (id: string, body: unknown) => base.call('PATCH', `/reservations/${id}`, body),
    cancel: (id: string, body?: unknown, headers: Record<string, string> = {}) => base.call('POST', `/reservations/${id}/cancel`, body, headers),
    cancelRoom: (id: string, bookingId: string) => base.call('DELETE', `/reservations/${id}/rooms/${bookingId}`),
  };
}

async function created(res: Response): Promise<Json> {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.data;
}

const GUEST = { first_name: 'Minji', last_name: 'Kim', email: 'Minji.Kim@Example.com', phone: '+82 10-1234-5678', country: 'kr' };

function oneRoom(rate: FoundRate, extra: Json = {}): Json {
  return {
    property_id: rate.propertyId,
    roomtype_id: rate.roomtypeId,
    rateplan_id: rate.rateplanId,
    check_in: rate.checkin,
    check_out: rate.checkout,
    adults: 2,
    guest: GUEST,
    ...extra,
  };
}

async function ctxOf(t: TestService, who: IssuedCredentials): Promise<RequestContext> {
  const principal = await authenticate(t.service.deps.db.prisma, { apiKey: who.api_key });
  if (!principal) throw new Error('test credential refused');
  return createRequestContext(t.service.deps, { requestId: 'test', logger: t.service.deps.logger, principal, authError: null, signal: undefined });
}

/**
 * `real`, except that in its transactions `afterUpdate` sees the `where` of each booking
 * updateMany once it is done, and each transaction, once over, waits for what `waitFor` gives.
 */
function interleaved(real: PrismaClient, afterUpdate: (where: Json) => void, waitFor: () => Promise<unknown> | undefined): PrismaClient {
  const bind = (target: object, key: string | symbol) => {
    const value = Reflect.get(target, key);
    return typeof value === 'function' ? value.bind(target) : value;
  };
  return new Proxy(real, {
    get(target, key) {
      if (key !== '$transaction') return bind(target, key);
      return async (fn: (tx: unknown) => Promise<unknown>, options: unknown) => {
        const result = await target.$transaction(
          (tx) =>
            fn(
              new Proxy(tx, {
                get(t, k) {
                  if (k !== 'booking') return bind(t, k);
                  return new Proxy(t.booking, {
                    get(delegate, method) {
                      if (method !== 'updateMany') return bind(delegate, method);
                      return async (args: { where: Json }) => {
                        const done = await delegate.updateMany(args as Parameters<typeof delegate.updateMany>[0]);
                        afterUpdate(args.where);
                        return done;
                      };
                    },
                  });
                },
              }),
            ),
          options as Parameters<typeof target.$transaction>[1],
        );
        await waitFor();
        return result;
      };
    },
  });
}

const V1_RECORD_KEYS = [
  'id', 'userId', 'appId', 'hubBookingNumber', 'channelBookingNumber', 'propertyId', 'propertyName', 'roomType', 'ratePlan',
  'checkin', 'checkout', 'guestsAdult', 'guestsChild', 'bookerName', 'bookerEmail', 'guestFirstName', 'guestLastName',
  'guestPhone', 'guestCountry', 'specialRequests', 'totalAmount', 'netAmount', 'saleAmount', 'currency', 'status',
  'cancellationPolicy', 'cancellationDeadline', 'refundAmount', 'cancellationFee', 'createdAt', 'updatedAt',
].sort();

describe('POST /reservations (production: the balance pays)', () => {
  let who: IssuedCredentials;
  let r: ReturnType<typeof api>;
  beforeAll(async () => {
    who = await production.channel({ balance: START });
    r = api(production, who);
  });

  it('one room: 201 with the reservation, the server price charged once whatever the body says, the v1 record unchanged', async () => {
    const rate = await findRate(production, who, { from: 1, checkin: day(40), checkout: day(42) });
    const res = await r.reserve(
      oneRoom(rate, { special_requests: 'High floor', arrival_time: '18:30', channel_booking_number: 'OTA-7', total_amount: 1, price: { total: 1 } }),
    );
    const data = await created(res);
    expect(res.headers.get('location')).toBe(`/channel/v1/reservations/${data.id}`);
    expect(data).toMatchObject({
      status: 'confirmed',
      property_id: rate.propertyId,
      check_in: rate.checkin,
      check_out: rate.checkout,
      adults: 2,
      children: 0,
      guest: { first_name: 'Minji', last_name: 'Kim', email: 'Minji.Kim@Example.com', phone: '+82 10-1234-5678', country: 'KR' },
      price: { total: rate.amount, currency: 'KRW', request_total: rate.amount, request_currency: 'KRW', cancellation_fee: 0, refund_amount: 0 },
      cancellation_policy: { type: rate.policy },
      special_requests: 'High floor',
      arrival_time: '18:30',
      channel_booking_number: 'OTA-7',
    });
    expect(data.confirmation_number).toMatch(/^[0-9A-HJKMNP-TV-Z]{12}$/);
    expect(data.rooms).toHaveLength(1);
    const [room] = data.rooms;
    expect(room).toMatchObject({
      booking_id: data.id,
      status: 'confirmed',
      roomtype_id: rate.roomtypeId,
      rateplan_id: rate.rateplanId,
      room_count: 1,
      adults: 2,
      children: 0,
      children_ages: [],
      guest: { first_name: 'Minji', last_name: 'Kim' },
      price: { total: rate.amount, currency: 'KRW' },
      cancellation_fee: null,
      refund_amount: null,
    });
    expect(room.hub_booking_number).toMatch(/^SIM-/);

    // Money: one charge of the server price, through the ledger.
    expect(await balanceOf(production, who.user_id)).toBe(START - BigInt(rate.amount));
    expect(await ledgerOf(production, data.id)).toEqual([['booking_charge', -BigInt(rate.amount)]]);
    expect(await eventsOf(production, data.id)).toEqual(['reservation.created', 'reservation.confirmed']);

    // The room is an ordinary v1 booking, with the v1 record's fields only.
    const record = (await (await r.call('GET', `/bookings/${data.id}`)).json()).data;
    expect(Object.keys(record).sort()).toEqual(V1_RECORD_KEYS);
    expect(record).toMatchObject({
      bookerName: 'Minji Kim',
      bookerEmail: 'Minji.Kim@Example.com',
      guestFirstName: 'Minji',
      guestCountry: 'KR',
      totalAmount: String(rate.amount),
      specialRequests: 'High floor',
    });
    // The webhook payloads are v1 records too.
    const event = await production.service.deps.db.prisma.outboxEvent.findFirstOrThrow({ where: { bookingId: data.id } });
    expect(Object.keys(event.payload as Json).sort()).toEqual(V1_RECORD_KEYS);
    await checkInvariants(production, who.user_id);
  });

  it('several rooms: one booking and one charge per room, one confirmation number, all listed in v1', async () => {
    const rate = await findRate(production, who, { from: 5, checkin: day(41), checkout: day(43), minRooms: 3 });
    const before = await balanceOf(production, who.user_id);
    const data = await created(
      await r.reserve({
        property_id: String(rate.propertyId),
        roomtype_id: rate.roomtypeId,
        rateplan_id: rate.rateplanId,
        check_in: rate.checkin,
        check_out: rate.checkout,
        rooms: [{ adults: 2 }, { adults: 1, children_ages: [5], guest: { first_name: 'Jisoo', last_name: 'Park' } }, { adults: 1 }],
        guest: GUEST,
      }),
    );
    expect(data.rooms).toHaveLength(3);
    expect(data.rooms[0].booking_id).toBe(data.id);
    expect(new Set(data.rooms.map((room: Json) => room.booking_id)).size).toBe(3);
    expect(data.rooms.map((room: Json) => [room.adults, room.children, room.children_ages, room.guest])).toEqual([
      [2, 0, [], { first_name: 'Minji', last_name: 'Kim' }],
      [1, 1, [5], { first_name: 'Jisoo', last_name: 'Park' }],
      [1, 0, [], { first_name: null, last_name: null }],
    ]);
    expect(data).toMatchObject({ adults: 4, children: 1, status: 'confirmed', price: { total: 3 * rate.amount } });

    // Each room is its own booking, charged its own price; together the reservation's total.
    const rows = await production.service.deps.db.prisma.booking.findMany({ where: { itineraryId: data.id }, orderBy: { itineraryRoom: 'asc' } });
    expect(rows.map((b) => b.id)).toEqual(data.rooms.map((room: Json) => room.booking_id));
    expect(new Set(rows.map((b) => b.confirmationNumber))).toEqual(new Set([data.confirmation_number]));
    for (const b of rows) {
      expect(await ledgerOf(production, b.id)).toEqual([['booking_charge', -BigInt(rate.amount)]]);
      expect(await eventsOf(production, b.id)).toEqual(['reservation.created', 'reservation.confirmed']);
      expect((await production.service.deps.upstream.getBooking(b.id))?.rooms).toBe(1);
    }
    expect(await balanceOf(production, who.user_id)).toBe(before - 3n * BigInt(rate.amount));
    const listed = (await (await r.call('GET', '/bookings?per_page=100')).json()).data.map((b: Json) => b.id);
    expect(listed).toEqual(expect.arrayContaining(rows.map((b) => b.id)));
    await checkInvariants(production, who.user_id);
  });

  it('rooms of different rate plans of one room type: each priced by its plan', async () => {
    const checkin = day(44);
    const checkout = day(45);
    const call = v1(production, who).call;
    let chosen: { propertyId: number; roomtypeId: string; plans: { id: string; amount: number }[] } | undefined;
    for (let propertyId = 10; !chosen && propertyId < 70; propertyId++) {
      const res = await call('GET', `/search/availability/${propertyId}?checkin=${checkin}&checkout=${checkout}&adults=2`);
      if (res.status !== 200) continue;
      const room = (await res.json()).data.room_types.find((rt: Json) => rt.rates.length >= 2 && rt.rates[0].available_rooms >= 2);
      if (room) {
        chosen = {
          propertyId,
          roomtypeId: room.roomtype_id,
          plans: room.rates.slice(0, 2).map((p: Json) => ({ id: p.rateplan_id, amount: p.pricing.billable_totals.inclusive_amount })),
        };
      }
    }
    const data = await created(
      await r.reserve({
        property_id: chosen!.propertyId,
        roomtype_id: chosen!.roomtypeId,
        check_in: checkin,
        check_out: checkout,
        rooms: chosen!.plans.map((p) => ({ rateplan_id: p.id, adults: 2 })),
        guest: GUEST,
      }),
    );
    expect(data.rooms.map((room: Json) => [room.rateplan_id, room.price.total])).toEqual(chosen!.plans.map((p) => [p.id, p.amount]));
    expect(data.price.total).toBe(chosen!.plans[0]!.amount + chosen!.plans[1]!.amount);
    await checkInvariants(production, who.user_id);
  });

  it('with a book_token: its offer at its price, one booking per room it holds; the token books once', async () => {
    const offer = await v1(production, who).offer({ from: 20, checkin: day(46), checkout: day(48), adults: 3, query: '&rooms=2' });
    const before = await balanceOf(production, who.user_id);
    const data = await created(
      await r.reserve({ book_token: offer.bookToken, guest: GUEST, rooms: [{}, { guest: { first_name: 'Dan', last_name: 'Lee' } }] }),
    );
    expect(data).toMatchObject({ property_id: offer.propertyId, check_in: offer.checkin, check_out: offer.checkout, adults: 3 });
    expect(data.rooms.map((room: Json) => [room.roomtype_id, room.rateplan_id, room.adults, room.guest.first_name])).toEqual([
      [offer.roomtypeId, offer.rateplanId, 2, 'Minji'],
      [offer.roomtypeId, offer.rateplanId, 1, 'Dan'],
    ]);
    expect(data.price.total).toBe(offer.amount);
    expect(await balanceOf(production, who.user_id)).toBe(before - BigInt(offer.amount));

    const again = await expectError(await r.reserve({ book_token: offer.bookToken, guest: GUEST }), 422, 'BOOK_TOKEN_USED');
    expect(again.details).toMatchObject({ reservation_id: data.id });
    await expectError(await r.reserve({ book_token: 'not-a-token', guest: GUEST }), 422, 'BOOK_TOKEN_INVALID');
    await checkInvariants(production, who.user_id);
  });

  it('Idempotency-Key: a retry replays the 201 and charges once; another body with the key is 409', async () => {
    const rate = await findRate(production, who, { from: 25, checkin: day(50), checkout: day(51) });
    const before = await balanceOf(production, who.user_id);
    const headers = { 'idempotency-key': `res-${crypto.randomUUID()}` };
    const first = await created(await r.reserve(oneRoom(rate), headers));
    const retry = await r.reserve(oneRoom(rate), headers);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('location')).toBe(`/channel/v1/reservations/${first.id}`);
    expect((await retry.json()).data).toEqual(first);
    expect(await balanceOf(production, who.user_id)).toBe(before - BigInt(rate.amount));
    expect(await production.service.deps.db.prisma.booking.count({ where: { channelId: who.user_id, createdAt: { gte: new Date(first.created_at) } } })).toBe(1);
    await expectError(await r.reserve(oneRoom(rate, { adults: 1 }), headers), 409, 'IDEMPOTENCY_KEY_REUSED');
    await checkInvariants(production, who.user_id);
  });

  it('402 INSUFFICIENT_BALANCE when the balance does not cover every room; nothing is booked', async () => {
    const poor = await production.channel({ balance: 1000n });
    const rate = await findRate(production, poor, { from: 30, checkin: day(52), checkout: day(53) });
    await expectError(await api(production, poor).reserve(oneRoom(rate)), 402, 'INSUFFICIENT_BALANCE');
    expect(await bookingCount(production, poor.user_id)).toBe(0);
    expect(await balanceOf(production, poor.user_id)).toBe(1000n);
  });
});

describe('POST /reservations: validation, sandbox outcomes, scope', () => {
  let who: IssuedCredentials;
  let r: ReturnType<typeof api>;
  let rate: FoundRate;
  beforeAll(async () => {
    who = await sandbox.channel();
    r = api(sandbox, who);
    rate = await findRate(sandbox, who, { from: 1, checkin: day(30), checkout: day(32) });
  });

  it.each([
    ['no guest', { guest: undefined }, 'guest'],
    ['a bad e-mail', { guest: { ...GUEST, email: 'not-an-email' } }, 'guest.email'],
    ['no e-mail', { guest: { first_name: 'A', last_name: 'B' } }, 'guest.email'],
    ['an empty first name', { guest: { ...GUEST, first_name: ' ' } }, 'guest.first_name'],
    ['a bad phone', { guest: { ...GUEST, phone: 'call me' } }, 'guest.phone'],
    ['adults < 1', { adults: 0 }, 'adults'],
    ['adults not an integer', { adults: 1.5 }, 'adults'],
    ['no adults', { adults: undefined }, 'adults'],
    ['check_out before check_in', { check_in: day(32), check_out: day(30) }, 'check_out'],
    ['check_in in the past', { check_in: day(-3), check_out: day(-1) }, 'check_in'],
    ['a date that is not one', { check_in: '2027-02-30' }, 'check_in'],
    ['more than 30 nights', { check_out: day(70) }, 'check_out'],
    ['no property_id', { property_id: undefined }, 'property_id'],
    ['a property_id that is not an id', { property_id: 'abc' }, 'property_id'],
    ['no rate plan', { rateplan_id: undefined }, 'rateplan_id'],
    ['too many children in a room', { children: 7 }, 'children'],
    ['special_requests over 500 characters', { special_requests: 'x'.repeat(501) }, 'special_requests'],
    ['a bad arrival time', { arrival_time: '25:00' }, 'arrival_time'],
    ['adults with rooms', { rooms: [{ adults: 2 }] }, 'adults'],
    ['a room without adults', { adults: undefined, rooms: [{ adults: 2 }, {}] }, 'rooms.1.adults'],
    ['a guest for the first room', { adults: undefined, rooms: [{ adults: 2, guest: { first_name: 'X', last_name: 'Y' } }] }, 'rooms.0.guest'],
    ['more than 8 rooms', { adults: undefined, rooms: Array.from({ length: 9 }, () => ({ adults: 1 })) }, 'rooms'],
    ['offer fields with a book_token', { book_token: 'x' }, 'property_id'],
    ['a currency not offered', { currency: 'XXX' }, 'currency'],
  ])('400 VALIDATION_ERROR for %s, naming the field; nothing is booked', async (_name, change, field) => {
    const body: Json = { ...oneRoom(rate), ...change };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    const error = await expectError(await r.reserve(body), 400, 'VALIDATION_ERROR');
    expect(error.details!.fields.map((f: Json) => f.field)).toContain(field);
    expect(await bookingCount(sandbox, who.user_id)).toBe(0);
  });

  it('400 when the party does not fit the room type', async () => {
    const error = await expectError(await r.reserve(oneRoom(rate, { adults: 8 })), 400, 'VALIDATION_ERROR');
    expect(error.details!.fields).toEqual([{ field: 'adults', reason: expect.stringContaining('at most') }]);
  });

  it('400 for a body that is not JSON, or not an object', async () => {
    const res = await sandbox.request('/channel/v1/reservations', {
      method: 'POST',
      headers: { ...apiKey(who), 'content-type': 'application/json' },
      body: '{"guest": ',
    });
    await expectError(res, 400, 'VALIDATION_ERROR');
    await expectError(await r.reserve([1, 2]), 400, 'VALIDATION_ERROR');
  });

  it('404 for an unknown property, room type or rate plan', async () => {
    await expectError(await r.reserve(oneRoom(rate, { property_id: 999_999 })), 404, 'NOT_FOUND');
    await expectError(await r.reserve(oneRoom(rate, { roomtype_id: 'nope' })), 404, 'NOT_FOUND');
    await expectError(await r.reserve(oneRoom(rate, { rateplan_id: 'nope' })), 404, 'NOT_FOUND');
    expect(await bookingCount(sandbox, who.user_id)).toBe(0);
  });

  it('409 SOLD_OUT when the rooms asked for exceed the stock; 409 SOLD_OUT and 502 from the provider; nothing booked', async () => {
    const rooms = Array.from({ length: Math.min(rate.availableRooms + 1, 8) }, () => ({ adults: 1 }));
    if (rooms.length > rate.availableRooms) {
      await expectError(await r.reserve(oneRoom(rate, { adults: undefined, rooms })), 409, 'SOLD_OUT');
    }
    await expectError(await r.reserve(oneRoom(rate), { 'x-test-scenario': 'sold_out' }), 409, 'SOLD_OUT');
    await expectError(await r.reserve(oneRoom(rate), { 'x-test-scenario': 'upstream_error' }), 502, 'UPSTREAM_ERROR');
    expect(await bookingCount(sandbox, who.user_id)).toBe(0);
    await checkInvariants(sandbox, who.user_id);
  });

  it('the sandbox books without touching the balance; a pending provider answer makes a pending reservation', async () => {
    const rich = await sandbox.channel({ balance: 1_000_000n });
    const mine = api(sandbox, rich);
    const data = await created(await mine.reserve(oneRoom(rate), { 'x-test-scenario': 'pending' }));
    expect(data.status).toBe('pending');
    expect(await balanceOf(sandbox, rich.user_id)).toBe(1_000_000n);
    await checkInvariants(sandbox, rich.user_id);
  });

  it('401 without a credential; 403 INSUFFICIENT_SCOPE without reservations:write, nothing booked', async () => {
    await expectError(
      await sandbox.request('/channel/v1/reservations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
      401,
      'UNAUTHORIZED',
    );
    const reader = await sandbox.channel({ scopes: ['search:availability', 'reservations:read'] });
    const error = await expectError(await api(sandbox, reader).reserve(oneRoom(rate)), 403, 'INSUFFICIENT_SCOPE');
    expect(error.details).toEqual({ required_scope: 'reservations:write' });
    expect(await bookingCount(sandbox, reader.user_id)).toBe(0);
  });
});

describe('GET /reservations and /reservations/{id}', () => {
  let who: IssuedCredentials;
  let stranger: IssuedCredentials;
  let r: ReturnType<typeof api>;
  let single: Json;
  let multi: Json;
  let v1Booking: Json;

  beforeAll(async () => {
    [who, stranger] = await Promise.all([sandbox.channel(), sandbox.channel()]);
    r = api(sandbox, who);
    const early = await findRate(sandbox, who, { from: 1, checkin: day(20), checkout: day(22), minRooms: 2 });
    const late = await findRate(sandbox, who, { from: 1, checkin: day(60), checkout: day(61) });
    single = await created(await r.reserve(oneRoom(late, { guest: { ...GUEST, email: 'Lee_Ha@Example.com' } })));
    multi = await created(
      await r.reserve({ ...oneRoom(early), adults: undefined, rooms: [{ adults: 2 }, { adults: 2 }], guest: { ...GUEST, email: 'minji@example.com' } }),
    );
    const offer = await v1(sandbox, who).offer({ from: 3, checkin: day(35), checkout: day(36) });
    v1Booking = (await (await r.book({ book_token: offer.bookToken, booker_name: 'Old Style', booker_email: 'MINJI@example.com' })).json()).data;
    // Another channel's reservation with the same e-mail and dates never shows.
    await created(await api(sandbox, stranger).reserve(oneRoom(late, { guest: { ...GUEST, email: 'minji@example.com' } })));
  });

  it('by id: the reservation as created; any room’s booking id names it too', async () => {
    const res = await r.get(multi.id);
    expect(res.status).toBe(200);
    expect((await res.json()).data).toEqual(multi);
    expect((await (await r.get(multi.rooms[1].booking_id)).json()).data.id).toBe(multi.id);
    expect((await (await r.get(multi.id.toUpperCase())).json()).data.id).toBe(multi.id);
  });

  it('a v1 booking is a reservation of one room, with a confirmation number of its own', async () => {
    const data = (await (await r.get(v1Booking.id)).json()).data;
    expect(data).toMatchObject({
      id: v1Booking.id,
      status: 'confirmed',
      guest: { email: 'MINJI@example.com' },
      rooms: [{ booking_id: v1Booking.id, price: { total: Number(v1Booking.totalAmount) } }],
    });
    expect(data.confirmation_number).toMatch(/^[0-9A-Z]{12}$/);
    expect(data.confirmation_number).not.toBe(multi.confirmation_number);
  });

  it("404 for another channel's reservation, an unknown or malformed id", async () => {
    await expectError(await api(sandbox, stranger).get(multi.id), 404, 'NOT_FOUND');
    await expectError(await r.get(crypto.randomUUID()), 404, 'NOT_FOUND');
    await expectError(await r.get('not-a-uuid'), 404, 'NOT_FOUND');
    await expectError(await r.get('x'.repeat(65)), 400, 'VALIDATION_ERROR');
  });

  const ids = async (query: string) => {
    const res = await r.list(query);
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    return body.data.map((d: Json) => d.id);
  };

  it('lists every reservation of the channel, newest first, with pagination', async () => {
    expect(await ids('')).toEqual([v1Booking.id, multi.id, single.id]);
    const res = await r.list('?per_page=2&page=2');
    const body = await res.json();
    expect(body.data.map((d: Json) => d.id)).toEqual([single.id]);
    expect(body.pagination).toEqual({ total: 3, page: 2, per_page: 2, total_pages: 2, has_next: false });
    expect(body.data[0]).toEqual(single);
  });

  it('by confirmation_number, in any case', async () => {
    expect(await ids(`?confirmation_number=${multi.confirmation_number}`)).toEqual([multi.id]);
    expect(await ids(`?confirmation_number=${multi.confirmation_number.toLowerCase()}`)).toEqual([multi.id]);
    expect(await ids('?confirmation_number=ZZZZZZZZZZZZ')).toEqual([]);
  });

  it('by check-in date: check_in_from and check_in_to, inclusive', async () => {
    expect(await ids(`?check_in_from=${day(30)}`)).toEqual([v1Booking.id, single.id]);
    expect(await ids(`?check_in_from=${day(20)}&check_in_to=${day(20)}`)).toEqual([multi.id]);
    expect(await ids(`?check_in_from=${day(61)}`)).toEqual([]);
  });

  it("by guest_email, case-insensitively, exactly (an underscore is no wildcard), never another channel's", async () => {
    expect(await ids('?guest_email=minji@example.com')).toEqual([v1Booking.id, multi.id]);
    expect(await ids('?guest_email=MINJI@EXAMPLE.COM')).toEqual([v1Booking.id, multi.id]);
    expect(await ids('?guest_email=lee_ha@example.com')).toEqual([single.id]);
    expect(await ids('?guest_email=leexha@example.com')).toEqual([]);
    // Filters combine.
    expect(await ids(`?guest_email=minji@example.com&check_in_from=${day(30)}`)).toEqual([v1Booking.id]);
    const theirs = await api(sandbox, stranger).list('?guest_email=minji@example.com');
    expect((await theirs.json()).data.map((d: Json) => d.id)).not.toContain(multi.id);
  });

  it.each([
    ['?guest_email=nope', 'guest_email'],
    ['?check_in_from=2026-13-01', 'check_in_from'],
    [`?check_in_from=${day(10)}&check_in_to=${day(5)}`, 'check_in_to'],
    ['?confirmation_number=AB-CD', 'confirmation_number'],
    ['?per_page=101', 'per_page'],
    ['?page=0', 'page'],
  ])('400 VALIDATION_ERROR for %s', async (query, field) => {
    const error = await expectError(await r.list(query), 400, 'VALIDATION_ERROR');
    expect(error.details!.fields.map((f: Json) => f.field)).toContain(field);
  });

  it('403 without reservations:read', async () => {
    const writer = await sandbox.channel({ scopes: ['reservations:write'] });
    const error = await expectError(await api(sandbox, writer).list(), 403, 'INSUFFICIENT_SCOPE');
    expect(error.details).toEqual({ required_scope: 'reservations:read' });
    await expectError(await api(sandbox, writer).get(multi.id), 403, 'INSUFFICIENT_SCOPE');
  });
});

describe('PATCH /reservations/{id}', () => {
  let who: IssuedCredentials;
  let r: ReturnType<typeof api>;
  let rate: FoundRate;
  beforeAll(async () => {
    who = await sandbox.channel();
    r = api(sandbox, who);
    // Rooms for every reservation of this block (two rooms, then one each in three more tests): bookings consume the stock.
    rate = await findRate(sandbox, who, { from: 8, checkin: day(3), checkout: day(5), minRooms: 5 });
  });

  it('changes the guest, special requests and arrival time on every room; reservation.modified per room', async () => {
    const data = await created(
      await r.reserve({ ...oneRoom(rate), adults: undefined, rooms: [{ adults: 2 }, { adults: 1, guest: { first_name: 'Jisoo', last_name: 'Park' } }] }),
    );
    const res = await r.patch(data.id, {
      guest: { first_name: 'Minjae', email: 'new@example.com', phone: null },
      special_requests: 'Late checkout',
      arrival_time: '23:15',
    });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.data).toMatchObject({
      guest: { first_name: 'Minjae', last_name: 'Kim', email: 'new@example.com', phone: null, country: 'KR' },
      special_requests: 'Late checkout',
      arrival_time: '23:15',
    });
    // The second room keeps its own guest.
    expect(body.data.rooms.map((room: Json) => room.guest.first_name)).toEqual(['Minjae', 'Jisoo']);
    expect(new Date(body.data.updated_at) > new Date(data.updated_at)).toBe(true);
    for (const room of data.rooms) {
      const record = (await (await r.call('GET', `/bookings/${room.booking_id}`)).json()).data;
      expect(record).toMatchObject({ bookerName: 'Minjae Kim', bookerEmail: 'new@example.com', guestPhone: null, specialRequests: 'Late checkout' });
      expect(await eventsOf(sandbox, room.booking_id)).toEqual(['reservation.created', 'reservation.confirmed', 'reservation.modified']);
    }
    // Clearing.
    const cleared = (await (await r.patch(data.id, { special_requests: null, arrival_time: null })).json()).data;
    expect(cleared).toMatchObject({ special_requests: null, arrival_time: null });
    // The same values again change nothing and write no event.
    await r.patch(data.id, { guest: { first_name: 'Minjae' } });
    expect(await eventsOf(sandbox, data.id)).toHaveLength(4);
    await checkInvariants(sandbox, who.user_id);
  });

  it('special requests and arrival time are refused after check-in (409, nothing changed); the guest can still change', async () => {
    const data = await created(await r.reserve(oneRoom(rate, { special_requests: 'Quiet room' })));
    offsetMs = 6 * 86_400_000;
    try {
      for (const body of [{ special_requests: 'Crib' }, { arrival_time: '10:00' }, { guest: { last_name: 'Lee' }, special_requests: 'Crib' }]) {
        const error = await expectError(await r.patch(data.id, body), 409, 'BOOKING_NOT_MODIFIABLE');
        expect(error.details).toMatchObject({ booking_id: data.id, status: 'confirmed' });
      }
      const unchanged = (await (await r.get(data.id)).json()).data;
      expect(unchanged).toMatchObject({ special_requests: 'Quiet room', guest: { last_name: 'Kim' } });
      const res = await r.patch(data.id, { guest: { last_name: 'Lee', phone: '+82 10 0000 0000' } });
      expect(res.status).toBe(200);
      expect((await res.json()).data.guest).toMatchObject({ last_name: 'Lee', phone: '+82 10 0000 0000' });
    } finally {
      offsetMs = 0;
    }
  });

  it('409 for a cancelled reservation', async () => {
    const data = await created(await r.reserve(oneRoom(rate)));
    expect((await r.cancel(data.id)).status).toBe(200);
    const error = await expectError(await r.patch(data.id, { guest: { first_name: 'X' } }), 409, 'BOOKING_NOT_MODIFIABLE');
    expect(error.details).toMatchObject({ status: 'cancelled' });
  });

  it.each([
    [{}, '(body)'],
    [{ guest: {} }, 'guest'],
    [{ guest: { first_name: '' } }, 'guest.first_name'],
    [{ guest: { email: 'nope' } }, 'guest.email'],
    [{ guest: { email: null } }, 'guest.email'],
    [{ guest: { nickname: 'x' } }, 'guest'],
    [{ special_requests: 'x'.repeat(501) }, 'special_requests'],
    [{ arrival_time: '7pm' }, 'arrival_time'],
    [{ check_in: day(9) }, '(body)'],
    // The party is not changed here: what was paid for stays (issue 15, finding 4).
    [{ adults: 12 }, '(body)'],
    [{ guests_adult: 12, guests_child: 5 }, '(body)'],
  ])('400 VALIDATION_ERROR for %j', async (body, field) => {
    const data = (await (await r.list('?per_page=1')).json()).data[0];
    const error = await expectError(await r.patch(data.id, body), 400, 'VALIDATION_ERROR');
    expect(error.details!.fields.map((f: Json) => f.field)).toContain(field);
  });

  /** The rooms' special requests and their events, as a partner reads them. */
  async function roomsNow(data: Json) {
    const rooms = (await (await r.get(data.id)).json()).data.rooms as Json[];
    return Promise.all(
      rooms.map(async (room) => {
        const record = (await (await r.call('GET', `/bookings/${room.booking_id}`)).json()).data;
        return { id: room.booking_id as string, status: room.status as string, specialRequests: record.specialRequests, events: await eventsOf(sandbox, room.booking_id) };
      }),
    );
  }

  it('all or nothing: room 2 cancelled after room 1 is written, before room 2 is, leaves every room patched or none', async () => {
    const three = await findRate(sandbox, who, { from: 15, checkin: day(12), checkout: day(13), minRooms: 3 });
    const data = await created(
      await r.reserve({ ...oneRoom(three, { special_requests: 'Quiet room' }), adults: undefined, rooms: [{ adults: 2 }, { adults: 1 }, { adults: 1 }] }),
    );
    const [first, second, third] = data.rooms.map((room: Json) => room.booking_id as string);
    const ctx = await ctxOf(sandbox, who);
    // The PATCH runs on a client that, once room 1 is written, starts cancelling room 2 (through the
    // real client) and, when the transaction that wrote room 1 is over, waits for that cancellation
    // to end before the PATCH goes on: the window between two rooms, made certain.
    let cancelling: Promise<unknown> | undefined;
    const prisma = interleaved(sandbox.service.deps.db.prisma, (where) => {
      if (!cancelling && where.id === first) cancelling = cancelReservation(ctx, data.id, [second]).catch((error: unknown) => error);
    }, () => cancelling);
    const racing = { ...ctx, deps: { ...ctx.deps, db: { ...ctx.deps.db, prisma } } };
    const outcome = await updateReservation(racing, data.id, { specialRequests: 'Twin beds' }).then(
      () => 'patched',
      (error: { code?: string }) => error.code,
    );
    expect(cancelling, 'the cancellation started between the rooms').toBeDefined();
    const cancelled = (await cancelling) as { cancelled?: Json[] };
    expect(cancelled.cancelled?.map((b) => [b.id, b.status])).toEqual([[second, 'cancelled']]);

    const rooms = await roomsNow(data);
    expect(rooms.map((room) => room.status)).toEqual(['confirmed', 'cancelled', 'confirmed']);
    const patched = rooms.filter((room) => room.specialRequests === 'Twin beds').map((room) => room.id);
    const modified = rooms.filter((room) => room.events.includes('reservation.modified')).map((room) => room.id);
    if (outcome === 'patched') {
      // The PATCH went first, whole: every room, room 2 before it was cancelled.
      expect(patched).toEqual([first, second, third]);
      expect(modified).toEqual([first, second, third]);
      expect(rooms[1]!.events).toEqual(['reservation.created', 'reservation.confirmed', 'reservation.modified', 'reservation.cancelled']);
    } else {
      // Refused: nothing changed, no event.
      expect(outcome).toBe('BOOKING_NOT_MODIFIABLE');
      expect(patched).toEqual([]);
      expect(modified).toEqual([]);
    }
    await checkInvariants(sandbox, who.user_id);
  });

  it('a PATCH and a cancellation of room 2 sent together: the live rooms are patched alike, or none is', async () => {
    for (let round = 0; round < 3; round++) {
      const three = await findRate(sandbox, who, { from: 15, checkin: day(14 + round), checkout: day(15 + round), minRooms: 3 });
      const data = await created(await r.reserve({ ...oneRoom(three), adults: undefined, rooms: [{ adults: 2 }, { adults: 1 }, { adults: 1 }] }));
      const [first, second, third] = data.rooms.map((room: Json) => room.booking_id as string);
      const [patch, cancel] = await Promise.all([r.patch(data.id, { special_requests: `Round ${round}` }), r.cancelRoom(data.id, second)]);
      expect(cancel.status).toBe(200);
      expect([200, 409]).toContain(patch.status);
      const rooms = await roomsNow(data);
      const patched = rooms.filter((room) => room.specialRequests === `Round ${round}`).map((room) => room.id);
      if (patch.status === 200) {
        // Rooms 1 and 3 always; room 2 too when the PATCH went before the cancellation began.
        expect([[first, third], [first, second, third]]).toContainEqual(patched);
        expect(rooms.filter((room) => room.events.includes('reservation.modified')).map((room) => room.id)).toEqual(patched);
      } else {
        expect(patched).toEqual([]);
      }
    }
    await checkInvariants(sandbox, who.user_id);
  });

  it("404 for another channel's reservation, nothing changed; 403 without reservations:write", async () => {
    const data = await created(await r.reserve(oneRoom(rate)));
    const stranger = await sandbox.channel();
    await expectError(await api(sandbox, stranger).patch(data.id, { special_requests: 'mine now' }), 404, 'NOT_FOUND');
    const reader = await sandbox.channel({ scopes: ['reservations:read'] });
    const error = await expectError(await api(sandbox, reader).patch(data.id, { special_requests: 'x' }), 403, 'INSUFFICIENT_SCOPE');
    expect(error.details).toEqual({ required_scope: 'reservations:write' });
    expect((await (await r.get(data.id)).json()).data).toEqual(data);
  });
});

describe('cancelling reservations (production: refunds through the ledger)', () => {
  let who: IssuedCredentials;
  let r: ReturnType<typeof api>;
  beforeAll(async () => {
    who = await production.channel({ balance: START });
    r = api(production, who);
  });

  async function threeRooms(from: number, policy?: string) {
    const rate = await findRate(production, who, { from, checkin: day(60), checkout: day(62), minRooms: 3, policy });
    const data = await created(await r.reserve({ ...oneRoom(rate), adults: undefined, rooms: [{ adults: 2 }, { adults: 2 }, { adults: 1 }] }));
    return { rate, data };
  }

  it('whole: every room cancelled by its policy, each refunded once, reservation.cancelled per room; again is 409', async () => {
    const { rate, data } = await threeRooms(1, 'flexible');
    const before = await balanceOf(production, who.user_id);
    const res = await r.cancel(data.id);
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.data).toMatchObject({
      reservation_id: data.id,
      confirmation_number: data.confirmation_number,
      status: 'cancelled',
      cancellation_fee: 0,
      refund_amount: 3 * rate.amount,
      currency: 'KRW',
    });
    expect(body.data.cancelled_rooms).toEqual(
      data.rooms.map((room: Json) => ({ booking_id: room.booking_id, status: 'cancelled', cancellation_fee: 0, refund_amount: rate.amount })),
    );
    expect(body.data.reservation).toMatchObject({ status: 'cancelled', price: { total: 3 * rate.amount, cancellation_fee: 0, refund_amount: 3 * rate.amount } });
    expect(await balanceOf(production, who.user_id)).toBe(before + 3n * BigInt(rate.amount));
    for (const room of data.rooms) {
      expect(await ledgerOf(production, room.booking_id)).toEqual([
        ['booking_charge', -BigInt(rate.amount)],
        ['booking_refund', BigInt(rate.amount)],
      ]);
      expect(await eventsOf(production, room.booking_id)).toEqual(['reservation.created', 'reservation.confirmed', 'reservation.cancelled']);
      expect((await production.service.deps.upstream.getBooking(room.booking_id))?.status).toBe('cancelled');
    }
    const again = await expectError(await r.cancel(data.id), 409, 'BOOKING_ALREADY_CANCELLED');
    expect(again.details).toMatchObject({ reservation_id: data.id, status: 'cancelled' });
    await checkInvariants(production, who.user_id);
  });

  it('partial: the rooms named are cancelled and refunded, the rest stays; then one room by DELETE, then the rest', async () => {
    const { rate, data } = await threeRooms(10);
    const [first, second, third] = data.rooms.map((room: Json) => room.booking_id as string);
    const before = await balanceOf(production, who.user_id);

    const res = await r.cancel(data.id, { room_ids: [second] });
    const body = (await res.json()).data;
    expect(res.status).toBe(200);
    expect(body.cancelled_rooms.map((c: Json) => c.booking_id)).toEqual([second]);
    expect(body.status).toBe('confirmed');
    expect(body.reservation.rooms.map((room: Json) => room.status)).toEqual(['confirmed', 'cancelled', 'confirmed']);
    const refund = body.refund_amount;
    expect(refund + body.cancellation_fee).toBe(rate.amount);
    expect(body.reservation.price).toMatchObject({ total: 3 * rate.amount, refund_amount: refund });
    expect(await balanceOf(production, who.user_id)).toBe(before + BigInt(refund));
    expect(await eventsOf(production, first)).toEqual(['reservation.created', 'reservation.confirmed']);

    // Naming it again, or a room of no reservation of this one: refused, nothing cancelled.
    await expectError(await r.cancel(data.id, { room_ids: [third, second] }), 409, 'BOOKING_ALREADY_CANCELLED');
    const bad = await expectError(await r.cancel(data.id, { room_ids: [crypto.randomUUID(), third, third] }), 400, 'VALIDATION_ERROR');
    expect(bad.details!.fields.map((f: Json) => f.field)).toEqual(['room_ids.0', 'room_ids.2']);
    await expectError(await r.cancelRoom(data.id, crypto.randomUUID()), 404, 'NOT_FOUND');
    expect((await (await r.get(data.id)).json()).data.rooms.map((room: Json) => room.status)).toEqual(['confirmed', 'cancelled', 'confirmed']);

    // The first room by DELETE: the reservation's guest is now the next room's.
    const deleted = await r.cancelRoom(data.id, first);
    const afterDelete = (await deleted.json()).data;
    expect(deleted.status).toBe(200);
    expect(afterDelete.cancelled_rooms.map((c: Json) => c.booking_id)).toEqual([first]);
    expect(afterDelete.reservation).toMatchObject({ status: 'confirmed', guest: { first_name: 'Minji', email: GUEST.email } });
    await expectError(await r.cancelRoom(data.id, first), 409, 'BOOKING_ALREADY_CANCELLED');

    // The whole reservation now means the room left.
    const rest = (await (await r.cancel(data.id)).json()).data;
    expect(rest.cancelled_rooms.map((c: Json) => c.booking_id)).toEqual([third]);
    expect(rest.status).toBe('cancelled');
    expect(await balanceOf(production, who.user_id)).toBe(before + BigInt(body.refund_amount + afterDelete.refund_amount + rest.refund_amount));
    await checkInvariants(production, who.user_id);
  });

  it('a non-refundable room keeps its whole price: no refund entry', async () => {
    const rate = await findRate(production, who, { from: 20, checkin: day(63), checkout: day(64), policy: 'non_refundable' });
    const data = await created(await r.reserve(oneRoom(rate)));
    const before = await balanceOf(production, who.user_id);
    const body = (await (await r.cancel(data.id)).json()).data;
    expect(body).toMatchObject({ cancellation_fee: rate.amount, refund_amount: 0 });
    expect(await balanceOf(production, who.user_id)).toBe(before);
    expect(await ledgerOf(production, data.id)).toEqual([['booking_charge', -BigInt(rate.amount)]]);
    await checkInvariants(production, who.user_id);
  });

  it('Idempotency-Key: a repeated cancel answers the first response and refunds once', async () => {
    const { data } = await threeRooms(40);
    const headers = { 'idempotency-key': `cancel-${crypto.randomUUID()}` };
    const before = await balanceOf(production, who.user_id);
    const first = await r.cancel(data.id, { room_ids: [data.rooms[2].booking_id] }, headers);
    const firstBody = (await first.json()).data;
    const again = await r.cancel(data.id, { room_ids: [data.rooms[2].booking_id] }, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await again.json()).data).toEqual(firstBody);
    expect(await balanceOf(production, who.user_id)).toBe(before + BigInt(firstBody.refund_amount));
    await checkInvariants(production, who.user_id);
  });

  it("another channel's reservation is 404 to cancel, whole or a room; 403 without reservations:write; nothing changes", async () => {
    const { data } = await threeRooms(50);
    const stranger = api(production, await production.channel({ balance: START }));
    await expectError(await stranger.cancel(data.id), 404, 'NOT_FOUND');
    await expectError(await stranger.cancel(data.id, { room_ids: [data.rooms[1].booking_id] }), 404, 'NOT_FOUND');
    await expectError(await stranger.cancelRoom(data.id, data.rooms[1].booking_id), 404, 'NOT_FOUND');
    const reader = api(production, await production.channel({ scopes: ['reservations:read'] }));
    const error = await expectError(await reader.cancel(data.id), 403, 'INSUFFICIENT_SCOPE');
    expect(error.details).toEqual({ required_scope: 'reservations:write' });
    await expectError(await reader.cancelRoom(data.id, data.rooms[1].booking_id), 403, 'INSUFFICIENT_SCOPE');
    expect((await (await r.get(data.id)).json()).data).toEqual(data);
    await checkInvariants(production, who.user_id);
  });

  it('400 for a bad body', async () => {
    const { data } = await threeRooms(55);
    for (const body of [{ room_ids: [] }, { room_ids: 'x' }, { rooms: [1] }]) {
      await expectError(await r.cancel(data.id, body), 400, 'VALIDATION_ERROR');
    }
    const res = await production.request(`/channel/v1/reservations/${data.id}/cancel`, {
      method: 'POST',
      headers: { ...apiKey(who), 'content-type': 'application/json' },
      body: '{"room_ids": [',
    });
    await expectError(res, 400, 'VALIDATION_ERROR');
    expect((await (await r.get(data.id)).json()).data.status).toBe('confirmed');
  });
});

describe('cancelling a reservation with a room checked in (sandbox: the property reports it)', () => {
  it('refuses the whole cancellation (nothing cancelled); the other rooms can still be cancelled', async () => {
    const who = await sandbox.channel();
    const r = api(sandbox, who);
    const rate = await findRate(sandbox, who, { from: 40, checkin: day(2), checkout: day(4), minRooms: 3 });
    const data = await created(await r.reserve({ ...oneRoom(rate), adults: undefined, rooms: [{ adults: 2 }, { adults: 2 }, { adults: 1 }] }));
    const [first, second] = data.rooms.map((room: Json) => room.booking_id as string);
    const reported = await fetch(`${sandbox.service.simulatorUrl}/_control/bookings/${second}/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'checked_in' }),
    });
    expect(reported.status).toBe(200);
    await runBookingSync(sandbox.service.deps);

    const error = await expectError(await r.cancel(data.id), 409, 'BOOKING_NOT_CANCELLABLE');
    expect(error.details).toMatchObject({ booking_id: second, status: 'checked_in' });
    await expectError(await r.cancel(data.id, { room_ids: [second] }), 409, 'BOOKING_NOT_CANCELLABLE');
    expect((await (await r.get(data.id)).json()).data.rooms.map((room: Json) => room.status)).toEqual(['confirmed', 'checked_in', 'confirmed']);
    expect(await eventsOf(sandbox, first)).toEqual(['reservation.created', 'reservation.confirmed']);

    const partial = (await (await r.cancel(data.id, { room_ids: [first] })).json()).data;
    expect(partial.cancelled_rooms.map((c: Json) => c.booking_id)).toEqual([first]);
    // Of the rooms left, one is still to arrive: confirmed comes first.
    expect(partial.status).toBe('confirmed');
    // Special requests are refused once a room is checked in, the guest can still change.
    await expectError(await r.patch(data.id, { special_requests: 'Extra towels' }), 409, 'BOOKING_NOT_MODIFIABLE');
    expect((await r.patch(data.id, { guest: { phone: '+82 2 123 4567' } })).status).toBe(200);
    await checkInvariants(sandbox, who.user_id);
  });
});

describe('the /reservations routes in the OpenAPI document', () => {
  it('declare their path id, its 404 and the Idempotency-Key header alike; a bad id is a 400', async () => {
    const res = await sandbox.request('/channel/v1/openapi.json');
    expect(res.status).toBe(200);
    const paths = (await res.json()).paths as Record<string, Record<string, Json>>;
    const ids = new Set<string>();
    const notFound = new Set<string>();
    const keys = new Set<string>();
    let routes = 0;
    for (const [path, operations] of Object.entries(paths)) {
      if (!path.startsWith('/reservations/{id}')) continue;
      for (const operation of Object.values(operations)) {
        routes++;
        const params = (operation.parameters ?? []) as Json[];
        ids.add(JSON.stringify(params.find((p) => p.in === 'path' && p.name === 'id')));
        notFound.add(operation.responses['404']?.description);
        expect(operation.responses['400']?.description, path).toMatch(/^VALIDATION_ERROR: .*\bid\b/);
        const key = params.find((p) => p.in === 'header' && p.name === 'idempotency-key');
        if (key) keys.add(JSON.stringify(key));
      }
    }
    // The reservation, its rooms, changes, fee, vouchers.
    expect(routes).toBeGreaterThanOrEqual(8);
    expect([...ids]).toHaveLength(1);
    expect(JSON.parse([...ids][0]!)).toMatchObject({ required: true, schema: { type: 'string', minLength: 1, maxLength: 64 } });
    expect([...notFound].filter((d) => !/booking is not one of its rooms/.test(d))).toHaveLength(1);
    expect([...keys]).toHaveLength(1);
  });
});
