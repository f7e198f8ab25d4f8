import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { IMAGE_SIZES, IMAGE_WIDTHS, textIn, type Language } from '../../src/services/kernel/index.js';
import type { UpstreamProperty } from '../../src/upstream/protocol.js';
import { countCalls } from '../helpers/counters.js';
import { day } from '../helpers/flow.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 19 on the search routes: the v1 search items carry the property's hero image (links on
 * the service's own origin) and amenity codes, and take an `amenities` filter (all listed codes
 * required) that the provider applies and the search cache keys; every search route says which
 * language it served (Content-Language, Vary: Accept-Language) and names rooms and rate plans in it.
 */

let t: TestService;
let creds: IssuedCredentials;

// Dates of this file's own, so its provider answers are not another file's cached ones.
const STAY = `checkin=${day(50)}&checkout=${day(52)}`;
/** What a request without PUBLIC_BASE_URL reaches the service at (test/helpers/service.ts). */
const ORIGIN = 'http://channel.test';

beforeAll(async () => {
  t = await startTestService();
  creds = await t.channel();
});
afterAll(() => t?.close());

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function get(path: string, headers: Record<string, string> = {}) {
  return t.request(path.startsWith('/api/') ? path : `/channel/v1${path}`, { headers: { ...apiKey(creds), ...headers } });
}

async function json(res: Response, status = 200): Promise<Json> {
  const body = await res.json();
  expect(res.status, JSON.stringify(body).slice(0, 400)).toBe(status);
  return body;
}

/** Every item of a v1 search, page by page (100 a page). */
async function allItems(query: string): Promise<{ total: number; items: Json[] }> {
  const items: Json[] = [];
  let total = 0;
  for (let page = 1; ; page++) {
    const body = await json(await get(`/search/availability?${query}&per_page=100&page=${page}`));
    total = body.pagination.total;
    items.push(...body.data);
    if (!body.pagination.has_next) break;
  }
  expect(items).toHaveLength(total);
  return { total, items };
}

/** The provider's own content of a property (what it advertises). */
async function provider(id: number): Promise<UpstreamProperty> {
  return (await t.service.deps.upstream.getProperty(id))!;
}

/** Provider calls by method while `fn` runs. */
async function counted<T>(fn: () => Promise<T>): Promise<{ calls: Record<string, number>; value: T }> {
  const counter = countCalls(t, ['availability', 'availabilityBatch', 'getProperty', 'getProperties', 'listProperties']);
  try {
    const value = await fn();
    return { calls: counter.stop().provider, value };
  } catch (error) {
    counter.stop();
    throw error;
  }
}

