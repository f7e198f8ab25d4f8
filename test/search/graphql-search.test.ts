import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { textIn } from '../../src/services/kernel/index.js';
import { Dataset } from '../../src/simulator/dataset.js';
import { day } from '../helpers/flow.js';
import { edgesNodes, gql } from '../helpers/graphql.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
let creds: IssuedCredentials;
let contentOnly: IssuedCredentials;
const data = new Dataset(42, 500);
const CHECKIN = day(40);
const CHECKOUT = day(42);

/** A service value as a GraphQL enum value: `room_only` -> ROOM_ONLY. */
const screaming = (value: string) => value.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase();

beforeAll(async () => {
  t = await startTestService();
  creds = await t.channel();
  contentOnly = await t.channel({ scopes: ['properties:read'] });
});
afterAll(() => t.close());

describe('Query.property and Query.properties', () => {
  it('returns a property with its room types and rate plans', async () => {
    const res = await gql(t, creds, `{ property(id: 3) { propertyId name city starRating timezone updatedAt roomTypes { roomtypeId maxOccupancy bedGroups { id description } ratePlans { rateplanId mealPlan cancellationPolicy refundable } } } }`);
    expect(res.errors).toBeUndefined();
    const p = data.property(3)!;
    expect(res.data!.property).toEqual({
      propertyId: 3,
      name: p.name,
      city: p.city,
      starRating: p.starRating,
      timezone: p.timezone,
      updatedAt: p.updatedAt.toISOString(),
      roomTypes: p.roomTypes.map((r) => ({
        roomtypeId: r.id,
        maxOccupancy: r.maxOccupancy,
        // Served in ko-KR when the operation names no language.
        bedGroups: r.bedGroups.map((b) => ({ id: b.id, description: textIn(b.description, 'ko-KR') })),
        ratePlans: r.ratePlans.map((rp) => ({
          rateplanId: rp.id,
          mealPlan: screaming(rp.mealPlan),
          cancellationPolicy: screaming(rp.cancellationPolicy),
          refundable: rp.refundable,
        })),
      })),
    });
  });

  it('gives null for an unknown property and a validation error for a bad id', async () => {
    expect((await gql(t, creds, '{ property(id: 9999) { propertyId } }')).data).toEqual({ property: null });
    // The id is an ID now (a propertyId or a global id): -1 names no property, and an empty id is no id at all.
    expect((await gql(t, creds, '{ property(id: -1) { propertyId } }')).data).toEqual({ property: null });
    const bad = await gql(t, creds, '{ property(id: "") { propertyId } }');
    expect(bad.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
  });

  it('50 properties with their room types are one batched provider call, none per property', async () => {
    t.service.deps.catalog.clear();
    const ids = Array.from({ length: 50 }, (_, i) => i + 200);
    const before = t.service.deps.upstream.calls;
    const res = await gql(
      t,
      creds,
      'query($ids: [Int!]) { properties(ids: $ids, first: 50) { edges { node { propertyId name roomTypes { roomtypeId ratePlans { rateplanId } } } } } }',
      { ids },
    );
    expect(res.errors).toBeUndefined();
    const nodes = edgesNodes(res.data!.properties as { edges: { node: { propertyId: number; roomTypes: unknown[] } }[] });
    expect(nodes.map((n) => n.propertyId)).toEqual(ids);
    expect(nodes.every((n) => n.roomTypes.length > 0)).toBe(true);
    expect(t.service.deps.upstream.calls - before).toBe(1);

    // The same properties asked one field at a time, aliased, in one query: still one call.
    t.service.deps.catalog.clear();
    const aliased = ids.slice(0, 15).map((id) => `p${id}: property(id: ${id}) { propertyId roomTypes { roomtypeId } }`).join('\n');
    const before2 = t.service.deps.upstream.calls;
    const res2 = await gql(t, creds, `{ ${aliased} }`);
    expect(res2.errors).toBeUndefined();
    expect(Object.keys(res2.data!)).toHaveLength(15);
    expect(t.service.deps.upstream.calls - before2).toBe(1);
  });

  it('pages through the catalog with a cursor and updatedSince', async () => {
    const first = await gql(t, creds, '{ properties(first: 2) { edges { node { propertyId } } pageInfo { endCursor hasNextPage } } }');
    type Page = { edges: { node: { propertyId: number } }[]; pageInfo: { endCursor: string; hasNextPage: boolean } };
    const page = first.data!.properties as Page;
    expect(edgesNodes(page).map((n) => n.propertyId)).toEqual([1, 2]);
    expect(page.pageInfo.hasNextPage).toBe(true);
    const second = await gql(t, creds, 'query($after: String) { properties(first: 2, after: $after) { edges { node { propertyId } } } }', {
      after: page.pageInfo.endCursor,
    });
    expect(edgesNodes(second.data!.properties as Page).map((n) => n.propertyId)).toEqual([3, 4]);
    const since = await gql(t, creds, '{ properties(first: 100, updatedSince: "2026-10-01T00:00:00Z") { edges { node { updatedAt } } } }');
    const times = edgesNodes(since.data!.properties as { edges: { node: { updatedAt: string } }[] }).map((n) => n.updatedAt);
    expect(times.length).toBeGreaterThan(0);
    expect(times.every((u) => u > '2026-10-01T00:00:00Z')).toBe(true);
  });

  it('rejects a cursor it did not issue with VALIDATION_ERROR naming after', async () => {
    const res = await gql(t, creds, '{ properties(first: 2, after: "zzz") { edges { node { propertyId } } } }');
    expect(res.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    expect((res.errors?.[0]?.extensions?.details as any).fields[0].field).toBe('after');
  });

  it('rejects first above 100 and more than 100 ids', async () => {
    expect((await gql(t, creds, '{ properties(first: 101) { edges { node { propertyId } } } }')).errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    const ids = Array.from({ length: 101 }, (_, i) => i + 1);
    expect((await gql(t, creds, 'query($ids: [Int!]) { properties(ids: $ids) { edges { node { propertyId } } } }', { ids })).errors?.[0]?.extensions?.code).toBe(
      'VALIDATION_ERROR',
    );
  });

  it('room types need roomtypes:read, like their REST twin', async () => {
    const res = await gql(t, contentOnly, '{ property(id: 3) { propertyId roomTypes { roomtypeId } } }');
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'roomtypes:read' } });
    expect((await gql(t, contentOnly, '{ property(id: 3) { propertyId name } }')).errors).toBeUndefined();
  });
});

