import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyReported } from '../../src/services/bookings/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day, v1, type Offer } from '../helpers/flow.js';
import { dataOf, edgesNodes, expectBadDateVariable, gql, type Gql, topError } from '../helpers/graphql.js';
import { balanceOf, bookingCount } from '../helpers/ledger.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The GraphQL twins of the v1 booking flow: the same services as REST, so the same records and
 * amounts (numbers here, strings in REST records). Expected outcomes of the mutations are typed
 * members of their result unions; authentication, scope, validation and provider failures stay
 * top-level errors with extensions.code.
 */

let t: TestService;
let creds: IssuedCredentials;
let api: ReturnType<typeof v1>;

beforeAll(async () => {
  t = await startTestService();
  creds = await t.channel();
  api = v1(t, creds);
});
afterAll(() => t?.close());

const BOOKING_FIELDS = `
  bookingId userId appId hubBookingNumber channelBookingNumber propertyId propertyName roomType ratePlan
  checkin checkout guestsAdult guestsChild bookerName bookerEmail guestFirstName guestLastName
  guestPhone guestCountry specialRequests totalAmount netAmount saleAmount currency status
  cancellationPolicy cancellationDeadline refundAmount cancellationFee createdAt updatedAt`;

const CREATE = `mutation($input: CreateBookingInput!) {
  createBooking(input: $input) {
    __typename
    ... on CreateBookingSuccess { booking { ${BOOKING_FIELDS} } }
    ... on DomainError { code message }
    ... on BookTokenError { bookingId }
    ... on InsufficientBalanceError { required available }
  }
}`;

const CANCEL = `mutation($id: ID!) {
  cancelBooking(id: $id) {
    __typename
    ... on CancelBookingSuccess { booking { ${BOOKING_FIELDS} } }
    ... on DomainError { code message }
    ... on BookingAlreadyCancelledError { bookingId status }
    ... on BookingNotCancellableError { bookingId status }
  }
}`;

const UPDATE = `mutation($id: ID!, $input: UpdateBookingInput!) {
  updateBooking(id: $id, input: $input) {
    __typename
    ... on UpdateBookingSuccess { booking { ${BOOKING_FIELDS} } }
    ... on DomainError { code message }
    ... on BookingNotModifiableError { bookingId status }
  }
}`;

const QUOTE = `query($id: ID!) {
  cancellationQuote(id: $id) { booking { bookingId status } cancellationFee refundAmount currency freeCancellationBefore final }
}`;

/** A connection as a test reads it. */
type Connection = Gql & { edges: { cursor: string; node: Gql }[] };

async function create(svc: TestService, who: IssuedCredentials, input: Record<string, unknown>, headers: Record<string, string> = {}) {
  return dataOf(await gql(svc, who, CREATE, { input }, headers)).createBooking as Gql;
}

/** A booking made through GraphQL, from a fresh offer. */
async function book(who: IssuedCredentials = creds, input: Record<string, unknown> = {}, offer?: Offer): Promise<Gql> {
  const o = offer ?? (await v1(t, who).offer());
  const result = await create(t, who, { bookToken: o.bookToken, bookerName: 'Kim Minji', ...input });
  expect(result.__typename).toBe('CreateBookingSuccess');
  return result.booking;
}

/** A REST enum value (confirmed, non_refundable) as GraphQL spells it (CONFIRMED, NON_REFUNDABLE). */
const enumValue = (v: string | null) => (v === null ? null : v.toUpperCase());

/**
 * The REST record with the GraphQL shapes: its id as bookingId, amounts as numbers, propertyId
 * as a number, status and cancellation policy as GraphQL enum values.
 */
function asGraphQL(record: Gql): Gql {
  const amount = (v: string | null) => (v === null ? null : Number(v));
  const { id, ...rest } = record;
  return {
    ...rest,
    bookingId: id,
    status: enumValue(record.status),
    cancellationPolicy: enumValue(record.cancellationPolicy),
    propertyId: Number(record.propertyId),
    totalAmount: amount(record.totalAmount),
    netAmount: amount(record.netAmount),
    saleAmount: amount(record.saleAmount),
    refundAmount: amount(record.refundAmount),
    cancellationFee: amount(record.cancellationFee),
  };
}

