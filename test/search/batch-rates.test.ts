import { createServer } from 'node:http';
import { once } from 'node:events';
import { parse } from 'graphql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { documentCost } from '../../src/graphql/cost.js';
import { startSimulator } from '../../src/simulator/server.js';
import { UpstreamClient } from '../../src/upstream/client.js';
import { day } from '../helpers/flow.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * POST /channel/v1/search/rates/batch and GraphQL `batchRates`: several properties, each with its
 * own stay, priced in one provider round trip; one result per item, in order, with errors per item.
 */

let t: TestService;
let creds: IssuedCredentials;

const CHECKIN = day(40);
const CHECKOUT = day(42);

beforeAll(async () => {
  t = await startTestService();
  creds = await t.channel();
});
afterAll(() => t?.close());

function batch(body: unknown, headers: Record<string, string> = {}, who: IssuedCredentials | null = creds) {
  return t.request('/channel/v1/search/rates/batch', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(who && apiKey(who)), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function get(path: string, headers: Record<string, string> = {}) {
  return t.request(`/channel/v1${path}`, { headers: { ...apiKey(creds), ...headers } });
}

/** The simulator's request counters by route. */
async function providerStats(): Promise<Record<string, number>> {
  const res = await fetch(`${t.service.simulatorUrl}/_control/stats`);
  return ((await res.json()) as { by_route: Record<string, number> }).by_route;
}

function diff(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [route, n] of Object.entries(after)) if (n !== (before[route] ?? 0)) out[route] = n - (before[route] ?? 0);
  return out;
}

/** A single-property answer without what differs from call to call (tokens, their expiry). */
function stripTokens(data: { room_types: { rates: Record<string, unknown>[] }[] }) {
  return {
    ...data,
    room_types: data.room_types.map((room) => ({
      ...room,
      rates: room.rates.map(({ price_check_token, expires_at, ...rest }) => ({ ...rest, has_token: price_check_token !== null, has_expiry: expires_at !== null })),
    })),
  };
}

interface Result {
  property_id: number | null;
  status: 'ok' | 'error';
  data?: { property_id: number; checkin: string; checkout: string; nights: number; occupancy: unknown; currency: string; room_types: { roomtype_id: string; rates: Record<string, unknown>[] }[] };
  error?: { code: string; message: string; details: { fields?: { field: string; reason: string }[] } | null };
}

describe('POST /search/rates/batch', () => {
  it('prices each item as GET /search/availability/{id} does, in the order of the items', async () => {
    const items = [
      { property_id: 3, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 },
      { property_id: 1, checkin: day(50), checkout: day(51), adults: 2, children: 1, children_ages: [7] },
      { property_id: 3, checkin: day(60), checkout: day(63), occupancy: ['2', '1-5'] },
    ];
    const res = await batch({ currency: 'USD', items });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'meta']);
    const results = body.data as Result[];
    expect(results.map((r) => [r.property_id, r.status])).toEqual([
      [3, 'ok'],
      [1, 'ok'],
      [3, 'ok'],
    ]);

    const singles = [
      `/search/availability/3?checkin=${CHECKIN}&checkout=${CHECKOUT}&adults=2&currency=USD`,
      `/search/availability/1?checkin=${day(50)}&checkout=${day(51)}&adults=2&children=1&children_ages=7&currency=USD`,
    ];
    for (const [i, path] of singles.entries()) {
      const single = (await (await get(path)).json()).data;
      expect(stripTokens(results[i]!.data!)).toEqual(stripTokens(single));
    }
    expect(results[1]!.data!.occupancy).toEqual([{ adults: 2, children_ages: [7] }]);
    expect(results[2]!.data).toMatchObject({ checkin: day(60), checkout: day(63), nights: 3, currency: 'USD', occupancy: [{ adults: 2, children_ages: [] }, { adults: 1, children_ages: [5] }] });
  });

  it('gives a price_check_token on each bookable rate, which the price check accepts', async () => {
    const res = await batch({ items: [{ property_id: 2, checkin: CHECKIN, checkout: CHECKOUT, adults: 1 }] });
    const [result] = (await res.json()).data as Result[];
    const rates = result!.data!.room_types.flatMap((r) => r.rates);
    const bookable = rates.filter((r) => (r.available_rooms as number) >= 1);
    expect(bookable.length).toBeGreaterThan(0);
    for (const rate of rates) expect(rate.price_check_token === null).toBe((rate.available_rooms as number) < 1);
    const checked = await get(`/search/price-check?token=${encodeURIComponent(bookable[0]!.price_check_token as string)}`);
    expect(checked.status).toBe(200);
    const { data } = await checked.json();
    expect(data.status).toBe('matched');
    expect(data.pricing.billable_totals).toEqual((bookable[0]!.pricing as { billable_totals: unknown }).billable_totals);
    expect(data.book_token).toEqual(expect.any(String));
  });

  it('costs one availability round trip at the provider for N items, and at most one content batch', async () => {
    t.service.deps.catalog.clear();
    const items = Array.from({ length: 12 }, (_, i) => ({
      property_id: 20 + i,
      checkin: day(30 + (i % 4)),
      checkout: day(32 + (i % 4)),
      adults: 1 + (i % 3),
    }));
    const before = await providerStats();
    const res = await batch({ items });
    expect(res.status).toBe(200);
    const results = (await res.json()).data as Result[];
    expect(results.every((r) => r.status === 'ok')).toBe(true);
    expect(diff(await providerStats(), before)).toEqual({ 'POST /availability/batch': 1, 'POST /properties/batch': 1 });

    // Content cached now: only the availability round trip.
    const again = await providerStats();
    await batch({ items });
    expect(diff(await providerStats(), again)).toEqual({ 'POST /availability/batch': 1 });
  });

  it('answers bad or unknown items with errors of their own and prices the rest', async () => {
    const before = await providerStats();
    const res = await batch({
      items: [
        { property_id: 5, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 },
        { property_id: 99999, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 },
        { property_id: 6, checkin: day(-3), checkout: day(-1), adults: 2 },
        { property_id: 7, checkin: CHECKIN, checkout: CHECKOUT, adults: 2, occupancy: ['2'] },
        { property_id: 'eight', checkin: '2026-13-01', checkout: CHECKOUT },
        'not an item',
        { property_id: 9, checkin: CHECKIN, checkout: CHECKOUT, adults: 2, roomtype_id: 'nope' },
        { property_id: 10, checkin: CHECKIN, checkout: CHECKOUT, adults: 2, child_ages: [3] },
        { property_id: 11, checkin: CHECKIN, checkout: day(80), adults: 2 },
        { property_id: 12, checkin: CHECKIN, checkout: CHECKOUT, adults: 2, children: 2, children_ages: [4] },
      ],
    });
    expect(res.status).toBe(200);
    const results = (await res.json()).data as Result[];
    expect(results).toHaveLength(10);
    const summary = results.map((r) => [r.property_id, r.status, r.error?.code ?? null, r.error?.details?.fields?.map((f) => f.field) ?? null]);
    expect(summary).toEqual([
      [5, 'ok', null, null],
      [99999, 'error', 'NOT_FOUND', null],
      [6, 'error', 'VALIDATION_ERROR', ['items.2.checkin']],
      [7, 'error', 'VALIDATION_ERROR', ['items.3.adults']],
      [null, 'error', 'VALIDATION_ERROR', ['items.4.property_id', 'items.4.checkin']],
      [null, 'error', 'VALIDATION_ERROR', ['items.5']],
      [9, 'error', 'NOT_FOUND', null],
      [10, 'error', 'VALIDATION_ERROR', ['items.7']],
      [11, 'error', 'VALIDATION_ERROR', ['items.8.checkout']],
      [12, 'error', 'VALIDATION_ERROR', ['items.9.children_ages']],
    ]);
    expect(results[1]!.error!.message).toContain('99999');
    expect(results[6]!.error!.message).toContain('nope');
    expect(results[7]!.error!.details!.fields![0]!.reason).toContain('child_ages');
    // Still one round trip, for the items that could be priced.
    expect(diff(await providerStats(), before)['POST /availability/batch']).toBe(1);
  });

  it('makes no provider call when no item can be priced', async () => {
    const before = await providerStats();
    const res = await batch({ items: [{ property_id: 1, checkin: day(-5), checkout: day(-4), adults: 1 }] });
    expect(res.status).toBe(200);
    expect((await res.json()).data[0]).toMatchObject({ property_id: 1, status: 'error', error: { code: 'VALIDATION_ERROR' } });
    expect(diff(await providerStats(), before)).toEqual({});
  });

  it('refuses a wrong request as a whole with 400 VALIDATION_ERROR, without calling the provider', async () => {
    const item = { property_id: 1, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 };
    const before = await providerStats();
    const cases: [unknown, string][] = [
      [{ items: item }, 'items'],
      [{}, 'items'],
      [{ items: [] }, 'items'],
      [{ items: Array(51).fill(item) }, 'items'],
      [{ currency: 'XYZ', items: [item] }, 'currency'],
      [{ items: [item], language: 'ko' }, '(body)'],
      [[item], '(body)'],
    ];
    for (const [body, field] of cases) {
      const res = await batch(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      const error = (await res.json()).error;
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    const malformed = await batch('{"items": [');
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error.details.fields).toEqual([{ field: '(body)', reason: 'malformed JSON' }]);
    const wrongType = await t.request('/channel/v1/search/rates/batch', { method: 'POST', headers: { ...apiKey(creds), 'content-type': 'text/plain' }, body: JSON.stringify({ items: [item] }) });
    expect(wrongType.status).toBe(415);
    expect(diff(await providerStats(), before)).toEqual({});
  });

  it('needs a credential (401) with search:availability (403)', async () => {
    const item = { property_id: 1, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 };
    const anonymous = await batch({ items: [item] }, {}, null);
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error.code).toBe('UNAUTHORIZED');
    const narrow = await t.channel({ name: 'No search', scopes: ['reservations:read'] });
    const refused = await batch({ items: [item] }, {}, narrow);
    expect(refused.status).toBe(403);
    expect((await refused.json()).error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'search:availability' } });
  });

  it('reports a failed provider round trip as 502 UPSTREAM_ERROR; sandbox scenarios reach every item', async () => {
    const items = [
      { property_id: 1, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 },
      { property_id: 2, checkin: day(45), checkout: day(46), adults: 1 },
    ];
    const failed = await batch({ items }, { 'x-test-scenario': 'upstream_error' });
    expect(failed.status).toBe(502);
    expect((await failed.json()).error.code).toBe('UPSTREAM_ERROR');

    const soldOut = await batch({ items }, { 'x-test-scenario': 'sold_out' });
    expect(soldOut.status).toBe(200);
    const results = (await soldOut.json()).data as Result[];
    for (const r of results) {
      expect(r.status).toBe('ok');
      const rates = r.data!.room_types.flatMap((room) => room.rates);
      expect(rates.length).toBeGreaterThan(0);
      expect(rates.every((rate) => rate.available_rooms === 0 && rate.price_check_token === null)).toBe(true);
    }
  });

  it('turns an item the provider refuses into UPSTREAM_ERROR for that item only', async () => {
    const upstream = t.service.deps.upstream;
    const original = upstream.availabilityBatch.bind(upstream);
    const spy = vi.spyOn(upstream, 'availabilityBatch').mockImplementationOnce(async (request, options) => {
      const answer = await original(request, options);
      // The provider refuses the second search of the batch.
      answer.items[1] = { error: { code: 'invalid_request', message: 'no' } };
      return answer;
    });
    try {
      const res = await batch({
        items: [
          { property_id: 1, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 },
          { property_id: 2, checkin: day(45), checkout: day(46), adults: 1 },
          { property_id: 3, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 },
        ],
      });
      expect(res.status).toBe(200);
      const results = (await res.json()).data as Result[];
      // Items 1 and 3 share a stay, so they share the first provider search.
      expect(spy.mock.calls[0]![0].items).toHaveLength(2);
      expect(spy.mock.calls[0]![0].items[0]!.property_ids).toEqual([1, 3]);
      expect(results.map((r) => [r.property_id, r.status, r.error?.code ?? null])).toEqual([
        [1, 'ok', null],
        [2, 'error', 'UPSTREAM_ERROR'],
        [3, 'ok', null],
      ]);
    } finally {
      spy.mockRestore();
    }
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = await (await t.request('/channel/v1/openapi.json')).json();
    const op = doc.paths['/search/rates/batch'].post;
    expect(op['x-required-scopes']).toEqual(['search:availability']);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '429', '502']));
    expect(doc.components.schemas.BatchRatesItem.properties).toHaveProperty('children_ages');
    expect(doc.components.schemas.BatchRatesRequest.properties.items.items).toEqual({ $ref: '#/components/schemas/BatchRatesItem' });
  });
});

