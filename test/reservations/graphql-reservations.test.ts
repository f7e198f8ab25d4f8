import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { documentCost } from '../../src/graphql/cost.js';
import { checkInvariants } from '../helpers/bookingInvariants.js';
import { day, findRate, type FoundRate, v1 } from '../helpers/flow.js';
import { dataOf, edgesNodes, expectBadDateVariable, gql, type Gql, topError } from '../helpers/graphql.js';
import { balanceOf, bookingCount, eventsOf, ledgerOf } from '../helpers/ledger.js';
import { apiKey, startTestService, type GraphQLResult, type TestService } from '../helpers/service.js';

/**
 * The GraphQL twins of /channel/v1/reservations (reservation, reservations, createReservation,
 * updateReservation, cancelReservation): the same services and scopes as REST, so the same
 * reservations, amounts and money movements. Expected outcomes are typed members of the
 * mutations' result unions; authentication, scope, validation and an unknown (or another
 * channel's) reservation are top-level errors, and the query fields answer null for the latter.
 */

let sandbox: TestService;
let production: TestService;
const START = 50_000_000n;

beforeAll(async () => {
  [sandbox, production] = await Promise.all([startTestService(), startTestService({ CHANNEL_ENV: 'production' })]);
});
afterAll(async () => {
  await Promise.all([sandbox?.close(), production?.close()]);
});

const ROOM_FIELDS = `
  bookingId status roomtypeId roomType rateplanId ratePlan checkIn checkOut roomCount adults children childrenAges
  guest { firstName lastName } hubBookingNumber price { total currency requestTotal requestCurrency }
  cancellationPolicy { type freeCancellationBefore } cancellationFee refundAmount cancelledAt`;

const RESERVATION_FIELDS = `
  reservationId confirmationNumber status propertyId propertyName checkIn checkOut adults children
  guest { firstName lastName email phone country }
  rooms { ${ROOM_FIELDS} }
  price { total currency requestTotal requestCurrency cancellationFee refundAmount }
  cancellationPolicy { type freeCancellationBefore }
  specialRequests arrivalTime channelBookingNumber createdAt updatedAt`;

const CREATE = `mutation($input: CreateReservationInput!) {
  createReservation(input: $input) {
    __typename
    ... on CreateReservationSuccess { reservation { ${RESERVATION_FIELDS} } }
    ... on DomainError { code message }
    ... on BookTokenError { bookingId }
    ... on InsufficientBalanceError { required available }
  }
}`;

const UPDATE = `mutation($id: ID!, $input: UpdateReservationInput!) {
  updateReservation(id: $id, input: $input) {
    __typename
    ... on UpdateReservationSuccess { reservation { ${RESERVATION_FIELDS} } }
    ... on DomainError { code message }
    ... on BookingNotModifiableError { bookingId status }
  }
}`;

const CANCEL = `mutation($id: ID!, $roomIds: [ID!]) {
  cancelReservation(id: $id, roomIds: $roomIds) {
    __typename
    ... on CancelReservationSuccess {
      cancellation {
        reservationId confirmationNumber status cancellationFee refundAmount currency
        cancelledRooms { bookingId status cancellationFee refundAmount }
        reservation { ${RESERVATION_FIELDS} }
      }
    }
    ... on DomainError { code message }
    ... on BookingAlreadyCancelledError { bookingId status }
    ... on BookingNotCancellableError { bookingId status }
  }
}`;

const GET = `query($id: ID!) { reservation(id: $id) { ${RESERVATION_FIELDS} } }`;

const LIST = `query($filter: ReservationFilter, $first: Int, $after: String) {
  reservations(filter: $filter, first: $first, after: $after) {
    edges { node { reservationId confirmationNumber } }
    pageInfo { hasNextPage hasPreviousPage endCursor }
    totalCount
  }
}`;

/** The reservationIds of a LIST result's page, in order. */
const reservationIds = (res: GraphQLResult): string[] => edgesNodes(dataOf(res).reservations).map((r: Gql) => r.reservationId);

/** A REST enum value (confirmed, non_refundable) as GraphQL spells it (CONFIRMED, NON_REFUNDABLE). */
const enumValue = (v: string) => v.toUpperCase();