async function restRecord(who: IssuedCredentials, id: string): Promise<Gql> {
  const res = await v1(t, who).get(id);
  expect(res.status).toBe(200);
  return (await res.json()).data;
}

describe('Mutation.createBooking', () => {
  it('books the offer: the record with amounts as numbers, equal to the REST record', async () => {
    const offer = await api.offer();
    const result = await create(t, creds, {
      bookToken: offer.bookToken,
      bookerName: 'Kim Minji',
      bookerEmail: 'minji@example.com',
      guestFirstName: 'Minji',
      guestLastName: 'Kim',
      guestPhone: '+82 10-1234-5678',
      guestCountry: 'kr',
      specialRequests: 'High floor',
      saleAmount: 250000,
      channelBookingNumber: 'OTA-GQL-1',
    });
    expect(result.__typename).toBe('CreateBookingSuccess');
    const b = result.booking;
    expect(b).toMatchObject({
      userId: creds.user_id,
      appId: creds.app_id,
      channelBookingNumber: 'OTA-GQL-1',
      propertyId: offer.propertyId,
      checkin: offer.checkin,
      checkout: offer.checkout,
      guestsAdult: 2,
      guestsChild: 0,
      bookerName: 'Kim Minji',
      bookerEmail: 'minji@example.com',
      guestCountry: 'KR',
      specialRequests: 'High floor',
      totalAmount: offer.amount,
      netAmount: offer.amount,
      saleAmount: 250000,
      currency: 'KRW',
      status: 'CONFIRMED',
      cancellationPolicy: enumValue(offer.cancellationPolicy),
      refundAmount: null,
      cancellationFee: null,
    });
    expect(typeof b.totalAmount).toBe('number');
    expect(b.hubBookingNumber).toEqual(expect.any(String));
    expect(b.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);

    const record = await restRecord(creds, b.bookingId);
    expect(record.totalAmount).toBe(String(b.totalAmount));
    expect(record.netAmount).toBe(String(b.netAmount));
    expect(record.saleAmount).toBe('250000');
    expect(asGraphQL(record)).toEqual(b);
  });

  it('a reused book token is the typed BookTokenError BOOK_TOKEN_USED with the booking it made', async () => {
    const offer = await api.offer();
    const first = await book(creds, {}, offer);
    const again = await create(t, creds, { bookToken: offer.bookToken, bookerName: 'Kim Minji' });
    expect(again).toEqual({
      __typename: 'BookTokenError',
      code: 'BOOK_TOKEN_USED',
      message: expect.any(String),
      bookingId: first.bookingId,
    });
  });

  it('a token that is not one is the typed BookTokenError BOOK_TOKEN_INVALID, without a bookingId', async () => {
    const result = await create(t, creds, { bookToken: 'not-a-token', bookerName: 'Kim Minji' });
    expect(result).toMatchObject({ __typename: 'BookTokenError', code: 'BOOK_TOKEN_INVALID', bookingId: null });
  });

  it('sold out (X-Test-Scenario) is the typed SoldOutError; nothing is booked and the token books afterwards', async () => {
    const offer = await api.offer();
    const before = await t.service.deps.db.prisma.booking.count({ where: { channelId: creds.user_id, status: { not: 'void' } } });
    const result = await create(t, creds, { bookToken: offer.bookToken, bookerName: 'Kim Minji' }, { 'x-test-scenario': 'sold_out' });
    expect(result).toEqual({ __typename: 'SoldOutError', code: 'SOLD_OUT', message: expect.any(String) });
    expect(await t.service.deps.db.prisma.booking.count({ where: { channelId: creds.user_id, status: { not: 'void' } } })).toBe(before);
    // The void attempt frees the token, as in REST.
    const retry = await create(t, creds, { bookToken: offer.bookToken, bookerName: 'Kim Minji' });
    expect(retry.__typename).toBe('CreateBookingSuccess');
  });

  it('a price the provider no longer offers (X-Test-Scenario) is the typed PriceChangedError', async () => {
    const offer = await api.offer();
    const result = await create(t, creds, { bookToken: offer.bookToken, bookerName: 'Kim Minji' }, { 'x-test-scenario': 'price_changed' });
    expect(result).toEqual({ __typename: 'PriceChangedError', code: 'PRICE_CHANGED', message: expect.any(String) });
  });

  it('a provider failure stays a top-level UPSTREAM_ERROR, not a member of the union', async () => {
    const offer = await api.offer();
    const res = await gql(t, creds, CREATE, { input: { bookToken: offer.bookToken, bookerName: 'Kim Minji' } }, { 'x-test-scenario': 'upstream_error' });
    expect(res.data).toBeNull();
    expect(topError(res).extensions?.code).toBe('UPSTREAM_ERROR');
  });

  it('bad input is a top-level VALIDATION_ERROR naming the fields, with the REST rules', async () => {
    const res = await gql(t, creds, CREATE, {
      input: { bookToken: 'x', bookerName: ' ', bookerEmail: 'nope', guestCountry: 'KOR', saleAmount: 0, guestsAdult: 0 },
    });
    const error = topError(res);
    expect(error.extensions?.code).toBe('VALIDATION_ERROR');
    const fields = (error.extensions?.details?.fields as { field: string }[]).map((f) => f.field).sort();
    expect(fields).toEqual(['input.bookerEmail', 'input.bookerName', 'input.guestCountry', 'input.guestsAdult', 'input.saleAmount']);
  });

  it('a larger party than the book token priced is a top-level VALIDATION_ERROR naming the input fields; nothing booked (issue 15, finding 4)', async () => {
    const offer = await api.offer({ from: 70, adults: 1 });
    const res = await gql(t, creds, CREATE, { input: { bookToken: offer.bookToken, bookerName: 'Big Party', guestsAdult: 12, guestsChild: 5 } });
    expect(res.data).toBeNull();
    expect(topError(res).extensions).toEqual({
      code: 'VALIDATION_ERROR',
      details: {
        fields: [
          { field: 'input.guestsAdult', reason: 'at most 1: the adults the book token was priced for' },
          { field: 'input.guestsChild', reason: 'at most 0: the children the book token was priced for' },
        ],
      },
    });
    expect(await t.service.deps.db.prisma.booking.count({ where: { bookerName: 'Big Party' } })).toBe(0);
    const booked = dataOf(await gql(t, creds, CREATE, { input: { bookToken: offer.bookToken, bookerName: 'Big Party', guestsAdult: 1 } }));
    expect(booked.createBooking).toMatchObject({ __typename: 'CreateBookingSuccess', booking: { guestsAdult: 1, guestsChild: 0 } });
  });

  it('a credential without reservations:write gets a top-level INSUFFICIENT_SCOPE; one without any credential UNAUTHORIZED', async () => {
    const reader = await t.channel({ scopes: ['reservations:read', 'search:availability'] });
    const offer = await v1(t, reader).offer();
    const res = await gql(t, reader, CREATE, { input: { bookToken: offer.bookToken, bookerName: 'Kim Minji' } });
    expect(res.data).toBeNull();
    expect(topError(res).extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'reservations:write' } });
    // Reading is allowed to it.
    expect(dataOf(await gql(t, reader, '{ bookings { totalCount } }')).bookings.totalCount).toBe(0);

    const anonymous = await t.graphql(CREATE, { input: { bookToken: offer.bookToken, bookerName: 'Kim Minji' } });
    expect(topError(anonymous).extensions?.code).toBe('UNAUTHORIZED');
  });
});