describe('v1 search items: hero image and amenity codes', () => {
  it('carry the hero image with absolute links on the service origin at the advertised sizes, and the amenity codes', async () => {
    const body = await json(await get(`/search/availability?${STAY}&adults=2&per_page=10`));
    expect(body.data).toHaveLength(10);
    for (const item of body.data) {
      const property = await provider(item.property_id);
      const hero = property.images.find((i) => i.hero) ?? null;
      expect(hero, `property ${item.property_id} has a hero image`).not.toBeNull();
      expect(item.hero_image).toEqual({
        id: hero!.id,
        category: hero!.category,
        hero: true,
        caption: textIn(hero!.caption, 'ko-KR'),
        links: Object.fromEntries(
          hero!.links.map((l) => [l.size, { href: `${ORIGIN}/images/${item.property_id}/${hero!.id}/${l.size}.png`, width: l.width, height: l.height }]),
        ),
      });
      // Every size, at the widths the service advertises (never the provider's address).
      expect(Object.keys(item.hero_image.links).sort()).toEqual([...IMAGE_SIZES].sort());
      for (const size of IMAGE_SIZES) {
        expect(item.hero_image.links[size].width).toBe(IMAGE_WIDTHS[size]);
        expect(item.hero_image.links[size].height).toBeGreaterThan(0);
        expect(item.hero_image.links[size].href.startsWith(`${ORIGIN}/images/`)).toBe(true);
      }
      expect([...item.amenities].sort()).toEqual(property.amenities.map((a) => a.code).sort());
      expect(item.amenities.length).toBeGreaterThan(0);
    }
  });

  it("links an image that loads without credentials, at each link's advertised pixel size", async () => {
    const body = await json(await get(`/search/availability?${STAY}&adults=2&per_page=1`));
    for (const size of IMAGE_SIZES) {
      const link = body.data[0].hero_image.links[size];
      const res = await t.request(link.href.slice(ORIGIN.length));
      expect(res.status, link.href).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      const png = Buffer.from(await res.arrayBuffer());
      // The PNG header (IHDR) holds the width and height, big-endian, at bytes 16 and 20.
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([link.width, link.height]);
    }
  });

  it('caption the hero image in the language asked for', async () => {
    const body = await json(await get(`/search/availability?${STAY}&adults=2&per_page=3`, { 'accept-language': 'ja-JP' }));
    for (const item of body.data) {
      const hero = (await provider(item.property_id)).images.find((i) => i.hero)!;
      expect(item.hero_image.caption).toBe(textIn(hero.caption, 'ja-JP'));
      expect(item.hero_image.caption).not.toBe('');
    }
  });

  it('a search is still one provider availability call: no content lookup per item', async () => {
    // Dates no other test searches, so the search cache cannot answer.
    const { calls, value } = await counted(async () =>
      json(await get(`/search/availability?checkin=${day(61)}&checkout=${day(63)}&adults=2&per_page=100`, { 'accept-language': 'en-US' })),
    );
    expect(value.data).toHaveLength(100);
    expect(value.data.every((i: Json) => i.hero_image !== null && i.amenities.length > 0)).toBe(true);
    expect(calls).toEqual({ availability: 1, availabilityBatch: 0, getProperty: 0, getProperties: 0, listProperties: 0 });
  });
});