describe('rate limit: one point per item', () => {
  const item = (id: number) => ({ property_id: id, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 });

  it('charges a batch of n items n points, refuses whole a batch that does not fit, and reports it in X-RateLimit-*', async () => {
    const limited = await t.channel({ name: 'Limited', rateLimit: { sandbox: 10, production: 10 } });
    const first = await batch({ items: [item(1), item(2), item(3), item(4)] }, {}, limited);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('10');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('6');

    const before = await providerStats();
    const tooMany = await batch({ items: [1, 2, 3, 4, 5, 6, 7].map(item) }, {}, limited);
    expect(tooMany.status).toBe(429);
    expect(tooMany.headers.get('retry-after')).toBe(tooMany.headers.get('x-ratelimit-reset'));
    // The request's own point is spent; the batch's 6 more were not kept.
    expect(tooMany.headers.get('x-ratelimit-remaining')).toBe('5');
    const error = (await tooMany.json()).error;
    expect(error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { cost: 7, limit: 10 } });
    expect(error.message).toContain('at most 5 items');
    expect(diff(await providerStats(), before)).toEqual({});

    const fits = await batch({ items: [1, 2, 3, 4, 5].map(item) }, {}, limited);
    expect(fits.status).toBe(200);
    expect(fits.headers.get('x-ratelimit-remaining')).toBe('0');
    const after = await batch({ items: [item(1)] }, {}, limited);
    expect(after.status).toBe(429);
  });

  it('a batch over the whole limit says so', async () => {
    const small = await t.channel({ name: 'Small', rateLimit: { sandbox: 3, production: 3 } });
    const res = await batch({ items: [1, 2, 3, 4].map(item) }, {}, small);
    expect(res.status).toBe(429);
    expect((await res.json()).error.message).toContain("more than this channel's limit of 3");
  });

  it('an invalid batch costs 1 point, as any refused request', async () => {
    const limited = await t.channel({ name: 'Limited 2', rateLimit: { sandbox: 10, production: 10 } });
    const res = await batch({ items: Array(51).fill(item(1)) }, {}, limited);
    expect(res.status).toBe(400);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('9');
  });
});

