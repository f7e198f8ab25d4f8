import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day, v1 } from '../helpers/flow.js';
import { dataOf, edgesNodes, gql, topError, type Gql } from '../helpers/graphql.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * Relay connections (issue 17): a Relay-style client pages every list with first/after (and the
 * lists the database holds back with last/before), each page continuing where the cursor says,
 * without repeats or gaps, and unmoved by rows added before it.
 */

let t: TestService;
let owner: IssuedCredentials;
/** The owner's booking ids, newest first (as REST lists them). */
let bookingIds: string[] = [];
let webhookIds: string[] = [];

beforeAll(async () => {
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
  owner = await t.channel({ name: 'Connections' });
  const flow = v1(t, owner);
  for (let i = 0; i < 7; i++) {
    const offer = await flow.offer({ from: 1 + i * 5, checkin: day(30 + i), checkout: day(32 + i) });
    const booked = await flow.book({ book_token: offer.bookToken, booker_name: `Guest ${i}`, guests_adult: 2 });
    expect(booked.status).toBe(201);
  }
  const listed = await t.request('/channel/v1/bookings?per_page=100', { headers: apiKey(owner) });
  bookingIds = (await listed.json()).data.map((b: Gql) => b.id);
  expect(bookingIds).toHaveLength(7);
  for (let i = 0; i < 5; i++) {
    const made = dataOf(await gql(t, owner, `mutation { createWebhook(input: { url: "https://hooks.example.com/${i}" }) { webhook { webhookId } } }`));
    webhookIds.push(made.createWebhook.webhook.webhookId);
  }
  const now = Date.now();
  await t.service.deps.db.prisma.webhookDelivery.createMany({
    data: Array.from({ length: 6 }, (_, d) => ({
      id: randomUUID(),
      endpointId: webhookIds[0]!,
      channelId: owner.user_id,
      type: 'reservation.created',
      body: '{}',
      status: d % 2 ? 'delivered' : 'failed',
      nextAttemptAt: new Date(now),
      createdAt: new Date(now + d * 1000),
    })),
  });
}, 180_000);

afterAll(async () => t?.close());

interface Page {
  ids: (string | number)[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  cursors: string[];
  totalCount?: number;
}

/** Pages through `field` forward `size` at a time, collecting the value of `idField` of each node. */
async function pageForward(doc: (args: string) => string, pick: (data: Gql) => Gql[string], idField: string, size: number): Promise<Page[]> {
  const pages: Page[] = [];
  let after: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const data = dataOf(await gql(t, owner, doc(`first: ${size}${after ? `, after: ${JSON.stringify(after)}` : ''}`)));
    const connection = pick(data);
    pages.push({ ids: edgesNodes(connection).map((n: Gql) => n[idField]), pageInfo: connection.pageInfo, cursors: connection.edges.map((e: Gql) => e.cursor), totalCount: connection.totalCount });
    if (!connection.pageInfo.hasNextPage) return pages;
    after = connection.pageInfo.endCursor;
  }
  throw new Error('no last page');
}

async function pageBackward(doc: (args: string) => string, pick: (data: Gql) => Gql[string], idField: string, size: number): Promise<(string | number)[]> {
  const seen: (string | number)[] = [];
  let before: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const data = dataOf(await gql(t, owner, doc(`last: ${size}${before ? `, before: ${JSON.stringify(before)}` : ''}`)));
    const connection = pick(data);
    seen.unshift(...edgesNodes(connection).map((n: Gql) => n[idField]));
    if (!connection.pageInfo.hasPreviousPage) return seen;
    before = connection.pageInfo.startCursor;
  }
  throw new Error('no first page');
}

const PAGE_INFO = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';
const bookingsDoc = (args: string) => `{ bookings(${args}) { totalCount ${PAGE_INFO} edges { cursor node { bookingId } } } }`;

