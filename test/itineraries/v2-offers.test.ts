import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { v2OfferClaims } from '../../src/services/itineraries/index.js';
import { day } from '../helpers/flow.js';
import { expectError } from '../helpers/http.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/** v2 steps 1 and 2 (docs/spec/channel-api.md §4.6, §7): availability with price-check links, the price check behind them. */

let sandbox: TestService;
let production: TestService;
let creds: IssuedCredentials;
let other: IssuedCredentials;
let prodCreds: IssuedCredentials;
/** Shift of the services' clocks, to expire links. */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

const CHECKIN = day(40);
const CHECKOUT = day(43);
const NIGHTS = 3;

beforeAll(async () => {
  [sandbox, production] = await Promise.all([
    startTestService({}, { clock }),
    startTestService({ CHANNEL_ENV: 'production' }, { clock }),
  ]);
  [creds, other, prodCreds] = await Promise.all([sandbox.channel(), sandbox.channel(), production.channel()]);
});
afterAll(() => Promise.all([sandbox?.close(), production?.close()]));

interface Link {
  method: string;
  href: string;
  expires: string;
}
interface PriceLine {
  type: string;
  currency: string;
  value: number;
}
interface OccupancyPrice {
  nightly: PriceLine[][];
  totals: { inclusive: { request_currency: { currency: string; value: number }; billable_currency: { currency: string; value: number } } };
}
interface Rate {
  id: string;
  status: string;
  available_rooms: number;
  refundable: boolean;
  occupancy_pricing: Record<string, OccupancyPrice>;
  bed_groups: Record<string, { id: string; description: string; links: { price_check?: Link } }>;
  cancel_penalties: { start: string; end: string; percent: number; amount: number; currency: string }[];
  amenities: Record<string, unknown>;
  promotions: null;
  deposits: unknown[];
}
interface PropertyAvailability {
  property_id: string;
  status: string;
  rooms: { id: string; room_name: string; rates: Rate[] }[];
}

function get(t: TestService, path: string, who: IssuedCredentials | null, headers: Record<string, string> = {}) {
  return t.request(path, { headers: { ...(who ? apiKey(who) : {}), ...headers } });
}

function availabilityPath(query: { occupancy?: string[]; property_id?: (string | number)[]; extra?: string; checkin?: string; checkout?: string }) {
  const params = new URLSearchParams();
  if (query.checkin !== '') params.set('checkin', query.checkin ?? CHECKIN);
  if (query.checkout !== '') params.set('checkout', query.checkout ?? CHECKOUT);
  for (const o of query.occupancy ?? ['2']) params.append('occupancy', o);
  for (const p of query.property_id ?? [31]) params.append('property_id', String(p));
  return `/api/channel/v2/properties/availability?${params}${query.extra ?? ''}`;
}

async function availability(
  query: Parameters<typeof availabilityPath>[0],
  options: { t?: TestService; who?: IssuedCredentials; headers?: Record<string, string> } = {},
): Promise<PropertyAvailability[]> {
  const res = await get(options.t ?? sandbox, availabilityPath(query), options.who ?? creds, options.headers);
  expect(res.status).toBe(200);
  return res.json();
}

interface Bookable {
  property: PropertyAvailability;
  room: PropertyAvailability['rooms'][number];
  rate: Rate;
  link: Link;
  bedGroupId: string;
}

/** The first rate with a price-check link, from property `from` on. */
async function bookable(
  from: number,
  occupancy: string[] = ['2'],
  options: { t?: TestService; who?: IssuedCredentials; extra?: string } = {},
): Promise<Bookable> {
  for (let id = from; id < from + 30; id++) {
    const [property] = await availability({ occupancy, property_id: [id], extra: options.extra }, options);
    for (const room of property?.rooms ?? []) {
      for (const rate of room.rates) {
        const bed = Object.values(rate.bed_groups).find((b) => b.links.price_check);
        if (bed) return { property: property!, room, rate, link: bed.links.price_check!, bedGroupId: bed.id };
      }
    }
  }
  throw new Error(`no bookable rate from property ${from}`);
}

function tokenOf(href: string): string {
  return new URL(href, 'http://x').searchParams.get('token')!;
}