const QUERY = `query Batch($input: BatchRatesInput!) {
  batchRates(input: $input) {
    propertyId status
    data { property { propertyId name } checkin checkout nights currency roomTypes { roomtypeId rates { rateplanId availableRooms priceCheckToken pricing { inclusiveAmount requestCurrency } } } }
    error { code message fields { field reason } }
  }
}`;

describe('GraphQL batchRates', () => {
  it('gives one result per item, in order, with errors per item, from the same service as REST', async () => {
    const input = {
      currency: 'USD',
      items: [
        { propertyId: 4, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 },
        { propertyId: 4, checkin: CHECKIN, checkout: CHECKOUT, adults: 2, occupancy: ['2'] },
        { propertyId: 99999, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 },
        // A calendar day its rules refuse (in the past, as REST's item 2 above); a value that is no calendar day at all
        // is refused below.
        { propertyId: 5, checkin: day(-3), checkout: day(-1), adults: 2 },
      ],
    };
    const res = await t.graphql(QUERY, { input }, apiKey(creds));
    expect(res.errors).toBeUndefined();
    const results = res.data!.batchRates as { propertyId: number; status: string; data: Record<string, unknown> | null; error: { code: string; fields: { field: string }[] | null } | null }[];
    expect(results.map((r) => [r.propertyId, r.status, r.error?.code ?? null, r.error?.fields?.map((f) => f.field) ?? null])).toEqual([
      [4, 'OK', null, null],
      [4, 'ERROR', 'VALIDATION_ERROR', ['input.items.1.adults']],
      [99999, 'ERROR', 'NOT_FOUND', null],
      [5, 'ERROR', 'VALIDATION_ERROR', ['input.items.3.checkin']],
    ]);
    expect(results[0]!.data).toMatchObject({ property: { propertyId: 4 }, checkin: CHECKIN, nights: 2, currency: 'USD' });

    // A check-in that is no calendar day ('soon') is a Date the variables cannot hold: the request is refused whole,
    // naming the item's field in the variable.
    const malformed = await t.graphql(QUERY, { input: { ...input, items: input.items.map((item, i) => (i === 3 ? { ...item, checkin: 'soon' } : item)) } }, apiKey(creds));
    expect(malformed.status).toBe(400);
    expect(malformed.data ?? null).toBeNull();
    expect(malformed.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(malformed.errors?.[0]?.message).toContain('"$input"');
    expect(malformed.errors?.[0]?.message).toContain('at "input.items[3].checkin"');

    const rest = ((await (await batch({ currency: 'USD', items: [{ property_id: 4, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 }] })).json()).data as Result[])[0]!;
    const gqlRates = (results[0]!.data!.roomTypes as { rates: { rateplanId: string; pricing: { inclusiveAmount: number } }[] }[]).flatMap((r) => r.rates);
    const restRates = rest.data!.room_types.flatMap((r) => r.rates);
    expect(gqlRates.map((r) => [r.rateplanId, r.pricing.inclusiveAmount])).toEqual(
      restRates.map((r) => [r.rateplan_id, (r.pricing as { totals: { inclusive_amount: number } }).totals.inclusive_amount]),
    );
  });

  it('refuses a wrong request as a whole; needs search:availability', async () => {
    const item = { propertyId: 1, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 };
    const empty = await t.graphql(QUERY, { input: { items: [] } }, apiKey(creds));
    expect(empty.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    const tooMany = await t.graphql(QUERY, { input: { items: Array(51).fill(item) } }, apiKey(creds));
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    const narrow = await t.channel({ name: 'No search GQL', scopes: ['reservations:read'] });
    const refused = await t.graphql(QUERY, { input: { items: [item] } }, apiKey(narrow));
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'search:availability' } });
  });

  it('costs 1 rate-limit point per item, like REST', async () => {
    const item = { propertyId: 1, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 };
    const light = parse('query($input: BatchRatesInput!) { batchRates(input: $input) { propertyId status } }');
    expect(documentCost(light, { input: { items: Array(7).fill(item) } })).toBe(7);
    expect(documentCost(light, { input: { items: Array(50).fill(item) } })).toBe(50);
    // A batch over the maximum is refused by the field; it is counted at the maximum.
    expect(documentCost(light, { input: { items: Array(80).fill(item) } })).toBe(50);
    // Inline items count too; nested lists add their items as on every field.
    const inline = parse(`{ a: batchRates(input: {items: [{propertyId: 1, checkin: "${CHECKIN}", checkout: "${CHECKOUT}", adults: 1}, {propertyId: 2, checkin: "${CHECKIN}", checkout: "${CHECKOUT}", adults: 1}]}) { status } }`);
    expect(documentCost(inline)).toBe(2);
    expect(documentCost(parse(QUERY), { input: { items: Array(50).fill(item) } })).toBeGreaterThanOrEqual(50);

    const limited = await t.channel({ name: 'Limited GQL', rateLimit: { sandbox: 10, production: 10 } });
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...apiKey(limited) },
      body: JSON.stringify({ query: 'query($input: BatchRatesInput!) { batchRates(input: $input) { propertyId status } }', variables: { input: { items: Array(3).fill(item) } } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('7');
    expect((await res.json()).extensions.rateLimit).toMatchObject({ cost: 3, remaining: 7 });
  });
});

