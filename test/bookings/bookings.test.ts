import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBookingSync } from '../../src/services/reservations/index.js';
import { checkinInstant } from '../../src/services/search/index.js';
import { startSimulator } from '../../src/simulator/server.js';
import { offerClaims } from '../../src/services/access/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day, v1, type Offer } from '../helpers/flow.js';
import { expectError } from '../helpers/http.js';
import { balanceOf, eventsOf, ledgerOf } from '../helpers/ledger.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * v1 bookings as a partner sees them (docs/spec/channel-api.md §3.1, §4.5, docs/spec/DECISIONS.md): create, read, modify,
 * preview and cancel, in the sandbox (no money) and in production (the balance pays, through
 * the ledger). Concurrency and provider faults have files of their own.
 */

let sandbox: TestService;
let production: TestService;
/** Shift of the services' clocks, to expire tokens and pass deadlines. */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

beforeAll(async () => {
  [sandbox, production] = await Promise.all([
    startTestService({}, { clock }),
    startTestService({ CHANNEL_ENV: 'production' }, { clock }),
  ]);
});
afterAll(async () => {
  await Promise.all([sandbox?.close(), production?.close()]);
});

function admin(t: TestService, path: string, body?: unknown) {
  return t.request(`/admin/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.service.adminToken.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
}

describe('POST /bookings', () => {
  let creds: IssuedCredentials;
  let api: ReturnType<typeof v1>;
  beforeAll(async () => {
    creds = await sandbox.channel({ balance: 5_000_000n });
    api = v1(sandbox, creds);
  });

  it('books the offer of the book_token: 201, the spec record, the token amount charged whatever the body says', async () => {
    const offer = await api.offer({ from: 1 });
    const res = await api.book({
      book_token: offer.bookToken,
      booker_name: 'Kim Minji',
      booker_email: 'minji@example.com',
      guest_first_name: 'Minji',
      guest_last_name: 'Kim',
      guest_phone: '+82 10-1234-5678',
      guest_country: 'kr',
      special_requests: 'High floor',
      sale_amount: 1,
      channel_booking_number: 'OTA-1001',
      // Not fields of the contract: ignored, never a charge.
      total_amount: 1,
      net_amount: 1,
    });
    expect(res.status).toBe(201);
    const { data } = await res.json();
    expect(res.headers.get('location')).toBe(`/channel/v1/bookings/${data.id}`);
    expect(data).toMatchObject({
      userId: creds.user_id,
      appId: creds.app_id,
      channelBookingNumber: 'OTA-1001',
      propertyId: String(offer.propertyId),
      checkin: offer.checkin,
      checkout: offer.checkout,
      guestsAdult: 2,
      guestsChild: 0,
      bookerName: 'Kim Minji',
      bookerEmail: 'minji@example.com',
      guestCountry: 'KR',
      specialRequests: 'High floor',
      totalAmount: String(offer.amount),
      netAmount: String(offer.amount),
      saleAmount: '1',
      currency: 'KRW',
      status: 'confirmed',
      cancellationPolicy: offer.cancellationPolicy,
      refundAmount: null,
      cancellationFee: null,
    });
    expect(data.hubBookingNumber).toMatch(/^SIM-/);
    expect(typeof data.propertyName).toBe('string');
    expect(Object.keys(data).sort()).toEqual(
      [
        'id', 'userId', 'appId', 'hubBookingNumber', 'channelBookingNumber', 'propertyId', 'propertyName', 'roomType', 'ratePlan',
        'checkin', 'checkout', 'guestsAdult', 'guestsChild', 'bookerName', 'bookerEmail', 'guestFirstName', 'guestLastName',
        'guestPhone', 'guestCountry', 'specialRequests', 'totalAmount', 'netAmount', 'saleAmount', 'currency', 'status',
        'cancellationPolicy', 'cancellationDeadline', 'refundAmount', 'cancellationFee', 'createdAt', 'updatedAt',
      ].sort(),
    );
    expect(await eventsOf(sandbox, data.id)).toEqual(['reservation.created', 'reservation.confirmed']);
    // The policy the price check showed travels in the token, and the booking keeps it.
    const claims = await sandbox.service.deps.tokens.verify('book', offer.bookToken, offerClaims, { now: new Date(), channelId: creds.user_id });
    expect(claims.cancellation_policy).toBe(offer.cancellationPolicy);
    // The sandbox never touches the balance.
    expect(await balanceOf(sandbox, creds.user_id)).toBe(5_000_000n);
  });

  it("takes guests from the token unless given (fewer may be given), and keeps the partner's display names", async () => {
    const offer = await api.offer({ from: 5, adults: 3, query: '&children=1' });
    const res = await api.book({ book_token: offer.bookToken, booker_name: 'Lee', property_name: 'Our label', guests_adult: 2 });
    const { data } = await res.json();
    expect(res.status).toBe(201);
    expect(data).toMatchObject({ guestsAdult: 2, guestsChild: 1, propertyName: 'Our label' });
  });

  it.each([
    [{ booker_name: '' }, 'booker_name'],
    [{ booker_name: undefined }, 'booker_name'],
    [{ booker_email: 'not-an-email' }, 'booker_email'],
    [{ guests_adult: 0 }, 'guests_adult'],
    [{ guests_child: -1 }, 'guests_child'],
    [{ sale_amount: 0 }, 'sale_amount'],
    [{ sale_amount: -5 }, 'sale_amount'],
    [{ sale_amount: 1.5 }, 'sale_amount'],
    [{ special_requests: 'x'.repeat(501) }, 'special_requests'],
    [{ guest_country: 'KOR' }, 'guest_country'],
    [{ guest_phone: 'call me' }, 'guest_phone'],
    [{ book_token: '' }, 'book_token'],
  ])('400 VALIDATION_ERROR for %j, naming %s, and nothing is booked', async (change, field) => {
    const offer = await api.offer({ from: 9 });
    const body: Record<string, unknown> = { book_token: offer.bookToken, booker_name: 'Park', ...change };
    const res = await api.book(body);
    const error = await expectError(res, 400, 'VALIDATION_ERROR');
    expect(error.details!.fields.map((f: { field: string }) => f.field)).toContain(field);
    // The token was not consumed: it still books.
    expect((await api.book({ book_token: offer.bookToken, booker_name: 'Park' })).status).toBe(201);
  });

  it('400 for a body that is not a JSON object', async () => {
    const res = await sandbox.request('/channel/v1/bookings', {
      method: 'POST',
      headers: { 'x-api-key': creds.api_key, 'content-type': 'application/json' },
      body: '{"book_token": ',
    });
    await expectError(res, 400, 'VALIDATION_ERROR');
    await expectError(await api.book([1, 2] as unknown as Record<string, unknown>), 400, 'VALIDATION_ERROR');
  });

  it('401 without a credential, 403 without reservations:write', async () => {
    const res = await sandbox.request('/channel/v1/bookings', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await expectError(res, 401, 'UNAUTHORIZED');
    const reader = await sandbox.channel({ scopes: ['search:availability', 'reservations:read'] });
    const offer = await v1(sandbox, reader).offer({ from: 12 });
    const error = await expectError(await v1(sandbox, reader).book({ book_token: offer.bookToken, booker_name: 'X' }), 403, 'INSUFFICIENT_SCOPE');
    expect(error.details).toEqual({ required_scope: 'reservations:write' });
  });

  it('422 BOOK_TOKEN_USED with the booking it made, once used', async () => {
    const offer = await api.offer({ from: 14 });
    const first = (await (await api.book({ book_token: offer.bookToken, booker_name: 'Choi' })).json()).data;
    const error = await expectError(await api.book({ book_token: offer.bookToken, booker_name: 'Choi' }), 422, 'BOOK_TOKEN_USED');
    expect(error.details).toEqual({ booking_id: first.id });
  });

  it('422 BOOK_TOKEN_INVALID for a tampered token, a price_check_token and another channel’s token', async () => {
    const offer = await api.offer({ from: 16 });
    const [head, payload, signature] = offer.bookToken.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const cheaper = Buffer.from(JSON.stringify({ ...claims, total_inclusive: 1 })).toString('base64url');
    await expectError(await api.book({ book_token: `${head}.${cheaper}.${signature}`, booker_name: 'X' }), 422, 'BOOK_TOKEN_INVALID');
    await expectError(await api.book({ book_token: offer.priceCheckToken, booker_name: 'X' }), 422, 'BOOK_TOKEN_INVALID');
    await expectError(await api.book({ book_token: 'not-a-token', booker_name: 'X' }), 422, 'BOOK_TOKEN_INVALID');
    const stranger = v1(sandbox, await sandbox.channel());
    await expectError(await stranger.book({ book_token: offer.bookToken, booker_name: 'X' }), 422, 'BOOK_TOKEN_INVALID');
    expect(await sandbox.service.deps.db.prisma.booking.count({ where: { bookTokenJti: claims.jti } })).toBe(0);
  });

  it('422 BOOK_TOKEN_EXPIRED after 30 minutes', async () => {
    const offer = await api.offer({ from: 18 });
    offsetMs = 31 * 60_000;
    try {
      await expectError(await api.book({ book_token: offer.bookToken, booker_name: 'X' }), 422, 'BOOK_TOKEN_EXPIRED');
    } finally {
      offsetMs = 0;
    }
  });

  it('pending when the provider has not confirmed: only reservation.created, with a payment deadline', async () => {
    const offer = await api.offer({ from: 20 });
    const res = await api.book({ book_token: offer.bookToken, booker_name: 'Jung' }, { 'x-test-scenario': 'pending' });
    const { data } = await res.json();
    expect({ status: res.status, booking: data.status }).toEqual({ status: 201, booking: 'pending' });
    expect(await eventsOf(sandbox, data.id)).toEqual(['reservation.created']);
    const row = await sandbox.service.deps.db.prisma.booking.findUniqueOrThrow({ where: { id: data.id } });
    expect(row.paymentDeadline!.getTime()).toBeGreaterThan(Date.now());
  });

  it('409 SOLD_OUT and 409 PRICE_CHANGED when the provider refuses; nothing booked; the token books later', async () => {
    const offer = await api.offer({ from: 22 });
    await expectError(await api.book({ book_token: offer.bookToken, booker_name: 'X' }, { 'x-test-scenario': 'sold_out' }), 409, 'SOLD_OUT');
    await expectError(await api.book({ book_token: offer.bookToken, booker_name: 'X' }, { 'x-test-scenario': 'price_changed' }), 409, 'PRICE_CHANGED');
    const list = await (await api.call('GET', `/bookings?per_page=100`)).json();
    expect(list.data.filter((b: { propertyId: string }) => b.propertyId === String(offer.propertyId))).toEqual([]);
    expect((await api.book({ book_token: offer.bookToken, booker_name: 'X' })).status).toBe(201);
  });

  it('502 when the provider fails: no booking, and the same token books once it is back', async () => {
    const offer = await api.offer({ from: 24 });
    const before = (await (await api.call('GET', '/bookings')).json()).pagination.total;
    await expectError(await api.book({ book_token: offer.bookToken, booker_name: 'X' }, { 'x-test-scenario': 'upstream_error' }), 502, 'UPSTREAM_ERROR');
    expect((await (await api.call('GET', '/bookings')).json()).pagination.total).toBe(before);
    expect((await api.book({ book_token: offer.bookToken, booker_name: 'X' })).status).toBe(201);
  });

  describe('Idempotency-Key', () => {
    it('gives the first response again for the same key and body, without booking twice', async () => {
      const offer = await api.offer({ from: 26 });
      const body = { book_token: offer.bookToken, booker_name: 'Han' };
      const first = await api.book(body, { 'idempotency-key': 'order-26' });
      const firstBody = await first.json();
      const again = await api.book({ booker_name: 'Han', book_token: offer.bookToken }, { 'idempotency-key': 'order-26' });
      const againBody = await again.json();
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('location')).toBe(first.headers.get('location'));
      expect(againBody.data).toEqual(firstBody.data);
      expect(againBody.meta.request_id).not.toBe(firstBody.meta.request_id);
      expect(await sandbox.service.deps.db.prisma.booking.count({ where: { channelId: creds.user_id, bookerName: 'Han' } })).toBe(1);
    });

    it('409 IDEMPOTENCY_KEY_REUSED for the same key with another body; 400 for a malformed key', async () => {
      const offer = await api.offer({ from: 28 });
      await api.book({ book_token: offer.bookToken, booker_name: 'Yoon' }, { 'idempotency-key': 'order-28' });
      await expectError(await api.book({ book_token: offer.bookToken, booker_name: 'Other' }, { 'idempotency-key': 'order-28' }), 409, 'IDEMPOTENCY_KEY_REUSED');
      await expectError(await api.book({ book_token: offer.bookToken, booker_name: 'Yoon' }, { 'idempotency-key': 'x'.repeat(256) }), 400, 'VALIDATION_ERROR');
    });

    it('keys are per channel, and a refused first request is replayed too', async () => {
      const offer = await api.offer({ from: 30 });
      const refused = await api.book({ book_token: 'bad', booker_name: 'A' }, { 'idempotency-key': 'shared' });
      expect(refused.status).toBe(422);
      const replay = await api.book({ book_token: 'bad', booker_name: 'A' }, { 'idempotency-key': 'shared' });
      expect({ status: replay.status, replayed: replay.headers.get('idempotent-replayed') }).toEqual({ status: 422, replayed: 'true' });
      const other = v1(sandbox, await sandbox.channel());
      const otherOffer = await other.offer({ from: 30 });
      expect((await other.book({ book_token: otherOffer.bookToken, booker_name: 'B' }, { 'idempotency-key': 'shared' })).status).toBe(201);
      expect(offer.bookToken).toBeTruthy();
    });

    it('a key stored before the query string counted still replays without one; with a query string it is another request (issue 15, finding 3)', async () => {
      // A row as the service wrote it before the fix: the fingerprint of method, path and body,
      // the SHA-256 the same request without a query string must still have.
      const body = { book_token: 'pre-deploy-token', booker_name: 'Pre Deploy' };
      const now = clock();
      await sandbox.service.deps.db.prisma.idempotencyKey.create({
        data: {
          channelId: creds.user_id,
          key: 'pre-deploy',
          fingerprint: '4c6c28b1c0504122d5886d852f0eb62394dd65b3cb67fa2963c79f9f8a76ebc3',
          responseStatus: 201,
          responseBody: { body: { data: { id: 'stored-before-the-deploy' } }, location: '/channel/v1/bookings/stored-before-the-deploy', meta: true },
          createdAt: now,
          expiresAt: new Date(now.getTime() + 3_600_000),
        },
      });
      const replay = await api.book({ booker_name: 'Pre Deploy', book_token: 'pre-deploy-token' }, { 'idempotency-key': 'pre-deploy' });
      expect({ status: replay.status, replayed: replay.headers.get('idempotent-replayed') }).toEqual({ status: 201, replayed: 'true' });
      expect((await replay.json()).data).toEqual({ id: 'stored-before-the-deploy' });
      for (const query of ['?retry=1', '?token=pre-deploy-token']) {
        const res = await api.call('POST', `/bookings${query}`, body, { 'idempotency-key': 'pre-deploy' });
        expect(res.headers.get('idempotent-replayed'), query).toBeNull();
        await expectError(res, 409, 'IDEMPOTENCY_KEY_REUSED');
      }
      // And a live one: booked without a query string, replayed without one, refused with one.
      const offer = await api.offer({ from: 34 });
      const live = { book_token: offer.bookToken, booker_name: 'Live' };
      expect((await api.book(live, { 'idempotency-key': 'live-1' })).status).toBe(201);
      expect((await api.book(live, { 'idempotency-key': 'live-1' })).headers.get('idempotent-replayed')).toBe('true');
      await expectError(await api.call('POST', '/bookings?page=2', live, { 'idempotency-key': 'live-1' }), 409, 'IDEMPOTENCY_KEY_REUSED');
      expect(await sandbox.service.deps.db.prisma.booking.count({ where: { channelId: creds.user_id, bookerName: 'Live' } })).toBe(1);
    });

    it('a 502 does not hold the key: the retry runs again', async () => {
      const offer = await api.offer({ from: 32 });
      const body = { book_token: offer.bookToken, booker_name: 'Retry' };
      expect((await api.book(body, { 'idempotency-key': 'k-502', 'x-test-scenario': 'upstream_error' })).status).toBe(502);
      const retry = await api.book(body, { 'idempotency-key': 'k-502' });
      expect({ status: retry.status, replayed: retry.headers.get('idempotent-replayed') }).toEqual({ status: 201, replayed: null });
    });
  });
});

// Issue 15, finding 4: a book_token for 1 adult booked with guests_adult 12 and guests_child 5 was
// 201, and the voucher promised the property a party of 17 the provider did not hold.
describe('the party is the one paid for', () => {
  let creds: IssuedCredentials;
  let api: ReturnType<typeof v1>;
  beforeAll(async () => {
    creds = await production.channel({ balance: 5_000_000n });
    api = v1(production, creds);
  });

  async function refused(body: Record<string, unknown>, fields: { field: string; reason: string }[]) {
    const error = await expectError(await api.book(body), 400, 'VALIDATION_ERROR');
    expect(error.details!.fields).toEqual(fields);
  }

  it('more adults or children than the book_token priced: 400 naming each field; nothing booked or charged; the token still books', async () => {
    const offer = await api.offer({ from: 44, adults: 1 });
    const base = { book_token: offer.bookToken, booker_name: 'Big Party' };
    const before = await balanceOf(production, creds.user_id);
    const adults = { field: 'guests_adult', reason: 'at most 1: the adults the book token was priced for' };
    const children = { field: 'guests_child', reason: 'at most 0: the children the book token was priced for' };
    await refused({ ...base, guests_adult: 12, guests_child: 5 }, [adults, children]);
    await refused({ ...base, guests_adult: 2 }, [adults]);
    await refused({ ...base, guests_adult: 1, guests_child: 1 }, [children]);
    expect(await balanceOf(production, creds.user_id)).toBe(before);
    expect(await production.service.deps.db.prisma.booking.count({ where: { channelId: creds.user_id } })).toBe(0);
    expect(await production.service.deps.db.prisma.ledgerEntry.count({ where: { channelId: creds.user_id, kind: 'booking_charge' } })).toBe(0);

    const res = await api.book({ ...base, booker_name: 'Small Party', guests_adult: 1, guests_child: 0 });
    expect(res.status).toBe(201);
    const { data } = await res.json();
    expect(data).toMatchObject({ guestsAdult: 1, guestsChild: 0, totalAmount: String(offer.amount) });
    expect(await balanceOf(production, creds.user_id)).toBe(before - BigInt(offer.amount));
    const voucher = await api.call('GET', `/reservations/${data.id}/voucher?format=html`);
    expect(voucher.status).toBe(200);
    expect(await voucher.text()).toContain('data-field="party">1 adult<');
  });

  it('a token for several rooms allows the party of every room together', async () => {
    // 5 adults and 2 children over 2 rooms.
    const offer = await api.offer({ from: 48, adults: 5, query: '&children=2&rooms=2' });
    await refused({ book_token: offer.bookToken, booker_name: 'Two Rooms', guests_adult: 6, guests_child: 2 }, [
      { field: 'guests_adult', reason: 'at most 5: the adults the book token was priced for' },
    ]);
    const res = await api.book({ book_token: offer.bookToken, booker_name: 'Two Rooms', guests_adult: 5, guests_child: 2 });
    expect(res.status).toBe(201);
    expect((await res.json()).data).toMatchObject({ guestsAdult: 5, guestsChild: 2 });
  });
});

describe('POST /bookings in production: the balance pays', () => {
  it('debits the token amount through the ledger', async () => {
    const creds = await production.channel({ balance: 5_000_000n });
    const api = v1(production, creds);
    const offer = await api.offer({ from: 40 });
    const { data } = await (await api.book({ book_token: offer.bookToken, booker_name: 'Kang', sale_amount: 999_999 })).json();
    expect(data.totalAmount).toBe(String(offer.amount));
    expect(await balanceOf(production, creds.user_id)).toBe(5_000_000n - BigInt(offer.amount));
    expect(await ledgerOf(production, data.id)).toEqual([['booking_charge', -BigInt(offer.amount)]]);
  });

  it('402 INSUFFICIENT_BALANCE when short: nothing booked or charged; the token books after a top-up', async () => {
    const creds = await production.channel({ balance: 1_000n });
    const api = v1(production, creds);
    const offer = await api.offer({ from: 42 });
    const error = await expectError(await api.book({ book_token: offer.bookToken, booker_name: 'Short' }), 402, 'INSUFFICIENT_BALANCE');
    expect(error.details).toEqual({ required: offer.amount, available: 1000 });
    expect(await balanceOf(production, creds.user_id)).toBe(1_000n);
    expect(await production.service.deps.db.prisma.booking.count({ where: { channelId: creds.user_id } })).toBe(0);
    const topUp = await admin(production, `/channels/${creds.user_id}/topup`, { amount: offer.amount });
    expect(topUp.status).toBe(200);
    expect((await api.book({ book_token: offer.bookToken, booker_name: 'Short' })).status).toBe(201);
    expect(await balanceOf(production, creds.user_id)).toBe(1_000n);
  });

  it('ignores X-Test-Scenario', async () => {
    const creds = await production.channel({ balance: 5_000_000n });
    const api = v1(production, creds);
    const offer = await api.offer({ from: 44 });
    const res = await api.book({ book_token: offer.bookToken, booker_name: 'X' }, { 'x-test-scenario': 'upstream_error' });
    expect(res.status).toBe(201);
  });
});

describe('GET /bookings and /bookings/{id}', () => {
  let creds: IssuedCredentials;
  let api: ReturnType<typeof v1>;
  const made: { id: string; checkin: string; ref: string }[] = [];
  beforeAll(async () => {
    creds = await sandbox.channel();
    api = v1(sandbox, creds);
    for (const [i, offset] of [60, 70, 80].entries()) {
      const offer = await api.offer({ from: 50 + i, checkin: day(offset), checkout: day(offset + 1) });
      const { data } = await (await api.book({ book_token: offer.bookToken, booker_name: `Guest ${i}`, channel_booking_number: `REF-${i}` })).json();
      made.push({ id: data.id, checkin: data.checkin, ref: `REF-${i}` });
    }
    await api.cancel(made[2]!.id);
  });

  it('lists the channel’s bookings, newest first, with pagination', async () => {
    const res = await api.call('GET', '/bookings?per_page=2');
    const body = await res.json();
    expect(res.status).toBe(200);
    expect(body.data.map((b: { id: string }) => b.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect(body.pagination).toEqual({ total: 3, page: 1, per_page: 2, total_pages: 2, has_next: true });
    const second = await (await api.call('GET', '/bookings?per_page=2&page=2')).json();
    expect(second.data.map((b: { id: string }) => b.id)).toEqual([made[0]!.id]);
    expect(second.pagination.has_next).toBe(false);
  });

  it('filters by status, check-in dates, creation dates and affiliate_reference_id', async () => {
    const ids = async (query: string) => ((await (await api.call('GET', `/bookings?${query}`)).json()).data as { id: string }[]).map((b) => b.id);
    expect(await ids('status=cancelled')).toEqual([made[2]!.id]);
    expect(await ids('status=confirmed')).toEqual([made[1]!.id, made[0]!.id]);
    expect(await ids(`checkin_from=${made[1]!.checkin}`)).toEqual([made[2]!.id, made[1]!.id]);
    expect(await ids(`checkin_to=${made[1]!.checkin}`)).toEqual([made[1]!.id, made[0]!.id]);
    expect(await ids(`checkin_from=${made[1]!.checkin}&checkin_to=${made[1]!.checkin}`)).toEqual([made[1]!.id]);
    const today = new Date().toISOString().slice(0, 10);
    expect(await ids(`created_from=${today}&created_to=${today}`)).toHaveLength(3);
    expect(await ids(`created_to=${day(-1)}`)).toEqual([]);
    expect(await ids('affiliate_reference_id=REF-1')).toEqual([made[1]!.id]);
    expect(await ids('affiliate_reference_id=nothing')).toEqual([]);
  });

  it.each([
    ['per_page=101', 'per_page'],
    ['per_page=0', 'per_page'],
    ['page=0', 'page'],
    ['status=bogus', 'status'],
    ['checkin_from=2026-13-01', 'checkin_from'],
    ['checkin_from=0000-01-01', 'checkin_from'],
    ['created_to=0000-01-01', 'created_to'],
    [`checkin_from=${day(10)}&checkin_to=${day(5)}`, 'checkin_to'],
    [`created_from=${day(1)}&created_to=${day(0)}`, 'created_to'],
  ])('400 VALIDATION_ERROR for %s', async (query, field) => {
    const error = await expectError(await api.call('GET', `/bookings?${query}`), 400, 'VALIDATION_ERROR');
    expect(error.details!.fields.map((f: { field: string }) => f.field)).toContain(field);
  });

  it('one booking by id; another channel’s, an unknown or a malformed id is 404', async () => {
    const res = await api.get(made[0]!.id);
    expect(res.status).toBe(200);
    expect((await res.json()).data.id).toBe(made[0]!.id);
    const stranger = v1(sandbox, await sandbox.channel());
    await expectError(await stranger.get(made[0]!.id), 404, 'NOT_FOUND');
    expect((await (await stranger.call('GET', '/bookings')).json()).data).toEqual([]);
    await expectError(await api.get('00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    await expectError(await api.get('not-a-uuid'), 404, 'NOT_FOUND');
  });

  it('403 without reservations:read', async () => {
    const writer = await sandbox.channel({ scopes: ['reservations:write'] });
    await expectError(await v1(sandbox, writer).call('GET', '/bookings'), 403, 'INSUFFICIENT_SCOPE');
  });
});

describe('PATCH /bookings/{id}', () => {
  let api: ReturnType<typeof v1>;
  beforeAll(async () => {
    api = v1(sandbox, await sandbox.channel());
  });

  async function booked(from: number): Promise<string> {
    const offer = await api.offer({ from });
    return (await (await api.book({ book_token: offer.bookToken, booker_name: 'Original' })).json()).data.id;
  }

  it('updates guest details and writes reservation.modified; a change to nothing writes nothing', async () => {
    const id = await booked(90);
    const res = await api.call('PATCH', `/bookings/${id}`, { guest_first_name: 'Seo', guest_last_name: 'Yuna', special_requests: 'Late arrival', booker_email: 'y@example.com' });
    expect(res.status).toBe(200);
    expect((await res.json()).data).toMatchObject({ guestFirstName: 'Seo', guestLastName: 'Yuna', specialRequests: 'Late arrival', bookerEmail: 'y@example.com' });
    expect(await eventsOf(sandbox, id)).toEqual(['reservation.created', 'reservation.confirmed', 'reservation.modified']);
    await api.call('PATCH', `/bookings/${id}`, { guest_first_name: 'Seo' });
    expect(await eventsOf(sandbox, id)).toHaveLength(3);
    const cleared = await (await api.call('PATCH', `/bookings/${id}`, { booker_email: null })).json();
    expect(cleared.data.bookerEmail).toBeNull();
  });

  it('400 for an empty body, an unknown field or a bad value; 404 for another channel', async () => {
    const id = await booked(92);
    await expectError(await api.call('PATCH', `/bookings/${id}`, {}), 400, 'VALIDATION_ERROR');
    await expectError(await api.call('PATCH', `/bookings/${id}`, { total_amount: 1 }), 400, 'VALIDATION_ERROR');
    // Guest counts are not changed after booking: the party stays the one paid for (issue 15, finding 4).
    await expectError(await api.call('PATCH', `/bookings/${id}`, { guests_adult: 12, guests_child: 5 }), 400, 'VALIDATION_ERROR');
    await expectError(await api.call('PATCH', `/bookings/${id}`, { special_requests: 'x'.repeat(501) }), 400, 'VALIDATION_ERROR');
    const stranger = v1(sandbox, await sandbox.channel());
    await expectError(await stranger.call('PATCH', `/bookings/${id}`, { guest_first_name: 'X' }), 404, 'NOT_FOUND');
    expect(await eventsOf(sandbox, id)).toHaveLength(2);
  });

  it('409 BOOKING_NOT_MODIFIABLE for special requests after check-in time and for a cancelled booking', async () => {
    const id = await booked(94);
    offsetMs = 60 * 86_400_000;
    try {
      await expectError(await api.call('PATCH', `/bookings/${id}`, { special_requests: 'Too late' }), 409, 'BOOKING_NOT_MODIFIABLE');
      expect((await api.call('PATCH', `/bookings/${id}`, { guest_phone: '010-0000-0000' })).status).toBe(200);
    } finally {
      offsetMs = 0;
    }
    await api.cancel(id);
    await expectError(await api.call('PATCH', `/bookings/${id}`, { guest_first_name: 'X' }), 409, 'BOOKING_NOT_MODIFIABLE');
  });
});

describe('cancellation', () => {
  it('policy, a free preview before the deadline, and a cancel that refunds the whole amount once (production)', async () => {
    const creds = await production.channel({ balance: 5_000_000n });
    const api = v1(production, creds);
    const offer = await api.offer({ from: 100, policy: 'flexible' });
    const { data } = await (await api.book({ book_token: offer.bookToken, booker_name: 'Free' })).json();

    const policy = (await (await api.call('GET', `/bookings/${data.id}/cancellation-policy`)).json()).data;
    expect(policy).toEqual({ type: 'flexible', free_cancellation_before: data.cancellationDeadline });
    const fee = (await (await api.call('GET', `/bookings/${data.id}/cancellation-fee`)).json()).data;
    expect(fee).toMatchObject({ booking_id: data.id, cancellation_fee: 0, refund_amount: offer.amount, currency: 'KRW' });

    const res = await api.cancel(data.id);
    expect(res.status).toBe(200);
    expect((await res.json()).data).toEqual({ booking_id: data.id, status: 'cancelled', cancellation_fee: 0, refund_amount: offer.amount, currency: 'KRW' });
    expect(await balanceOf(production, creds.user_id)).toBe(5_000_000n);
    expect((await ledgerOf(production, data.id)).map(([kind]) => kind)).toEqual(['booking_charge', 'booking_refund']);
    expect(await eventsOf(production, data.id)).toEqual(['reservation.created', 'reservation.confirmed', 'reservation.cancelled']);
    const record = (await (await api.get(data.id)).json()).data;
    expect(record).toMatchObject({ status: 'cancelled', cancellationFee: '0', refundAmount: String(offer.amount) });

    // Again: 409, and nothing more is refunded. The preview now gives what it cost.
    await expectError(await api.cancel(data.id), 409, 'BOOKING_ALREADY_CANCELLED');
    expect(await balanceOf(production, creds.user_id)).toBe(5_000_000n);
    const after = (await (await api.call('GET', `/bookings/${data.id}/cancellation-fee`)).json()).data;
    expect(after).toMatchObject({ cancellation_fee: 0, refund_amount: offer.amount });
  });

  it.each([
    ['moderate', 50n],
    ['strict', 100n],
    ['flexible', 100n],
  ] as const)('%s after its deadline: the penalty share (%s in 100) is the fee, the rest refunded', async (policy, percent) => {
    const creds = await production.channel({ balance: 5_000_000n });
    const api = v1(production, creds);
    const offer: Offer = await api.offer({ from: 110, policy, checkin: day(20), checkout: day(22) });
    const { data } = await (await api.book({ book_token: offer.bookToken, booker_name: 'Late' })).json();
    const deadline = Date.parse(data.cancellationDeadline);
    offsetMs = deadline + 60_000 - Date.now();
    try {
      const expectedFee = (BigInt(offer.amount) * percent) / 100n;
      const preview = (await (await api.call('GET', `/bookings/${data.id}/cancellation-fee`)).json()).data;
      expect(preview).toMatchObject({ cancellation_fee: Number(expectedFee), refund_amount: offer.amount - Number(expectedFee) });
      const cancelled = (await (await api.cancel(data.id)).json()).data;
      expect(cancelled).toMatchObject({ cancellation_fee: Number(expectedFee), refund_amount: offer.amount - Number(expectedFee) });
      expect(await balanceOf(production, creds.user_id)).toBe(5_000_000n - expectedFee);
    } finally {
      offsetMs = 0;
    }
  });

  it('non_refundable: the whole amount is the fee, at any time, and nothing is credited', async () => {
    const creds = await production.channel({ balance: 5_000_000n });
    const api = v1(production, creds);
    const offer = await api.offer({ from: 120, policy: 'non_refundable' });
    const { data } = await (await api.book({ book_token: offer.bookToken, booker_name: 'NR' })).json();
    expect(data.cancellationDeadline).toBeNull();
    const cancelled = (await (await api.cancel(data.id)).json()).data;
    expect(cancelled).toMatchObject({ cancellation_fee: offer.amount, refund_amount: 0 });
    expect(await balanceOf(production, creds.user_id)).toBe(5_000_000n - BigInt(offer.amount));
    expect((await ledgerOf(production, data.id)).map(([kind]) => kind)).toEqual(['booking_charge']);
  });

  it('a pending booking can be cancelled; a checked-in one cannot (409), nor previewed', async () => {
    const api = v1(sandbox, await sandbox.channel());
    const pending = await api.offer({ from: 130 });
    const p = (await (await api.book({ book_token: pending.bookToken, booker_name: 'P' }, { 'x-test-scenario': 'pending' })).json()).data;
    expect((await api.cancel(p.id)).status).toBe(200);

    const offer = await api.offer({ from: 132 });
    const b = (await (await api.book({ book_token: offer.bookToken, booker_name: 'In' })).json()).data;
    expect((await admin(sandbox, `/bookings/${b.id}/status`, { status: 'checked_in' })).status).toBe(200);
    await expectError(await api.cancel(b.id), 409, 'BOOKING_NOT_CANCELLABLE');
    await expectError(await api.call('GET', `/bookings/${b.id}/cancellation-fee`), 409, 'BOOKING_NOT_CANCELLABLE');
    expect((await (await api.get(b.id)).json()).data.status).toBe('checked_in');
  });

  it('404 for another channel’s booking on every cancellation route; 403 for a reader cancelling', async () => {
    const owner = v1(sandbox, await sandbox.channel());
    const offer = await owner.offer({ from: 134 });
    const { data } = await (await owner.book({ book_token: offer.bookToken, booker_name: 'Mine' })).json();
    const stranger = v1(sandbox, await sandbox.channel());
    await expectError(await stranger.cancel(data.id), 404, 'NOT_FOUND');
    await expectError(await stranger.call('GET', `/bookings/${data.id}/cancellation-fee`), 404, 'NOT_FOUND');
    await expectError(await stranger.call('GET', `/bookings/${data.id}/cancellation-policy`), 404, 'NOT_FOUND');
    const reader = v1(sandbox, await sandbox.channel({ scopes: ['reservations:read'] }));
    await expectError(await reader.cancel(data.id), 403, 'INSUFFICIENT_SCOPE');
    expect((await (await owner.get(data.id)).json()).data.status).toBe('confirmed');
  });

  it('502 when the provider fails to cancel: the booking stays confirmed, nothing refunded', async () => {
    const api = v1(sandbox, await sandbox.channel());
    const offer = await api.offer({ from: 136 });
    const { data } = await (await api.book({ book_token: offer.bookToken, booker_name: 'Stay' })).json();
    await expectError(await api.cancel(data.id, { 'x-test-scenario': 'upstream_error' }), 502, 'UPSTREAM_ERROR');
    expect((await (await api.get(data.id)).json()).data).toMatchObject({ status: 'confirmed', refundAmount: null });
    expect((await api.cancel(data.id)).status).toBe(200);
  });
});

describe('state machine: property-reported statuses', () => {
  let api: ReturnType<typeof v1>;
  beforeAll(async () => {
    api = v1(sandbox, await sandbox.channel());
  });

  async function booked(from: number, headers: Record<string, string> = {}): Promise<string> {
    const offer = await api.offer({ from });
    return (await (await api.book({ book_token: offer.bookToken, booker_name: 'S' }, headers)).json()).data.id;
  }

  it('booking:status walks the table with its events and refuses what the table does not have', async () => {
    const id = await booked(140);
    const res = await admin(sandbox, `/bookings/${id}/status`, { status: 'checked_out' });
    expect(res.status).toBe(200);
    expect((await res.json()).data.status).toBe('checked_out');
    expect(await eventsOf(sandbox, id)).toEqual(['reservation.created', 'reservation.confirmed', 'reservation.checked_in', 'reservation.checked_out']);
    const back = await admin(sandbox, `/bookings/${id}/status`, { status: 'confirmed' });
    expect(back.status).toBe(409);
    expect((await back.json()).error.code).toBe('INVALID_TRANSITION');
    expect((await admin(sandbox, `/bookings/${id}/status`, { status: 'cancelled' })).status).toBe(400);
    expect((await admin(sandbox, '/bookings/00000000-0000-4000-8000-000000000000/status', { status: 'no_show' })).status).toBe(404);
  });

  it('no_show from confirmed; a pending booking confirmed or failed (failed refunds everything)', async () => {
    const id = await booked(142);
    expect((await (await admin(sandbox, `/bookings/${id}/status`, { status: 'no_show' })).json()).data.status).toBe('no_show');
    expect(await eventsOf(sandbox, id)).toContain('reservation.no_show');
    await expectError(await api.cancel(id), 409, 'BOOKING_NOT_CANCELLABLE');

    const pending = await booked(144, { 'x-test-scenario': 'pending' });
    expect((await (await admin(sandbox, `/bookings/${pending}/status`, { status: 'confirmed' })).json()).data.status).toBe('confirmed');
    expect(await eventsOf(sandbox, pending)).toEqual(['reservation.created', 'reservation.confirmed']);

    const failing = await booked(146, { 'x-test-scenario': 'pending' });
    const failed = (await (await admin(sandbox, `/bookings/${failing}/status`, { status: 'failed' })).json()).data;
    expect(failed).toMatchObject({ status: 'failed', refundAmount: failed.totalAmount, cancellationFee: '0' });
    expect(await eventsOf(sandbox, failing)).toEqual(['reservation.created', 'reservation.failed']);
  });

  it('statuses the provider reports reach the booking on the next sync', async () => {
    const id = await booked(148);
    const pending = await booked(150, { 'x-test-scenario': 'pending' });
    const control = (ref: string, status: string) =>
      fetch(`${sandbox.service.simulatorUrl}/_control/bookings/${ref}/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status }),
      });
    expect((await control(id, 'checked_in')).status).toBe(200);
    expect((await control(pending, 'confirmed')).status).toBe(200);
    await runBookingSync(sandbox.service.deps);
    expect((await (await api.get(id)).json()).data.status).toBe('checked_in');
    expect((await (await api.get(pending)).json()).data.status).toBe('confirmed');
    expect(await eventsOf(sandbox, id)).toEqual(['reservation.created', 'reservation.confirmed', 'reservation.checked_in']);
    // A second pass changes nothing and writes nothing, not even updatedAt.
    const before = (await (await api.get(pending)).json()).data.updatedAt;
    await runBookingSync(sandbox.service.deps);
    expect(await eventsOf(sandbox, id)).toHaveLength(3);
    expect((await (await api.get(pending)).json()).data.updatedAt).toBe(before);
  });

  it('a pending booking past its payment deadline is cancelled with everything refunded (production)', async () => {
    // Production ignores X-Test-Scenario, so the provider here is a standalone simulator whose
    // control route makes the booking pending, as a provider confirming on request would.
    const provider = await startSimulator({ port: 0, host: '127.0.0.1' });
    const t = await startTestService({ CHANNEL_ENV: 'production', UPSTREAM_URL: provider.url, PENDING_DEADLINE_MINUTES: '60' }, { clock });
    try {
      const creds = await t.channel({ balance: 5_000_000n });
      const api = v1(t, creds);
      const offer = await api.offer({ from: 152 });
      const { data } = await (await api.book({ book_token: offer.bookToken, booker_name: 'Unpaid' })).json();
      await fetch(`${provider.url}/_control/bookings/${data.id}/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'pending' }),
      });
      // The table has no move from confirmed back to pending: as the provider would have answered at booking time.
      await t.service.deps.db.prisma.booking.update({
        where: { id: data.id },
        data: { status: 'pending', paymentDeadline: new Date(Date.now() + 3_600_000) },
      });
      await runBookingSync(t.service.deps);
      expect((await (await api.get(data.id)).json()).data.status).toBe('pending');
      expect(await balanceOf(t, creds.user_id)).toBe(5_000_000n - BigInt(offer.amount));

      offsetMs = 2 * 3_600_000;
      try {
        await runBookingSync(t.service.deps);
      } finally {
        offsetMs = 0;
      }
      const record = (await (await api.get(data.id)).json()).data;
      expect(record).toMatchObject({ status: 'cancelled', cancellationFee: '0', refundAmount: String(offer.amount) });
      expect(await balanceOf(t, creds.user_id)).toBe(5_000_000n);
      expect(await eventsOf(t, data.id)).toEqual(['reservation.created', 'reservation.confirmed', 'reservation.cancelled']);
      expect((await t.service.deps.upstream.getBooking(data.id))?.status).toBe('cancelled');
    } finally {
      await t.close();
      await provider.close();
    }
  });

  it('a partner cancelling a pending booking past its payment deadline pays no fee, whatever the policy', async () => {
    const api = v1(sandbox, await sandbox.channel());
    const offer = await api.offer({ from: 156, policy: 'non_refundable' });
    const { data } = await (await api.book({ book_token: offer.bookToken, booker_name: 'Late' }, { 'x-test-scenario': 'pending' })).json();
    expect((await (await api.call('GET', `/bookings/${data.id}/cancellation-fee`)).json()).data.cancellation_fee).toBe(offer.amount);
    offsetMs = 25 * 3_600_000;
    try {
      const cancelled = (await (await api.cancel(data.id)).json()).data;
      expect(cancelled).toMatchObject({ cancellation_fee: 0, refund_amount: offer.amount });
    } finally {
      offsetMs = 0;
    }
  });

  it('a pending booking the provider confirmed before its deadline is confirmed by the sweep, not cancelled', async () => {
    const api = v1(sandbox, await sandbox.channel());
    const offer = await api.offer({ from: 158 });
    const { data } = await (await api.book({ book_token: offer.bookToken, booker_name: 'InTime' }, { 'x-test-scenario': 'pending' })).json();
    await fetch(`${sandbox.service.simulatorUrl}/_control/bookings/${data.id}/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'confirmed' }),
    });
    offsetMs = 25 * 3_600_000;
    try {
      await runBookingSync(sandbox.service.deps);
    } finally {
      offsetMs = 0;
    }
    expect((await (await api.get(data.id)).json()).data.status).toBe('confirmed');
    expect((await sandbox.service.deps.upstream.getBooking(data.id))?.status).toBe('confirmed');
  });

  it('a pending booking gets a payment deadline no later than check-in', async () => {
    const api = v1(sandbox, await sandbox.channel());
    const offer = await api.offer({ from: 154, checkin: day(0), checkout: day(1) });
    const { data } = await (await api.book({ book_token: offer.bookToken, booker_name: 'Soon' }, { 'x-test-scenario': 'pending' })).json();
    const row = await sandbox.service.deps.db.prisma.booking.findUniqueOrThrow({ where: { id: data.id } });
    const checkin15 = checkinInstant(offer.checkin, row.timezone);
    expect(row.paymentDeadline!.getTime()).toBe(Math.min(checkin15.getTime(), row.createdAt.getTime() + 24 * 3_600_000));
  });
});