describe('availability, propertyAvailability and rates', () => {
  it('availability agrees with GET /search/availability', async () => {
    const res = await gql(
      t,
      creds,
      `query($input: AvailabilitySearchInput!, $first: Int) { availability(input: $input, first: $first) {
        edges { node { propertyId name lowestNightlyPrice lowestTotalPrice currency available } }
        searchContext { checkin nights rooms occupancy { adults childrenAges } currency sortBy }
        totalCount pageInfo { hasNextPage hasPreviousPage } } }`,
      { input: { checkin: CHECKIN, checkout: CHECKOUT, occupancy: ['2', '1-4'], sortBy: 'PRICE_ASC', currency: 'USD' }, first: 10 },
    );
    expect(res.errors).toBeUndefined();
    const result = res.data!.availability as any;
    const rest = await (
      await t.request(`/channel/v1/search/availability?checkin=${CHECKIN}&checkout=${CHECKOUT}&occupancy=2&occupancy=1-4&sort_by=price_asc&per_page=10&currency=USD`, { headers: apiKey(creds) })
    ).json();
    expect(edgesNodes(result).map((i: any) => [i.propertyId, i.lowestTotalPrice, i.lowestNightlyPrice])).toEqual(
      rest.data.map((i: any) => [i.property_id, i.lowest_total_price, i.lowest_nightly_price]),
    );
    expect(result.searchContext).toEqual({
      checkin: CHECKIN, nights: 2, rooms: 2, occupancy: [{ adults: 2, childrenAges: [] }, { adults: 1, childrenAges: [4] }], currency: 'USD', sortBy: 'PRICE_ASC',
    });
    // The first page of 10 (REST: page 1 of per_page 10), of as many properties as REST counts.
    expect(result.edges).toHaveLength(Math.min(10, rest.pagination.total));
    expect(result.pageInfo).toEqual({ hasNextPage: rest.pagination.has_next, hasPreviousPage: false });
    expect(result.totalCount).toBe(rest.pagination.total);
  });

  it('validates with the same rules and names GraphQL fields', async () => {
    // The page size is the field's `first` now (the input has no perPage); a check-in that is a calendar day its rules
    // refuse (in the past) is the field's VALIDATION_ERROR, one that is no calendar day is refused below.
    const cases: [Record<string, unknown>, string][] = [
      [{ input: { checkin: CHECKIN, checkout: CHECKIN, adults: 1 } }, 'input.checkout'],
      [{ input: { checkin: CHECKIN, checkout: CHECKOUT, adults: 1, occupancy: ['1'] } }, 'input.adults'],
      [{ input: { checkin: CHECKIN, checkout: CHECKOUT, occupancy: ['1-30'] } }, 'input.occupancy.0'],
      [{ input: { checkin: CHECKIN, checkout: CHECKOUT, adults: 1 }, first: 101 }, 'first'],
      [{ input: { checkin: day(-3), checkout: CHECKOUT, adults: 1 } }, 'input.checkin'],
    ];
    const query = 'query($input: AvailabilitySearchInput!, $first: Int) { availability(input: $input, first: $first) { edges { node { propertyId } } } }';
    for (const [variables, field] of cases) {
      const res = await gql(t, creds, query, variables);
      expect(res.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
      expect((res.errors?.[0]?.extensions?.details as any).fields.map((f: any) => f.field)).toContain(field);
    }
    // A check-in that is no calendar day is a Date the variables cannot hold: refused whole, naming the variable's field.
    const malformed = await gql(t, creds, query, { input: { checkin: '2026/12/01', checkout: CHECKOUT, adults: 1 } });
    expect(malformed.status).toBe(400);
    expect(malformed.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(malformed.errors?.[0]?.message).toContain('"$input"');
    expect(malformed.errors?.[0]?.message).toContain('at "input.checkin"');
  });

  it('propertyAvailability issues tokens; rates gives nightly lines', async () => {
    const res = await gql(
      t,
      creds,
      `query($a: PropertyAvailabilityInput!, $r: RatesInput!) {
        propertyAvailability(input: $a) { property { propertyId name } nights roomTypes { roomtypeId rates { rateplanId availableRooms priceCheckToken expiresAt pricing { inclusiveAmount billableInclusiveAmount requestCurrency } cancellationPolicy { type freeCancellationBefore } } } }
        rates(input: $r) { checkin nights roomTypes { rates { nightly { date baseRate taxAndServiceFee } priceCheckToken } } } }`,
      { a: { propertyId: 21, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 }, r: { propertyId: 21, checkin: CHECKIN, checkout: CHECKOUT } },
    );
    expect(res.errors).toBeUndefined();
    const offers = res.data!.propertyAvailability as any;
    expect(offers.property).toEqual({ propertyId: 21, name: data.property(21)!.name });
    const rates = offers.roomTypes.flatMap((r: any) => r.rates);
    for (const rate of rates) expect(rate.priceCheckToken === null).toBe(rate.availableRooms < 1);
    const detailed = res.data!.rates as any;
    expect(detailed.nights).toBe(2);
    expect(detailed.roomTypes[0].rates[0].nightly).toHaveLength(2);
    expect(detailed.roomTypes[0].rates[0].priceCheckToken).toBeNull();
  });

  it('needs search:availability and reports provider failures as UPSTREAM_ERROR', async () => {
    const q = `{ rates(input: { propertyId: 1 }) { nights } }`;
    expect((await gql(t, contentOnly, q)).errors?.[0]?.extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'search:availability' } });
    const failed = await t.graphql(q, undefined, { ...apiKey(creds), 'x-test-scenario': 'upstream_error' });
    expect(failed.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
  });
});