describe('bookings', () => {
  it('pages forward newest first, every booking once, endCursor the last edge’s cursor, totalCount the whole list', async () => {
    const pages = await pageForward(bookingsDoc, (d) => d.bookings, 'bookingId', 3);
    expect(pages.map((p) => p.ids.length)).toEqual([3, 3, 1]);
    expect(pages.flatMap((p) => p.ids)).toEqual(bookingIds);
    for (const page of pages) {
      expect(page.totalCount).toBe(7);
      expect(page.pageInfo.endCursor).toBe(page.cursors.at(-1));
      expect(page.pageInfo.startCursor).toBe(page.cursors[0]);
    }
    expect(pages.map((p) => [p.pageInfo.hasPreviousPage, p.pageInfo.hasNextPage])).toEqual([
      [false, true],
      [true, true],
      [true, false],
    ]);
  });

  it('pages backward with last/before to the same list', async () => {
    expect(await pageBackward(bookingsDoc, (d) => d.bookings, 'bookingId', 2)).toEqual(bookingIds);
  });

  it('after an edge’s cursor continues right after that edge', async () => {
    const all = dataOf(await gql(t, owner, bookingsDoc('first: 7'))).bookings;
    const cursor = all.edges[2].cursor;
    const next = dataOf(await gql(t, owner, `query($a: String) { bookings(first: 2, after: $a) { edges { node { bookingId } } } }`, { a: cursor })).bookings;
    expect(edgesNodes(next).map((n: Gql) => n.bookingId)).toEqual(bookingIds.slice(3, 5));
  });

  it('a new booking does not shift the next page: the cursor is a place in the list, not an offset', async () => {
    const first = dataOf(await gql(t, owner, bookingsDoc('first: 3'))).bookings;
    const flow = v1(t, owner);
    const offer = await flow.offer({ from: 40, checkin: day(50), checkout: day(52) });
    const booked = await flow.book({ book_token: offer.bookToken, booker_name: 'Late Guest', guests_adult: 2 });
    expect(booked.status).toBe(201);
    const newest = (await booked.json()).data.id;
    const next = dataOf(await gql(t, owner, `query($a: String) { bookings(first: 3, after: $a) { totalCount edges { node { bookingId } } } }`, { a: first.pageInfo.endCursor })).bookings;
    expect(edgesNodes(next).map((n: Gql) => n.bookingId)).toEqual(bookingIds.slice(3, 6));
    expect(next.totalCount).toBe(8);
    const top = dataOf(await gql(t, owner, bookingsDoc('first: 1'))).bookings;
    expect(edgesNodes(top)[0]!.bookingId).toBe(newest);
    bookingIds = [newest, ...bookingIds];
  });

  it('filters apply to the pages and to totalCount', async () => {
    const from = day(33);
    const res = dataOf(await gql(t, owner, `query($f: Date) { bookings(first: 2, filter: { checkinFrom: $f }) { totalCount edges { node { checkin } } pageInfo { hasNextPage } } }`, { f: from })).bookings;
    const expected = (await (await t.request(`/channel/v1/bookings?checkin_from=${from}&per_page=100`, { headers: apiKey(owner) })).json()).pagination.total;
    expect(res.totalCount).toBe(expected);
    expect(edgesNodes(res).every((b: Gql) => b.checkin >= from)).toBe(true);
    expect(res.pageInfo.hasNextPage).toBe(expected > 2);
  });

  it('refuses a cursor of another list, a cursor that is not one, and page sizes out of 0 to 100, naming the argument', async () => {
    const webhooks = dataOf(await gql(t, owner, '{ webhooks(first: 1) { pageInfo { endCursor } } }')).webhooks;
    const cases: [string, Record<string, unknown>, string][] = [
      ['query($a: String) { bookings(after: $a) { totalCount } }', { a: webhooks.pageInfo.endCursor }, 'after'],
      ['query($a: String) { bookings(before: $a) { totalCount } }', { a: 'bm90IGEgY3Vyc29y' }, 'before'],
      ['{ bookings(first: 101) { totalCount } }', {}, 'first'],
      ['{ bookings(last: -1) { totalCount } }', {}, 'last'],
    ];
    for (const [query, variables, field] of cases) {
      const error = topError(await gql(t, owner, query, variables));
      expect({ query, code: error.extensions?.code, fields: (error.extensions?.details?.fields as { field: string }[]).map((f) => f.field) }).toEqual({
        query,
        code: 'VALIDATION_ERROR',
        fields: [field],
      });
    }
  });

  it('a forged cursor of the right list (an id of 36 dashes, a day that does not exist, year 0) is VALIDATION_ERROR on every keyset list, not a server error', async () => {
    const forged = (list: string, at: string, id: string) => Buffer.from(`${list}:${at}:${id}`).toString('base64url');
    const webhook = JSON.stringify(webhookIds[0]);
    const lists = {
      bookings: 'query($a: String) { bookings(after: $a) { totalCount edges { node { bookingId } } } }',
      reservations: 'query($a: String) { reservations(after: $a) { totalCount edges { node { reservationId } } } }',
      webhooks: 'query($a: String) { webhooks(after: $a) { totalCount edges { node { webhookId } } } }',
      deliveries: `query($a: String) { webhook(id: ${webhook}) { deliveries(after: $a) { totalCount edges { node { deliveryId } } } } }`,
    };
    for (const [list, query] of Object.entries(lists)) {
      for (const cursor of [
        forged(list, '2026-12-01T00:00:00.000Z', '-'.repeat(36)),
        forged(list, '2026-02-30T00:00:00.000Z', '00000000-0000-4000-8000-000000000000'),
        forged(list, '0000-01-01T00:00:00.000Z', '00000000-0000-4000-8000-000000000000'),
      ]) {
        const res = await gql(t, owner, query, { a: cursor });
        expect({ list, cursor, errors: res.errors?.map((e) => e.extensions) }).toEqual({
          list,
          cursor,
          errors: [{ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'after', reason: 'not a cursor of this list' }] } }],
        });
      }
    }
  });

  it('first: 0 answers no edges and says whether there are any; an empty page has no cursors but the one it was asked from', async () => {
    const res = dataOf(await gql(t, owner, bookingsDoc('first: 0'))).bookings;
    expect(res.edges).toEqual([]);
    expect(res.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false, startCursor: null, endCursor: null });
    // An empty page asked from a cursor keeps that cursor, to ask again later.
    const last = dataOf(await gql(t, owner, bookingsDoc(`first: 100`))).bookings.pageInfo.endCursor;
    const after = dataOf(await gql(t, owner, bookingsDoc(`first: 5, after: ${JSON.stringify(last)}`))).bookings;
    expect(after.edges).toEqual([]);
    expect(after.pageInfo).toMatchObject({ hasNextPage: false, startCursor: last, endCursor: last });
  });

  it('Channel.bookings is the same connection', async () => {
    const root = dataOf(await gql(t, owner, bookingsDoc('first: 4'))).bookings;
    const channel = dataOf(await gql(t, owner, `{ channel { bookings(first: 4) { totalCount ${PAGE_INFO} edges { cursor node { bookingId } } } } }`)).channel.bookings;
    expect(channel).toEqual(root);
  });
});