const fieldsOf = (res: GraphQLResult) => ((topError(res).extensions?.details?.fields ?? []) as { field: string }[]).map((f) => f.field);

const GUEST = { firstName: 'Minji', lastName: 'Kim', email: 'Minji.Kim@Example.com', phone: '+82 10-1234-5678', country: 'kr' };

function oneRoom(rate: FoundRate, extra: Gql = {}): Gql {
  return {
    propertyId: rate.propertyId,
    roomtypeId: rate.roomtypeId,
    rateplanId: rate.rateplanId,
    checkIn: rate.checkin,
    checkOut: rate.checkout,
    adults: 2,
    guest: GUEST,
    ...extra,
  };
}

function rooms(rate: FoundRate, parties: Gql[]): Gql {
  const { adults: _adults, ...rest } = oneRoom(rate);
  return { ...rest, rooms: parties };
}

async function create(t: TestService, who: IssuedCredentials, input: Gql, headers: Record<string, string> = {}): Promise<Gql> {
  return dataOf(await gql(t, who, CREATE, { input }, headers)).createReservation;
}

async function reserved(t: TestService, who: IssuedCredentials, input: Gql): Promise<Gql> {
  const result = await create(t, who, input);
  expect(result.__typename, JSON.stringify(result)).toBe('CreateReservationSuccess');
  return result.reservation;
}

