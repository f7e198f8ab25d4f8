import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { PAGE_TOKEN_TTL_SECONDS } from '../../src/services/catalog/index.js';
import { countCalls } from '../helpers/counters.js';
import { day, v1 } from '../helpers/flow.js';
import { dataOf, edgesNodes, gql, topError, type Gql } from '../helpers/graphql.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * GraphQL's catalog cursors (`properties(first, after)`) are signed tokens bound to the channel
 * they were issued to: a forged, altered, foreign or expired cursor is a VALIDATION_ERROR naming
 * `after`, and the provider is not asked anything for it. Genuine cursors page the catalog as
 * before, and a cursor from the middle of a page reads a bounded number of properties.
 */

let t: TestService;
let owner: IssuedCredentials;
let stranger: IssuedCredentials;
let offsetMs = 0;

beforeAll(async () => {
  t = await startTestService({}, { clock: () => new Date(Date.now() + offsetMs) });
  [owner, stranger] = await Promise.all([t.channel({ name: 'Cursor Owner' }), t.channel({ name: 'Cursor Stranger' })]);
}, 120_000);
afterAll(async () => t?.close());

const doc = 'query($first: Int, $after: String, $since: DateTime) { properties(first: $first, after: $after, updatedSince: $since) { pageInfo { hasNextPage endCursor } edges { cursor node { propertyId } } } }';

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The catalog page of `who` for the variables, with the provider's list calls it made. */
async function page(who: IssuedCredentials, variables: Record<string, unknown>) {
  const counter = countCalls(t, ['listProperties']);
  const res = await gql(t, who, doc, variables);
  return { res, listCalls: counter.stop().provider.listProperties! };
}

/** The error of a refused page: VALIDATION_ERROR naming `field`, no data, no provider call. */
async function expectRefused(who: IssuedCredentials, variables: Record<string, unknown>, field: string, reason: string | RegExp) {
  const { res, listCalls } = await page(who, variables);
  // A field error: HTTP 200 as GraphQL over HTTP has it, the error in the documented envelope.
  expect(res.status).toBe(200);
  const error = topError(res);
  expect(error.extensions?.code).toBe('VALIDATION_ERROR');
  expect((error.extensions?.details as Gql).fields).toEqual([{ field, reason: expect.stringMatching(reason) }]);
  expect(res.data?.properties ?? null).toBeNull();
  expect(listCalls).toBe(0);
}

describe('forged and foreign cursors', () => {
  it('a hand-made cursor asking to skip 999 or 1,000 properties, or naming a provider cursor, is refused before the provider is asked', async () => {
    for (const forged of [{ c: null, s: 999 }, { c: null, s: 1000 }, { c: 'OTk5', s: 0 }, { c: null, s: 0 }]) {
      await expectRefused(owner, { first: 1, after: base64url(forged) }, 'after', 'not a cursor of this list');
    }
  });

  it('a genuine cursor with its claims altered is refused', async () => {
    const { res } = await page(owner, { first: 2 });
    const [header, payload, signature] = (dataOf(res).properties.pageInfo.endCursor as string).split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const altered = `${header}.${base64url({ ...claims, s: 99 })}.${signature}`;
    await expectRefused(owner, { first: 1, after: altered }, 'after', 'not a cursor of this list');
  });

  it("another channel's cursor is refused for the channel that did not get it", async () => {
    const { res } = await page(owner, { first: 3 });
    const cursor = dataOf(res).properties.pageInfo.endCursor;
    await expectRefused(stranger, { first: 3, after: cursor }, 'after', 'issued to another channel');
    // The owner still pages with it.
    const { res: next } = await page(owner, { first: 3, after: cursor });
    expect(edgesNodes(dataOf(next).properties).map((p: Gql) => p.propertyId)).toEqual([4, 5, 6]);
  });

  it('a v2 page token is not a catalog cursor, and a cursor expires after a day', async () => {
    const v2 = await (await t.request('/api/channel/v2/properties?per_page=2', { headers: apiKey(owner) })).json();
    expect(v2.next_page_token).toEqual(expect.any(String));
    await expectRefused(owner, { first: 2, after: v2.next_page_token }, 'after', 'not a cursor of this list');
    const { res } = await page(owner, { first: 2 });
    const cursor = dataOf(res).properties.pageInfo.endCursor;
    offsetMs = (PAGE_TOKEN_TTL_SECONDS + 60) * 1000;
    try {
      await expectRefused(owner, { first: 2, after: cursor }, 'after', /^expired/);
    } finally {
      offsetMs = 0;
    }
  });

  it('a cursor issued under one updatedSince is refused with another', async () => {
    const since = '2000-01-01T00:00:00.000Z';
    const { res } = await page(owner, { first: 2, since });
    const cursor = dataOf(res).properties.pageInfo.endCursor;
    await expectRefused(owner, { first: 2, after: cursor, since: '2001-01-01T00:00:00.000Z' }, 'updatedSince', 'differs from the one the cursor was issued under');
    // Omitted, the cursor's filter applies; repeated, the same.
    for (const variables of [{ first: 2, after: cursor }, { first: 2, after: cursor, since }]) {
      expect(edgesNodes(dataOf((await page(owner, variables)).res).properties).map((p: Gql) => p.propertyId)).toEqual([3, 4]);
    }
  });
});