describe('unimplemented endpoints', () => {
  it('GET /bookings/{id}/voucher is 501 for the owner, 404 for others, 401 without a key', async () => {
    const api = v1(sandbox, await sandbox.channel());
    const offer = await api.offer({ from: 160 });
    const { data } = await (await api.book({ book_token: offer.bookToken, booker_name: 'V' })).json();
    await expectError(await api.call('GET', `/bookings/${data.id}/voucher`), 501, 'NOT_IMPLEMENTED');
    await expectError(await v1(sandbox, await sandbox.channel()).call('GET', `/bookings/${data.id}/voucher`), 404, 'NOT_FOUND');
    await expectError(await sandbox.request(`/channel/v1/bookings/${data.id}/voucher`), 401, 'UNAUTHORIZED');
  });

  it('GET /tax-invoices is 501 after authentication', async () => {
    const api = v1(sandbox, await sandbox.channel());
    await expectError(await api.call('GET', '/tax-invoices?year=2026&month=11'), 501, 'NOT_IMPLEMENTED');
    await expectError(await sandbox.request('/channel/v1/tax-invoices'), 401, 'UNAUTHORIZED');
  });

  it('both are deprecated in the OpenAPI document', async () => {
    const doc = await (await sandbox.request('/channel/v1/openapi.json')).json();
    expect(doc.paths['/bookings/{id}/voucher'].get.deprecated).toBe(true);
    expect(doc.paths['/tax-invoices'].get.deprecated).toBe(true);
    expect(doc.paths['/bookings'].post.responses).toHaveProperty('402');
    expect(doc.paths['/bookings'].post.responses).toHaveProperty('422');
  });
});