/** The REST reservation with the GraphQL names (its id as reservationId) and enum values. */
async function restReservation(t: TestService, who: IssuedCredentials, id: string): Promise<Gql> {
  const res = await v1(t, who).call('GET', `/reservations/${id}`);
  expect(res.status).toBe(200);
  const r = (await res.json()).data;
  const policy = (p: Gql) => ({ type: enumValue(p.type), freeCancellationBefore: p.free_cancellation_before });
  return {
    reservationId: r.id,
    confirmationNumber: r.confirmation_number,
    status: enumValue(r.status),
    propertyId: r.property_id,
    propertyName: r.property_name,
    checkIn: r.check_in,
    checkOut: r.check_out,
    adults: r.adults,
    children: r.children,
    guest: { firstName: r.guest.first_name, lastName: r.guest.last_name, email: r.guest.email, phone: r.guest.phone, country: r.guest.country },
    rooms: r.rooms.map((room: Gql) => ({
      bookingId: room.booking_id,
      status: enumValue(room.status),
      roomtypeId: room.roomtype_id,
      roomType: room.room_type,
      rateplanId: room.rateplan_id,
      ratePlan: room.rate_plan,
      checkIn: room.check_in,
      checkOut: room.check_out,
      roomCount: room.room_count,
      adults: room.adults,
      children: room.children,
      childrenAges: room.children_ages,
      guest: { firstName: room.guest.first_name, lastName: room.guest.last_name },
      hubBookingNumber: room.hub_booking_number,
      price: { total: room.price.total, currency: room.price.currency, requestTotal: room.price.request_total, requestCurrency: room.price.request_currency },
      cancellationPolicy: policy(room.cancellation_policy),
      cancellationFee: room.cancellation_fee,
      refundAmount: room.refund_amount,
      cancelledAt: room.cancelled_at,
    })),
    price: {
      total: r.price.total,
      currency: r.price.currency,
      requestTotal: r.price.request_total,
      requestCurrency: r.price.request_currency,
      cancellationFee: r.price.cancellation_fee,
      refundAmount: r.price.refund_amount,
    },
    cancellationPolicy: policy(r.cancellation_policy),
    specialRequests: r.special_requests,
    arrivalTime: r.arrival_time,
    channelBookingNumber: r.channel_booking_number,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

describe('Mutation.createReservation (production: the balance pays)', () => {
  let who: IssuedCredentials;
  beforeAll(async () => {
    who = await production.channel({ balance: START });
  });

  it('one room: the server price charged once through the ledger; the reservation is the one REST shows', async () => {
    const rate = await findRate(production, who, { from: 1, checkin: day(40), checkout: day(42) });
    const r = await reserved(production, who, oneRoom(rate, { specialRequests: 'High floor', arrivalTime: '18:30', channelBookingNumber: 'OTA-G1' }));
    expect(r).toMatchObject({
      status: 'CONFIRMED',
      propertyId: rate.propertyId,
      checkIn: rate.checkin,
      checkOut: rate.checkout,
      adults: 2,
      guest: { firstName: 'Minji', lastName: 'Kim', email: 'Minji.Kim@Example.com', country: 'KR' },
      price: { total: rate.amount, currency: 'KRW', cancellationFee: 0, refundAmount: 0 },
      cancellationPolicy: { type: enumValue(rate.policy) },
      specialRequests: 'High floor',
      arrivalTime: '18:30',
      channelBookingNumber: 'OTA-G1',
    });
    expect(r.rooms).toHaveLength(1);
    expect(r.rooms[0]).toMatchObject({ bookingId: r.reservationId, status: 'CONFIRMED', roomCount: 1, price: { total: rate.amount } });
    expect(await balanceOf(production, who.user_id)).toBe(START - BigInt(rate.amount));
    expect(await ledgerOf(production, r.reservationId)).toEqual([['booking_charge', -BigInt(rate.amount)]]);
    expect(await eventsOf(production, r.reservationId)).toEqual(['reservation.created', 'reservation.confirmed']);
    expect(await restReservation(production, who, r.reservationId)).toEqual(r);
    await checkInvariants(production, who.user_id);
  });

  it('several rooms: one booking and one charge per room, one confirmation number; the room guests as given', async () => {
    const rate = await findRate(production, who, { from: 5, checkin: day(41), checkout: day(43), minRooms: 3 });
    const before = await balanceOf(production, who.user_id);
    const r = await reserved(
      production,
      who,
      rooms(rate, [{ adults: 2 }, { adults: 1, childrenAges: [5], guest: { firstName: 'Jisoo', lastName: 'Park' } }, { adults: 1 }]),
    );
    expect(r.rooms.map((room: Gql) => [room.adults, room.children, room.childrenAges, room.guest])).toEqual([
      [2, 0, [], { firstName: 'Minji', lastName: 'Kim' }],
      [1, 1, [5], { firstName: 'Jisoo', lastName: 'Park' }],
      [1, 0, [], { firstName: null, lastName: null }],
    ]);
    expect(r).toMatchObject({ adults: 4, children: 1, price: { total: 3 * rate.amount } });
    for (const room of r.rooms) expect(await ledgerOf(production, room.bookingId)).toEqual([['booking_charge', -BigInt(rate.amount)]]);
    expect(await balanceOf(production, who.user_id)).toBe(before - 3n * BigInt(rate.amount));
    await checkInvariants(production, who.user_id);
  });

  it('with a bookToken: its offer at its price; used again it is the typed BookTokenError with the reservation', async () => {
    const offer = await v1(production, who).offer({ from: 20, checkin: day(46), checkout: day(48) });
    const before = await balanceOf(production, who.user_id);
    const r = await reserved(production, who, { bookToken: offer.bookToken, guest: GUEST });
    expect(r).toMatchObject({ propertyId: offer.propertyId, checkIn: offer.checkin, price: { total: offer.amount } });
    expect(await balanceOf(production, who.user_id)).toBe(before - BigInt(offer.amount));
    expect(await create(production, who, { bookToken: offer.bookToken, guest: GUEST })).toEqual({
      __typename: 'BookTokenError',
      code: 'BOOK_TOKEN_USED',
      message: expect.any(String),
      bookingId: r.reservationId,
    });
    expect(await balanceOf(production, who.user_id)).toBe(before - BigInt(offer.amount));
  });

  it('a balance short of the rooms is the typed InsufficientBalanceError; nothing is booked or charged', async () => {
    const poor = await production.channel({ balance: 1000n });
    const rate = await findRate(production, poor, { from: 30, checkin: day(52), checkout: day(53) });
    expect(await create(production, poor, oneRoom(rate))).toEqual({
      __typename: 'InsufficientBalanceError',
      code: 'INSUFFICIENT_BALANCE',
      message: expect.any(String),
      required: rate.amount,
      available: 1000,
    });
    expect(await bookingCount(production, poor.user_id, { excludeVoid: true })).toBe(0);
    expect(await balanceOf(production, poor.user_id)).toBe(1000n);
    expect(await production.service.deps.db.prisma.ledgerEntry.count({ where: { channelId: poor.user_id, kind: { not: 'opening_balance' } } })).toBe(0);
  });
});

describe('Mutation.createReservation: validation, outcomes, scope (sandbox)', () => {
  let who: IssuedCredentials;
  let rate: FoundRate;
  beforeAll(async () => {
    who = await sandbox.channel();
    rate = await findRate(sandbox, who, { from: 1, checkin: day(30), checkout: day(32) });
  });

  it.each([
    ['a bad e-mail', { guest: { ...GUEST, email: 'nope' } }, 'input.guest.email'],
    ['adults < 1', { adults: 0 }, 'input.adults'],
    ['more than 8 rooms', { adults: undefined, rooms: Array.from({ length: 9 }, () => ({ adults: 1 })) }, 'input.rooms'],
    ['special requests over 500 characters', { specialRequests: 'x'.repeat(501) }, 'input.specialRequests'],
    ['a bad arrival time', { arrivalTime: '25:00' }, 'input.arrivalTime'],
    // Found by the service, named as GraphQL names them.
    ['check-out before check-in', { checkIn: day(32), checkOut: day(30) }, 'input.checkOut'],
    ['adults with rooms', { rooms: [{ adults: 2 }] }, 'input.adults'],
    ['a guest for the first room', { adults: undefined, rooms: [{ adults: 2, guest: { firstName: 'X', lastName: 'Y' } }] }, 'input.rooms.0.guest'],
    ['a room without adults', { adults: undefined, rooms: [{ adults: 2 }, {}] }, 'input.rooms.1.adults'],
    ['offer fields with a bookToken', { bookToken: 'x' }, 'input.propertyId'],
    ['no rate plan', { rateplanId: undefined }, 'input.rateplanId'],
  ])('a top-level VALIDATION_ERROR for %s, naming the GraphQL field; nothing is booked', async (_name, change, field) => {
    const input: Gql = { ...oneRoom(rate), ...change };
    for (const key of Object.keys(input)) if (input[key] === undefined) delete input[key];
    const res = await gql(sandbox, who, CREATE, { input });
    expect(topError(res).extensions?.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(res)).toContain(field);
    expect(await bookingCount(sandbox, who.user_id, { excludeVoid: true })).toBe(0);
  });

  it('sold out and a provider failure: the typed SoldOutError and a top-level UPSTREAM_ERROR; an unknown property NOT_FOUND', async () => {
    expect(await create(sandbox, who, oneRoom(rate), { 'x-test-scenario': 'sold_out' })).toEqual({
      __typename: 'SoldOutError',
      code: 'SOLD_OUT',
      message: expect.any(String),
    });
    expect(topError(await gql(sandbox, who, CREATE, { input: oneRoom(rate) }, { 'x-test-scenario': 'upstream_error' })).extensions?.code).toBe('UPSTREAM_ERROR');
    expect(topError(await gql(sandbox, who, CREATE, { input: oneRoom(rate, { propertyId: 999_999 }) })).extensions?.code).toBe('NOT_FOUND');
    expect(await bookingCount(sandbox, who.user_id, { excludeVoid: true })).toBe(0);
  });

  it('INSUFFICIENT_SCOPE without reservations:write, UNAUTHORIZED without a credential; nothing is booked', async () => {
    const reader = await sandbox.channel({ scopes: ['search:availability', 'reservations:read'] });
    const res = await gql(sandbox, reader, CREATE, { input: oneRoom(rate) });
    expect(topError(res).extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'reservations:write' } });
    expect(await bookingCount(sandbox, reader.user_id, { excludeVoid: true })).toBe(0);
    const anonymous = await sandbox.graphql(CREATE, { input: oneRoom(rate) });
    expect(topError(anonymous).extensions?.code).toBe('UNAUTHORIZED');
  });
});