describe('the provider batch (simulator and client)', () => {
  it('answers each item in its slot; an item it cannot take is an error there, the others are priced', async () => {
    const sim = await startSimulator({ size: 50 });
    try {
      const res = await fetch(`${sim.url}/availability/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          items: [
            { checkin: CHECKIN, checkout: CHECKOUT, occupancy: [{ adults: 2, children_ages: [] }], property_ids: [1, 2], detail: 'rates' },
            { checkin: CHECKIN, checkout: CHECKIN, occupancy: [{ adults: 2, children_ages: [] }], property_ids: [3], detail: 'rates' },
            { checkin: CHECKIN, checkout: CHECKOUT, occupancy: [{ adults: 1, children_ages: [] }], detail: 'lowest' },
          ],
        }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { items: ({ results: { property_id: number }[] } | { error: { code: string; message: string } })[] };
      expect(body.items).toHaveLength(3);
      expect('results' in body.items[0]! && body.items[0].results.map((r) => r.property_id)).toEqual([1, 2]);
      expect(body.items[1]).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('checkout') } });
      expect(body.items[2]).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('property_ids') } });
      expect(sim.stats.byRoute).toEqual({ 'POST /availability/batch': 1 });

      const empty = await fetch(`${sim.url}/availability/batch`, { method: 'POST', body: JSON.stringify({ items: [] }) });
      expect(empty.status).toBe(400);
    } finally {
      await sim.close();
    }
  });
});

describe('the upstream client', () => {
  it('takes an answer with another number of items than asked for as a provider fault (502), never a crash', async () => {
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      req.resume();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ items: [] }));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const client = new UpstreamClient({
      baseUrl: `http://127.0.0.1:${port}`,
      connections: 2,
      deadlines: { content: 1000, search: 1000, booking: 1000 },
      breaker: { threshold: 100, cooldownMs: 1000 },
      logger: pino({ level: 'silent' }),
    });
    try {
      const stay = { checkin: CHECKIN, checkout: CHECKOUT, occupancy: [{ adults: 2, children_ages: [] }], detail: 'rates' as const };
      await expect(client.availabilityBatch({ items: [{ ...stay, property_ids: [1] }] })).rejects.toMatchObject({ status: 502, code: 'UPSTREAM_ERROR' });
      // Not retried: the answer was there, it just did not fit.
      expect(requests).toBe(1);
    } finally {
      await client.close();
      server.close();
    }
  });
});

describe('in production', () => {
  let prod: TestService;
  beforeAll(async () => {
    prod = await startTestService({ CHANNEL_ENV: 'production' });
  });
  afterAll(() => prod?.close());

  it('prices without touching the balance or the ledger, and ignores X-Test-Scenario', async () => {
    const who = await prod.channel({ balance: 1_000_000n });
    const prisma = prod.service.deps.db.prisma;
    const entries = await prisma.ledgerEntry.count({ where: { channelId: who.user_id } });
    const res = await prod.request('/channel/v1/search/rates/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-scenario': 'upstream_error', ...apiKey(who) },
      body: JSON.stringify({ items: [{ property_id: 1, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 }, { property_id: 2, checkin: CHECKIN, checkout: CHECKOUT, adults: 2 }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()).data as Result[]).map((r) => r.status)).toEqual(['ok', 'ok']);
    expect((await prisma.channel.findUniqueOrThrow({ where: { id: who.user_id } })).balance).toBe(1_000_000n);
    expect(await prisma.ledgerEntry.count({ where: { channelId: who.user_id } })).toBe(entries);
  });
});