describe('reservations', () => {
  const doc = (args: string) => `{ reservations(${args}) { totalCount ${PAGE_INFO} edges { cursor node { reservationId } } } }`;

  it('page forward and backward through the REST list, newest first', async () => {
    const rest = (await (await t.request('/channel/v1/reservations?per_page=100', { headers: apiKey(owner) })).json()).data.map((r: Gql) => r.id);
    const pages = await pageForward(doc, (d) => d.reservations, 'reservationId', 3);
    expect(pages.flatMap((p) => p.ids)).toEqual(rest);
    expect(pages[0]!.totalCount).toBe(rest.length);
    expect(await pageBackward(doc, (d) => d.reservations, 'reservationId', 3)).toEqual(rest);
  });
});

describe('webhooks and a webhook’s deliveries', () => {
  it('webhooks page oldest first, both ways', async () => {
    const doc = (args: string) => `{ webhooks(${args}) { totalCount ${PAGE_INFO} edges { cursor node { webhookId } } } }`;
    const pages = await pageForward(doc, (d) => d.webhooks, 'webhookId', 2);
    expect(pages.flatMap((p) => p.ids)).toEqual(webhookIds);
    expect(pages[0]!.totalCount).toBe(5);
    expect(await pageBackward(doc, (d) => d.webhooks, 'webhookId', 2)).toEqual(webhookIds);
  });

  it('deliveries page newest first, both ways, filtered by status with its count', async () => {
    const rest = (await (await t.request(`/channel/v1/webhooks/${webhookIds[0]}/deliveries?per_page=100`, { headers: apiKey(owner) })).json()).data.map(
      (d: Gql) => d.id,
    );
    expect(rest).toHaveLength(6);
    const doc = (args: string) =>
      `{ webhook(id: ${JSON.stringify(webhookIds[0])}) { deliveries(${args}) { totalCount ${PAGE_INFO} edges { cursor node { deliveryId } } } } }`;
    const pages = await pageForward(doc, (d) => d.webhook.deliveries, 'deliveryId', 4);
    expect(pages.flatMap((p) => p.ids)).toEqual(rest);
    expect(await pageBackward(doc, (d) => d.webhook.deliveries, 'deliveryId', 4)).toEqual(rest);

    const failed = dataOf(await gql(t, owner, `{ webhook(id: ${JSON.stringify(webhookIds[0])}) { deliveries(status: FAILED, first: 10) { totalCount edges { node { status } } } } }`)).webhook.deliveries;
    expect(failed.totalCount).toBe(3);
    expect(edgesNodes(failed).map((d: Gql) => d.status)).toEqual(['FAILED', 'FAILED', 'FAILED']);
  });
});

