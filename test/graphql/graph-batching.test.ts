import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toBookingRecord } from '../../src/services/bookings/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { countCalls, type Counts } from '../helpers/counters.js';
import { day, v1 } from '../helpers/flow.js';
import { dataOf, edgesNodes, gql, type Gql } from '../helpers/graphql.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Batching of the graph's edges (issue 17): an edge that reaches the provider or the database
 * goes through a DataLoader, so a page of 5 and a page of 50 cost the same number of provider
 * calls and database statements. Counted at the provider client and at the database driver.
 */

let t: TestService;
let owner: IssuedCredentials;
const PAGE = 50;

beforeAll(async () => {
  // The outbox dispatcher is off (EVENTS_POLL_INTERVAL_MS=0): its polls would be counted with the requests.
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
  owner = await t.channel({ name: 'Batching' });
  // One booking made through the flow, then copies of it on 50 different properties (each its
  // own reservation), written straight to the database: what is counted is reading them.
  const flow = v1(t, owner);
  const offer = await flow.offer({ checkin: day(30), checkout: day(32) });
  const booked = await flow.book({ book_token: offer.bookToken, booker_name: 'Batch Guest', guests_adult: 2 });
  expect(booked.status).toBe(201);
  const prisma = t.service.deps.db.prisma;
  const template = await prisma.booking.findUniqueOrThrow({ where: { id: (await booked.json()).data.id } });
  const base = template.createdAt.getTime();
  await prisma.booking.createMany({
    data: Array.from({ length: PAGE - 1 }, (_, i) => {
      const id = randomUUID();
      return {
        ...template,
        id,
        itineraryId: id,
        confirmationNumber: `BATCH${String(i).padStart(6, '0')}`,
        bookTokenJti: null,
        propertyId: i + 2,
        occupancy: template.occupancy ?? [],
        createdAt: new Date(base - (i + 1) * 1000),
        updatedAt: new Date(base - (i + 1) * 1000),
      };
    }),
  });
  // An event for each copy, so every booking has a history.
  const copies = await prisma.booking.findMany({ where: { channelId: owner.user_id } });
  await prisma.outboxEvent.createMany({
    data: copies.map((b) => ({
      id: randomUUID(),
      channelId: b.channelId,
      bookingId: b.id,
      type: 'reservation.modified',
      payload: toBookingRecord(b) as never,
      occurredAt: new Date(),
      publishedAt: new Date(),
    })),
  });
}, 120_000);

afterAll(async () => t?.close());

/**
 * The counts of running `query` with `variables`, after emptying the content cache (so the
 * provider is asked). A first run, not counted, has the credential found and cached, as it is for
 * a partner's every request but the first.
 */
async function costOf(query: string, variables: Record<string, unknown>): Promise<{ counts: Counts; data: Gql }> {
  dataOf(await gql(t, owner, query, variables));
  t.service.deps.catalog.clear();
  const counter = countCalls(t);
  const res = await gql(t, owner, query, variables);
  const counts = counter.stop();
  return { counts, data: dataOf(res) };
}

const BOOKINGS_WITH_PROPERTIES = `query($first: Int!) {
  bookings(first: $first) { edges { node { bookingId property { name roomTypes { name } } } } }
}`;

describe('the bookings of a page with their properties and room types', () => {
  it('make at most one provider content call and the same database statements for 5 and for 50 bookings', async () => {
    const small = await costOf(BOOKINGS_WITH_PROPERTIES, { first: 5 });
    const large = await costOf(BOOKINGS_WITH_PROPERTIES, { first: PAGE });

    expect(edgesNodes(small.data.bookings)).toHaveLength(5);
    expect(edgesNodes(large.data.bookings)).toHaveLength(PAGE);
    // Every booking got its own property, with its room types.
    const properties = edgesNodes(large.data.bookings).map((b: Gql) => b.property);
    expect(properties.every((p: Gql) => typeof p.name === 'string' && p.roomTypes.length > 0)).toBe(true);
    expect(new Set(properties.map((p: Gql) => p.name)).size).toBeGreaterThan(10);

    for (const { counts } of [small, large]) {
      expect(counts.provider.getProperties).toBe(1);
      expect(counts.provider.getProperty).toBe(0);
      expect(counts.provider.listProperties).toBe(0);
    }
    expect(large.counts.database).toBe(small.counts.database);
    // The page itself, and whatever else a request reads: a handful, not one per booking.
    expect(large.counts.database).toBeGreaterThanOrEqual(1);
    expect(large.counts.database).toBeLessThanOrEqual(6);
  });

  it('a second request answers the properties from the content cache: no provider call', async () => {
    await gql(t, owner, BOOKINGS_WITH_PROPERTIES, { first: 10 });
    const counter = countCalls(t);
    dataOf(await gql(t, owner, BOOKINGS_WITH_PROPERTIES, { first: 10 }));
    expect(counter.stop().provider.getProperties).toBe(0);
  });
});