describe('genuine paging', () => {
  it('pages the whole catalog by endCursor, one provider call a page, without repeats or gaps', async () => {
    const ids: number[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const { res, listCalls } = await page(owner, { first: 90, after });
      const connection = dataOf(res).properties;
      expect(listCalls).toBe(1);
      ids.push(...edgesNodes(connection).map((p: Gql) => p.propertyId));
      after = connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null;
      pages++;
    } while (after !== null && pages < 20);
    expect(ids).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
  });

  it('from an edge in the middle of a page, the next page reads at most 100 more properties than it returns, in at most two calls', async () => {
    const upstream = t.service.deps.upstream;
    const limits: number[] = [];
    const original = upstream.listProperties.bind(upstream);
    const spy = vi.spyOn(upstream, 'listProperties').mockImplementation((query, options) => {
      limits.push(query.limit);
      return original(query, options);
    });
    try {
      // Each request continues from the second-to-last edge of the one before: without a bound,
      // the skipped part would grow by 99 properties a request.
      let after: string | undefined;
      let expected = 1;
      for (let round = 0; round < 5; round++) {
        limits.length = 0;
        const connection = dataOf(await gql(t, owner, doc, { first: 100, after })).properties;
        const got = edgesNodes(connection).map((p: Gql) => p.propertyId);
        expect(got).toEqual(Array.from({ length: 100 }, (_, i) => expected + i));
        expect(limits.length).toBeLessThanOrEqual(2);
        expect(limits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(200);
        after = connection.edges.at(-2).cursor;
        expected += 99;
      }
    } finally {
      spy.mockRestore();
    }
  });
});

describe('keyset cursors of the lists the database holds', () => {
  it("another channel's bookings cursor pages only the caller's own list", async () => {
    const flow = v1(t, owner);
    for (let i = 0; i < 2; i++) {
      const offer = await flow.offer({ from: 1 + i * 5, checkin: day(30 + i), checkout: day(32 + i) });
      expect((await flow.book({ book_token: offer.bookToken, booker_name: `Guest ${i}`, guests_adult: 2 })).status).toBe(201);
    }
    const bookings = 'query($a: String) { bookings(first: 1, after: $a) { totalCount pageInfo { endCursor } edges { node { bookingId } } } }';
    const mine = dataOf(await gql(t, owner, bookings)).bookings;
    expect(mine.totalCount).toBe(2);
    const theirs = dataOf(await gql(t, stranger, bookings, { a: mine.pageInfo.endCursor })).bookings;
    expect(theirs).toEqual({ totalCount: 0, pageInfo: { endCursor: mine.pageInfo.endCursor }, edges: [] });
  }, 60_000);
});
