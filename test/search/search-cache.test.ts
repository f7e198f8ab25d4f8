import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { offerClaims } from '../../src/services/access/index.js';
import { UpstreamError } from '../../src/services/kernel/index.js';
import { AvailabilityCache } from '../../src/services/search/index.js';
import type { UpstreamClient } from '../../src/upstream/client.js';
import type { AvailabilityRequest, AvailabilityResponse } from '../../src/upstream/protocol.js';
import { countCalls } from '../helpers/counters.js';
import { day } from '../helpers/flow.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * The provider's answers to multi-property searches are kept a few seconds and shared
 * (SEARCH_CACHE_TTL_MS; docs/decisions.md "Search"): pinned by counting provider calls. What a
 * partner reads does not change; price checks, and the searches that issue price-check tokens,
 * always ask the provider.
 */

/** The services' clock: real time shifted by offsetMs. */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

let t: TestService;
/** The same service without the cache: every search asks the provider, as before it existed. */
let plain: TestService;
let creds: IssuedCredentials;
let plainCreds: IssuedCredentials;

const STAY = `checkin=${day(40)}&checkout=${day(42)}`;

beforeAll(async () => {
  [t, plain] = await Promise.all([startTestService({}, { clock }), startTestService({ SEARCH_CACHE_TTL_MS: '0' })]);
  [creds, plainCreds] = await Promise.all([t.channel(), plain.channel()]);
});
afterAll(async () => {
  await Promise.all([t?.close(), plain?.close()]);
});

function get(path: string, headers: Record<string, string> = {}, service = t, who = creds) {
  return service.request(`/channel/v1${path}`, { headers: { ...apiKey(who), ...headers } });
}

/** A body without what differs from request to request (the envelope's request id and time). */
async function bodyOf(res: Response): Promise<string> {
  return (await res.text()).replace(/"meta":\{"request_id":"[^"]*","timestamp":"[^"]*"\}/, '"meta":{}');
}

/** Provider availability calls made while `fn` runs, and what it returned. */
async function counted<T>(fn: () => Promise<T>, service = t): Promise<{ calls: number; value: T }> {
  const counter = countCalls(service, ['availability', 'availabilityBatch', 'priceCheck']);
  try {
    const value = await fn();
    const { provider } = counter.stop();
    return { calls: provider.availability! + provider.availabilityBatch!, value };
  } catch (error) {
    counter.stop();
    throw error;
  }
}

const GQL_SEARCH = `query($i: AvailabilitySearchInput!, $first: Int, $after: String) {
  availability(input: $i, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor }
    edges { cursor node { propertyId name city starRating lowestNightlyPrice lowestTotalPrice currency available } }
  }
}`;