describe('the other edges of a page of bookings', () => {
  const EDGES = `query($first: Int!) {
    bookings(first: $first) {
      totalCount
      edges { node {
        bookingId
        cancellationPolicy
        cancellationDeadline
        reservation { reservationId confirmationNumber bookings { bookingId } }
        cancellationQuote { cancellationFee refundAmount }
        cancellationTerms { type freeCancellationBefore }
        events { type booking { bookingId } }
      } }
    }
  }`;

  it('reservations, quotes, terms and events cost the same database statements for 5 and for 50 bookings, and no provider call', async () => {
    const small = await costOf(EDGES, { first: 5 });
    const large = await costOf(EDGES, { first: PAGE });
    expect(large.counts.database).toBe(small.counts.database);
    // The page, the count, the reservations and the events: one statement each.
    expect(large.counts.database).toBeGreaterThanOrEqual(4);
    expect(large.counts.database).toBeLessThanOrEqual(8);
    expect(Object.values(large.counts.provider).every((n) => n === 0)).toBe(true);

    const nodes = edgesNodes(large.data.bookings);
    expect(large.data.bookings.totalCount).toBe(PAGE);
    for (const b of nodes) {
      expect(b.reservation.reservationId).toBe(b.bookingId);
      expect(b.reservation.bookings).toEqual([{ bookingId: b.bookingId }]);
      expect(b.events.length).toBeGreaterThan(0);
      expect(b.cancellationTerms).toEqual({ type: b.cancellationPolicy, freeCancellationBefore: b.cancellationDeadline });
      expect(b.cancellationQuote.refundAmount + b.cancellationQuote.cancellationFee).toBeGreaterThan(0);
    }
  });
});

describe('the delivery logs of the channel’s webhooks', () => {
  const WEBHOOKS = `query($first: Int!) {
    webhooks(first: $first) { edges { node { webhookId deliveries(first: 3) { totalCount edges { node { deliveryId status } } } } } }
  }`;

  it('are read together: the same statements for 2 webhooks and for 20, each with its own last deliveries', async () => {
    const prisma = t.service.deps.db.prisma;
    const now = Date.now();
    for (let w = 0; w < 20; w++) {
      const id = randomUUID();
      await prisma.webhookEndpoint.create({
        data: { id, channelId: owner.user_id, url: `https://hooks.example.com/${w}`, events: ['reservation.created'], secret: 'whsec_x', createdAt: new Date(now + w), updatedAt: new Date(now + w) },
      });
      await prisma.webhookDelivery.createMany({
        data: Array.from({ length: 5 }, (_, d) => ({
          id: randomUUID(),
          endpointId: id,
          channelId: owner.user_id,
          type: 'reservation.created',
          body: '{}',
          status: 'delivered',
          nextAttemptAt: new Date(now),
          createdAt: new Date(now + d * 10),
        })),
      });
    }
    const few = await costOf(WEBHOOKS, { first: 2 });
    const many = await costOf(WEBHOOKS, { first: 20 });
    expect(edgesNodes(many.data.webhooks)).toHaveLength(20);
    expect(many.counts.database).toBe(few.counts.database);
    // The webhooks, the windows of their logs, those deliveries, their counts.
    expect(many.counts.database).toBeGreaterThanOrEqual(4);
    for (const webhook of edgesNodes(many.data.webhooks)) {
      expect(webhook.deliveries.totalCount).toBe(5);
      expect(edgesNodes(webhook.deliveries)).toHaveLength(3);
    }
    // Each webhook's own deliveries, newest first.
    const first = edgesNodes(many.data.webhooks)[0]!;
    const own = await prisma.webhookDelivery.findMany({ where: { endpointId: first.webhookId }, orderBy: { createdAt: 'desc' }, take: 3 });
    expect(edgesNodes(first.deliveries).map((d: Gql) => d.deliveryId)).toEqual(own.map((d) => d.id));
  });
});

describe('the availability of a page of properties', () => {
  it('is one provider availability call whatever the number of properties', async () => {
    const query = `query($first: Int!, $stay: StayInput!) {
      properties(first: $first) { edges { node { propertyId availability(stay: $stay) { roomTypes { rates { priceCheckToken } } } } } }
    }`;
    const stay = { checkin: day(30), checkout: day(32), adults: 2 };
    const few = await costOf(query, { first: 3, stay });
    const many = await costOf(query, { first: 30, stay });
    for (const { counts } of [few, many]) {
      expect(counts.provider.availabilityBatch).toBe(1);
      expect(counts.provider.availability).toBe(0);
    }
    const priced = edgesNodes(many.data.properties).filter((p: Gql) => p.availability.roomTypes.some((r: Gql) => r.rates.some((rate: Gql) => rate.priceCheckToken)));
    expect(priced.length).toBeGreaterThan(10);
  });
});