describe('Mutation.createBooking in production', () => {
  let production: TestService;
  beforeAll(async () => {
    production = await startTestService({ CHANNEL_ENV: 'production' });
  });
  afterAll(() => production?.close());

  it('a balance below the charge is the typed InsufficientBalanceError; no booking, no charge', async () => {
    const poor = await production.channel({ balance: 1000n });
    const offer = await v1(production, poor).offer();
    const result = await create(production, poor, { bookToken: offer.bookToken, bookerName: 'Kim Minji' });
    expect(result).toEqual({
      __typename: 'InsufficientBalanceError',
      code: 'INSUFFICIENT_BALANCE',
      message: expect.any(String),
      required: offer.amount,
      available: 1000,
    });
    expect(await bookingCount(production, poor.user_id)).toBe(0);
    expect(await balanceOf(production, poor.user_id)).toBe(1000n);
    expect(edgesNodes(dataOf(await gql(production, poor, '{ bookings { edges { node { bookingId } } } }')).bookings)).toEqual([]);
  });

  it('with enough balance the booking is made and the balance pays it; cancelling refunds it', async () => {
    const rich = await production.channel({ balance: 5_000_000n });
    const offer = await v1(production, rich).offer();
    const result = await create(production, rich, { bookToken: offer.bookToken, bookerName: 'Kim Minji' });
    expect(result.__typename).toBe('CreateBookingSuccess');
    expect(await balanceOf(production, rich.user_id)).toBe(5_000_000n - BigInt(offer.amount));
    const cancelled = dataOf(await gql(production, rich, CANCEL, { id: result.booking.bookingId })).cancelBooking;
    expect(cancelled.__typename).toBe('CancelBookingSuccess');
    expect(await balanceOf(production, rich.user_id)).toBe(5_000_000n - BigInt(offer.amount) + BigInt(cancelled.booking.refundAmount));
  });
});

