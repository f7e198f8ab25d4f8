import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day, v1 } from '../helpers/flow.js';
import { dataOf, edgesNodes, gql, topError, type Gql } from '../helpers/graphql.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * The partner journey as one GraphQL document per step (search -> availability -> price check ->
 * book -> cancel), the dashboard of a partner's front end in one request, the edges agreeing with
 * REST, and what the new types and costs are (issue 17).
 */

let t: TestService;
let who: IssuedCredentials;

beforeAll(async () => {
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
  who = await t.channel({ name: 'Journey' });
}, 60_000);

afterAll(async () => t?.close());

const checkin = day(45);
const checkout = day(47);

describe('the partner journey, one document per step', () => {
  let propertyId: string;
  let priceCheckToken: string;
  let bookToken: string;
  let bookingId: string;

  it('1. search: the properties available for the stay, each with its content', async () => {
    const res = dataOf(
      await gql(
        t,
        who,
        `query Search($input: AvailabilitySearchInput!) {
          availability(input: $input, first: 5) {
            totalCount
            edges { node { available lowestTotalPrice currency property { id name city roomTypes { name } } } }
          }
        }`,
        { input: { checkin, checkout, adults: 2, sortBy: 'PRICE_ASC' } },
      ),
    ).availability;
    expect(res.totalCount).toBeGreaterThan(5);
    const available = edgesNodes(res).filter((i: Gql) => i.available);
    expect(available.length).toBeGreaterThan(0);
    for (const item of available) expect(item.property.roomTypes.length).toBeGreaterThan(0);
    propertyId = available[0]!.property.id;
  });

  it('2. availability: the property’s rates, each bookable one with its price-check token', async () => {
    const property = dataOf(
      await gql(
        t,
        who,
        `query Rates($id: ID!, $stay: StayInput!) {
          node(id: $id) { ... on Property { name availability(stay: $stay) { checkin checkout nights roomTypes { name rates { name mealPlan refundable priceCheckToken pricing { inclusiveAmount } } } } } }
        }`,
        { id: propertyId, stay: { checkin, checkout, adults: 2 } },
      ),
    ).node;
    expect(property.availability).toMatchObject({ checkin, checkout, nights: 2 });
    const rates = property.availability.roomTypes.flatMap((r: Gql) => r.rates).filter((r: Gql) => r.priceCheckToken);
    expect(rates.length).toBeGreaterThan(0);
    expect(rates[0].mealPlan).toMatch(/^[A-Z_]+$/);
    priceCheckToken = rates[0].priceCheckToken;
  });

  it('3. price check: the price again, and a book token', async () => {
    const check = dataOf(
      await gql(t, who, 'query Check($token: String!) { priceCheck(token: $token) { status bookToken pricing { inclusiveAmount } cancellationPolicy { type } } }', {
        token: priceCheckToken,
      }),
    ).priceCheck;
    expect(check.status).toBe('MATCHED');
    expect(check.bookToken).toEqual(expect.any(String));
    bookToken = check.bookToken;
  });

  it('4. book: the booking with its property and cancellation terms in the same answer', async () => {
    const res = dataOf(
      await gql(
        t,
        who,
        `mutation Book($input: CreateBookingInput!) {
          createBooking(input: $input) {
            __typename
            ... on CreateBookingSuccess { booking { id bookingId status checkin checkout totalAmount property { name } cancellationTerms { type freeCancellationBefore } } }
            ... on DomainError { code message }
          }
        }`,
        { input: { bookToken, bookerName: 'Journey Guest', guestsAdult: 2 } },
      ),
    ).createBooking;
    expect(res.__typename).toBe('CreateBookingSuccess');
    expect(res.booking).toMatchObject({ status: 'CONFIRMED', checkin, checkout });
    expect(res.booking.property.name).toEqual(expect.any(String));
    bookingId = res.booking.bookingId;
    const rest = (await (await t.request(`/channel/v1/bookings/${bookingId}`, { headers: apiKey(who) })).json()).data;
    expect(String(res.booking.totalAmount)).toBe(rest.totalAmount);
    expect(res.booking.cancellationTerms.type).toBe(rest.cancellationPolicy.toUpperCase());
  });

  it('5. cancel: the fee it would cost, then the cancellation, then its events', async () => {
    const quote = dataOf(await gql(t, who, 'query($id: ID!) { booking(id: $id) { cancellationQuote { cancellationFee refundAmount final } } }', { id: bookingId })).booking
      .cancellationQuote;
    const restQuote = (await (await t.request(`/channel/v1/bookings/${bookingId}/cancellation-fee`, { headers: apiKey(who) })).json()).data;
    expect({ fee: quote.cancellationFee, refund: quote.refundAmount, final: quote.final }).toEqual({ fee: restQuote.cancellation_fee, refund: restQuote.refund_amount, final: false });

    const cancelled = dataOf(
      await gql(t, who, 'mutation Cancel($id: ID!) { cancelBooking(id: $id) { ... on CancelBookingSuccess { booking { status cancellationFee refundAmount cancellationQuote { final } } } } }', {
        id: bookingId,
      }),
    ).cancelBooking.booking;
    expect(cancelled).toMatchObject({ status: 'CANCELLED', cancellationFee: quote.cancellationFee, refundAmount: quote.refundAmount, cancellationQuote: { final: true } });

    const events = dataOf(await gql(t, who, 'query($id: ID!) { booking(id: $id) { events { type booking { status } } } }', { id: bookingId })).booking.events;
    expect(events.map((e: Gql) => [e.type, e.booking.status])).toEqual([
      ['RESERVATION_CANCELLED', 'CANCELLED'],
      ['RESERVATION_CONFIRMED', 'CONFIRMED'],
      ['RESERVATION_CREATED', 'CONFIRMED'],
    ]);
  });
});

