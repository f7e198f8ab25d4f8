import { randomInt, randomUUID } from 'node:crypto';
import { Agent, fetch as undiciFetch } from 'undici';
import type { Middleware } from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createChannelV1Client,
  createChannelV2Client,
  linkQuery,
  oauthTokenSource,
  priceCheckParams,
  requestAccessToken,
  type ChannelClientOptions,
  type Link,
} from '../../clients/typescript/index.js';
import { createGraphQLClient } from '../../clients/graphql/execute.js';
import { BookDocument, PropertyPageDocument } from '../../clients/graphql/generated/graphql.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day } from '../helpers/flow.js';
import { checkAnswer, documentAjv } from '../helpers/openapi.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The generated client (clients/typescript, docs/client.md) against a running service over real
 * HTTP: the whole v1 partner journey (OAuth token, search, availability, price check, booking with
 * an Idempotency-Key and its replay, the list, the fee preview, the cancellation) and the v2
 * link-chained journey (availability, price check, book, retrieve, cancel). Every answer the client
 * receives is checked against the document the service serves (test/helpers/openapi.ts, as the
 * conformance test does), by a middleware on the client; each test checks which answers were.
 * The example GraphQL operations (clients/graphql) run typed against the same service.
 */

type Version = 'v1' | 'v2';
const DOC_PATH: Record<Version, string> = { v1: '/channel/v1/openapi.json', v2: '/api/channel/v2/openapi.json' };

let t: TestService;
let channel: IssuedCredentials;
let origin: string;
let agent: Agent;
const ajv = documentAjv();
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const docs = {} as Record<Version, any>;
const docId = (version: Version) => `https://channel.test${DOC_PATH[version]}`;

/** `METHOD template → status` of every answer the middleware checked, in order. */
const checked: string[] = [];

/** Checks each answer against the version's document (by the operation's path template). */
function conformance(version: Version): Middleware {
  return {
    async onResponse({ request, response, schemaPath }) {
      const text = await response.clone().text();
      const where = `${version} ${request.method} ${new URL(request.url).pathname} → ${response.status}`;
      checkAnswer(ajv, docs[version], docId(version), schemaPath, request.method, { status: response.status, headers: new Headers(response.headers), text }, where);
      checked.push(`${request.method} ${schemaPath} → ${response.status}`);
    },
  };
}

/**
 * Real HTTP through undici from a loopback address of this file (so per-address limits of other
 * files sharing Redis do not meet it).
 */
async function http(request: Request): Promise<Response> {
  const body = request.body ? await request.arrayBuffer() : undefined;
  const res = await undiciFetch(request.url, { method: request.method, headers: [...request.headers], body, dispatcher: agent });
  return new Response(res.status === 204 ? null : await res.arrayBuffer(), { status: res.status, statusText: res.statusText, headers: [...res.headers] });
}

/** Options for a client of the running service. */
function over(credential?: ChannelClientOptions['credential']): ChannelClientOptions {
  return { baseUrl: origin, ...(credential && { credential }), fetch: http };
}

beforeAll(async () => {
  t = await startTestService();
  channel = await t.channel({ name: 'Client Journeys' });
  const port = await t.service.listen(0);
  origin = `http://127.0.0.1:${port}`;
  agent = new Agent({ connect: { localAddress: `127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(1, 255)}` } });
  for (const version of ['v1', 'v2'] as const) {
    const res = await undiciFetch(`${origin}${DOC_PATH[version]}`, { dispatcher: agent });
    expect(res.status).toBe(200);
    docs[version] = await res.json();
    ajv.addSchema(docs[version], docId(version));
  }
}, 120_000);

afterAll(async () => {
  await agent?.close();
  await t?.close();
});