describe('Query.bookings', () => {
  let lister: IssuedCredentials;
  const made: Gql[] = [];
  const LIST = `query($filter: BookingFilter, $first: Int, $after: String) {
    bookings(filter: $filter, first: $first, after: $after) {
      edges { cursor node { bookingId checkin channelBookingNumber status totalAmount } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      totalCount
    }
  }`;
  const list = async (variables: Record<string, unknown>) =>
    dataOf(await gql(t, lister, LIST, { first: 20, ...variables })).bookings as Connection;
  const bookingIds = (connection: Gql) => edgesNodes(connection as Connection).map((b) => b.bookingId);

  beforeAll(async () => {
    lister = await t.channel();
    const flow = v1(t, lister);
    for (const [i, offset] of [50, 60, 70].entries()) {
      const offer = await flow.offer({ checkin: day(offset), checkout: day(offset + 1) });
      made.push(await book(lister, { channelBookingNumber: `LIST-${i}` }, offer));
    }
  });

  it('lists the channel’s bookings newest first, with the default page size 20', async () => {
    const res = dataOf(
      await gql(t, lister, '{ bookings { edges { cursor node { bookingId } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } totalCount } }'),
    ).bookings;
    expect(bookingIds(res)).toEqual(made.map((b) => b.bookingId).reverse());
    expect(res.totalCount).toBe(3);
    expect(res.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: false, startCursor: res.edges[0].cursor, endCursor: res.edges[2].cursor });

    // The default page holds 20: a channel with 21 bookings gets the newest 20, and more after them.
    const crowd = await t.channel();
    const flow = v1(t, crowd);
    const crowded: string[] = [];
    for (let i = 0; i < 21; i++) {
      const offer = await flow.offer({ from: 1 + (i % 10), checkin: day(100 + i), checkout: day(101 + i) });
      const res = await flow.book({ book_token: offer.bookToken, booker_name: 'Crowd' });
      expect(res.status).toBe(201);
      crowded.push((await res.json()).data.id);
    }
    const page = dataOf(await gql(t, crowd, '{ bookings { edges { node { bookingId } } pageInfo { hasNextPage hasPreviousPage } totalCount } }')).bookings;
    expect(bookingIds(page)).toEqual(crowded.slice(1).reverse());
    expect(page.totalCount).toBe(21);
    expect(page.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false });
  });

  it('pages', async () => {
    const first = await list({ first: 2 });
    expect(bookingIds(first)).toEqual([made[2]!.bookingId, made[1]!.bookingId]);
    expect(first.totalCount).toBe(3);
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const second = await list({ first: 2, after: first.pageInfo.endCursor });
    expect(bookingIds(second)).toEqual([made[0]!.bookingId]);
    expect(second.totalCount).toBe(3);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });

  it('filters by check-in days, creation days, channel booking number and status', async () => {
    const inRange = await list({ filter: { checkinFrom: day(55), checkinTo: day(60) } });
    expect(bookingIds(inRange)).toEqual([made[1]!.bookingId]);
    const byNumber = await list({ filter: { channelBookingNumber: 'LIST-2' } });
    expect(edgesNodes(byNumber).map((b: Gql) => b.channelBookingNumber)).toEqual(['LIST-2']);
    // Creation days are UTC days; a day either side keeps this true across midnight.
    expect((await list({ filter: { createdFrom: day(-1), createdTo: day(1) } })).totalCount).toBe(3);
    expect((await list({ filter: { createdTo: day(-2) } })).totalCount).toBe(0);
    expect((await list({ filter: { createdFrom: day(2) } })).totalCount).toBe(0);
    expect((await list({ filter: { status: 'CONFIRMED' } })).totalCount).toBe(3);
    expect((await list({ filter: { status: 'CANCELLED' } })).edges).toEqual([]);
  });

  it('refuses bad filters and page sizes with VALIDATION_ERROR naming the GraphQL fields; a malformed date as the variables are read', async () => {
    const crossed = await gql(t, lister, LIST, { first: 20, filter: { checkinFrom: day(60), checkinTo: day(50) } });
    expect(topError(crossed).extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'filter.checkinTo' }] } });
    const tooMany = await gql(t, lister, LIST, { first: 101 });
    expect(topError(tooMany).extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'first' }] } });
    // A Date variable that is not a calendar day is refused before the field runs, naming its path.
    const badDate = await gql(t, lister, LIST, { first: 20, filter: { createdFrom: '2026-13-01' } });
    expectBadDateVariable(badDate, 'filter.createdFrom');
  });

  it('never shows another channel’s bookings', async () => {
    const ids = bookingIds(await list({ first: 100 }));
    const other = bookingIds(dataOf(await gql(t, creds, '{ bookings(first: 100) { edges { node { bookingId } } } }')).bookings);
    expect(other.filter((id: string) => ids.includes(id))).toEqual([]);
  });
});