describe("the dashboard of a partner's front end", () => {
  const DASHBOARD = `query Dashboard {
    channel {
      name tier
      app { name status scopes }
      bookings(first: 20) {
        totalCount
        edges { node {
          bookingId status checkin checkout
          property { name roomTypes { name } }
          cancellationQuote { cancellationFee refundAmount currency }
        } }
      }
      webhooks(first: 10) {
        edges { node { url status deliveries(first: 3) { edges { node { type status createdAt } } } } }
      }
    }
  }`;

  it('is one request without errors, whatever state the bookings are in', async () => {
    const flow = v1(t, who);
    for (let i = 0; i < 3; i++) {
      const offer = await flow.offer({ from: 10 + i * 7, checkin: day(60 + i), checkout: day(62 + i) });
      expect((await flow.book({ book_token: offer.bookToken, booker_name: `Dash ${i}`, guests_adult: 2 })).status).toBe(201);
    }
    // One checked in (cannot be cancelled: its quote is null, not an error).
    const [someone] = await t.service.deps.db.prisma.booking.findMany({ where: { channelId: who.user_id, status: 'confirmed' }, take: 1 });
    await t.service.deps.db.prisma.booking.update({ where: { id: someone!.id }, data: { status: 'checked_in' } });
    dataOf(await gql(t, who, 'mutation { createWebhook(input: { url: "https://hooks.example.com/dashboard" }) { webhook { webhookId } } }'));
    const webhook = await t.service.deps.db.prisma.webhookEndpoint.findFirstOrThrow({ where: { channelId: who.user_id } });
    await t.service.deps.db.prisma.webhookDelivery.create({
      data: { id: randomUUID(), endpointId: webhook.id, channelId: who.user_id, type: 'reservation.created', body: '{}', status: 'delivered', nextAttemptAt: new Date(), createdAt: new Date() },
    });

    const res = await gql(t, who, DASHBOARD);
    expect(res.errors).toBeUndefined();
    const { channel } = res.data as Gql;
    expect(channel.app.status).toBe('ACTIVE');
    const bookings = edgesNodes(channel.bookings);
    expect(bookings).toHaveLength(channel.bookings.totalCount);
    expect(bookings.length).toBe(4);
    const checkedIn = bookings.find((b: Gql) => b.bookingId === someone!.id);
    expect(checkedIn).toMatchObject({ status: 'CHECKED_IN', cancellationQuote: null });
    const cancelled = bookings.find((b: Gql) => b.status === 'CANCELLED');
    expect(cancelled!.cancellationQuote).toMatchObject({ currency: 'KRW' });
    for (const b of bookings) expect(b.property.roomTypes.length).toBeGreaterThan(0);
    const hook = edgesNodes(channel.webhooks)[0]!;
    expect(edgesNodes(hook.deliveries)).toEqual([{ type: 'reservation.created', status: 'DELIVERED', createdAt: expect.any(String) }]);
  });
});