describe('the multi-property search keeps the provider answer', () => {
  it('answers every sort, page, currency and price filter of one search from one provider call, byte for byte as without the cache', async () => {
    const paths = [
      `/search/availability?${STAY}&adults=2`,
      `/search/availability?${STAY}&adults=2&sort_by=price_asc&per_page=50&page=3`,
      `/search/availability?${STAY}&adults=2&sort_by=price_desc&currency=USD`,
      `/search/availability?${STAY}&adults=2&sort_by=star_rating&currency=JPY&page=7`,
      `/search/availability?${STAY}&adults=2&price_min=80000&price_max=150000&sort_by=price_asc&per_page=100`,
      `/search/availability?${STAY}&adults=2&price_min=100000&per_page=10&page=4`,
      `/search/availability?${STAY}&adults=2&price_max=300&currency=EUR&sort_by=star_rating`,
      `/search/availability?${STAY}&adults=2&price_min=9999999999`,
      `/search/availability?${STAY}&adults=2&page=99`,
    ];
    const { calls, value: bodies } = await counted(async () => {
      const out: string[] = [];
      for (const path of paths) {
        const res = await get(path);
        expect(res.status).toBe(200);
        out.push(await bodyOf(res));
      }
      return out;
    });
    expect(calls).toBe(1);

    const { calls: plainCalls, value: plainBodies } = await counted(
      () => Promise.all(paths.map(async (path) => bodyOf(await get(path, {}, plain, plainCreds)))),
      plain,
    );
    expect(plainCalls).toBe(paths.length);
    expect(bodies).toEqual(plainBodies);
  });

  it('GraphQL `availability` reads the same kept answer as REST, its pages as without the cache', async () => {
    const input = { checkin: day(40), checkout: day(42), adults: 2, sortBy: 'PRICE_ASC', priceMin: 60000 };
    const pages = async (service: TestService, who: IssuedCredentials) => {
      const out: unknown[] = [];
      let after: string | null = null;
      for (let i = 0; i < 3; i++) {
        const res = await service.graphql(GQL_SEARCH, { i: input, first: 30, after }, apiKey(who));
        expect(res.errors).toBeUndefined();
        out.push(res.data);
        after = (res.data as { availability: { pageInfo: { endCursor: string } } }).availability.pageInfo.endCursor;
      }
      return out;
    };
    // The REST search of the test before asked the provider this already.
    const { calls, value: cached } = await counted(() => pages(t, creds));
    expect(calls).toBe(0);
    expect(cached).toEqual(await pages(plain, plainCreds));
  });

  it('asks again for another stay, party or filter sent to the provider; not for the same property ids in another order', async () => {
    const base = `/search/availability?checkin=${day(70)}&checkout=${day(72)}`;
    const searches = [
      `${base}&adults=2`,
      `${base}&adults=1`,
      `${base}&adults=2&children=1`,
      `${base}&occupancy=2-5`,
      `${base}&occupancy=2&occupancy=1`,
      `${base}&occupancy=1&occupancy=2`,
      `/search/availability?checkin=${day(70)}&checkout=${day(73)}&adults=2`,
      `/search/availability?checkin=${day(71)}&checkout=${day(72)}&adults=2`,
      `${base}&adults=2&city=Seoul`,
      `${base}&adults=2&city=Busan`,
      `${base}&adults=2&star_rating_min=4`,
      `${base}&adults=2&star_rating_min=4.5`,
      `${base}&adults=2&city=Seoul&star_rating_min=4`,
      `${base}&adults=2&property_id=1,2,3`,
      `${base}&adults=2&property_id=1,2`,
    ];
    const { calls } = await counted(async () => {
      for (const path of searches) expect((await get(path)).status).toBe(200);
    });
    expect(calls).toBe(searches.length);

    // The same provider requests again, with what stays on our side changed: no call.
    const again = await counted(async () => {
      for (const path of [
        `${base}&adults=2&property_id=3,1,2`,
        `${base}&adults=2&property_id=2&property_id=3,1,1`,
        `${base}&adults=2&city=Seoul&sort_by=price_desc&currency=USD&page=2`,
        `${base}&adults=2&star_rating_min=4&price_min=1000`,
        `${base}&adults=2&rooms=1`,
      ]) {
        expect((await get(path)).status).toBe(200);
      }
    });
    expect(again.calls).toBe(0);
    // The ids as asked, in search_context, whatever the key.
    const body = await (await get(`${base}&adults=2&property_id=3,1,2`)).json();
    expect(body.search_context.property_id).toEqual([3, 1, 2]);
    expect(body.data.map((i: { property_id: number }) => i.property_id).sort()).toEqual([1, 2, 3]);
  });

  it('makes one provider call for concurrent searches of one key (single flight)', async () => {
    const upstream = t.service.deps.upstream;
    const original = upstream.availability.bind(upstream);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const spy = vi.spyOn(upstream, 'availability').mockImplementation(async (...args) => {
      calls++;
      await gate;
      return original(...args);
    });
    try {
      const joined = t.service.deps.searchCache.stats().joined;
      const path = `/search/availability?checkin=${day(80)}&checkout=${day(81)}&adults=2`;
      const sorts = ['price_asc', 'price_desc', 'star_rating'];
      const pending = Array.from({ length: 10 }, (_, i) => get(`${path}&sort_by=${sorts[i % 3]}&page=${1 + (i % 4)}`));
      // Every search is waiting on the one call before the provider answers.
      await vi.waitFor(() => expect(t.service.deps.searchCache.stats().joined - joined).toBe(9), { timeout: 10_000 });
      release();
      const answers = await Promise.all(pending);
      expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(calls).toBe(1);
    } finally {
      release();
      spy.mockRestore();
    }
  });

  it('never serves a sandbox scenario answer to a normal request, nor the other way round', async () => {
    const path = `/search/availability?checkin=${day(90)}&checkout=${day(91)}&adults=2&property_id=1,2,3,4,5,6,7,8`;
    const soldOut = { 'x-test-scenario': 'sold_out' };
    const available = (body: { data: { available: boolean }[] }) => body.data.filter((i) => i.available).length;

    // Normal first, then the scenario, then normal again.
    const first = await counted(async () => (await get(path)).json());
    expect(first.calls).toBe(1);
    expect(available(first.value)).toBeGreaterThan(0);
    const scenario = await counted(async () => (await get(path, soldOut)).json());
    expect(scenario.calls).toBe(1);
    expect(available(scenario.value)).toBe(0);
    const normal = await counted(async () => (await get(path)).json());
    expect(normal.calls).toBe(0);
    expect(normal.value.data).toEqual(first.value.data);
    const scenarioAgain = await counted(async () => (await get(path, soldOut)).json());
    expect(scenarioAgain.calls).toBe(0);
    expect(available(scenarioAgain.value)).toBe(0);

    // Scenario first on another key, and concurrent searches of both: one call each.
    const other = `/search/availability?checkin=${day(92)}&checkout=${day(93)}&adults=2&property_id=1,2,3,4,5,6,7,8`;
    const both = await counted(() => Promise.all([get(other, soldOut), get(other), get(other, soldOut), get(other)]).then((all) => Promise.all(all.map((r) => r.json()))));
    expect(both.calls).toBe(2);
    expect(both.value.map(available)).toEqual([0, available(both.value[1]), 0, available(both.value[1])]);
    expect(available(both.value[1])).toBeGreaterThan(0);
  });

  it('keeps an answer SEARCH_CACHE_TTL_MS by the service clock; a clock gone back counts as expired', async () => {
    const ttl = t.config.searchCache.ttlMs;
    expect(ttl).toBe(10_000);
    const path = `/search/availability?checkin=${day(100)}&checkout=${day(101)}&adults=2`;
    try {
      expect((await counted(() => get(path))).calls).toBe(1);
      offsetMs += ttl - 1_000;
      expect((await counted(() => get(path))).calls).toBe(0);
      offsetMs += 1_001;
      expect((await counted(() => get(path))).calls).toBe(1);
      expect((await counted(() => get(path))).calls).toBe(0);
      offsetMs -= 60_000;
      expect((await counted(() => get(path))).calls).toBe(1);
    } finally {
      offsetMs = 0;
    }
  });

  it('keeps no failure: a failed provider call is asked again by the next search', async () => {
    const path = `/search/availability?checkin=${day(110)}&checkout=${day(111)}&adults=2`;
    for (let i = 0; i < 2; i++) {
      const failed = await counted(() => get(path, { 'x-test-scenario': 'upstream_error' }));
      expect(failed.value.status).toBe(502);
      expect(failed.calls).toBe(1);
    }
    const spy = vi.spyOn(t.service.deps.upstream, 'availability').mockRejectedValueOnce(new UpstreamError());
    try {
      expect((await get(path)).status).toBe(502);
    } finally {
      spy.mockRestore();
    }
    const next = await counted(() => get(path));
    expect(next.value.status).toBe(200);
    expect(next.calls).toBe(1);
  });

  it('does not keep the searches that issue price-check tokens: one property, rates, v2, batch rates, Property.availability', async () => {
    const stay = { checkin: day(40), checkout: day(42) };
    const requests: (() => Promise<Response>)[] = [
      () => get(`/search/availability/21?${STAY}&adults=2`),
      () => get(`/search/rates?property_id=21&${STAY}&adults=2`),
      () => t.request(`/api/channel/v2/properties/availability?${STAY}&occupancy=2&property_id=21`, { headers: apiKey(creds) }),
      () =>
        t.request('/channel/v1/search/rates/batch', {
          method: 'POST',
          headers: { ...apiKey(creds), 'content-type': 'application/json' },
          body: JSON.stringify({ items: [{ property_id: 21, ...stay, adults: 2 }] }),
        }),
      () =>
        t.request('/graphql', {
          method: 'POST',
          headers: { ...apiKey(creds), 'content-type': 'application/json' },
          body: JSON.stringify({
            query: 'query($s: StayInput!) { property(id: "21") { availability(stay: $s) { nights } } }',
            variables: { s: { ...stay, adults: 2 } },
          }),
        }),
    ];
    for (const request of requests) {
      for (let i = 0; i < 2; i++) {
        const { calls, value: res } = await counted(request);
        expect(res.status).toBe(200);
        expect(calls).toBe(1);
      }
    }
  });
});