describe('v1 search: the amenities filter', () => {
  it('keeps only properties with every listed code: fewer results than without it', async () => {
    const everything = await allItems(`${STAY}&adults=2`);
    // Two codes the first property has: at least it matches.
    const codes: string[] = everything.items[0].amenities.slice(0, 2);
    expect(codes).toHaveLength(2);
    const filtered = await allItems(`${STAY}&adults=2&amenities=${codes.join(',')}`);
    expect(filtered.total).toBeGreaterThan(0);
    expect(filtered.total).toBeLessThan(everything.total);
    for (const item of filtered.items) expect(item.amenities).toEqual(expect.arrayContaining(codes));
    // Exactly the unfiltered results that have them, in the same order.
    const having = everything.items.filter((i) => codes.every((c) => i.amenities.includes(c)));
    expect(filtered.items.map((i) => i.property_id)).toEqual(having.map((i) => i.property_id));
    // One code: at least as many as with two.
    const one = await json(await get(`/search/availability?${STAY}&adults=2&amenities=${codes[0]}`));
    expect(one.pagination.total).toBeGreaterThanOrEqual(filtered.total);
    expect(one.pagination.total).toBe(everything.items.filter((i) => i.amenities.includes(codes[0])).length);
  });

  it('takes codes repeated or comma-separated, each once, in code order: one search, one cache entry', async () => {
    const everything = await json(await get(`/search/availability?${STAY}&adults=2`));
    const [a, b] = [...everything.data[0].amenities.slice(0, 2)].sort();
    const first = await counted(async () => get(`/search/availability?${STAY}&adults=2&amenities=${a},${b}`).then((r) => r.text()));
    const sameFilter = await counted(async () =>
      get(`/search/availability?${STAY}&adults=2&amenities=${b}&amenities=${a},${b}`).then((r) => r.text()),
    );
    expect(sameFilter.calls.availability).toBe(0);
    const strip = (text: string) => text.replace(/"meta":\{[^}]*\}/, '');
    expect(strip(sameFilter.value)).toBe(strip(first.value));
    expect(JSON.parse(first.value).search_context.amenities).toEqual([a, b]);
  });

  it('is part of the search cache key: searches differing only by amenities get different answers', async () => {
    const stay = `checkin=${day(70)}&checkout=${day(71)}&adults=2&per_page=100`;
    const plain = await counted(async () => json(await get(`/search/availability?${stay}`)));
    expect(plain.calls.availability).toBe(1);
    const code = plain.value.data[0].amenities[0];
    const filtered = await counted(async () => json(await get(`/search/availability?${stay}&amenities=${code}`)));
    expect(filtered.calls.availability).toBe(1);
    expect(filtered.value.pagination.total).toBeLessThan(plain.value.pagination.total);
    expect(filtered.value.data.every((i: Json) => i.amenities.includes(code))).toBe(true);
    // And each answer is kept on its own: asked again, neither calls the provider, neither changed.
    const again = await counted(async () =>
      Promise.all([json(await get(`/search/availability?${stay}`)), json(await get(`/search/availability?${stay}&amenities=${code}`))]),
    );
    expect(again.calls.availability).toBe(0);
    expect(again.value[0].data).toEqual(plain.value.data);
    expect(again.value[1].data).toEqual(filtered.value.data);
  });

  it('a well-formed code no property has matches nothing', async () => {
    const body = await json(await get(`/search/availability?${STAY}&adults=2&amenities=no_such_amenity_code`));
    expect(body.data).toEqual([]);
    expect(body.pagination.total).toBe(0);
  });

  const malformed = [
    ['upper case', 'Free_WiFi'],
    ['a code after a good one', 'spa,Spa'],
    ['punctuation', 'wifi!'],
    ['a space', 'free%20wifi'],
    ['an empty code', ''],
    ['an empty code in a list', 'spa,,sauna'],
    ['65 characters', 'a'.repeat(65)],
    ['21 codes', Array.from({ length: 21 }, (_, i) => `code_${i}`).join(',')],
  ] as const;
  it.each(malformed)('answers 400 VALIDATION_ERROR on amenities alone for %s, without asking the provider', async (_name, value) => {
    const { calls, value: body } = await counted(async () => json(await get(`/search/availability?${STAY}&adults=2&amenities=${value}`), 400));
    expect(body.error.code).toBe('VALIDATION_ERROR');
    // The list, or the code at fault in it (amenities.1), as occupancy.0 and property_id.0 are named.
    const fields: string[] = body.error.details.fields.map((f: { field: string }) => f.field);
    expect(fields.length).toBeGreaterThan(0);
    for (const field of fields) expect(field).toMatch(/^amenities(\.\d+)?$/);
    expect(calls.availability).toBe(0);
    // The same search without the bad filter is answered as before.
    expect((await get(`/search/availability?${STAY}&adults=2`)).status).toBe(200);
  });

  it('is documented as a repeatable query parameter without a default', async () => {
    const doc = await json(await t.request('/channel/v1/openapi.json'));
    const param = doc.paths['/search/availability'].get.parameters.find((p: Json) => p.name === 'amenities');
    expect(param).toMatchObject({ in: 'query', required: false });
    expect(param.schema.default).toBeUndefined();
    expect(param.description).toMatch(/amenities=free_wifi,outdoor_pool/);
  });
});