describe('v1 through the generated client', () => {
  it('token → search → availability → price check → book (Idempotency-Key, replayed) → list → fee → cancel', async () => {
    checked.length = 0;
    const checkin = day(45);
    const checkout = day(47);

    // OAuth client credentials: the token endpoint needs no credential of its own.
    const tokenClient = createChannelV1Client(over());
    tokenClient.use(conformance('v1'));
    const token = await requestAccessToken(tokenClient, { clientId: channel.client_id, clientSecret: channel.client_secret });
    expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 1800 });
    expect(token.access_token).toMatch(/^oat_/);
    expect(token.scope.split(' ')).toEqual(expect.arrayContaining(['search:availability', 'reservations:read', 'reservations:write']));

    // Every later call carries a bearer token the source fetches once and keeps.
    const v1 = createChannelV1Client(over({ bearer: oauthTokenSource(tokenClient, { clientId: channel.client_id, clientSecret: channel.client_secret }) }));
    v1.use(conformance('v1'));

    const search = await v1.GET('/search/availability', { params: { query: { checkin, checkout, adults: 2, property_id: ['1', '2', '3', '4', '5', '6', '7', '8'] } } });
    expect(search.error).toBeUndefined();
    const found = search.data!.data.filter((p) => p.available);
    expect(found.length).toBeGreaterThan(0);
    expect(search.data!.search_context).toMatchObject({ checkin, checkout });

    // The first available property's first rate that carries a price_check_token.
    let offer: { propertyId: number; token: string; policy: string; amount: number } | undefined;
    for (const { property_id: propertyId } of found) {
      const availability = await v1.GET('/search/availability/{propertyId}', { params: { path: { propertyId }, query: { checkin, checkout, adults: 2 } } });
      expect(availability.response.status).toBe(200);
      for (const room of availability.data!.data.room_types) {
        const rate = room.rates.find((r) => r.price_check_token && r.available_rooms > 0);
        if (rate) {
          offer = { propertyId, token: rate.price_check_token!, policy: rate.cancellation_policy.type, amount: rate.pricing.billable_totals.inclusive_amount };
          break;
        }
      }
      if (offer) break;
    }
    expect(offer, 'a bookable rate').toBeDefined();

    const check = await v1.GET('/search/price-check', { params: { query: { token: offer!.token } } });
    expect(check.data!.data).toMatchObject({ status: 'matched', book_token: expect.any(String) });
    const amount = check.data!.data.pricing!.billable_totals.inclusive_amount;
    expect(amount).toBe(offer!.amount);
    expect(Number.isInteger(amount) && amount > 0).toBe(true);

    const reference = `CLIENT-${randomUUID()}`;
    const body = { book_token: check.data!.data.book_token!, booker_name: 'Minji Kim', booker_email: 'minji@example.com', channel_booking_number: reference };
    const key = randomUUID();
    const booked = await v1.POST('/bookings', { body, headers: { 'Idempotency-Key': key } });
    expect(booked.response.status).toBe(201);
    const booking = booked.data!.data;
    expect(booking).toMatchObject({
      status: 'confirmed',
      propertyId: String(offer!.propertyId),
      checkin,
      checkout,
      totalAmount: String(amount),
      netAmount: String(amount),
      currency: 'KRW',
      channelBookingNumber: reference,
      cancellationPolicy: offer!.policy,
    });
    expect(booked.response.headers.get('idempotent-replayed')).toBeNull();

    // The same key and body again: the first answer, not a second booking.
    const replay = await v1.POST('/bookings', { body, headers: { 'Idempotency-Key': key } });
    expect(replay.response.status).toBe(201);
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.data!.data).toEqual(booking);

    const list = await v1.GET('/bookings', { params: { query: { affiliate_reference_id: reference } } });
    expect(list.data!.data.map((b) => b.id)).toEqual([booking.id]);
    expect(list.data!.pagination).toMatchObject({ total: 1, page: 1, total_pages: 1, has_next: false });

    // 45 days before check-in every policy but non_refundable cancels free.
    const fee = await v1.GET('/bookings/{id}/cancellation-fee', { params: { path: { id: booking.id } } });
    const expectedFee = offer!.policy === 'non_refundable' ? amount : 0;
    expect(fee.data!.data).toMatchObject({ booking_id: booking.id, cancellation_fee: expectedFee, refund_amount: amount - expectedFee, currency: 'KRW' });

    const cancelled = await v1.PUT('/bookings/{id}/cancel', { params: { path: { id: booking.id } } });
    expect(cancelled.data!.data).toEqual({ booking_id: booking.id, status: 'cancelled', cancellation_fee: expectedFee, refund_amount: amount - expectedFee, currency: 'KRW' });

    const after = await v1.GET('/bookings/{id}', { params: { path: { id: booking.id } } });
    expect(after.data!.data).toMatchObject({ status: 'cancelled', cancellationFee: String(expectedFee), refundAmount: String(amount - expectedFee), totalAmount: String(amount) });

    // A second cancellation: the error envelope, its code typed by the document.
    const again = await v1.PUT('/bookings/{id}/cancel', { params: { path: { id: booking.id } } });
    expect(again.response.status).toBe(409);
    expect(again.data).toBeUndefined();
    const code: string | undefined = again.error?.error.code;
    expect(code).toBe('BOOKING_ALREADY_CANCELLED');
    expect(again.error?.meta.request_id).toBe(again.response.headers.get('x-request-id'));

    expect(checked).toEqual([
      'POST /oauth/token → 200',
      // The token source's request, made before the search went out.
      'POST /oauth/token → 200',
      'GET /search/availability → 200',
      ...checked.filter((c) => c.startsWith('GET /search/availability/{propertyId}')),
      'GET /search/price-check → 200',
      'POST /bookings → 201',
      'POST /bookings → 201',
      'GET /bookings → 200',
      'GET /bookings/{id}/cancellation-fee → 200',
      'PUT /bookings/{id}/cancel → 200',
      'GET /bookings/{id} → 200',
      'PUT /bookings/{id}/cancel → 409',
    ]);
    expect(checked.filter((c) => c.startsWith('GET /search/availability/{propertyId}')).length).toBeGreaterThan(0);
  });
});

