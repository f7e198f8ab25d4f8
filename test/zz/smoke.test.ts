import { afterAll, beforeAll, expect, it } from 'vitest';
import { v1 } from '../helpers/flow.js';
import { gql } from '../helpers/graphql.js';
import { startTestService, type TestService } from '../helpers/service.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';

let t: TestService;
let who: IssuedCredentials;
beforeAll(async () => {
  t = await startTestService();
  who = await t.channel({ name: 'Smoke' });
  const flow = v1(t, who);
  for (let i = 0; i < 3; i++) {
    const offer = await flow.offer({ from: 1 + i * 3 });
    const res = await flow.book({ book_token: offer.bookToken, booker_name: 'Smoke Guest', guests_adult: 2 });
    expect(res.status).toBe(201);
  }
}, 120_000);
afterAll(async () => t?.close());

it('dashboard', async () => {
  const res = await gql(t, who, `{
    channel { name tier app { appId status } 
      bookings(first: 20) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id bookingId status checkin
        property { id propertyId name roomTypes { id name ratePlans { id name } } }
        reservation { id reservationId bookings { bookingId } }
        cancellationQuote { cancellationFee refundAmount final }
        cancellationTerms { type freeCancellationBefore }
        events { id type occurredAt booking { bookingId status } }
      } } }
      webhooks(first: 5) { totalCount edges { node { id webhookId deliveries(first: 3) { totalCount edges { node { id deliveryId status } } } } } }
    }
  }`);
  console.log(JSON.stringify(res, null, 1).slice(0, 4000));
  expect(res.errors).toBeUndefined();
  const b = (res.data as any).channel.bookings.edges[0].node;
  const n = await gql(t, who, `query($ids: [ID!]!) { nodes(ids: $ids) { id __typename ... on Booking { bookingId } ... on Property { name } ... on Reservation { reservationId } ... on RoomType { name } ... on RatePlan { name } } }`,
    { ids: [b.id, b.property.id, b.reservation.id, b.property.roomTypes[0].id, b.property.roomTypes[0].ratePlans[0].id, 'garbage', 'Qm9va2luZzpub3Q='] });
  console.log(JSON.stringify(n));
  expect(n.errors).toBeUndefined();
  const page2 = await gql(t, who, `query($a: String) { bookings(first: 1, after: $a) { edges { node { bookingId } } pageInfo { hasNextPage hasPreviousPage endCursor } } }`, { a: (res.data as any).channel.bookings.edges[0].cursor });
  console.log(JSON.stringify(page2));
  const back = await gql(t, who, `query($b: String) { bookings(last: 1, before: $b) { edges { node { bookingId } } pageInfo { hasNextPage hasPreviousPage } } }`, { b: (res.data as any).channel.bookings.edges[2].cursor });
  console.log(JSON.stringify(back));
  const props = await gql(t, who, `{ properties(first: 3) { pageInfo { endCursor hasNextPage } edges { cursor node { propertyId availability(stay: {checkin: "2027-03-10", checkout: "2027-03-12", adults: 2}) { roomTypes { name rates { priceCheckToken } } } } } } }`);
  console.log(JSON.stringify(props).slice(0, 1500));
  const avail = await gql(t, who, `{ availability(input: {checkin: "2027-03-10", checkout: "2027-03-12", adults: 2}, first: 3) { totalCount searchContext { checkin nights } edges { cursor node { propertyId property { name } } } } }`);
  console.log(JSON.stringify(avail).slice(0, 1500));
}, 60_000);
it('ratePlans by roomtype', async () => {
  const p = (await gql(t, who, '{ property(id: "7") { roomTypes { id roomtypeId } } }')).data as any;
  const rt = p.property.roomTypes[1];
  for (const id of [rt.id, rt.roomtypeId, 'nope']) {
    const r = await gql(t, who, 'query($r: ID) { property(id: "7") { ratePlans(roomtypeId: $r) { roomtypeId } } }', { r: id });
    console.log(JSON.stringify(r));
  }
  const other = (await gql(t, who, '{ property(id: "8") { roomTypes { id } } }')).data as any;
  console.log(JSON.stringify(await gql(t, who, 'query($r: ID) { property(id: "7") { ratePlans(roomtypeId: $r) { roomtypeId } } }', { r: other.property.roomTypes[0].id })));
});