describe('types a code generator is happy with', () => {
  it('Date: check-in and check-out as YYYY-MM-DD; a malformed day in a variable is BAD_USER_INPUT naming it, with HTTP 400', async () => {
    const query = 'query($input: AvailabilitySearchInput!) { availability(input: $input, first: 1) { totalCount } }';
    for (const bad of ['2027-02-30', '2027-2-3', '27-02-03', '2027-02-03T00:00:00Z']) {
      const res = await gql(t, who, query, { input: { checkin: bad, checkout: checkout, adults: 2 } });
      expect(res.status).toBe(400);
      const error = topError(res);
      expect(error.extensions?.code).toBe('BAD_USER_INPUT');
      expect(error.message).toContain('input.checkin');
      expect(error.message).toContain('YYYY-MM-DD');
    }
    // A real day that breaks a rule is the field's VALIDATION_ERROR, as before: in the past, or in year 99.
    for (const [from, to] of [[day(-3), day(-1)], ['0099-12-30', '0099-12-31']]) {
      const error = topError(await gql(t, who, query, { input: { checkin: from, checkout: to, adults: 2 } }));
      expect({ from, code: error.extensions?.code }).toEqual({ from, code: 'VALIDATION_ERROR' });
    }
  });

  it('DomainError.code is the ErrorCode enum, whose values are every code REST answers too', async () => {
    const res = dataOf(
      await gql(t, who, 'mutation { createBooking(input: { bookToken: "not-a-token", bookerName: "X" }) { ... on DomainError { __typename code } } }'),
    ).createBooking;
    expect(res).toEqual({ __typename: 'BookTokenError', code: 'BOOK_TOKEN_INVALID' });
    const values = dataOf(await gql(t, who, '{ __type(name: "ErrorCode") { enumValues { name } } }')).__type.enumValues.map((v: Gql) => v.name);
    for (const code of ['VALIDATION_ERROR', 'NOT_FOUND', 'INSUFFICIENT_SCOPE', 'BOOK_TOKEN_USED', 'SOLD_OUT', 'UPSTREAM_ERROR', 'RATE_LIMIT_EXCEEDED', 'COST_LIMIT_EXCEEDED']) {
      expect(values).toContain(code);
    }
  });

  it('Money, DateTime and Date say how they are written (@specifiedBy), and enum values are SCREAMING_SNAKE_CASE', async () => {
    const scalars = dataOf(await gql(t, who, '{ __schema { types { name kind specifiedByURL enumValues { name } } } }')).__schema.types;
    const byName = new Map(scalars.map((s: Gql) => [s.name, s]));
    for (const name of ['Money', 'DateTime', 'Date']) expect((byName.get(name) as Gql).specifiedByURL).toMatch(/^https:\/\//);
    const enums = scalars.filter((s: Gql) => s.kind === 'ENUM' && !s.name.startsWith('__'));
    expect(enums.length).toBeGreaterThan(15);
    for (const e of enums) for (const v of e.enumValues) expect(`${e.name}.${v.name}`).toMatch(/^\w+\.[A-Z][A-Z0-9_]*$/);
  });
});

describe('costs of the new fields (rate-limit points)', () => {
  const costOf = async (query: string, variables?: Record<string, unknown>) =>
    ((await gql(t, who, query, variables)) as unknown as { extensions: { rateLimit: { cost: number } } }).extensions.rateLimit.cost;

  it('Property.availability costs a point for each property it prices; single edges are free; lists count as items', async () => {
    const stay = { checkin, checkout, adults: 2 };
    expect(await costOf('query($s: StayInput!) { properties(first: 20) { edges { node { availability(stay: $s) { nights } } } } }', { s: stay })).toBe(1 + 20);
    expect(await costOf('query($s: StayInput!) { property(id: "1") { availability(stay: $s) { nights } } }', { s: stay })).toBe(1 + 1);
    expect(await costOf('{ bookings(first: 100) { edges { node { property { name } reservation { confirmationNumber } cancellationQuote { final } } } } }')).toBe(1);
    // 100 bookings, each with up to 10 events and a property with up to 10 room types: 2,100 items.
    expect(await costOf('{ bookings(first: 100) { edges { node { events { type } property { roomTypes { name } } } } } }')).toBe(21);
  });
});