describe('step 1: GET /api/channel/v2/properties/availability', () => {
  it('one object per known property, string ids, hashed room and rate ids stable across calls', async () => {
    const first = await availability({ property_id: [31, 32, 99_999_999] });
    expect(first.map((p) => p.property_id)).toEqual(['31', '32']);
    for (const property of first) {
      expect(['available', 'unavailable']).toContain(property.status);
      expect(property.status === 'available').toBe(property.rooms.some((r) => r.rates.some((rate) => rate.status === 'available')));
      for (const room of property.rooms) {
        expect(room.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
        expect(room.room_name).toEqual(expect.any(String));
      }
    }
    const again = await availability({ property_id: [31, 32] });
    const ids = (list: PropertyAvailability[]) => list.flatMap((p) => p.rooms.flatMap((r) => [r.id, ...r.rates.map((rate) => rate.id)]));
    expect(ids(again)).toEqual(ids(first));
    expect(new Set(ids(first)).size).toBe(ids(first).length);
    // The catalog's ids never show.
    const catalog = await sandbox.service.deps.catalog.getMany([31]);
    const raw = catalog[0]!.roomTypes.flatMap((r) => [r.id, ...r.ratePlans.map((p) => p.id)]);
    expect(ids(first).some((id) => raw.includes(id))).toBe(false);
  });

  it('rates: Rapid-like shape, occupancy_pricing keyed by each occupancy with one room per key, nightly lines', async () => {
    const { property, rate, link } = await bookable(31, ['2', '1-5,9']);
    expect(rate).toMatchObject({
      id: expect.any(String),
      status: 'available',
      available_rooms: expect.any(Number),
      refundable: expect.any(Boolean),
      promotions: null,
      deposits: [],
      amenities: expect.any(Object),
    });
    expect(rate.available_rooms).toBeGreaterThanOrEqual(2);
    expect(Object.keys(rate.occupancy_pricing).sort()).toEqual(['1-5,9', '2']);
    for (const price of Object.values(rate.occupancy_pricing)) {
      expect(price.nightly).toHaveLength(NIGHTS);
      for (const night of price.nightly) {
        expect(night.map((l) => l.type)).toEqual(['base_rate', 'tax_and_service_fee']);
        for (const line of night) expect(line).toEqual({ type: line.type, currency: 'KRW', value: expect.any(Number) });
      }
      // KRW has no minor unit: the total is the sum of the lines.
      const sum = price.nightly.flat().reduce((s, l) => s + l.value, 0);
      expect(price.totals.inclusive.request_currency).toEqual({ currency: 'KRW', value: sum });
    }
    // The link: relative, GET, the rate's own path, 30 minutes.
    expect(link.method).toBe('GET');
    expect(link.href.startsWith(`/api/channel/v2/properties/${property.property_id}/rooms/`)).toBe(true);
    expect(link.href).toContain(`/rates/${rate.id}?token=`);
    const ahead = Date.parse(link.expires) - clock().getTime();
    expect(ahead).toBeGreaterThan(29 * 60_000);
    expect(ahead).toBeLessThanOrEqual(30 * 60_000);
    // The token: every room's occupancy, KRW totals for all rooms.
    const claims = await sandbox.service.deps.tokens.verify('v2_price_check', tokenOf(link.href), v2OfferClaims, {
      now: clock(),
      channelId: creds.user_id,
    });
    expect(claims).toMatchObject({
      property_id: Number(property.property_id),
      rate_id: rate.id,
      checkin: CHECKIN,
      checkout: CHECKOUT,
      currency: 'KRW',
      occupancy: [
        { adults: 2, children_ages: [] },
        { adults: 1, children_ages: [5, 9] },
      ],
    });
    const perRoom = rate.occupancy_pricing['2']!.totals.inclusive.billable_currency.value;
    expect(claims.total_inclusive).toBe(perRoom * 2);
    expect(link.href).toContain(`/rooms/${claims.room_id}/`);
  });

  it('one price_check link per bed group; sold-out rates have none', async () => {
    const { rate } = await bookable(31);
    const beds = Object.entries(rate.bed_groups);
    expect(beds.length).toBeGreaterThan(0);
    for (const [key, bed] of beds) {
      expect(bed.id).toBe(key);
      expect(bed.description).toEqual(expect.any(String));
      const claims = await sandbox.service.deps.tokens.verify('v2_price_check', tokenOf(bed.links.price_check!.href), v2OfferClaims, {
        now: clock(),
        channelId: creds.user_id,
      });
      expect(claims.bed_group_id).toBe(key);
    }
    const [soldOut] = await availability({ property_id: [31] }, { headers: { 'x-test-scenario': 'sold_out' } });
    expect(soldOut!.status).toBe('unavailable');
    const rates = soldOut!.rooms.flatMap((r) => r.rates);
    expect(rates.length).toBeGreaterThan(0);
    for (const r of rates) {
      expect(r.status).toBe('sold_out');
      for (const bed of Object.values(r.bed_groups)) expect(bed.links).toEqual({});
    }
  });

  it('the same occupancy twice is keyed once; the token holds both rooms', async () => {
    const { rate, link } = await bookable(31, ['2', '2']);
    expect(Object.keys(rate.occupancy_pricing)).toEqual(['2']);
    const claims = await sandbox.service.deps.tokens.verify('v2_price_check', tokenOf(link.href), v2OfferClaims, {
      now: clock(),
      channelId: creds.user_id,
    });
    expect(claims.occupancy).toHaveLength(2);
    expect(claims.total_inclusive).toBe(rate.occupancy_pricing['2']!.totals.inclusive.billable_currency.value * 2);
  });

  it('amounts in the request currency\'s minor units; cancel_penalties from the policy and the 15:00 rule', async () => {
    const { rate } = await bookable(31, ['2'], { extra: '&currency=USD&language=en-US' });
    const price = rate.occupancy_pricing['2']!;
    expect(price.nightly[0]![0]!.currency).toBe('USD');
    expect(price.totals.inclusive.request_currency.currency).toBe('USD');
    // 1 USD = 1,380 KRW, in cents.
    expect(Math.abs(price.totals.inclusive.request_currency.value - Math.round((price.totals.inclusive.billable_currency.value * 100) / 1380))).toBeLessThanOrEqual(1);
    expect(rate.cancel_penalties).toHaveLength(1);
    const [penalty] = rate.cancel_penalties;
    // Check-in at 15:00 in Seoul is 06:00 UTC.
    expect(penalty!.end).toBe(`${CHECKIN}T06:00:00.000Z`);
    expect(penalty!.currency).toBe('USD');
    expect([50, 100]).toContain(penalty!.percent);
    expect(Date.parse(penalty!.start)).toBeLessThan(Date.parse(penalty!.end));
  });

  it('400 INVALID_REQUEST for a bad or missing parameter', async () => {
    const cases: [Parameters<typeof availabilityPath>[0], string][] = [
      [{ occupancy: ['0'] }, 'occupancy'],
      [{ occupancy: ['2-18'] }, 'occupancy'],
      [{ occupancy: ['x'] }, 'occupancy'],
      [{ occupancy: [] }, 'occupancy'],
      [{ property_id: [] }, 'property_id'],
      [{ property_id: ['abc'] }, 'property_id'],
      [{ checkin: '' }, 'checkin'],
      [{ checkin: '2026-02-30' }, 'checkin'],
      [{ checkout: CHECKIN }, 'checkout'],
      [{ extra: '&currency=XXX' }, 'currency'],
      [{ extra: '&language=not a tag' }, 'language'],
    ];
    for (const [query, field] of cases) {
      const body = await expectError(await get(sandbox, availabilityPath(query), creds), 400, 'INVALID_REQUEST');
      expect(body.details!.fields.map((f: { field: string }) => f.field.split('.')[0])).toContain(field);
    }
  });

  it('502 in the error envelope when the provider fails (sandbox scenario)', async () => {
    await expectError(await get(sandbox, availabilityPath({}), creds, { 'x-test-scenario': 'upstream_error' }), 502, 'UPSTREAM_ERROR');
  });
});

describe('step 2: the price_check href', () => {
  it('called as given: matched, the same prices, a book link with a v2_book token (latest totals and the policy)', async () => {
    const { rate, link, bedGroupId } = await bookable(33);
    const res = await get(sandbox, link.href, creds);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ status: 'matched', occupancy_pricing: rate.occupancy_pricing, refundable: rate.refundable });
    expect(body.cancel_penalties).toEqual(rate.cancel_penalties.map((p) => ({ ...p, start: expect.any(String) })));
    expect(body.links.book.method).toBe('POST');
    expect(body.links.book.href).toMatch(/^\/api\/channel\/v2\/bookings\?token=[\w.-]+$/);
    const ahead = Date.parse(body.links.book.expires) - clock().getTime();
    expect(ahead).toBeGreaterThan(29 * 60_000);
    expect(ahead).toBeLessThanOrEqual(30 * 60_000);
    const claims = await sandbox.service.deps.tokens.verify('v2_book', tokenOf(body.links.book.href), v2OfferClaims, {
      now: clock(),
      channelId: creds.user_id,
    });
    expect(claims).toMatchObject({
      rate_id: rate.id,
      bed_group_id: bedGroupId,
      total_inclusive: rate.occupancy_pricing['2']!.totals.inclusive.billable_currency.value,
      cancellation_policy: expect.stringMatching(/^(flexible|moderate|strict|non_refundable)$/),
    });
    // Checking again is allowed (the price-check token is not consumed) and gives a new book token.
    const again = await (await get(sandbox, link.href, creds)).json();
    expect(again.status).toBe('matched');
    expect(again.links.book.href).not.toBe(body.links.book.href);
  });

  it('price_changed (sandbox scenario): the new, higher prices, carried by the book token', async () => {
    const { rate, link } = await bookable(36, ['2', '1']);
    const body = await (await get(sandbox, link.href, creds, { 'x-test-scenario': 'price_changed' })).json();
    expect(body.status).toBe('price_changed');
    const before = rate.occupancy_pricing['2']!.totals.inclusive.billable_currency.value;
    const after = body.occupancy_pricing['2'].totals.inclusive.billable_currency.value;
    expect(after).toBeGreaterThan(before);
    expect(Object.keys(body.occupancy_pricing).sort()).toEqual(['1', '2']);
    const claims = await sandbox.service.deps.tokens.verify('v2_book', tokenOf(body.links.book.href), v2OfferClaims, {
      now: clock(),
      channelId: creds.user_id,
    });
    expect(claims.total_inclusive).toBe(after * 2);
  });

  it('sold_out (sandbox scenario): no prices, no book link', async () => {
    const { link } = await bookable(36);
    const res = await get(sandbox, link.href, creds, { 'x-test-scenario': 'sold_out' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'sold_out', occupancy_pricing: null, refundable: null, cancel_penalties: null, links: {} });
  });

  it('production ignores X-Test-Scenario', async () => {
    const { link } = await bookable(33, ['2'], { t: production, who: prodCreds });
    for (const scenario of ['price_changed', 'sold_out', 'upstream_error']) {
      const res = await get(production, link.href, prodCreds, { 'x-test-scenario': scenario });
      expect(res.status).toBe(200);
      expect((await res.json()).status).toBe('matched');
    }
    const [property] = await availability({ property_id: [33] }, { t: production, who: prodCreds, headers: { 'x-test-scenario': 'sold_out' } });
    expect(property!.rooms.flatMap((r) => r.rates).some((r) => r.status === 'available')).toBe(true);
  });
});