describe('v2 through the generated client', () => {
  it('availability → price check link → book link → retrieve → cancel', async () => {
    checked.length = 0;
    const checkin = day(50);
    const checkout = day(52);
    const v2 = createChannelV2Client(over({ apiKey: channel.api_key }));
    v2.use(conformance('v2'));

    const availability = await v2.GET('/properties/availability', {
      params: { query: { checkin, checkout, occupancy: ['2'], property_id: ['1', '2', '3', '4', '5', '6'] } },
    });
    expect(availability.response.status).toBe(200);
    let priceCheck: Link | undefined;
    let quoted: number | undefined;
    for (const property of availability.data!) {
      for (const room of property.rooms) {
        for (const rate of room.rates) {
          const link = Object.values(rate.bed_groups)[0]?.links.price_check;
          if (!link || rate.status !== 'available') continue;
          priceCheck = link;
          quoted = rate.occupancy_pricing['2']?.totals.inclusive.billable_currency.value;
          break;
        }
        if (priceCheck) break;
      }
      if (priceCheck) break;
    }
    expect(priceCheck, 'a rate with a price_check link').toBeDefined();
    expect(priceCheck!.method).toBe('GET');
    expect(quoted).toBeGreaterThan(0);

    const check = await v2.GET('/properties/{propertyId}/rooms/{roomId}/rates/{rateId}', { params: priceCheckParams(priceCheck!) });
    expect(check.data).toMatchObject({ status: 'matched' });
    expect(check.data!.occupancy_pricing!['2']!.totals.inclusive.billable_currency.value).toBe(quoted);
    const book = check.data!.links.book!;
    expect(book.method).toBe('POST');

    const reference = `CLIENT-V2-${randomUUID()}`;
    const created = await v2.POST('/bookings', {
      params: { query: linkQuery(book) },
      body: { rooms: [{ given_name: 'Minji', family_name: 'Kim' }], affiliate_reference_id: reference },
    });
    expect(created.response.status).toBe(201);
    const { itinerary_id: itineraryId, links } = created.data!;
    expect(links.retrieve!.method).toBe('GET');
    expect(links.cancel!.method).toBe('PUT');

    const read = await v2.GET('/bookings/retrieve', { params: { query: linkQuery(links.retrieve!) } });
    expect(read.data).toMatchObject({ itinerary_id: itineraryId, status: 'confirmed', checkin, checkout, affiliate_reference_id: reference, billable_currency: 'KRW' });
    expect(read.data!.rooms).toHaveLength(1);
    const room = read.data!.rooms[0]!;
    expect(room.guest).toEqual({ given_name: 'Minji', family_name: 'Kim' });
    expect(room.occupancy_pricing['2']!.totals.inclusive.billable_currency.value).toBe(quoted);
    expect(room.cancel_refund.refund_amount + room.cancel_refund.penalty_amount).toBe(quoted);

    const cancelled = await v2.PUT('/bookings/cancel', { params: { query: linkQuery(links.cancel!) } });
    expect(cancelled.data).toMatchObject({ itinerary_id: itineraryId, status: 'cancelled', cancel_refund: room.cancel_refund });

    // The retrieve link outlives the cancellation; the cancel link was consumed.
    const after = await v2.GET('/bookings/retrieve', { params: { query: linkQuery(links.retrieve!) } });
    expect(after.data).toMatchObject({ itinerary_id: itineraryId, status: 'cancelled' });
    const again = await v2.PUT('/bookings/cancel', { params: { query: linkQuery(links.cancel!) } });
    expect(again.response.status).toBe(409);
    expect(again.error?.error.code).toBe('TOKEN_ALREADY_USED');

    expect(checked).toEqual([
      'GET /properties/availability → 200',
      'GET /properties/{propertyId}/rooms/{roomId}/rates/{rateId} → 200',
      'POST /bookings → 201',
      'GET /bookings/retrieve → 200',
      'PUT /bookings/cancel → 200',
      'GET /bookings/retrieve → 200',
      'PUT /bookings/cancel → 409',
    ]);
  });
});