describe('Query.booking', () => {
  it('is the booking of the caller, and null for another channel’s, an unknown or a malformed id', async () => {
    const mine = await book();
    const q = `query($id: ID!) { booking(id: $id) { bookingId status totalAmount } }`;
    expect(dataOf(await gql(t, creds, q, { id: mine.bookingId })).booking).toEqual({ bookingId: mine.bookingId, status: 'CONFIRMED', totalAmount: mine.totalAmount });
    const stranger = await t.channel();
    expect(dataOf(await gql(t, stranger, q, { id: mine.bookingId }))).toEqual({ booking: null });
    expect(dataOf(await gql(t, creds, q, { id: '00000000-0000-4000-8000-000000000000' }))).toEqual({ booking: null });
    expect(dataOf(await gql(t, creds, q, { id: 'nope' }))).toEqual({ booking: null });
  });

  it('agrees with REST GET /channel/v1/bookings/{id} on every field, amounts and status included', async () => {
    // Made through REST this time, read through both.
    const offer = await api.offer({ policy: 'non_refundable' });
    const res = await api.book({ book_token: offer.bookToken, booker_name: 'Lee Jiho', sale_amount: 123456, channel_booking_number: 'REST-1' });
    expect(res.status).toBe(201);
    const { data: record } = await res.json();
    const viaGraphQL = dataOf(await gql(t, creds, `query($id: ID!) { booking(id: $id) { ${BOOKING_FIELDS} } }`, { id: record.id })).booking;
    expect(viaGraphQL).toEqual(asGraphQL(record));
    expect(viaGraphQL.totalAmount).toBe(Number(record.totalAmount));
    expect(viaGraphQL.status).toBe(enumValue(record.status));

    // Cancelled through GraphQL, read through REST.
    const cancelled = dataOf(await gql(t, creds, CANCEL, { id: record.id })).cancelBooking.booking;
    const after = await restRecord(creds, record.id);
    expect(after.status).toBe('cancelled');
    expect(asGraphQL(after)).toEqual(cancelled);
    expect(after.cancellationFee).toBe(String(cancelled.cancellationFee));
    expect(after.refundAmount).toBe(String(cancelled.refundAmount));
  });
});