describe('step 2: token errors (spec §7), in the error envelope, without a provider call', () => {
  async function refused(path: string, status: number, code: string, who: IssuedCredentials = creds) {
    const before = sandbox.service.deps.upstream.calls;
    await expectError(await get(sandbox, path, who), status, code);
    expect(sandbox.service.deps.upstream.calls).toBe(before);
  }

  it('410 TOKEN_EXPIRED after the link\'s expires', async () => {
    const { link } = await bookable(31);
    offsetMs = Date.parse(link.expires) - Date.now() + 1_000;
    try {
      await refused(link.href, 410, 'TOKEN_EXPIRED');
    } finally {
      offsetMs = 0;
    }
    expect((await get(sandbox, link.href, creds)).status).toBe(200);
  });

  it('400 INVALID_TOKEN for a tampered, malformed or wrong-kind token, and another channel\'s', async () => {
    const { link } = await bookable(31);
    const token = tokenOf(link.href);
    const base = link.href.slice(0, link.href.indexOf('?'));
    const [header, payload, signature] = token.split('.');
    const altered = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    altered.total_inclusive = 100;
    const tampered = `${header}.${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${signature}`;

    // A v1 price_check_token of the same offer, and a v2 book token: tokens of other kinds.
    const v1 = await (await get(sandbox, `/channel/v1/search/availability/31?checkin=${CHECKIN}&checkout=${CHECKOUT}&adults=2`, creds)).json();
    const v1Token = v1.data.room_types.flatMap((r: { rates: { price_check_token: string | null }[] }) => r.rates).find((r: { price_check_token: string | null }) => r.price_check_token).price_check_token;
    const step2 = await (await get(sandbox, link.href, creds)).json();

    for (const bad of ['garbage', tampered, v1Token, tokenOf(step2.links.book.href)]) {
      await refused(`${base}?token=${encodeURIComponent(bad)}`, 400, 'INVALID_TOKEN');
    }
    await refused(link.href, 400, 'INVALID_TOKEN', other);
  });

  it('403 FORBIDDEN when the path differs from the token\'s context', async () => {
    const { property, room, rate, link } = await bookable(31);
    const token = tokenOf(link.href);
    const otherRate = property.rooms.flatMap((r) => r.rates).find((r) => r.id !== rate.id);
    const otherRoom = property.rooms.find((r) => r.id !== room.id);
    const paths = [
      `/properties/32/rooms/${room.id}/rates/${rate.id}`,
      `/properties/abc/rooms/${room.id}/rates/${rate.id}`,
      `/properties/${property.property_id}/rooms/${room.id}/rates/x${rate.id}`,
    ];
    if (otherRate) paths.push(`/properties/${property.property_id}/rooms/${room.id}/rates/${otherRate.id}`);
    if (otherRoom) paths.push(`/properties/${property.property_id}/rooms/${otherRoom.id}/rates/${rate.id}`);
    expect(otherRate ?? otherRoom).toBeDefined();
    for (const path of paths) await refused(`/api/channel/v2${path}?token=${token}`, 403, 'FORBIDDEN');
  });

  it('400 INVALID_REQUEST without a token', async () => {
    const { link } = await bookable(31);
    const base = link.href.slice(0, link.href.indexOf('?'));
    const body = await expectError(await get(sandbox, base, creds), 400, 'INVALID_REQUEST');
    expect(body.details!.fields[0].field).toBe('token');
    await expectError(await get(sandbox, `${base}?token=`, creds), 400, 'INVALID_REQUEST');
  });
});

