import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { checkInvariants } from '../helpers/bookingInvariants.js';
import { day } from '../helpers/flow.js';
import { expectError } from '../helpers/http.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * v2 steps 3 and 4 (docs/spec/channel-api.md §4.6, §7): the whole chain followed through its links, single and
 * multi-room, in production (money moves); retrieve and cancel links; token errors; and the same
 * booking seen through v1.
 */

let t: TestService;
let who: IssuedCredentials;
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
const START = 50_000_000n;
/** What a booking of `amount` takes from the balance in this environment (the sandbox pays nothing). */
let paid = (amount: bigint) => amount;

describe.each(['production', 'sandbox'] as const)('%s', (env) => {
  beforeAll(async () => {
    t = await startTestService({ CHANNEL_ENV: env }, { clock });
    who = await t.channel({ balance: START });
    paid = (amount) => (env === 'production' ? amount : 0n);
  });
  afterAll(() => t?.close());

  function call(method: string, href: string, body?: unknown, as: IssuedCredentials = who) {
    return t.request(href, {
      method,
      headers: { ...apiKey(as), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  interface Link {
    method: string;
    href: string;
    expires?: string;
  }

  /** Steps 1 and 2 for `occupancy` (one entry per room): the book link of the first bookable rate. */
  async function bookLink(occupancy: string[], from: number, as: IssuedCredentials = who): Promise<Link> {
    const checkin = day(35);
    const checkout = day(37);
    for (let id = from; id < from + 40; id++) {
      const query = [`checkin=${checkin}`, `checkout=${checkout}`, `property_id=${id}`, ...occupancy.map((o) => `occupancy=${o}`)].join('&');
      const res = await call('GET', `/api/channel/v2/properties/availability?${query}`, undefined, as);
      expect(res.status).toBe(200);
      const [property] = await res.json();
      for (const room of property?.rooms ?? []) {
        for (const rate of room.rates) {
          const bedGroup = Object.values(rate.bed_groups as Record<string, { links: { price_check?: Link } }>)[0];
          const priceCheck = bedGroup?.links.price_check;
          if (!priceCheck) continue;
          const checked = await (await call(priceCheck.method, priceCheck.href, undefined, as)).json();
          if (checked.links?.book) return checked.links.book;
        }
      }
    }
    throw new Error(`no bookable rate from property ${from}`);
  }

  describe('v2 booking chain', () => {
    it('one room: book → retrieve → cancel, each by its link; v1 sees the same booking and amounts', async () => {
      const book = await bookLink(['2'], 1);
      expect(book.method).toBe('POST');
      const res = await call('POST', book.href, { rooms: [{ given_name: 'Minji', family_name: 'Kim' }], affiliate_reference_id: 'V2-1' });
      expect(res.status).toBe(201);
      const created = await res.json();
      expect(created).toMatchObject({ itinerary_id: expect.any(String), links: { retrieve: { method: 'GET' }, cancel: { method: 'PUT' } } });
      expect(created.links.retrieve.expires).toBeUndefined();

      const retrieved = await (await call('GET', created.links.retrieve.href)).json();
      expect(retrieved).toMatchObject({ itinerary_id: created.itinerary_id, status: 'confirmed', billable_currency: 'KRW', affiliate_reference_id: 'V2-1' });
      expect(retrieved.rooms).toHaveLength(1);
      expect(retrieved.rooms[0]).toMatchObject({ status: 'confirmed', guest: { given_name: 'Minji', family_name: 'Kim' } });
      const room = retrieved.rooms[0];
      const billed = (Object.values(room.occupancy_pricing)[0] as { totals: { inclusive: { billable_currency: { value: number } } } }).totals.inclusive.billable_currency.value;

      // v1 and v2 agree on the amount and the status.
      const v1 = (await (await call('GET', `/channel/v1/bookings/${created.itinerary_id}`)).json()).data;
      expect(v1).toMatchObject({ status: 'confirmed', totalAmount: String(billed), channelBookingNumber: 'V2-1', guestFirstName: 'Minji' });
      expect((await checkInvariants(t, who.user_id)).balance).toBe(START - paid(BigInt(billed)));
      // And GraphQL.
      const gql = await t.graphql('query($id: ID!) { booking(id: $id) { status totalAmount channelBookingNumber } }', { id: created.itinerary_id }, apiKey(who));
      expect(gql.data?.booking).toEqual({ status: 'CONFIRMED', totalAmount: billed, channelBookingNumber: 'V2-1' });

      const cancelled = await call('PUT', created.links.cancel.href);
      expect(cancelled.status).toBe(200);
      const body = await cancelled.json();
      expect(body).toMatchObject({ itinerary_id: created.itinerary_id, status: 'cancelled', cancel_refund: { currency: 'KRW' } });
      expect(body.cancel_refund.refund_amount + body.cancel_refund.penalty_amount).toBe(billed);
      // The same fee function as v1: the v1 record holds the same figures.
      const after = (await (await call('GET', `/channel/v1/bookings/${created.itinerary_id}`)).json()).data;
      expect(after).toMatchObject({ status: 'cancelled', refundAmount: String(body.cancel_refund.refund_amount), cancellationFee: String(body.cancel_refund.penalty_amount) });

      // The cancel link is consumed; the retrieve link still works.
      await expectError(await call('PUT', created.links.cancel.href), 409, 'TOKEN_ALREADY_USED');
      const again = await (await call('GET', created.links.retrieve.href)).json();
      expect(again).toMatchObject({ status: 'cancelled', links: {} });
      await checkInvariants(t, who.user_id);
    });

    it('two rooms: one itinerary, one booking and one charge per room; a reused book link is 409 TOKEN_ALREADY_USED', async () => {
      const book = await bookLink(['2', '1-7'], 50);
      const before = (await checkInvariants(t, who.user_id)).balance;
      const rooms = [
        { given_name: 'A', family_name: 'One' },
        { given_name: 'B', family_name: 'Two' },
      ];
      await expectError(await call('POST', book.href, { rooms: rooms.slice(0, 1) }), 400, 'INVALID_REQUEST');
      const res = await call('POST', book.href, { rooms });
      expect(res.status).toBe(201);
      const created = await res.json();
      const retrieved = await (await call('GET', created.links.retrieve.href)).json();
      expect(retrieved.rooms.map((r: { guest: { given_name: string } }) => r.guest.given_name)).toEqual(['A', 'B']);
      expect(Object.keys(retrieved.rooms[1].occupancy_pricing)).toEqual(['1-7']);
      const state = await checkInvariants(t, who.user_id);
      const mine = state.bookings.filter((b) => b.itineraryId === created.itinerary_id);
      expect(mine).toHaveLength(2);
      expect(state.balance).toBe(before - paid(mine.reduce((sum, b) => sum + b.totalAmount, 0n)));
      await expectError(await call('POST', book.href, { rooms }), 409, 'TOKEN_ALREADY_USED');
    });

    it('several book links in book_tokens make one itinerary', async () => {
      const first = await bookLink(['2'], 90);
      const second = await bookLink(['2'], 95);
      const token = (l: Link) => new URL(l.href, 'http://x').searchParams.get('token')!;
      const res = await call('POST', '/api/channel/v2/bookings', {
        rooms: [{ given_name: 'C', family_name: 'Three' }, { given_name: 'D', family_name: 'Four' }],
        book_tokens: [token(first), token(second)],
      });
      expect(res.status).toBe(201);
      const retrieved = await (await call('GET', (await res.json()).links.retrieve.href)).json();
      expect(retrieved.rooms).toHaveLength(2);
      await expectError(
        await call('POST', '/api/channel/v2/bookings', { rooms: [{ given_name: 'E', family_name: 'Five' }, { given_name: 'E', family_name: 'Five' }], book_tokens: [token(first), token(first)] }),
        400,
        'INVALID_REQUEST',
      );
    });
  });

  it('one book token spelt two ways (its last character has bits no decoder reads) is the same token: 400, nothing booked', async () => {
    const link = await bookLink(['2'], 100);
    const token = new URL(link.href, 'http://x').searchParams.get('token')!;
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // The signature's 32 bytes fill 43 characters with two bits to spare: flip the lowest.
    const twin = token.slice(0, -1) + ALPHABET[ALPHABET.indexOf(token.at(-1)!) ^ 1];
    expect(twin).not.toBe(token);
    const before = await checkInvariants(t, who.user_id);
    const rooms = [{ given_name: 'T', family_name: 'Twin' }, { given_name: 'T', family_name: 'Twin' }];
    const refused = await expectError(await call('POST', '/api/channel/v2/bookings', { rooms, book_tokens: [token, twin] }), 400, 'INVALID_REQUEST');
    expect(JSON.stringify(refused.details)).toContain('book_tokens');
    expect((await checkInvariants(t, who.user_id)).bookings).toHaveLength(before.bookings.length);
    // Either spelling alone still books, once.
    expect((await call('POST', '/api/channel/v2/bookings', { rooms: rooms.slice(1), book_tokens: [twin] })).status).toBe(201);
    await expectError(await call('POST', '/api/channel/v2/bookings', { rooms: rooms.slice(1), book_tokens: [token] }), 409, 'TOKEN_ALREADY_USED');
  });

  describe('v2 token errors on booking, retrieve and cancel', () => {
    it('missing, tampered, wrong-type, foreign and expired tokens', async () => {
      const book = await bookLink(['2'], 120);
      const rooms = [{ given_name: 'X', family_name: 'Y' }];
      await expectError(await call('POST', '/api/channel/v2/bookings', { rooms }), 400, 'INVALID_REQUEST');
      await expectError(await call('POST', `${book.href}x`, { rooms }), 400, 'INVALID_TOKEN');
      const stranger = await t.channel({ balance: START });
      await expectError(await call('POST', book.href, { rooms }, stranger), 400, 'INVALID_TOKEN');

      offsetMs = 31 * 60_000;
      try {
        await expectError(await call('POST', book.href, { rooms }), 410, 'TOKEN_EXPIRED');
      } finally {
        offsetMs = 0;
      }

      const created = await (await call('POST', book.href, { rooms })).json();
      const retrieveToken = new URL(created.links.retrieve.href, 'http://x').searchParams.get('token')!;
      // A retrieve token is not a cancel token, nor a book token.
      await expectError(await call('PUT', `/api/channel/v2/bookings/cancel?token=${retrieveToken}`), 400, 'INVALID_TOKEN');
      await expectError(await call('POST', `/api/channel/v2/bookings?token=${retrieveToken}`, { rooms }), 400, 'INVALID_TOKEN');
      await expectError(await call('GET', created.links.retrieve.href, undefined, stranger), 400, 'INVALID_TOKEN');
      await expectError(await call('GET', '/api/channel/v2/bookings/retrieve'), 400, 'INVALID_REQUEST');

      // The cancel link expires at check-in; the retrieve link never does.
      offsetMs = 40 * 86_400_000;
      try {
        await expectError(await call('PUT', created.links.cancel.href), 410, 'TOKEN_EXPIRED');
        expect((await call('GET', created.links.retrieve.href)).status).toBe(200);
      } finally {
        offsetMs = 0;
      }
    });

  });

  // Issue 15, finding 3: the fingerprint ignored the query string, where v2 tokens travel, so the
  // same key with another token replayed the first answer and the second booking stayed as it was.
  describe('Idempotency-Key: the query string is part of the request', () => {
    const keyed = (method: string, href: string, key: string, body?: unknown) =>
      t.request(href, {
        method,
        headers: { ...apiKey(who), 'idempotency-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    it('cancel: the same key with another ?token= is 409 IDEMPOTENCY_KEY_REUSED and that booking stays; the same token replays', async () => {
      const guest = { rooms: [{ given_name: 'Idem', family_name: 'Potent' }] };
      const x = await (await call('POST', (await bookLink(['2'], 160)).href, guest)).json();
      const y = await (await call('POST', (await bookLink(['2'], 175)).href, guest)).json();
      const yBefore = await (await call('GET', y.links.retrieve.href)).json();
      expect(yBefore.status).toBe('confirmed');

      const first = await keyed('PUT', x.links.cancel.href, 'cancel-k1');
      expect(first.status).toBe(200);
      const cancelled = await first.json();
      expect(cancelled).toMatchObject({ itinerary_id: x.itinerary_id, status: 'cancelled' });
      const balance = (await checkInvariants(t, who.user_id)).balance;

      const other = await keyed('PUT', y.links.cancel.href, 'cancel-k1');
      expect(other.headers.get('idempotent-replayed')).toBeNull();
      await expectError(other, 409, 'IDEMPOTENCY_KEY_REUSED');
      // As it was (its cancel link is signed afresh on each retrieve, so the links differ).
      const { links: _links, ...yAsBefore } = yBefore;
      expect(await (await call('GET', y.links.retrieve.href)).json()).toEqual({ ...yAsBefore, links: { cancel: expect.anything() } });
      expect((await checkInvariants(t, who.user_id)).balance).toBe(balance);

      // The same token, written with its dots percent-encoded, is the same request: replayed.
      const encoded = x.links.cancel.href.replace(/token=(.*)$/, (_m: string, token: string) => `token=${token.replaceAll('.', '%2E')}`);
      expect(encoded).not.toBe(x.links.cancel.href);
      for (const href of [x.links.cancel.href, encoded]) {
        const replay = await keyed('PUT', href, 'cancel-k1');
        expect({ status: replay.status, replayed: replay.headers.get('idempotent-replayed') }).toEqual({ status: 200, replayed: 'true' });
        expect(await replay.json()).toEqual(cancelled);
      }
      // Y was never touched: its own cancel link still cancels it.
      expect((await keyed('PUT', y.links.cancel.href, 'cancel-k2')).status).toBe(200);
    });

    it('book: the same key and body with another ?token= is 409 IDEMPOTENCY_KEY_REUSED, nothing is booked or charged, and that token still books', async () => {
      const guest = { rooms: [{ given_name: 'Idem', family_name: 'Book' }] };
      const a = await bookLink(['2'], 190);
      const b = await bookLink(['2'], 205);
      const first = await keyed('POST', a.href, 'book-k1', guest);
      expect(first.status).toBe(201);
      const created = await first.json();
      const before = await checkInvariants(t, who.user_id);

      await expectError(await keyed('POST', b.href, 'book-k1', guest), 409, 'IDEMPOTENCY_KEY_REUSED');
      const after = await checkInvariants(t, who.user_id);
      expect({ balance: after.balance, bookings: after.bookings.length }).toEqual({ balance: before.balance, bookings: before.bookings.length });

      const replay = await keyed('POST', a.href, 'book-k1', guest);
      expect({ status: replay.status, replayed: replay.headers.get('idempotent-replayed') }).toEqual({ status: 201, replayed: 'true' });
      expect((await replay.json()).itinerary_id).toBe(created.itinerary_id);
      expect((await keyed('POST', b.href, 'book-k2', guest)).status).toBe(201);
    });
  });

  describe('v2 scopes', () => {
    it('scopes: booking needs reservations:write, retrieve reservations:read', async () => {
      const reader = await t.channel({ scopes: ['search:availability', 'reservations:read'], balance: START });
      const book = await bookLink(['2'], 140, reader);
      await expectError(await call('POST', book.href, { rooms: [{ given_name: 'R', family_name: 'O' }] }, reader), 403, 'INSUFFICIENT_SCOPE');
    });
  });
});