describe('language on the search routes', () => {
  /** Every search route that names rooms or rate plans, as a partner calls it, with the names it served. */
  const routes: { name: string; call: (headers: Record<string, string>) => Promise<Response>; names: (body: Json) => string[] }[] = [
    {
      name: 'GET /search/availability/{propertyId}',
      call: (h) => get(`/search/availability/1?${STAY}&adults=2`, h),
      names: (b) => b.data.room_types.flatMap((r: Json) => [r.name, ...r.rates.map((x: Json) => x.name)]),
    },
    {
      name: 'GET /search/rates',
      call: (h) => get(`/search/rates?property_id=1&${STAY}&adults=2`, h),
      names: (b) => b.data.room_types.flatMap((r: Json) => [r.name, ...r.rates.map((x: Json) => x.name)]),
    },
    {
      name: 'POST /search/rates/batch',
      call: (h) =>
        t.request('/channel/v1/search/rates/batch', {
          method: 'POST',
          headers: { ...apiKey(creds), 'content-type': 'application/json', ...h },
          body: JSON.stringify({ items: [{ property_id: 1, checkin: day(50), checkout: day(52), adults: 2 }] }),
        }),
      names: (b) => b.data[0].data.room_types.flatMap((r: Json) => [r.name, ...r.rates.map((x: Json) => x.name)]),
    },
    {
      name: 'v2 GET /properties/availability',
      call: (h) => get(`/api/channel/v2/properties/availability?${STAY}&occupancy=2&property_id=1`, h),
      names: (b) => b[0].rooms.map((r: Json) => r.room_name),
    },
  ];

  /** Names of property 1's room types and rate plans in `language`, as the provider has them. */
  async function expectedNames(language: Language): Promise<Set<string>> {
    const property = await provider(1);
    return new Set(property.room_types!.flatMap((r) => [textIn(r.name, language), ...r.rate_plans.map((p) => textIn(p.name, language))]));
  }

  const cases: [string, Record<string, string>, Language][] = [
    ['no Accept-Language', {}, 'ko-KR'],
    ['en-US', { 'accept-language': 'en-US' }, 'en-US'],
    ['ja (a bare primary tag)', { 'accept-language': 'ja' }, 'ja-JP'],
    ['quality values', { 'accept-language': 'fr;q=1, zh-CN;q=0.8, en;q=0.5' }, 'zh-CN'],
    ['an unsupported tag', { 'accept-language': 'fr-FR' }, 'ko-KR'],
  ];

  for (const route of routes) {
    it.each(cases)(`${route.name}: %s is served in its language, said in Content-Language, with Vary: Accept-Language`, async (_name, headers, language) => {
      const res = await route.call(headers);
      const body = await json(res);
      expect(res.headers.get('content-language')).toBe(language);
      expect(res.headers.get('vary')).toMatch(/accept-language/i);
      const names = route.names(body);
      expect(names.length).toBeGreaterThan(0);
      const expected = await expectedNames(language);
      for (const name of names) expect(expected, `${name} in ${language}`).toContain(name);
    });
  }

  it('v1 search (many properties) says its language too, and the names differ between languages', async () => {
    for (const [, headers, language] of cases) {
      const res = await get(`/search/availability?${STAY}&adults=2&per_page=1`, headers);
      await json(res);
      expect(res.headers.get('content-language')).toBe(language);
      expect(res.headers.get('vary')).toMatch(/accept-language/i);
    }
    const ko = routes[0]!.names(await json(await routes[0]!.call({})));
    const ja = routes[0]!.names(await json(await routes[0]!.call({ 'accept-language': 'ja-JP' })));
    expect(ja).not.toEqual(ko);
  });

  it('every search route documents Accept-Language, and the Content-Language and Vary of its answer', async () => {
    const v1 = await json(await t.request('/channel/v1/openapi.json'));
    const v2 = await json(await t.request('/api/channel/v2/openapi.json'));
    const operations: [Json, string, string][] = [
      [v1, '/search/availability', 'get'],
      [v1, '/search/availability/{propertyId}', 'get'],
      [v1, '/search/rates', 'get'],
      [v1, '/search/rates/batch', 'post'],
      [v2, '/properties/availability', 'get'],
    ];
    for (const [doc, path, method] of operations) {
      const op = doc.paths[path][method];
      expect(op.parameters.find((p: Json) => p.name === 'Accept-Language'), path).toMatchObject({ in: 'header', required: false });
      expect(Object.keys(op.responses['200'].headers), path).toEqual(expect.arrayContaining(['Content-Language', 'Vary']));
    }
  });

  it("v2 availability: its language parameter wins over Accept-Language", async () => {
    const res = await get(`/api/channel/v2/properties/availability?${STAY}&occupancy=2&property_id=1&language=ja-JP`, { 'accept-language': 'en-US' });
    const body = await json(res);
    expect(res.headers.get('content-language')).toBe('ja-JP');
    expect(res.headers.get('vary')).toMatch(/accept-language/i);
    const expected = await expectedNames('ja-JP');
    for (const room of body[0].rooms) expect(expected).toContain(room.room_name);
    // An unsupported parameter is ko-KR, whatever Accept-Language says.
    const fallback = await get(`/api/channel/v2/properties/availability?${STAY}&occupancy=2&property_id=1&language=fr-FR`, { 'accept-language': 'en-US' });
    await json(fallback);
    expect(fallback.headers.get('content-language')).toBe('ko-KR');
  });
});