describe('authentication and scope', () => {
  it('401 UNAUTHORIZED without a credential, 403 INSUFFICIENT_SCOPE without search:availability, on both steps', async () => {
    const { link } = await bookable(31);
    const reader = await sandbox.channel({ scopes: ['properties:read', 'reservations:read'] });
    for (const path of [availabilityPath({}), link.href]) {
      await expectError(await get(sandbox, path, null), 401, 'UNAUTHORIZED');
      await expectError(await get(sandbox, path, null, { 'x-api-key': 'nope' }), 401, 'UNAUTHORIZED');
      const body = await expectError(await get(sandbox, path, reader), 403, 'INSUFFICIENT_SCOPE');
      expect(body.details!.required_scope).toBe('search:availability');
    }
  });

  it('a Bearer token with the scope works', async () => {
    const res = await sandbox.request('/channel/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret, scope: 'search:availability' }),
    });
    const { access_token } = await res.json();
    const answer = await sandbox.request(availabilityPath({}), { headers: { authorization: `Bearer ${access_token}` } });
    expect(answer.status).toBe(200);
  });
});

describe('OpenAPI', () => {
  it('the v2 document describes both steps', async () => {
    const res = await sandbox.request('/api/channel/v2/openapi.json');
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.paths['/properties/availability'].get['x-required-scopes']).toEqual(['search:availability']);
    expect(doc.paths['/properties/{propertyId}/rooms/{roomId}/rates/{rateId}'].get.responses).toHaveProperty('403');
    expect(doc.components.schemas).toHaveProperty('RateV2');
  });
});
