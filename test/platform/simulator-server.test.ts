import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { Dataset, taxAndFees } from '../../src/simulator/dataset.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import type {
  AvailabilityRequest,
  AvailabilityResponse,
  BookRequest,
  PriceCheckResponse,
  PropertyBatch,
  PropertyPage,
  RoomOccupancy,
  UpstreamBooking,
  UpstreamProperty,
  UpstreamRate,
} from '../../src/upstream/protocol.js';
import { expectError } from '../helpers/http.js';

const NOW = new Date('2026-11-21T09:00:00.000Z');
const data = new Dataset(42, 500);

let sim: RunningSimulator;
const others: RunningSimulator[] = [];

async function start(options: Parameters<typeof startSimulator>[0] = {}): Promise<RunningSimulator> {
  const s = await startSimulator({ port: 0, ...options });
  others.push(s);
  return s;
}

beforeEach(async () => {
  sim ??= await start({ clock: () => NOW });
  sim.reset();
});
afterAll(async () => {
  await Promise.all(others.map((s) => s.close()));
});

function get(path: string, headers: Record<string, string> = {}, on = sim) {
  return fetch(on.url + path, { headers });
}

function post(path: string, body: unknown, headers: Record<string, string> = {}, on = sim) {
  return fetch(on.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const party2: RoomOccupancy[] = [{ adults: 2, children_ages: [] }];
const stay = { checkin: '2027-03-08', checkout: '2027-03-11' };

function availability(body: Partial<AvailabilityRequest>, headers: Record<string, string> = {}, on = sim) {
  return post('/availability', { ...stay, occupancy: party2, detail: 'rates', ...body }, headers, on);
}

async function rates(propertyId: number, occupancy = party2, headers: Record<string, string> = {}, on = sim): Promise<UpstreamRate[]> {
  const res = await availability({ property_ids: [propertyId], occupancy }, headers, on);
  expect(res.status).toBe(200);
  const body = (await res.json()) as AvailabilityResponse;
  return body.results[0]?.rates ?? [];
}

/** A property and one of its rates with at least `rooms` rooms free for `stay`. */
async function bookableRate(rooms = 1, on = sim): Promise<{ propertyId: number; rate: UpstreamRate }> {
  for (let propertyId = 1; propertyId <= 50; propertyId++) {
    const rate = (await rates(propertyId, party2, {}, on)).find((r) => r.available_rooms >= rooms + 1);
    if (rate) return { propertyId, rate };
  }
  throw new Error('no bookable rate in the first 50 properties');
}

const total = (r: UpstreamRate) => r.total_base + r.total_tax_and_fees;

function bookRequest(propertyId: number, rate: UpstreamRate, reference: string, extra: Partial<BookRequest> = {}): BookRequest {
  return {
    reference,
    property_id: propertyId,
    roomtype_id: rate.roomtype_id,
    rateplan_id: rate.rateplan_id,
    ...stay,
    occupancy: party2,
    total: total(rate),
    guest: { first_name: 'Minji', last_name: 'Kim', name: 'Minji Kim' },
    ...extra,
  };
}

function priceCheck(propertyId: number, rate: UpstreamRate, expected: number, headers: Record<string, string> = {}, on = sim) {
  return post(
    '/price-check',
    { property_id: propertyId, roomtype_id: rate.roomtype_id, rateplan_id: rate.rateplan_id, ...stay, occupancy: party2, expected_total: expected },
    headers,
    on,
  );
}

describe('GET /health', () => {
  it('answers ok', async () => {
    const res = await get('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});

describe('GET /properties', () => {
  it('pages every property once, in id order, ending with a null cursor', async () => {
    const ids: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/properties?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as PropertyPage;
      ids.push(...page.properties.map((p) => p.id));
      expect(page.properties.every((p) => p.room_types === undefined)).toBe(true);
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(ids).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
  });

  it('defaults to 100 and adds room types with rate plans on include=rooms', async () => {
    const page = (await (await get('/properties?include=rooms')).json()) as PropertyPage;
    expect(page.properties).toHaveLength(100);
    const first = page.properties[0]!;
    const p = data.property(1)!;
    expect(first).toMatchObject({ id: 1, name: p.name, city: p.city, star_rating: p.starRating, updated_at: p.updatedAt.toISOString() });
    expect(first.room_types?.map((r) => r.id)).toEqual(p.roomTypes.map((r) => r.id));
    expect(first.room_types?.[0]?.rate_plans[0]).toEqual({
      id: p.roomTypes[0]!.ratePlans[0]!.id,
      roomtype_id: p.roomTypes[0]!.id,
      name: p.roomTypes[0]!.ratePlans[0]!.name,
      meal_plan: p.roomTypes[0]!.ratePlans[0]!.mealPlan,
      refundable: p.roomTypes[0]!.ratePlans[0]!.refundable,
      cancellation_policy: p.roomTypes[0]!.ratePlans[0]!.cancellationPolicy,
      amenities: p.roomTypes[0]!.ratePlans[0]!.amenities.map((a) => ({ code: a.code, group: a.group, name: a.name })),
    });
  });

  it('keeps only properties updated after updated_since, still paged by id', async () => {
    const since = '2025-10-01T00:00:00Z';
    const expected = Array.from({ length: 500 }, (_, i) => data.property(i + 1)!)
      .filter((p) => p.updatedAt.getTime() > Date.parse(since))
      .map((p) => p.id);
    expect(expected.length).toBeGreaterThan(20);
    const ids: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`/properties?limit=20&updated_since=${encodeURIComponent(since)}${cursor ? `&cursor=${cursor}` : ''}`);
      const page = (await res.json()) as PropertyPage;
      ids.push(...page.properties.map((p) => p.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(ids).toEqual(expected);
  });

  it('rejects a bad limit, cursor or date with 400', async () => {
    for (const query of ['limit=0', 'limit=1001', 'limit=ten', 'cursor=%21%21', 'updated_since=yesterday', 'include=everything']) {
      await expectError(await get(`/properties?${query}`), 400, 'invalid_request', { envelope: false });
    }
  });
});

describe('GET /properties/:id', () => {
  it('returns the property with room types', async () => {
    const body = (await (await get('/properties/17')).json()) as UpstreamProperty;
    expect(body.id).toBe(17);
    expect(body.room_types?.length).toBe(data.property(17)!.roomTypes.length);
    expect(body.room_types?.[0]?.max_occupancy).toBe(data.property(17)!.roomTypes[0]!.maxOccupancy);
  });

  it('answers 400 for a non-id and 404 for an unknown id', async () => {
    await expectError(await get('/properties/abc'), 400, 'invalid_request', { envelope: false });
    await expectError(await get('/properties/0'), 400, 'invalid_request', { envelope: false });
    await expectError(await get('/properties/501'), 404, 'not_found', { envelope: false });
  });
});

describe('POST /properties/batch', () => {
  it('answers each known id once with room types and lists the missing', async () => {
    const res = await post('/properties/batch', { ids: [3, 9999, 1, 3, 501] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as PropertyBatch;
    expect(body.properties.map((p) => p.id)).toEqual([3, 1]);
    expect(body.properties.every((p) => Array.isArray(p.room_types))).toBe(true);
    expect(body.missing).toEqual([9999, 501]);
  });

  it('validates the body', async () => {
    await expectError(await post('/properties/batch', { ids: [] }), 400, 'invalid_request', { envelope: false });
    await expectError(await post('/properties/batch', { ids: Array.from({ length: 1001 }, (_, i) => i + 1) }), 400, 'invalid_request', { envelope: false });
    await expectError(await post('/properties/batch', { ids: [1.5] }), 400, 'invalid_request', { envelope: false });
    await expectError(await post('/properties/batch', '{not json'), 400, 'invalid_request', { envelope: false });
  });
});

describe('POST /availability', () => {
  it('prices every fitting rate from the dataset: stock is the minimum over nights, totals cover every room', async () => {
    const occupancy = [
      { adults: 1, children_ages: [] },
      { adults: 1, children_ages: [4] },
    ];
    const res = await availability({ property_ids: [5], occupancy });
    const body = (await res.json()) as AvailabilityResponse;
    const p = data.property(5)!;
    const result = body.results[0]!;
    expect(result).toMatchObject({ property_id: 5, name: p.name, city: p.city, star_rating: p.starRating });
    const nights = ['2027-03-08', '2027-03-09', '2027-03-10'];
    const expected = p.roomTypes.flatMap((room) =>
      room.ratePlans.map((plan) => {
        const priced = nights.map((date) => {
          const base = data.nightlyPrice(room, plan, date);
          return { date, base, tax_and_fees: taxAndFees(base) };
        });
        return {
          rateplan_id: plan.id,
          roomtype_id: room.id,
          available_rooms: Math.min(...nights.map((n) => data.baseStock(room, n))),
          nights: priced,
          total_base: priced.reduce((s, n) => s + n.base, 0) * 2,
          total_tax_and_fees: priced.reduce((s, n) => s + n.tax_and_fees, 0) * 2,
        };
      }),
    );
    expect(result.rates).toEqual(expected);
    expect(result.available).toBe(expected.some((r) => r.available_rooms >= 2));
  });

  it('leaves out room types too small for any room of the party', async () => {
    const big = [{ adults: 2, children_ages: [10, 12] }];
    for (let id = 1; id <= 20; id++) {
      const fitting = data.property(id)!.roomTypes.filter((r) => r.maxOccupancy >= 4).map((r) => r.id);
      const got = await rates(id, big);
      expect([...new Set(got.map((r) => r.roomtype_id))]).toEqual(fitting);
    }
  });

  it('lowest: at most the cheapest bookable rate per property', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => i + 1);
    const all = (await (await availability({ property_ids: ids })).json()) as AvailabilityResponse;
    const lowest = (await (await availability({ property_ids: ids, detail: 'lowest' })).json()) as AvailabilityResponse;
    for (const [i, result] of lowest.results.entries()) {
      const bookable = all.results[i]!.rates.filter((r) => r.available_rooms >= 1);
      expect(result.available).toBe(bookable.length > 0);
      if (bookable.length === 0) expect(result.rates).toEqual([]);
      else expect(result.rates).toEqual([bookable.reduce((a, b) => (total(b) < total(a) ? b : a))]);
    }
  });

  it('answers in the order asked, once per id, without unknown ids', async () => {
    const body = (await (await availability({ property_ids: [9, 600, 2, 9], detail: 'lowest' })).json()) as AvailabilityResponse;
    expect(body.results.map((r) => r.property_id)).toEqual([9, 2]);
  });

  it('without ids, covers every property narrowed by city (any case) and stars, in id order', async () => {
    const body = (await (await availability({ city: 'sEOUL', star_rating_min: 3.5, detail: 'lowest' })).json()) as AvailabilityResponse;
    const expected = Array.from({ length: 500 }, (_, i) => data.property(i + 1)!)
      .filter((p) => p.city === 'Seoul' && p.starRating >= 3.5)
      .map((p) => p.id);
    expect(expected.length).toBeGreaterThan(5);
    expect(body.results.map((r) => r.property_id)).toEqual(expected);
    const everything = (await (await availability({ detail: 'lowest' })).json()) as AvailabilityResponse;
    expect(everything.results).toHaveLength(500);
  });

  it('validates dates, stay length, occupancy, ids and unknown fields', async () => {
    const bad: Partial<AvailabilityRequest>[] = [
      { checkin: '2027-03-11', checkout: '2027-03-08' },
      { checkin: '2027-03-08', checkout: '2027-03-08' },
      { checkin: '2027-03-01', checkout: '2027-04-01' },
      { checkin: '2027-02-30', checkout: '2027-03-02' },
      { checkin: '2027/03/01' },
      { occupancy: [] },
      { occupancy: [{ adults: 0, children_ages: [] }] },
      { occupancy: [{ adults: 9, children_ages: [] }] },
      { occupancy: [{ adults: 1, children_ages: [18] }] },
      { occupancy: Array.from({ length: 9 }, () => ({ adults: 1, children_ages: [] })) },
      { property_ids: Array.from({ length: 1001 }, (_, i) => i + 1) },
      { property_ids: [0] },
      { detail: 'all' as 'rates' },
      { propertyIds: [1] } as Partial<AvailabilityRequest>,
    ];
    for (const body of bad) await expectError(await availability(body), 400, 'invalid_request', { envelope: false });
    // Thirty nights is the longest stay.
    expect((await availability({ checkin: '2027-03-01', checkout: '2027-03-31', property_ids: [1] })).status).toBe(200);
  });
});

describe('POST /price-check', () => {
  it('matched at the quoted total, price_changed with the current rate otherwise', async () => {
    const { propertyId, rate } = await bookableRate();
    const matched = (await (await priceCheck(propertyId, rate, total(rate))).json()) as PriceCheckResponse;
    expect(matched).toEqual({ status: 'matched', rate });
    const changed = (await (await priceCheck(propertyId, rate, total(rate) - 1000)).json()) as PriceCheckResponse;
    expect(changed).toEqual({ status: 'price_changed', rate });
  });

  it('sold_out with a null rate when the stay lacks rooms', async () => {
    for (let propertyId = 1; propertyId <= 50; propertyId++) {
      const rate = (await rates(propertyId)).find((r) => r.available_rooms === 0);
      if (!rate) continue;
      expect(await (await priceCheck(propertyId, rate, total(rate))).json()).toEqual({ status: 'sold_out', rate: null });
      return;
    }
    throw new Error('no sold-out rate found');
  });

  it('404 for an unknown property, room type or rate plan; 400 when the party does not fit', async () => {
    const { propertyId, rate } = await bookableRate();
    await expectError(await priceCheck(9999, rate, 1), 404, 'not_found', { envelope: false });
    await expectError(await priceCheck(propertyId, { ...rate, rateplan_id: 'nope' }, 1), 404, 'not_found', { envelope: false });
    await expectError(await priceCheck(propertyId + 1, rate, 1), 404, 'not_found', { envelope: false });
    const res = await post('/price-check', {
      property_id: propertyId,
      roomtype_id: rate.roomtype_id,
      rateplan_id: rate.rateplan_id,
      ...stay,
      occupancy: [{ adults: 8, children_ages: [] }],
      expected_total: 1,
    });
    await expectError(res, 400, 'invalid_request', { envelope: false });
  });

  it('volatility moves prices 3-8 % persistently, the same way for the same seed', async () => {
    const a = await start({ volatility: 1 });
    const b = await start({ volatility: 1 });
    const { propertyId, rate } = await bookableRate(1, a);
    const checkA = (await (await priceCheck(propertyId, rate, total(rate), {}, a)).json()) as PriceCheckResponse;
    const checkB = (await (await priceCheck(propertyId, rate, total(rate), {}, b)).json()) as PriceCheckResponse;
    expect(checkA.status).toBe('price_changed');
    expect(checkB).toEqual(checkA);
    for (const [i, night] of checkA.rate!.nights.entries()) {
      const ratio = night.base / rate.nights[i]!.base;
      expect(Math.abs(ratio - 1)).toBeGreaterThan(0.025);
      expect(Math.abs(ratio - 1)).toBeLessThan(0.085);
      expect(night.tax_and_fees).toBe(taxAndFees(night.base));
    }
    // The move stays: availability shows the new price.
    const after = (await rates(propertyId, party2, {}, a)).find((r) => r.rateplan_id === rate.rateplan_id)!;
    expect(after.nights).toEqual(checkA.rate!.nights);
    // Without volatility nothing moves.
    expect(((await (await priceCheck(propertyId, rate, total(rate))).json()) as PriceCheckResponse).status).toBe('matched');
  });
});

describe('bookings', () => {
  it('books, takes the rooms on every night, and answers a repeated reference with the same booking', async () => {
    const { propertyId, rate } = await bookableRate(2);
    const party = [party2[0]!, party2[0]!];
    const [quoted] = (await rates(propertyId, party)).filter((r) => r.rateplan_id === rate.rateplan_id);
    const res = await post('/bookings', bookRequest(propertyId, quoted!, 'ref-1', { occupancy: party }));
    expect(res.status).toBe(201);
    const booking = (await res.json()) as UpstreamBooking;
    expect(booking).toEqual({
      reference: 'ref-1',
      confirmation_number: expect.stringMatching(/^SIM-[A-Z0-9]{8}$/),
      status: 'confirmed',
      property_id: propertyId,
      roomtype_id: rate.roomtype_id,
      rateplan_id: rate.rateplan_id,
      ...stay,
      rooms: 2,
      total: total(quoted!),
      created_at: NOW.toISOString(),
      cancelled_at: null,
    });
    // Every plan of the room type shares its stock.
    for (const r of (await rates(propertyId)).filter((r) => r.roomtype_id === rate.roomtype_id)) {
      expect(r.available_rooms).toBe(rate.available_rooms - 2);
    }
    const again = await post('/bookings', bookRequest(propertyId, quoted!, 'ref-1', { occupancy: party }));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(booking);
    expect((await rates(propertyId)).find((r) => r.rateplan_id === rate.rateplan_id)!.available_rooms).toBe(rate.available_rooms - 2);
    expect(await (await get('/bookings/ref-1')).json()).toEqual(booking);
  });

  it('409 price_mismatch at another total, 409 sold_out when the rooms run out', async () => {
    const { propertyId, rate } = await bookableRate();
    await expectError(await post('/bookings', bookRequest(propertyId, rate, 'ref-x', { total: total(rate) + 100 })), 409, 'price_mismatch', { envelope: false });
    for (let i = 0; i < rate.available_rooms; i++) {
      expect((await post('/bookings', bookRequest(propertyId, rate, `ref-fill-${i}`))).status).toBe(201);
    }
    await expectError(await post('/bookings', bookRequest(propertyId, rate, 'ref-late')), 409, 'sold_out', { envelope: false });
    expect(await (await priceCheck(propertyId, rate, total(rate))).json()).toEqual({ status: 'sold_out', rate: null });
    await expectError(await get('/bookings/ref-late'), 404, 'not_found', { envelope: false });
  });

  it('cancels once, releasing the rooms once; repeated cancel returns the same booking', async () => {
    const { propertyId, rate } = await bookableRate();
    await post('/bookings', bookRequest(propertyId, rate, 'ref-c'));
    const res = await post('/bookings/ref-c/cancel', {});
    expect(res.status).toBe(200);
    const cancelled = (await res.json()) as UpstreamBooking;
    expect(cancelled).toMatchObject({ status: 'cancelled', cancelled_at: NOW.toISOString() });
    const again = await post('/bookings/ref-c/cancel', {});
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(cancelled);
    expect((await rates(propertyId)).find((r) => r.rateplan_id === rate.rateplan_id)!.available_rooms).toBe(rate.available_rooms);
    await expectError(await post('/bookings/nope/cancel', {}), 404, 'not_found', { envelope: false });
  });

  it('refuses to cancel once the property reports a stay (control route sets the status)', async () => {
    const { propertyId, rate } = await bookableRate();
    await post('/bookings', bookRequest(propertyId, rate, 'ref-s'));
    for (const status of ['checked_in', 'checked_out', 'no_show'] as const) {
      const set = await post('/_control/bookings/ref-s/status', { status });
      expect(set.status).toBe(200);
      expect(((await set.json()) as UpstreamBooking).status).toBe(status);
      await expectError(await post('/bookings/ref-s/cancel', {}), 409, 'not_cancellable', { envelope: false });
    }
    // A failed booking holds no rooms.
    await post('/_control/bookings/ref-s/status', { status: 'failed' });
    expect((await rates(propertyId)).find((r) => r.rateplan_id === rate.rateplan_id)!.available_rooms).toBe(rate.available_rooms);
    await expectError(await post('/_control/bookings/ref-s/status', { status: 'lost' }), 400, 'invalid_request', { envelope: false });
    await expectError(await post('/_control/bookings/nope/status', { status: 'confirmed' }), 404, 'not_found', { envelope: false });
  });

  it('validates the booking body', async () => {
    const { propertyId, rate } = await bookableRate();
    await expectError(await post('/bookings', { ...bookRequest(propertyId, rate, 'r'), reference: '' }), 400, 'invalid_request', { envelope: false });
    await expectError(await post('/bookings', { ...bookRequest(propertyId, rate, 'r'), guest: { name: 'x' } }), 400, 'invalid_request', { envelope: false });
    await expectError(await post('/bookings', { ...bookRequest(propertyId, rate, 'r'), total: -1 }), 400, 'invalid_request', { envelope: false });
    await expectError(await post('/bookings', bookRequest(9999, rate, 'r')), 404, 'not_found', { envelope: false });
  });
});

describe('X-Test-Scenario', () => {
  it('upstream_error: 500 internal_error on any route', async () => {
    for (const res of [await get('/health', { 'x-test-scenario': 'upstream_error' }), await availability({}, { 'X-Test-Scenario': 'upstream_error' })]) {
      await expectError(res, 500, 'internal_error', { envelope: false });
    }
  });

  it('upstream_timeout: never answers; the client gives up and the simulator still closes promptly', async () => {
    const s = await start();
    const timedOut = fetch(`${s.url}/health`, { headers: { 'x-test-scenario': 'upstream_timeout' }, signal: AbortSignal.timeout(200) });
    await expect(timedOut).rejects.toThrow();
    const held = fetch(`${s.url}/availability`, { method: 'POST', headers: { 'x-test-scenario': 'upstream_timeout' }, body: '{}' });
    const outcome = held.then(
      () => 'answered',
      () => 'dropped',
    );
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await s.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await outcome).toBe('dropped');
    expect(s.stats.byRoute['POST /availability']).toBe(1);
  });

  it('sold_out: no rooms anywhere, price check sold out, booking refused', async () => {
    const { propertyId, rate } = await bookableRate();
    const h = { 'x-test-scenario': 'sold_out' };
    const body = (await (await availability({ property_ids: [propertyId] }, h)).json()) as AvailabilityResponse;
    expect(body.results[0]!.available).toBe(false);
    expect(body.results[0]!.rates.length).toBeGreaterThan(0);
    expect(body.results[0]!.rates.every((r) => r.available_rooms === 0)).toBe(true);
    const lowest = (await (await availability({ property_ids: [propertyId], detail: 'lowest' }, h)).json()) as AvailabilityResponse;
    expect(lowest.results[0]).toMatchObject({ available: false, rates: [] });
    expect(await (await priceCheck(propertyId, rate, total(rate), h)).json()).toEqual({ status: 'sold_out', rate: null });
    await expectError(await post('/bookings', bookRequest(propertyId, rate, 'ref-so'), h), 409, 'sold_out', { envelope: false });
  });

  it('price_changed: 5 % dearer at price check, not stored, and bookable at the new price under the header', async () => {
    const { propertyId, rate } = await bookableRate();
    const h = { 'x-test-scenario': 'price_changed' };
    const check = (await (await priceCheck(propertyId, rate, total(rate), h)).json()) as PriceCheckResponse;
    expect(check.status).toBe('price_changed');
    for (const [i, night] of check.rate!.nights.entries()) {
      expect(night.base).toBe(Math.round((rate.nights[i]!.base * 1.05) / 100) * 100);
      expect(night.tax_and_fees).toBe(taxAndFees(night.base));
    }
    expect(total(check.rate!)).toBeGreaterThan(total(rate));
    expect((await rates(propertyId)).find((r) => r.rateplan_id === rate.rateplan_id)).toEqual(rate);
    await expectError(await post('/bookings', bookRequest(propertyId, rate, 'ref-pc'), h), 409, 'price_mismatch', { envelope: false });
    const booked = await post('/bookings', bookRequest(propertyId, rate, 'ref-pc', { total: total(check.rate!) }), h);
    expect(booked.status).toBe(201);
    expect(((await booked.json()) as UpstreamBooking).total).toBe(total(check.rate!));
  });

  it('pending: the booking is created pending; unknown scenarios are ignored', async () => {
    const { propertyId, rate } = await bookableRate();
    const res = await post('/bookings', bookRequest(propertyId, rate, 'ref-p'), { 'x-test-scenario': 'pending' });
    expect(res.status).toBe(201);
    expect(((await res.json()) as UpstreamBooking).status).toBe('pending');
    expect((await get('/health', { 'x-test-scenario': 'meteor_strike' })).status).toBe(200);
  });
});

describe('stats and control', () => {
  it('counts requests by route; control routes are not counted; reset clears stats and bookings', async () => {
    await get('/health');
    await get('/properties/1');
    await get('/properties/2');
    await post('/properties/batch', { ids: [1] });
    await get('/nowhere');
    expect(sim.stats.requests).toBe(5);
    expect(sim.stats.byRoute).toEqual({ 'GET /health': 1, 'GET /properties/:id': 2, 'POST /properties/batch': 1 });
    const { propertyId, rate } = await bookableRate();
    await post('/bookings', bookRequest(propertyId, rate, 'ref-r'));
    expect(sim.stats.byRoute['POST /bookings']).toBe(1);
    expect(await (await get('/_control/stats')).json()).toMatchObject({ by_route: { 'GET /health': 1 } });
    expect((await post('/_control/reset', {})).status).toBe(200);
    expect(sim.stats).toMatchObject({ requests: 0, byRoute: {} });
    await expectError(await get('/bookings/ref-r'), 404, 'not_found', { envelope: false });
  });

  it('unknown routes answer 404 in the error envelope', async () => {
    await expectError(await get('/nowhere'), 404, 'not_found', { envelope: false });
  });

  it('fetch works without listening', async () => {
    const res = await sim.fetch(new Request('http://sim/properties/1'));
    expect(((await res.json()) as UpstreamProperty).id).toBe(1);
  });
});