describe('GraphQL through the generated typed documents', () => {
  it('the property page shows a bookable rate; the Book mutation books its offer', async () => {
    const execute = createGraphQLClient({
      url: `${origin}/graphql`,
      headers: { 'X-Api-Key': channel.api_key },
      fetch: ((input: string, init: RequestInit) => http(new Request(input, init))) as typeof fetch,
    });
    const stay = { checkin: day(55), checkout: day(57), adults: 2 };
    let offer: { propertyId: number; token: string } | undefined;
    for (let id = 1; id <= 10 && !offer; id++) {
      const page = await execute(PropertyPageDocument, { id: String(id), stay });
      expect(page.errors).toBeUndefined();
      const property = page.data?.property;
      expect(property?.propertyId).toBe(id);
      const rate = property?.availability?.roomTypes.flatMap((r) => r.rates).find((r) => r.priceCheckToken && r.availableRooms > 0);
      if (property && rate) offer = { propertyId: property.propertyId, token: rate.priceCheckToken! };
    }
    expect(offer, 'a property page with a bookable rate').toBeDefined();

    // The price check of that token (v1, through the REST client), then the typed mutation.
    const v1 = createChannelV1Client(over({ apiKey: channel.api_key }));
    const check = await v1.GET('/search/price-check', { params: { query: { token: offer!.token } } });
    const amount = check.data!.data.pricing!.billable_totals.inclusive_amount;
    const booked = await execute(BookDocument, { input: { bookToken: check.data!.data.book_token!, bookerName: 'Minji Kim' } });
    expect(booked.errors).toBeUndefined();
    const result = booked.data!.createBooking;
    expect(result.__typename).toBe('CreateBookingSuccess');
    if (result.__typename !== 'CreateBookingSuccess') return;
    // Money is a JSON number in GraphQL (a string in REST v1).
    expect(result.booking).toMatchObject({ status: 'CONFIRMED', totalAmount: amount, currency: 'KRW' });

    // The same token again: a typed error member, with the booking it made.
    const again = await execute(BookDocument, { input: { bookToken: check.data!.data.book_token!, bookerName: 'Minji Kim' } });
    const second = again.data!.createBooking;
    expect(second.__typename).toBe('BookTokenError');
    if (second.__typename === 'BookTokenError') expect(second).toMatchObject({ code: 'BOOK_TOKEN_USED', bookingId: result.booking.bookingId });
  });
});