describe('Query.reservation and Query.reservations', () => {
  let who: IssuedCredentials;
  let stranger: IssuedCredentials;
  let single: Gql;
  let multi: Gql;

  beforeAll(async () => {
    [who, stranger] = await Promise.all([sandbox.channel(), sandbox.channel()]);
    const early = await findRate(sandbox, who, { from: 1, checkin: day(20), checkout: day(22), minRooms: 2 });
    const late = await findRate(sandbox, who, { from: 1, checkin: day(60), checkout: day(61) });
    single = await reserved(sandbox, who, oneRoom(late, { guest: { ...GUEST, email: 'Lee_Ha@Example.com' } }));
    multi = await reserved(sandbox, who, { ...rooms(early, [{ adults: 2 }, { adults: 2 }]), guest: { ...GUEST, email: 'minji@example.com' } });
    await reserved(sandbox, stranger, oneRoom(late, { guest: { ...GUEST, email: 'minji@example.com' } }));
  });

  it('by id, or by the booking id of any room: the reservation as created', async () => {
    expect(dataOf(await gql(sandbox, who, GET, { id: multi.reservationId })).reservation).toEqual(multi);
    expect(dataOf(await gql(sandbox, who, GET, { id: multi.rooms[1].bookingId })).reservation.reservationId).toBe(multi.reservationId);
  });

  it("null for another channel's reservation, an unknown or malformed id", async () => {
    expect(dataOf(await gql(sandbox, stranger, GET, { id: multi.reservationId })).reservation).toBeNull();
    expect(dataOf(await gql(sandbox, who, GET, { id: crypto.randomUUID() })).reservation).toBeNull();
    expect(dataOf(await gql(sandbox, who, GET, { id: 'not-a-uuid' })).reservation).toBeNull();
    expect(topError(await gql(sandbox, who, GET, { id: 'x'.repeat(65) })).extensions?.code).toBe('VALIDATION_ERROR');
  });

  const ids = async (variables: Gql, as = who) => reservationIds(await gql(sandbox, as, LIST, variables));

  it("lists the channel's reservations, newest first, paged; filters combine; never another channel's", async () => {
    expect(await ids({})).toEqual([multi.reservationId, single.reservationId]);
    const first = dataOf(await gql(sandbox, who, LIST, { first: 1 })).reservations;
    expect(first).toEqual({
      edges: [{ node: { reservationId: multi.reservationId, confirmationNumber: multi.confirmationNumber } }],
      pageInfo: { hasNextPage: true, hasPreviousPage: false, endCursor: expect.any(String) },
      totalCount: 2,
    });
    const page = dataOf(await gql(sandbox, who, LIST, { first: 1, after: first.pageInfo.endCursor })).reservations;
    expect(page).toEqual({
      edges: [{ node: { reservationId: single.reservationId, confirmationNumber: single.confirmationNumber } }],
      pageInfo: { hasNextPage: false, hasPreviousPage: true, endCursor: expect.any(String) },
      totalCount: 2,
    });
    expect(await ids({ filter: { confirmationNumber: multi.confirmationNumber.toLowerCase() } })).toEqual([multi.reservationId]);
    expect(await ids({ filter: { guestEmail: 'MINJI@EXAMPLE.COM' } })).toEqual([multi.reservationId]);
    expect(await ids({ filter: { guestEmail: 'leexha@example.com' } })).toEqual([]);
    expect(await ids({ filter: { checkInFrom: day(20), checkInTo: day(20) } })).toEqual([multi.reservationId]);
    expect(await ids({ filter: { guestEmail: 'minji@example.com', checkInFrom: day(30) } })).toEqual([]);
    expect(await ids({ filter: { guestEmail: 'minji@example.com' } }, stranger)).not.toContain(multi.reservationId);
  });

  it.each([
    [{ filter: { guestEmail: 'nope' } }, 'filter.guestEmail'],
    [{ filter: { checkInFrom: day(10), checkInTo: day(5) } }, 'filter.checkInTo'],
    [{ filter: { confirmationNumber: 'AB-CD' } }, 'filter.confirmationNumber'],
    [{ first: 101 }, 'first'],
    [{ after: 'not-a-cursor' }, 'after'],
  ])('a top-level VALIDATION_ERROR for %j', async (variables, field) => {
    const res = await gql(sandbox, who, LIST, variables);
    expect(topError(res).extensions?.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(res)).toContain(field);
  });

  it('a malformed check-in date is refused as the variables are read, naming filter.checkInFrom', async () => {
    expectBadDateVariable(await gql(sandbox, who, LIST, { filter: { checkInFrom: '2026-13-01' } }), 'filter.checkInFrom');
  });

  it('INSUFFICIENT_SCOPE without reservations:read', async () => {
    const writer = await sandbox.channel({ scopes: ['reservations:write'] });
    for (const [query, variables] of [[LIST, {}], [GET, { id: multi.reservationId }]] as const) {
      expect(topError(await gql(sandbox, writer, query, variables)).extensions).toMatchObject({
        code: 'INSUFFICIENT_SCOPE',
        details: { required_scope: 'reservations:read' },
      });
    }
  });

  it('costs its page: first reservations, and up to 10 rooms each (documentCost, and extensions.rateLimit.cost)', async () => {
    const query = 'query($n: Int) { reservations(first: $n) { edges { node { reservationId rooms { bookingId } } } } }';
    expect(documentCost(parse(query), { n: 100 })).toBe(11);
    expect(documentCost(parse(query), {})).toBe(3);
    const res = await sandbox.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...apiKey(who) },
      body: JSON.stringify({ query, variables: { n: 100 } }),
    });
    expect((await res.json()).extensions?.rateLimit?.cost).toBe(11);
  });
});