describe('Query.cancellationQuote and Mutation.cancelBooking', () => {
  it('quotes the fee as REST does, cancels with it, and then quotes the recorded figures as final', async () => {
    const offer = await api.offer({ policy: 'non_refundable' });
    const booking = await book(creds, {}, offer);
    const quote = dataOf(await gql(t, creds, QUOTE, { id: booking.bookingId })).cancellationQuote;
    expect(quote).toEqual({
      booking: { bookingId: booking.bookingId, status: 'CONFIRMED' },
      cancellationFee: offer.amount,
      refundAmount: 0,
      currency: 'KRW',
      freeCancellationBefore: null,
      final: false,
    });
    const rest = (await (await api.call('GET', `/bookings/${booking.bookingId}/cancellation-fee`)).json()).data;
    expect({ fee: rest.cancellation_fee, refund: rest.refund_amount }).toEqual({ fee: quote.cancellationFee, refund: quote.refundAmount });

    const cancelled = dataOf(await gql(t, creds, CANCEL, { id: booking.bookingId })).cancelBooking;
    expect(cancelled.__typename).toBe('CancelBookingSuccess');
    expect(cancelled.booking).toMatchObject({ bookingId: booking.bookingId, status: 'CANCELLED', cancellationFee: offer.amount, refundAmount: 0 });

    const final = dataOf(await gql(t, creds, QUOTE, { id: booking.bookingId })).cancellationQuote;
    expect(final).toMatchObject({ booking: { status: 'CANCELLED' }, cancellationFee: offer.amount, refundAmount: 0, final: true });
  });

  it('a free cancellation: fee 0, the whole amount refunded, the deadline of the booking', async () => {
    const offer = await api.offer({ policy: 'flexible' });
    const booking = await book(creds, {}, offer);
    const quote = dataOf(await gql(t, creds, QUOTE, { id: booking.bookingId })).cancellationQuote;
    expect(quote).toMatchObject({ cancellationFee: 0, refundAmount: offer.amount, freeCancellationBefore: booking.cancellationDeadline, final: false });
    expect(booking.cancellationDeadline).toEqual(expect.any(String));
  });

  it('cancelling again is the typed BookingAlreadyCancelledError (BOOKING_ALREADY_CANCELLED)', async () => {
    const booking = await book();
    expect(dataOf(await gql(t, creds, CANCEL, { id: booking.bookingId })).cancelBooking.__typename).toBe('CancelBookingSuccess');
    const again = dataOf(await gql(t, creds, CANCEL, { id: booking.bookingId })).cancelBooking;
    expect(again).toEqual({
      __typename: 'BookingAlreadyCancelledError',
      code: 'BOOKING_ALREADY_CANCELLED',
      message: expect.any(String),
      bookingId: booking.bookingId,
      status: 'CANCELLED',
    });
    // As REST says it.
    const rest = await api.cancel(booking.bookingId);
    expect(rest.status).toBe(409);
    expect((await rest.json()).error.code).toBe('BOOKING_ALREADY_CANCELLED');
  });

  it('a checked-in booking: cancelBooking is the typed BookingNotCancellableError, the quote a top-level error', async () => {
    const booking = await book();
    const row = await t.service.deps.db.prisma.booking.findUniqueOrThrow({ where: { id: booking.bookingId } });
    expect((await applyReported(t.service.deps, row, 'checked_in'))?.status).toBe('checked_in');

    const refused = dataOf(await gql(t, creds, CANCEL, { id: booking.bookingId })).cancelBooking;
    expect(refused).toMatchObject({ __typename: 'BookingNotCancellableError', code: 'BOOKING_NOT_CANCELLABLE', bookingId: booking.bookingId, status: 'CHECKED_IN' });

    const quote = await gql(t, creds, QUOTE, { id: booking.bookingId });
    expect(topError(quote).extensions?.code).toBe('BOOKING_NOT_CANCELLABLE');

    // Special requests can no longer change once checked in.
    const update = dataOf(await gql(t, creds, UPDATE, { id: booking.bookingId, input: { specialRequests: 'Late checkout' } })).updateBooking;
    expect(update).toMatchObject({ __typename: 'BookingNotModifiableError', code: 'BOOKING_NOT_MODIFIABLE', bookingId: booking.bookingId, status: 'CHECKED_IN' });
  });

  it('another channel’s booking: quote null, cancel a top-level NOT_FOUND, and the booking untouched', async () => {
    const booking = await book();
    const stranger = await t.channel();
    expect(dataOf(await gql(t, stranger, QUOTE, { id: booking.bookingId }))).toEqual({ cancellationQuote: null });
    const res = await gql(t, stranger, CANCEL, { id: booking.bookingId });
    expect(topError(res).extensions?.code).toBe('NOT_FOUND');
    expect((await restRecord(creds, booking.bookingId)).status).toBe('confirmed');
  });

  it('cancelling needs reservations:write', async () => {
    const booking = await book();
    const reader = await t.channel({ scopes: ['reservations:read'] });
    // The reader cannot see this booking either, but the scope is checked first.
    const res = await gql(t, reader, CANCEL, { id: booking.bookingId });
    expect(topError(res).extensions?.code).toBe('INSUFFICIENT_SCOPE');
  });
});

