import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { offerClaims, TokenError } from '../../src/services/access/index.js';
import { Dataset, taxAndFees } from '../../src/simulator/dataset.js';
import { day } from '../helpers/flow.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
let creds: IssuedCredentials;
const data = new Dataset(42, 500);

// Dates relative to today, so the suite does not age.
const CHECKIN = day(40);
const CHECKOUT = day(42);
const STAY = `checkin=${CHECKIN}&checkout=${CHECKOUT}`;

beforeAll(async () => {
  t = await startTestService();
  creds = await t.channel();
});
afterAll(() => t.close());

function get(path: string, headers: Record<string, string> = {}, who: IssuedCredentials = creds) {
  return t.request(`/channel/v1${path}`, { headers: { ...apiKey(who), ...headers } });
}

async function fields(res: Response): Promise<string[]> {
  expect(res.status).toBe(400);
  const body = await res.json();
  expect(body.error.code).toBe('VALIDATION_ERROR');
  return body.error.details.fields.map((f: { field: string }) => f.field);
}

/** What the simulator's dataset says a rate costs for `rooms` rooms (KRW, before any booking). */
function expectedTotals(propertyId: number, rateplanId: string, checkin: string, nights: number, rooms = 1) {
  const p = data.property(propertyId)!;
  const room = p.roomTypes.find((r) => r.ratePlans.some((rp) => rp.id === rateplanId))!;
  const plan = room.ratePlans.find((rp) => rp.id === rateplanId)!;
  let base = 0;
  let tax = 0;
  let stock = Number.POSITIVE_INFINITY;
  for (let i = 0; i < nights; i++) {
    const night = new Date(Date.parse(`${checkin}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10);
    const nightly = data.nightlyPrice(room, plan, night);
    base += nightly * rooms;
    tax += taxAndFees(nightly) * rooms;
    stock = Math.min(stock, data.baseStock(room, night));
  }
  return { base, tax, inclusive: base + tax, stock };
}

describe('GET /search/availability (many properties)', () => {
  it('lists properties with their lowest prices, search_context and pagination', async () => {
    const res = await get(`/search/availability?${STAY}&adults=2`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.data).toHaveLength(20);
    expect(body.pagination).toEqual({ total: 500, page: 1, per_page: 20, total_pages: 25, has_next: true });
    expect(body.search_context).toEqual({
      checkin: CHECKIN,
      checkout: CHECKOUT,
      nights: 2,
      rooms: 1,
      adults: 2,
      children: 0,
      occupancy: [{ adults: 2, children_ages: [] }],
      currency: 'KRW',
      property_id: null,
      city: null,
      star_rating_min: null,
      amenities: null,
      price_min: null,
      price_max: null,
      sort_by: null,
      page: 1,
      per_page: 20,
    });
    const item = body.data[0];
    expect(Object.keys(item).sort()).toEqual(
      ['amenities', 'available', 'city', 'currency', 'hero_image', 'lowest_nightly_price', 'lowest_total_price', 'name', 'property_id', 'star_rating'].sort(),
    );
    // Available properties first, then by id.
    const firstUnavailable = body.data.findIndex((i: { available: boolean }) => !i.available);
    if (firstUnavailable >= 0) expect(body.data.slice(firstUnavailable).every((i: { available: boolean }) => !i.available)).toBe(true);
  });

  it('prices the cheapest bookable rate from the provider: total inclusive of tax and fees, nightly = total / nights', async () => {
    const res = await get(`/search/availability?${STAY}&adults=2&property_id=11`);
    const [item] = (await res.json()).data;
    const p = data.property(11)!;
    const candidates = p.roomTypes
      .filter((r) => r.maxOccupancy >= 2)
      .flatMap((r) => r.ratePlans.map((rp) => expectedTotals(11, rp.id, CHECKIN, 2)))
      .filter((x) => x.stock >= 1)
      .map((x) => x.inclusive);
    if (candidates.length === 0) {
      expect(item).toMatchObject({ available: false, lowest_total_price: null, lowest_nightly_price: null });
    } else {
      const lowest = Math.min(...candidates);
      expect(item).toMatchObject({ property_id: 11, name: p.name, available: true, lowest_total_price: lowest, lowest_nightly_price: Math.round(lowest / 2) });
    }
  });

  it('converts prices to the request currency in its minor units', async () => {
    const krw = (await (await get(`/search/availability?${STAY}&adults=2&property_id=1,2,3,4,5`)).json()).data;
    const usd = await (await get(`/search/availability?${STAY}&adults=2&property_id=1,2,3,4,5&currency=USD`)).json();
    expect(usd.search_context.currency).toBe('USD');
    for (const [i, item] of usd.data.entries()) {
      expect(item.currency).toBe('USD');
      if (krw[i].lowest_total_price === null) continue;
      // 1 USD = 1,380 KRW (reference rate); cents.
      expect(item.lowest_total_price).toBe(Math.round((krw[i].lowest_total_price * 100) / 1380));
    }
  });

  it('filters by property_id (comma-separated or repeated), city and star_rating_min', async () => {
    const a = await (await get(`/search/availability?${STAY}&adults=1&property_id=5,9&property_id=2`)).json();
    expect(a.data.map((i: { property_id: number }) => i.property_id).sort()).toEqual([2, 5, 9]);
    expect(a.search_context.property_id).toEqual([5, 9, 2]);

    const busan = await (await get(`/search/availability?${STAY}&adults=1&city=busan&per_page=100`)).json();
    const expected = Array.from({ length: 500 }, (_, i) => data.property(i + 1)!).filter((p) => p.city === 'Busan');
    expect(busan.pagination.total).toBe(expected.length);
    expect(busan.data.every((i: { city: string }) => i.city === 'Busan')).toBe(true);

    const stars = await (await get(`/search/availability?${STAY}&adults=1&star_rating_min=4.5&per_page=100`)).json();
    expect(stars.data.length).toBeGreaterThan(0);
    expect(stars.data.every((i: { star_rating: number }) => i.star_rating >= 4.5)).toBe(true);
  });

  it('filters by price per night and sorts by price and stars', async () => {
    const res = await (await get(`/search/availability?${STAY}&adults=2&price_min=100000&price_max=200000&sort_by=price_asc&per_page=100`)).json();
    const prices = res.data.map((i: { lowest_nightly_price: number }) => i.lowest_nightly_price);
    expect(prices.length).toBeGreaterThan(0);
    expect(prices.every((p: number) => p >= 100_000 && p <= 200_000)).toBe(true);
    expect(prices).toEqual([...prices].sort((x, y) => x - y));

    const desc = await (await get(`/search/availability?${STAY}&adults=2&sort_by=price_desc&per_page=50`)).json();
    const descPrices = desc.data.filter((i: { available: boolean }) => i.available).map((i: { lowest_nightly_price: number }) => i.lowest_nightly_price);
    expect(descPrices).toEqual([...descPrices].sort((x, y) => y - x));

    const stars = await (await get(`/search/availability?${STAY}&adults=2&sort_by=star_rating&per_page=50`)).json();
    const available = stars.data.filter((i: { available: boolean }) => i.available).map((i: { star_rating: number }) => i.star_rating);
    expect(available[0]).toBe(5);
    expect(available).toEqual([...available].sort((x, y) => y - x));
  });

  it('pages through the results without overlap', async () => {
    const one = await (await get(`/search/availability?${STAY}&adults=2&per_page=100&page=5`)).json();
    expect(one.pagination).toEqual({ total: 500, page: 5, per_page: 100, total_pages: 5, has_next: false });
    const four = await (await get(`/search/availability?${STAY}&adults=2&per_page=100&page=4`)).json();
    const ids = new Set([...one.data, ...four.data].map((i: { property_id: number }) => i.property_id));
    expect(ids.size).toBe(200);
    const beyond = await (await get(`/search/availability?${STAY}&adults=2&page=99`)).json();
    expect(beyond.data).toEqual([]);
  });

  it('takes per-room occupancy: rooms follow the occupancy values, children come with ages', async () => {
    const res = await (await get(`/search/availability?${STAY}&occupancy=2&occupancy=1-5,9&property_id=1`)).json();
    expect(res.search_context).toMatchObject({
      rooms: 2,
      adults: 3,
      children: 2,
      occupancy: [{ adults: 2, children_ages: [] }, { adults: 1, children_ages: [5, 9] }],
    });
  });

  it('spreads adults and children over rooms', async () => {
    const res = await (await get(`/search/availability?${STAY}&adults=5&children=1&rooms=2&property_id=1`)).json();
    expect(res.search_context.occupancy).toEqual([
      { adults: 3, children_ages: [8] },
      { adults: 2, children_ages: [] },
    ]);
  });

  it('one search for 100 properties is one provider call', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => i + 101).join(',');
    const before = t.service.deps.upstream.calls;
    const res = await get(`/search/availability?${STAY}&adults=2&property_id=${ids}&per_page=100`);
    expect(res.status).toBe(200);
    expect((await res.json()).data).toHaveLength(100);
    expect(t.service.deps.upstream.calls - before).toBe(1);
  });

  it.each([
    ['', ['checkin', 'checkout']],
    [`checkin=${CHECKIN}&checkout=${CHECKIN}&adults=1`, ['checkout']],
    [`checkin=${CHECKOUT}&checkout=${CHECKIN}&adults=1`, ['checkout']],
    [`checkin=${day(1)}&checkout=${day(40)}&adults=1`, ['checkout']],
    [`checkin=${day(-3)}&checkout=${day(1)}&adults=1`, ['checkin']],
    [`checkin=2026-02-30&checkout=2026-03-02&adults=1`, ['checkin']],
    [`checkin=tomorrow&checkout=${CHECKOUT}&adults=1`, ['checkin']],
    [`${STAY}`, ['adults']],
    [`${STAY}&adults=2&occupancy=2`, ['adults']],
    [`${STAY}&occupancy=2&children=1`, ['children']],
    [`${STAY}&occupancy=2&occupancy=2&rooms=3`, ['rooms']],
    [`${STAY}&occupancy=2-18`, ['occupancy.0']],
    [`${STAY}&occupancy=0`, ['occupancy.0']],
    [`${STAY}&occupancy=two`, ['occupancy.0']],
    [`${STAY}&adults=0`, ['adults']],
    [`${STAY}&adults=1&rooms=2`, ['adults']],
    [`${STAY}&adults=1.5`, ['adults']],
    [`${STAY}&adults=1&children=-1`, ['children']],
    [`${STAY}&adults=1&currency=XYZ`, ['currency']],
    [`${STAY}&adults=1&per_page=0`, ['per_page']],
    [`${STAY}&adults=1&per_page=101`, ['per_page']],
    [`${STAY}&adults=1&page=0`, ['page']],
    [`${STAY}&adults=1&sort_by=name`, ['sort_by']],
    [`${STAY}&adults=1&star_rating_min=6`, ['star_rating_min']],
    [`${STAY}&adults=1&price_min=500&price_max=100`, ['price_max']],
    [`${STAY}&adults=1&price_min=cheap`, ['price_min']],
    [`${STAY}&adults=1&property_id=abc`, ['property_id.0']],
  ])('answers 400 VALIDATION_ERROR for ?%s', async (query, expected) => {
    const before = t.service.deps.upstream.calls;
    expect(await fields(await get(`/search/availability?${query}`))).toEqual(expected);
    expect(t.service.deps.upstream.calls).toBe(before);
  });

  it('needs search:availability', async () => {
    const contentOnly = await t.channel({ scopes: ['properties:read'] });
    const res = await get(`/search/availability?${STAY}&adults=1`, {}, contentOnly);
    expect(res.status).toBe(403);
    expect((await res.json()).error.details).toEqual({ required_scope: 'search:availability' });
  });
});

describe('GET /search/availability/{propertyId}', () => {
  it('lists every fitting rate by room type with pricing, policy and a price_check_token on bookable rates', async () => {
    const res = await get(`/search/availability/21?${STAY}&adults=2`);
    expect(res.status).toBe(200);
    const { data: body } = await res.json();
    expect(body).toMatchObject({ property_id: 21, checkin: CHECKIN, checkout: CHECKOUT, nights: 2, currency: 'KRW' });
    const p = data.property(21)!;
    const fitting = p.roomTypes.filter((r) => r.maxOccupancy >= 2);
    expect(body.room_types.map((r: { roomtype_id: string }) => r.roomtype_id)).toEqual(fitting.map((r) => r.id));
    for (const room of body.room_types) {
      for (const rate of room.rates) {
        const expected = expectedTotals(21, rate.rateplan_id, CHECKIN, 2);
        expect(rate.available_rooms).toBe(expected.stock);
        expect(rate.pricing).toEqual({
          request_currency: 'KRW',
          billable_currency: 'KRW',
          totals: { inclusive_amount: expected.inclusive, exclusive_amount: expected.base },
          billable_totals: { inclusive_amount: expected.inclusive, exclusive_amount: expected.base },
        });
        expect(rate.nightly.reduce((n: number, l: { base_rate: number }) => n + l.base_rate, 0)).toBe(expected.base);
        const plan = p.roomTypes.flatMap((r) => r.ratePlans).find((rp) => rp.id === rate.rateplan_id)!;
        expect(rate.cancellation_policy.type).toBe(plan.cancellationPolicy);
        if (expected.stock >= 1) {
          expect(rate.price_check_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
          expect(Date.parse(rate.expires_at) - Date.now()).toBeGreaterThan(29 * 60_000);
        } else {
          expect(rate.price_check_token).toBeNull();
        }
      }
    }
  });

  it('measures free cancellation from 15:00 on the check-in date in the property time zone', async () => {
    // Property 1 is in Seoul (UTC+9): 15:00 KST is 06:00 UTC.
    expect(data.property(1)!.timezone).toBe('Asia/Seoul');
    const { data: body } = await (await get(`/search/availability/1?${STAY}&adults=1`)).json();
    const hours = { flexible: 24, moderate: 48, strict: 168 } as Record<string, number>;
    const checkin15 = Date.parse(`${CHECKIN}T06:00:00Z`);
    for (const rate of body.room_types.flatMap((r: { rates: unknown[] }) => r.rates)) {
      const { type, free_cancellation_before } = rate.cancellation_policy;
      if (type === 'non_refundable') expect(free_cancellation_before).toBeNull();
      else expect(Date.parse(free_cancellation_before)).toBe(checkin15 - hours[type]! * 3_600_000);
    }
  });

  it('signs the server-side offer into the token, bound to the channel; it cannot be altered or used by another channel', async () => {
    const { data: body } = await (await get(`/search/availability/21?${STAY}&adults=2&children=1&children_ages=7`)).json();
    const rate = body.room_types.flatMap((r: { rates: { price_check_token: string | null }[] }) => r.rates).find((r: { price_check_token: string | null }) => r.price_check_token);
    const tokens = t.service.deps.tokens;
    const now = new Date();
    const claims = await tokens.verify('price_check', rate.price_check_token, offerClaims, { now, channelId: creds.user_id });
    expect(claims).toMatchObject({
      property_id: 21,
      rateplan_id: rate.rateplan_id,
      checkin: CHECKIN,
      checkout: CHECKOUT,
      occupancy: [{ adults: 2, children_ages: [7] }],
      total_inclusive: rate.pricing.billable_totals.inclusive_amount,
      total_exclusive: rate.pricing.billable_totals.exclusive_amount,
    });

    const [header, payload, signature] = rate.price_check_token.split('.');
    const altered = JSON.parse(Buffer.from(payload, 'base64url').toString());
    altered.total_inclusive = 1;
    const forged = `${header}.${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${signature}`;
    await expect(tokens.verify('price_check', forged, offerClaims, { now, channelId: creds.user_id })).rejects.toThrow(new TokenError('malformed'));
    await expect(tokens.verify('price_check', rate.price_check_token, offerClaims, { now, channelId: 'someone-else' })).rejects.toThrow(new TokenError('foreign'));
    await expect(tokens.verify('book', rate.price_check_token, offerClaims, { now, channelId: creds.user_id })).rejects.toThrow(new TokenError('wrong_type'));
    const later = new Date(now.getTime() + 31 * 60_000);
    await expect(tokens.verify('price_check', rate.price_check_token, offerClaims, { now: later, channelId: creds.user_id })).rejects.toThrow(new TokenError('expired'));
  });

  it('roomtype_id keeps one room type and its first rate plan; rateplan_id picks another', async () => {
    const p = data.property(21)!;
    const room = p.roomTypes.find((r) => r.maxOccupancy >= 2 && r.ratePlans.length > 1)!;
    const first = await (await get(`/search/availability/21?${STAY}&adults=2&roomtype_id=${room.id}`)).json();
    expect(first.data.room_types).toHaveLength(1);
    expect(first.data.room_types[0].rates.map((r: { rateplan_id: string }) => r.rateplan_id)).toEqual([room.ratePlans[0]!.id]);
    const second = await (await get(`/search/availability/21?${STAY}&adults=2&roomtype_id=${room.id}&rateplan_id=${room.ratePlans[1]!.id}`)).json();
    expect(second.data.room_types[0].rates.map((r: { rateplan_id: string }) => r.rateplan_id)).toEqual([room.ratePlans[1]!.id]);
  });

  it('prices several rooms: every room of the party, every night', async () => {
    const one = (await (await get(`/search/availability/21?${STAY}&adults=1`)).json()).data;
    const two = (await (await get(`/search/availability/21?${STAY}&adults=2&rooms=2`)).json()).data;
    const rate1 = one.room_types[0].rates[0];
    const rate2 = two.room_types[0].rates.find((r: { rateplan_id: string }) => r.rateplan_id === rate1.rateplan_id);
    expect(rate2.pricing.totals.inclusive_amount).toBe(2 * rate1.pricing.totals.inclusive_amount);
    if (rate2.available_rooms < 2) expect(rate2.price_check_token).toBeNull();
  });

  it.each([
    [`/search/availability/abc?${STAY}&adults=1`, 400],
    [`/search/availability/9999?${STAY}&adults=1`, 404],
    [`/search/availability/21?${STAY}&adults=1&roomtype_id=nope`, 404],
    [`/search/availability/21?${STAY}&adults=1&rateplan_id=nope`, 404],
  ])('%s answers %i', async (path, status) => {
    const res = await get(path);
    expect(res.status).toBe(status);
    expect((await res.json()).error.code).toBe(status === 400 ? 'VALIDATION_ERROR' : 'NOT_FOUND');
  });

  it.each([
    [`${STAY}`, ['adults']],
    [`${STAY}&adults=2&children=2&children_ages=5`, ['children_ages']],
    [`${STAY}&adults=2&children_ages=5,18`, ['children_ages.1']],
    [`${STAY}&adults=2&children_ages=five`, ['children_ages.0']],
    [`checkin=${CHECKIN}&adults=2`, ['checkout']],
  ])('answers 400 for ?%s', async (query, expected) => {
    expect(await fields(await get(`/search/availability/21?${query}`))).toEqual(expected);
  });
});

describe('GET /search/rates', () => {
  it('gives nightly lines for every fitting rate, defaulting to tomorrow (property time) for one night and two adults', async () => {
    const res = await get('/search/rates?property_id=21');
    expect(res.status).toBe(200);
    const { data: body } = await res.json();
    const tz = data.property(21)!.timezone;
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
    const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect(body).toMatchObject({ property_id: 21, checkin: tomorrow, nights: 1, occupancy: [{ adults: 2, children_ages: [] }] });
    const rate = body.room_types[0].rates[0];
    expect(rate.nightly).toHaveLength(1);
    expect(rate.price_check_token).toBeNull();
    expect(rate.nightly[0].base_rate + rate.nightly[0].tax_and_service_fee).toBe(rate.pricing.totals.inclusive_amount);
  });

  it('takes dates, adults and currency', async () => {
    const { data: body } = await (await get(`/search/rates?property_id=21&${STAY}&adults=1&currency=JPY`)).json();
    expect(body).toMatchObject({ checkin: CHECKIN, checkout: CHECKOUT, nights: 2, currency: 'JPY' });
    expect(body.room_types[0].rates[0].nightly).toHaveLength(2);
    expect(body.room_types[0].rates[0].pricing.request_currency).toBe('JPY');
  });

  it.each([
    ['', ['property_id']],
    ['property_id=x', ['property_id']],
    [`property_id=21&checkin=${CHECKIN}`, ['checkout']],
    ['property_id=21&adults=0', ['adults']],
  ])('answers 400 for ?%s', async (query, expected) => {
    expect(await fields(await get(`/search/rates?${query}`))).toEqual(expected);
  });

  it('answers 404 for an unknown property', async () => {
    expect((await get('/search/rates?property_id=777')).status).toBe(404);
  });
});