describe('Mutation.updateReservation', () => {
  let who: IssuedCredentials;
  let rate: FoundRate;
  beforeAll(async () => {
    who = await sandbox.channel();
    // Rooms for every reservation of this block (two rooms, then one each in two more tests): bookings consume the stock.
    rate = await findRate(sandbox, who, { from: 8, checkin: day(3), checkout: day(5), minRooms: 4 });
  });

  it('changes the guest, special requests and arrival time on every room, as REST; reservation.modified per room', async () => {
    const r = await reserved(sandbox, who, rooms(rate, [{ adults: 2 }, { adults: 1, guest: { firstName: 'Jisoo', lastName: 'Park' } }]));
    const result = dataOf(
      await gql(sandbox, who, UPDATE, {
        id: r.reservationId,
        input: { guest: { firstName: 'Minjae', email: 'new@example.com', phone: null }, specialRequests: 'Late checkout', arrivalTime: '23:15' },
      }),
    ).updateReservation;
    expect(result.__typename).toBe('UpdateReservationSuccess');
    expect(result.reservation).toMatchObject({
      guest: { firstName: 'Minjae', lastName: 'Kim', email: 'new@example.com', phone: null, country: 'KR' },
      specialRequests: 'Late checkout',
      arrivalTime: '23:15',
    });
    expect(result.reservation.rooms.map((room: Gql) => room.guest.firstName)).toEqual(['Minjae', 'Jisoo']);
    expect(await restReservation(sandbox, who, r.reservationId)).toEqual(result.reservation);
    for (const room of r.rooms) {
      expect(await eventsOf(sandbox, room.bookingId)).toEqual(['reservation.created', 'reservation.confirmed', 'reservation.modified']);
    }
    await checkInvariants(sandbox, who.user_id);
  });

  it.each([
    [{}, 'input'],
    [{ guest: {} }, 'input.guest'],
    [{ guest: { email: 'nope' } }, 'input.guest.email'],
    [{ guest: { email: null } }, 'input.guest.email'],
    [{ arrivalTime: '7pm' }, 'input.arrivalTime'],
  ])('a top-level VALIDATION_ERROR for %j; nothing changes', async (input, field) => {
    const r = (await ids(who))[0]!;
    const res = await gql(sandbox, who, UPDATE, { id: r, input });
    expect(topError(res).extensions?.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(res)).toContain(field);
  });

  it('a cancelled reservation is the typed BookingNotModifiableError; nothing changes', async () => {
    const r = await reserved(sandbox, who, oneRoom(rate));
    expect(dataOf(await gql(sandbox, who, CANCEL, { id: r.reservationId })).cancelReservation.__typename).toBe('CancelReservationSuccess');
    const result = dataOf(await gql(sandbox, who, UPDATE, { id: r.reservationId, input: { specialRequests: 'x' } })).updateReservation;
    expect(result).toMatchObject({ __typename: 'BookingNotModifiableError', code: 'BOOKING_NOT_MODIFIABLE', status: 'CANCELLED' });
    expect(await eventsOf(sandbox, r.reservationId)).not.toContain('reservation.modified');
  });

  it("another channel's reservation is a top-level NOT_FOUND; INSUFFICIENT_SCOPE without reservations:write; nothing changes", async () => {
    const r = await reserved(sandbox, who, oneRoom(rate));
    const stranger = await sandbox.channel();
    expect(topError(await gql(sandbox, stranger, UPDATE, { id: r.reservationId, input: { specialRequests: 'mine now' } })).extensions?.code).toBe('NOT_FOUND');
    const reader = await sandbox.channel({ scopes: ['reservations:read'] });
    expect(topError(await gql(sandbox, reader, UPDATE, { id: r.reservationId, input: { specialRequests: 'x' } })).extensions).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      details: { required_scope: 'reservations:write' },
    });
    expect(dataOf(await gql(sandbox, who, GET, { id: r.reservationId })).reservation).toEqual(r);
  });

  async function ids(as: IssuedCredentials): Promise<string[]> {
    return reservationIds(await gql(sandbox, as, LIST, {}));
  }
});