describe('price checks with a kept search', () => {
  let volatile: TestService;
  let who: IssuedCredentials;

  beforeAll(async () => {
    // Every price check moves the provider's price 3-8 %, as prices drift between search and booking.
    volatile = await startTestService({ SIMULATOR_VOLATILITY: '1' });
    who = await volatile.channel();
  });
  afterAll(() => volatile?.close());

  const vget = (path: string) => volatile.request(`/channel/v1${path}`, { headers: apiKey(who) });

  interface Rate {
    rateplan_id: string;
    price_check_token: string | null;
    pricing: { billable_totals: { inclusive_amount: number } };
  }

  async function rateOf(propertyId: number, rateplanId?: string): Promise<Rate | undefined> {
    const body = await (await vget(`/search/availability/${propertyId}?${STAY}&adults=2`)).json();
    const rates: Rate[] = body.data.room_types.flatMap((r: { rates: Rate[] }) => r.rates);
    return rates.find((r) => (rateplanId ? r.rateplan_id === rateplanId : r.price_check_token));
  }

  it('always asks the provider: the book token carries its price, never a price a kept search showed', async () => {
    let propertyId = 1;
    while (!(await rateOf(propertyId))) propertyId++;
    const listing = `/search/availability?${STAY}&adults=2&property_id=${propertyId}`;
    const shown = await (await vget(listing)).json();
    // A listing carries prices but no token: nothing in it can be checked or booked.
    expect(Object.keys(shown.data[0]).some((k) => k.includes('token'))).toBe(false);

    const rate = (await rateOf(propertyId))!;
    const checks: { total: number; booked: number }[] = [];
    for (let i = 0; i < 2; i++) {
      const counter = countCalls(volatile, ['availability', 'priceCheck']);
      const res = await vget(`/search/price-check?token=${encodeURIComponent(rate.price_check_token!)}`);
      expect(counter.stop().provider).toEqual({ availability: 0, priceCheck: 1 });
      const { data } = await res.json();
      expect(data.status).toMatch(/^(matched|price_changed)$/);
      const claims = await volatile.service.deps.tokens.verify('book', data.book_token, offerClaims, { now: new Date(), channelId: who.user_id });
      checks.push({ total: data.pricing.billable_totals.inclusive_amount, booked: claims.total_inclusive });
    }
    // Each check priced what the provider said then, and the book token carries that price.
    for (const check of checks) expect(check.booked).toBe(check.total);
    // The provider's price did move after the search (3 % at least): the token's price is not what is charged.
    expect(checks[0]!.total).not.toBe(rate.pricing.billable_totals.inclusive_amount);

    // The listing is still the kept answer; the one-property search asks the provider and shows the latest price.
    const counter = countCalls(volatile, ['availability']);
    expect((await (await vget(listing)).json()).data).toEqual(shown.data);
    expect(counter.stop().provider.availability).toBe(0);
    const latest = await counted(() => rateOf(propertyId, rate.rateplan_id), volatile);
    expect(latest.calls).toBe(1);
    expect(latest.value!.pricing.billable_totals.inclusive_amount).toBe(checks[1]!.total);
  });
});