describe('Mutation.updateBooking', () => {
  it('changes and clears fields (null clears, as the REST PATCH) and writes reservation.modified', async () => {
    const booking = await book(creds, { bookerEmail: 'old@example.com', guestFirstName: 'Old' });
    const result = dataOf(
      await gql(t, creds, UPDATE, { id: booking.bookingId, input: { guestFirstName: 'Minji', bookerEmail: null, specialRequests: 'Quiet room' } }),
    ).updateBooking;
    expect(result.__typename).toBe('UpdateBookingSuccess');
    expect(result.booking).toMatchObject({ guestFirstName: 'Minji', bookerEmail: null, specialRequests: 'Quiet room', bookerName: 'Kim Minji' });

    const events = await t.service.deps.db.prisma.outboxEvent.findMany({ where: { bookingId: booking.bookingId, type: 'reservation.modified' } });
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ id: booking.bookingId, guestFirstName: 'Minji', bookerEmail: null });

    // Nothing changes: nothing written.
    const same = dataOf(await gql(t, creds, UPDATE, { id: booking.bookingId, input: { guestFirstName: 'Minji' } })).updateBooking;
    expect(same.__typename).toBe('UpdateBookingSuccess');
    expect(await t.service.deps.db.prisma.outboxEvent.count({ where: { bookingId: booking.bookingId, type: 'reservation.modified' } })).toBe(1);

    expect(asGraphQL(await restRecord(creds, booking.bookingId))).toEqual(same.booking);
  });

  it('refuses an empty change, clearing bookerName and bad values with VALIDATION_ERROR', async () => {
    const booking = await book();
    const empty = await gql(t, creds, UPDATE, { id: booking.bookingId, input: {} });
    expect(topError(empty).extensions?.code).toBe('VALIDATION_ERROR');
    const cleared = await gql(t, creds, UPDATE, { id: booking.bookingId, input: { bookerName: null } });
    expect(topError(cleared).extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'input.bookerName' }] } });
    const bad = await gql(t, creds, UPDATE, { id: booking.bookingId, input: { guestPhone: 'call me' } });
    expect(topError(bad).extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'input.guestPhone' }] } });
  });

  it('a cancelled booking is the typed BookingNotModifiableError', async () => {
    const booking = await book();
    await gql(t, creds, CANCEL, { id: booking.bookingId });
    const result = dataOf(await gql(t, creds, UPDATE, { id: booking.bookingId, input: { guestLastName: 'Park' } })).updateBooking;
    expect(result).toMatchObject({ __typename: 'BookingNotModifiableError', code: 'BOOKING_NOT_MODIFIABLE', status: 'CANCELLED' });
  });
});