describe('Mutation.cancelReservation (production: refunds through the ledger)', () => {
  let who: IssuedCredentials;
  beforeAll(async () => {
    who = await production.channel({ balance: START });
  });

  async function threeRooms(from: number, policy?: string) {
    const rate = await findRate(production, who, { from, checkin: day(60), checkout: day(62), minRooms: 3, policy });
    return { rate, r: await reserved(production, who, rooms(rate, [{ adults: 2 }, { adults: 2 }, { adults: 1 }])) };
  }

  it('partial, then the rest: each room refunded once by its policy, balance and ledger exact; again is BookingAlreadyCancelledError', async () => {
    const { rate, r } = await threeRooms(1, 'flexible');
    const [first, second, third] = r.rooms.map((room: Gql) => room.bookingId as string);
    const before = await balanceOf(production, who.user_id);

    const partial = dataOf(await gql(production, who, CANCEL, { id: r.reservationId, roomIds: [second] })).cancelReservation;
    expect(partial.__typename).toBe('CancelReservationSuccess');
    expect(partial.cancellation).toMatchObject({
      reservationId: r.reservationId,
      confirmationNumber: r.confirmationNumber,
      status: 'CONFIRMED',
      cancellationFee: 0,
      refundAmount: rate.amount,
      currency: 'KRW',
      cancelledRooms: [{ bookingId: second, status: 'CANCELLED', cancellationFee: 0, refundAmount: rate.amount }],
    });
    expect(partial.cancellation.reservation.rooms.map((room: Gql) => room.status)).toEqual(['CONFIRMED', 'CANCELLED', 'CONFIRMED']);
    expect(await balanceOf(production, who.user_id)).toBe(before + BigInt(rate.amount));
    expect(await ledgerOf(production, second)).toEqual([['booking_charge', -BigInt(rate.amount)], ['booking_refund', BigInt(rate.amount)]]);
    expect(await ledgerOf(production, first)).toEqual([['booking_charge', -BigInt(rate.amount)]]);
    expect(await eventsOf(production, second)).toEqual(['reservation.created', 'reservation.confirmed', 'reservation.cancelled']);

    // Naming a cancelled room again refuses the request: nothing else is cancelled.
    const named = dataOf(await gql(production, who, CANCEL, { id: r.reservationId, roomIds: [third, second] })).cancelReservation;
    expect(named).toMatchObject({ __typename: 'BookingAlreadyCancelledError', code: 'BOOKING_ALREADY_CANCELLED', bookingId: second, status: 'CANCELLED' });
    expect(await ledgerOf(production, third)).toEqual([['booking_charge', -BigInt(rate.amount)]]);

    const rest = dataOf(await gql(production, who, CANCEL, { id: r.reservationId })).cancelReservation;
    expect(rest.cancellation.cancelledRooms.map((c: Gql) => c.bookingId)).toEqual([first, third]);
    expect(rest.cancellation).toMatchObject({ status: 'CANCELLED', refundAmount: 2 * rate.amount, reservation: { status: 'CANCELLED', price: { refundAmount: 3 * rate.amount } } });
    expect(await balanceOf(production, who.user_id)).toBe(before + 3n * BigInt(rate.amount));
    for (const id of [first, second, third]) {
      expect(await ledgerOf(production, id)).toEqual([['booking_charge', -BigInt(rate.amount)], ['booking_refund', BigInt(rate.amount)]]);
    }

    const again = dataOf(await gql(production, who, CANCEL, { id: r.reservationId })).cancelReservation;
    expect(again).toEqual({ __typename: 'BookingAlreadyCancelledError', code: 'BOOKING_ALREADY_CANCELLED', message: expect.any(String), bookingId: r.reservationId, status: 'CANCELLED' });
    expect(await balanceOf(production, who.user_id)).toBe(before + 3n * BigInt(rate.amount));
    expect(await restReservation(production, who, r.reservationId)).toEqual(rest.cancellation.reservation);
    await checkInvariants(production, who.user_id);
  });

  it('a non-refundable room keeps its whole price: no refund entry, the balance unchanged', async () => {
    const rate = await findRate(production, who, { from: 20, checkin: day(63), checkout: day(64), policy: 'non_refundable' });
    const r = await reserved(production, who, oneRoom(rate));
    const before = await balanceOf(production, who.user_id);
    const result = dataOf(await gql(production, who, CANCEL, { id: r.reservationId })).cancelReservation;
    expect(result.cancellation).toMatchObject({ cancellationFee: rate.amount, refundAmount: 0, status: 'CANCELLED' });
    expect(await balanceOf(production, who.user_id)).toBe(before);
    expect(await ledgerOf(production, r.reservationId)).toEqual([['booking_charge', -BigInt(rate.amount)]]);
    await checkInvariants(production, who.user_id);
  });

  it('a room id of no room of it is a top-level VALIDATION_ERROR naming roomIds; nothing is cancelled', async () => {
    const { r } = await threeRooms(40);
    const res = await gql(production, who, CANCEL, { id: r.reservationId, roomIds: [crypto.randomUUID(), r.rooms[0].bookingId, r.rooms[0].bookingId] });
    expect(topError(res).extensions?.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(res)).toEqual(['roomIds.0', 'roomIds.2']);
    expect(topError(await gql(production, who, CANCEL, { id: r.reservationId, roomIds: [] })).extensions?.code).toBe('VALIDATION_ERROR');
    expect(dataOf(await gql(production, who, GET, { id: r.reservationId })).reservation.status).toBe('CONFIRMED');
  });

  it("another channel's reservation is a top-level NOT_FOUND, whole or a room; INSUFFICIENT_SCOPE without reservations:write; no money moves", async () => {
    const { r } = await threeRooms(50);
    const before = await balanceOf(production, who.user_id);
    const stranger = await production.channel({ balance: START });
    expect(topError(await gql(production, stranger, CANCEL, { id: r.reservationId })).extensions?.code).toBe('NOT_FOUND');
    expect(topError(await gql(production, stranger, CANCEL, { id: r.reservationId, roomIds: [r.rooms[1].bookingId] })).extensions?.code).toBe('NOT_FOUND');
    const reader = await production.channel({ scopes: ['reservations:read'] });
    expect(topError(await gql(production, reader, CANCEL, { id: r.reservationId })).extensions).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      details: { required_scope: 'reservations:write' },
    });
    expect(dataOf(await gql(production, who, GET, { id: r.reservationId })).reservation).toEqual(r);
    expect(await balanceOf(production, who.user_id)).toBe(before);
    expect(await balanceOf(production, stranger.user_id)).toBe(START);
    await checkInvariants(production, who.user_id);
  });
});