describe('AvailabilityCache', () => {
  const request = (city: string): AvailabilityRequest & { detail: 'lowest' } => ({
    checkin: day(40),
    checkout: day(41),
    occupancy: [{ adults: 2, children_ages: [] }],
    city,
    detail: 'lowest',
  });
  const view = { nights: 1, currency: 'KRW' as const, sortBy: null, priceMin: null, priceMax: null };
  const answer = (size: number): AvailabilityResponse => ({
    results: Array.from({ length: size }, (_, i) => ({
      property_id: i + 1,
      name: `Hotel ${i + 1}`,
      city: 'Seoul',
      star_rating: 3,
      hero_image: null,
      amenity_codes: ['free_wifi'],
      available: true,
      rates: [{ rateplan_id: 'r', roomtype_id: 'rt', available_rooms: 1, nights: [], total_base: 1000 + i, total_tax_and_fees: 200 }],
    })),
  });

  function fakeProvider(respond: (request: AvailabilityRequest) => Promise<AvailabilityResponse>) {
    const availability = vi.fn(respond);
    return { upstream: { availability } as unknown as UpstreamClient, availability };
  }

  it('lets a caller that leaves stop waiting without ending the call the others wait for', async () => {
    let answerNow!: () => void;
    const { upstream, availability } = fakeProvider(() => new Promise((resolve) => (answerNow = () => resolve(answer(3)))));
    const cache = new AvailabilityCache(upstream, { ttlMs: 10_000, maxBytes: 1 << 20, clock: () => new Date() });
    const leaving = new AbortController();
    const first = cache.search(request('Seoul'), view, { signal: leaving.signal });
    const second = cache.search(request('Seoul'), view, {});
    leaving.abort();
    await expect(first).rejects.toThrow(new UpstreamError('The request was cancelled'));
    answerNow();
    expect((await second).length).toBe(3);
    expect(availability).toHaveBeenCalledTimes(1);
    // The call's own signal is not the caller's.
    expect((availability.mock.calls[0] as unknown[])[1]).toEqual({ scenario: undefined });
    expect((await cache.search(request('Seoul'), view, {})).length).toBe(3);
    expect(availability).toHaveBeenCalledTimes(1);
  });

  it('holds no more than its memory bound, least recently used out first', async () => {
    const { upstream, availability } = fakeProvider(async () => answer(100));
    // About two answers of 100 results (and their KRW items and order).
    const cache = new AvailabilityCache(upstream, { ttlMs: 10_000, maxBytes: 70_000, clock: () => new Date() });
    for (const city of ['a', 'b', 'c', 'd', 'e']) await cache.search(request(city), view, {});
    const stats = cache.stats();
    expect(stats.bytes).toBeLessThanOrEqual(70_000);
    expect(stats.entries).toBe(2);
    expect(availability).toHaveBeenCalledTimes(5);
    await cache.search(request('e'), view, {});
    expect(availability).toHaveBeenCalledTimes(5);
    await cache.search(request('a'), view, {});
    expect(availability).toHaveBeenCalledTimes(6);
    // New currencies and orders count towards the bound as they are made: 'a' grows and pushes 'e' out.
    expect(cache.stats().entries).toBe(2);
    await cache.search(request('a'), { ...view, currency: 'USD', sortBy: 'price_desc' }, {});
    expect(cache.stats().entries).toBe(1);
    expect(cache.stats().bytes).toBeLessThanOrEqual(70_000);
    await cache.search(request('e'), view, {});
    expect(availability).toHaveBeenCalledTimes(7);
  });
});