describe('properties (the catalog, forward)', () => {
  const doc = (args: string) => `{ properties(${args}) { ${PAGE_INFO} edges { cursor node { propertyId } } } }`;

  it('pages the catalog in id order without repeats or gaps, and after any edge’s cursor continues after that property', async () => {
    const pages = await pageForward(doc, (d) => d.properties, 'propertyId', 60);
    const ids = pages.flatMap((p) => p.ids);
    expect(ids.length).toBeGreaterThan(100);
    expect(ids).toEqual([...ids].sort((a, b) => Number(a) - Number(b)));
    expect(new Set(ids).size).toBe(ids.length);
    expect(pages.at(-1)!.pageInfo.hasNextPage).toBe(false);
    // From the fourth edge of the second page: the properties after it.
    const second = dataOf(await gql(t, owner, doc(`first: 7, after: ${JSON.stringify(pages[0]!.pageInfo.endCursor)}`))).properties;
    const from = second.edges[3];
    const next = dataOf(await gql(t, owner, doc(`first: 5, after: ${JSON.stringify(from.cursor)}`))).properties;
    const index = ids.indexOf(from.node.propertyId);
    expect(edgesNodes(next).map((p: Gql) => p.propertyId)).toEqual(ids.slice(index + 1, index + 6));
  });

  it('refuses a cursor that is not one of the catalog’s', async () => {
    const error = topError(await gql(t, owner, doc('first: 2, after: "eyJ4Ijp0cnVlfQ"')));
    expect(error.extensions).toEqual({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'after', reason: 'not a cursor of this list' }] } });
  });

  it('with ids: the properties of those ids in the order given, paged', async () => {
    const res = dataOf(await gql(t, owner, `{ properties(ids: [9, 3, 999999, 5], first: 2) { ${PAGE_INFO} edges { node { propertyId } } } }`)).properties;
    expect(edgesNodes(res).map((p: Gql) => p.propertyId)).toEqual([9, 3]);
    const rest = dataOf(await gql(t, owner, `{ properties(ids: [9, 3, 999999, 5], first: 2, after: ${JSON.stringify(res.pageInfo.endCursor)}) { ${PAGE_INFO} edges { node { propertyId } } } }`)).properties;
    expect(edgesNodes(rest).map((p: Gql) => p.propertyId)).toEqual([5]);
    expect(rest.pageInfo.hasNextPage).toBe(false);
  });
});

describe('availability (a search’s results, forward)', () => {
  it('pages the search in the order REST gives it, with its context and count', async () => {
    const checkin = day(60);
    const checkout = day(62);
    const restPage = async (page: number) =>
      (await (await t.request(`/channel/v1/search/availability?checkin=${checkin}&checkout=${checkout}&adults=2&sort_by=price_asc&per_page=10&page=${page}`, { headers: apiKey(owner) })).json()) as Gql;
    const first = await restPage(1);
    const second = await restPage(2);
    const doc = (args: string) =>
      `{ availability(input: { checkin: "${checkin}", checkout: "${checkout}", adults: 2, sortBy: PRICE_ASC }, ${args}) { totalCount searchContext { checkin checkout nights sortBy } ${PAGE_INFO} edges { node { propertyId lowestNightlyPrice } } } }`;
    const one = dataOf(await gql(t, owner, doc('first: 10'))).availability;
    const two = dataOf(await gql(t, owner, doc(`first: 10, after: ${JSON.stringify(one.pageInfo.endCursor)}`))).availability;
    expect(edgesNodes(one).map((i: Gql) => i.propertyId)).toEqual(first.data.map((i: Gql) => i.property_id));
    expect(edgesNodes(two).map((i: Gql) => i.propertyId)).toEqual(second.data.map((i: Gql) => i.property_id));
    expect(one.totalCount).toBe(first.pagination.total);
    expect(one.searchContext).toEqual({ checkin, checkout, nights: 2, sortBy: 'PRICE_ASC' });
    expect(one.pageInfo.hasNextPage).toBe(first.pagination.has_next);
  });
});
