import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamProperty } from '../../src/upstream/protocol.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';
import { amenity, descriptions, everywhere, image, property, ratePlan, roomType, startStubProvider, text } from '../helpers/stubProvider.js';

/**
 * Issue 19 on REST: every content surface (v1 property, room types, rate plans and list; v2
 * property, room types and list; both content files in both formats) serves its texts in the
 * language Accept-Language asks for (quality values honoured; unknown or absent: ko-KR), says so
 * in Content-Language with Vary: Accept-Language, falls back to ko-KR field by field (never an
 * empty string), and hands out image links on the service's own origin.
 *
 * A stub provider serves texts marked with their language (`[en-US] 1 headline`), so which
 * language a field was served in is plain; some texts have no zh-CN (or an empty one).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const ORIGIN = 'https://api.partner.test';
const LANGUAGES = ['ko-KR', 'en-US', 'ja-JP', 'zh-CN'] as const;
type Language = (typeof LANGUAGES)[number];

/** What everywhere(ko) is served as in `language`. */
const inLanguage = (ko: string, language: Language) => (language === 'ko-KR' ? ko : `[${language}] ${ko}`);

// Property 1: texts untranslated into zh-CN (absent, or empty) beside translated ones.
const UNTRANSLATED = {
  pets: text('반려동물은 동반할 수 없습니다', { 'en-US': 'No pets', 'ja-JP': 'ペット不可' }),
  dining: text('조식 뷔페', { 'en-US': 'Breakfast buffet', 'zh-CN': '' }),
  amenity: text('무료 주차', { 'en-US': 'Free parking' }),
  caption: text('로비', { 'en-US': 'Lobby', 'zh-CN': '   ' }),
  bedGroup: text('퀸 침대 1개', { 'en-US': '1 queen bed' }),
  ratePlan: text('무료 취소, 조식 포함', { 'en-US': 'Free cancellation, breakfast included' }),
};

const catalog: UpstreamProperty[] = [
  property(
    {
      id: 1, name: 'Hanok Stay', city: 'Seoul', country: 'KR', address: '12 Bukchon-ro', star_rating: 4.5,
      latitude: 37.58, longitude: 126.98, timezone: 'Asia/Seoul', updated_at: '2026-10-01T00:00:00.000Z',
    },
    [
      roomType(1, '1-r1', everywhere('1-r1 name'), [{ id: 'b1', description: UNTRANSLATED.bedGroup }], [
        ratePlan('1-r1', '1-r1-p1', everywhere('1-r1-p1 name')),
        ratePlan('1-r1', '1-r1-p2', UNTRANSLATED.ratePlan),
      ]),
      roomType(1, '1-r2', everywhere('1-r2 name'), [{ id: 'b1', description: everywhere('2 twin beds') }], [
        ratePlan('1-r2', '1-r2-p1', everywhere('1-r2-p1 name'), { meal_plan: 'room_only', refundable: false, cancellation_policy: 'non_refundable', amenities: [] }),
      ]),
    ],
    {
      descriptions: { ...descriptions(1), dining: UNTRANSLATED.dining },
      amenities: [amenity('free_wifi', 'internet'), amenity('parking', 'parking', UNTRANSLATED.amenity)],
      images: [image(1, 'p1-hero', 'exterior', true), image(1, 'p1-lobby', 'lobby', false, UNTRANSLATED.caption)],
      policies: {
        children: everywhere('1 children'),
        pets: UNTRANSLATED.pets,
        extra_beds: everywhere('1 extra beds'),
        know_before_you_go: everywhere('1 know before you go'),
      },
    },
  ),
  property(
    {
      id: 2, name: 'Harbour Inn', city: 'Busan', country: 'KR', address: '3 Haeundae-ro', star_rating: 3,
      latitude: 35.16, longitude: 129.16, timezone: 'Asia/Seoul', updated_at: '2026-10-02T00:00:00.000Z',
    },
    [roomType(2, '2-r1', everywhere('2-r1 name'), [{ id: 'b1', description: everywhere('1 double bed') }], [ratePlan('2-r1', '2-r1-p1', everywhere('2-r1-p1 name'))])],
    { chain: null, brand: null, review: null, checkin: { begin_time: '14:00', end_time: null, min_age: 18, instructions: everywhere('2 instructions') } },
  ),
];

let provider: Awaited<ReturnType<typeof startStubProvider>>;
let t: TestService;
let key: Record<string, string>;

beforeAll(async () => {
  provider = await startStubProvider(catalog);
  t = await startTestService({ UPSTREAM_URL: provider.url, PUBLIC_BASE_URL: ORIGIN });
  key = apiKey(await t.channel());
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

async function get(path: string, acceptLanguage?: string, headers: Record<string, string> = {}) {
  const res = await t.request(path, { headers: { ...key, ...(acceptLanguage !== undefined && { 'accept-language': acceptLanguage }), ...headers } });
  expect(res.status, path).toBe(200);
  return res;
}

/** RFC 4180 CSV (quoted cells, "" for a quote) as one object per row, keyed by the header row. */
function parse(csv: string, _options: { columns: true }): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < csv.length; i++) {
    const ch = csv[i]!;
    if (quoted) {
      if (ch === '"' && csv[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(cell), (cell = '');
    else if (ch === '\n') row.push(cell), rows.push(row), (row = []), (cell = '');
    else cell += ch;
  }
  if (cell !== '' || row.length) row.push(cell), rows.push(row);
  const [header, ...data] = rows;
  return data.map((cells) => Object.fromEntries(header!.map((name, i) => [name, cells[i] ?? ''])));
}

/** Every string in a JSON value, with where it is. */
function strings(value: Json, at = '$'): [string, string][] {
  if (typeof value === 'string') return [[at, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${at}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => strings(v, `${at}.${k}`));
  return [];
}

/** A surface: its path, and the localized text of property 1 it shows (everywhere()-marked), read from its body. */
interface Surface {
  name: string;
  path: string;
  format: 'json' | 'csv';
  /** The text read from the answer, and the ko-KR text it was made from. */
  sample: (body: Json) => [served: string, ko: string];
}

const v1 = (p: string) => `/channel/v1${p}`;
const v2 = (p: string) => `/api/channel/v2${p}`;
const SURFACES: Surface[] = [
  { name: 'v1 property', path: v1('/properties/1'), format: 'json', sample: (b) => [b.data.descriptions.headline, '1 headline'] },
  { name: 'v1 room types', path: v1('/properties/1/roomtypes'), format: 'json', sample: (b) => [b.data[0].name, '1-r1 name'] },
  { name: 'v1 rate plans', path: v1('/properties/1/rateplans'), format: 'json', sample: (b) => [b.data[0].name, '1-r1-p1 name'] },
  { name: 'v1 property list', path: v1('/properties'), format: 'json', sample: (b) => [b.data[0].descriptions.general, '1 general'] },
  { name: 'v2 property', path: v2('/properties/1'), format: 'json', sample: (b) => [b.checkin.instructions, '1 instructions'] },
  { name: 'v2 room types', path: v2('/properties/1/roomtypes'), format: 'json', sample: (b) => [b[1].descriptions.overview, '1-r2 overview'] },
  { name: 'v2 property list', path: v2('/properties'), format: 'json', sample: (b) => [b.properties[0].descriptions.location, '1 location'] },
  {
    name: 'content file (JSON)',
    path: v1('/content/files/content'),
    format: 'json',
    sample: (b) => [b[0].room_types[0].rate_plans[0].name, '1-r1-p1 name'],
  },
  { name: 'content file (CSV)', path: v1('/content/files/content?format=csv'), format: 'csv', sample: (rows) => [rows[0].rateplan_name, '1-r1-p1 name'] },
  { name: 'content file (CSV) headline', path: v1('/content/files/content?format=csv'), format: 'csv', sample: (rows) => [rows[0].headline, '1 headline'] },
];

const NEGOTIATIONS: [header: string | undefined, served: Language][] = [
  ['en-US', 'en-US'],
  ['ja', 'ja-JP'],
  ['zh-CN;q=0.9, en;q=0.5', 'zh-CN'],
  ['en;q=0.5, zh-CN;q=0.9', 'zh-CN'],
  ['fr-FR, ja-JP;q=0.8, en-US;q=0.3', 'ja-JP'],
  ['fr-FR', 'ko-KR'],
  [undefined, 'ko-KR'],
];

async function body(surface: Surface, res: Response): Promise<Json> {
  return surface.format === 'csv' ? parse(await res.text(), { columns: true }) : res.json();
}

describe.each(SURFACES)('$name', (surface) => {
  it.each(NEGOTIATIONS)('Accept-Language %s is served in %s, said in Content-Language and Vary', async (header, served) => {
    const res = await get(surface.path, header);
    expect(res.headers.get('content-language')).toBe(served);
    expect(res.headers.get('vary')?.split(',').map((v) => v.trim().toLowerCase())).toContain('accept-language');
    const [text, ko] = surface.sample(await body(surface, res));
    expect(text).toBe(inLanguage(ko, served));
  });
});

describe('the catalog file', () => {
  it.each(['json', 'csv'])('%s names its language and varies on Accept-Language', async (format) => {
    const res = await get(v1(`/content/files/catalog?format=${format}`), 'ja');
    expect(res.headers.get('content-language')).toBe('ja-JP');
    expect(res.headers.get('vary')).toMatch(/accept-language/i);
  });
});

describe('a text missing in the language is served in ko-KR, field by field, never empty', () => {
  /** Every string of property 1 as each zh-CN surface serves it. */
  async function zhAnswers(): Promise<Record<string, Json>> {
    return {
      detail: (await (await get(v1('/properties/1'), 'zh-CN')).json()).data,
      roomTypes: (await (await get(v1('/properties/1/roomtypes'), 'zh-CN')).json()).data,
      ratePlans: (await (await get(v1('/properties/1/rateplans'), 'zh-CN')).json()).data,
      list: (await (await get(v1('/properties'), 'zh-CN')).json()).data,
      v2detail: await (await get(v2('/properties/1'), 'zh-CN')).json(),
      v2roomTypes: await (await get(v2('/properties/1/roomtypes'), 'zh-CN')).json(),
      v2list: await (await get(v2('/properties'), 'zh-CN')).json(),
      content: await (await get(v1('/content/files/content'), 'zh-CN')).json(),
    };
  }

  it('zh-CN: the untranslated texts are the ko-KR ones, the translated ones zh-CN, on every surface', async () => {
    const a = await zhAnswers();
    for (const p of [a.detail, a.v2detail, a.list[0], a.v2list.properties[0], a.content[0]]) {
      expect(p.policies.pets).toBe(UNTRANSLATED.pets['ko-KR']);
      expect(p.policies.children).toBe('[zh-CN] 1 children');
      expect(p.descriptions.dining).toBe(UNTRANSLATED.dining['ko-KR']);
      expect(p.descriptions.rooms).toBe('[zh-CN] 1 rooms');
      expect(p.amenities.map((x: Json) => x.name)).toEqual(['[zh-CN] free_wifi', UNTRANSLATED.amenity['ko-KR']]);
      expect(p.images.map((x: Json) => x.caption)).toEqual(['[zh-CN] p1-hero caption', UNTRANSLATED.caption['ko-KR']]);
    }
    for (const rooms of [a.roomTypes, a.v2roomTypes, a.content[0].room_types]) {
      expect(rooms[0].bed_groups[0].description).toBe(UNTRANSLATED.bedGroup['ko-KR']);
      expect(rooms[0].name).toBe('[zh-CN] 1-r1 name');
    }
    expect(a.ratePlans.map((p: Json) => p.name)).toEqual(['[zh-CN] 1-r1-p1 name', UNTRANSLATED.ratePlan['ko-KR'], '[zh-CN] 1-r2-p1 name']);
    expect(a.content[0].room_types[0].rate_plans[1].name).toBe(UNTRANSLATED.ratePlan['ko-KR']);
  });

  it('zh-CN: no empty string anywhere in any answer', async () => {
    const a = await zhAnswers();
    const empty = strings(a).filter(([, s]) => s.trim() === '');
    expect(empty).toEqual([]);
  });

  it('the same fields in en-US are the English translations', async () => {
    const p = (await (await get(v1('/properties/1'), 'en-US')).json()).data;
    expect(p.policies.pets).toBe('No pets');
    expect(p.descriptions.dining).toBe('Breakfast buffet');
    expect(p.amenities[1].name).toBe('Free parking');
    expect(p.images[1].caption).toBe('Lobby');
    const plans = (await (await get(v1('/properties/1/rateplans'), 'en-US')).json()).data;
    expect(plans[1].name).toBe('Free cancellation, breakfast included');
  });
});

describe('the new fields', () => {
  it('v1 property: every agreed field, texts in the language, images on the service origin with their sizes', async () => {
    const p = (await (await get(v1('/properties/1'), 'en-US')).json()).data;
    expect(p).toEqual({
      id: 1, name: 'Hanok Stay', city: 'Seoul', country: 'KR', address: '12 Bukchon-ro', star_rating: 4.5,
      latitude: 37.58, longitude: 126.98, timezone: 'Asia/Seoul', updated_at: '2026-10-01T00:00:00.000Z',
      descriptions: {
        headline: '[en-US] 1 headline', general: '[en-US] 1 general', location: '[en-US] 1 location',
        rooms: '[en-US] 1 rooms', dining: 'Breakfast buffet', amenities: '[en-US] 1 amenities',
      },
      amenities: [{ code: 'free_wifi', group: 'internet', name: '[en-US] free_wifi' }, { code: 'parking', group: 'parking', name: 'Free parking' }],
      images: [
        {
          id: 'p1-hero', category: 'exterior', hero: true, caption: '[en-US] p1-hero caption',
          links: {
            thumbnail: { href: `${ORIGIN}/images/1/p1-hero/thumbnail.png`, width: 200, height: 133 },
            medium: { href: `${ORIGIN}/images/1/p1-hero/medium.png`, width: 640, height: 427 },
            large: { href: `${ORIGIN}/images/1/p1-hero/large.png`, width: 1280, height: 853 },
          },
        },
        {
          id: 'p1-lobby', category: 'lobby', hero: false, caption: 'Lobby',
          links: {
            thumbnail: { href: `${ORIGIN}/images/1/p1-lobby/thumbnail.png`, width: 200, height: 133 },
            medium: { href: `${ORIGIN}/images/1/p1-lobby/medium.png`, width: 640, height: 427 },
            large: { href: `${ORIGIN}/images/1/p1-lobby/large.png`, width: 1280, height: 853 },
          },
        },
      ],
      checkin: { begin_time: '15:00', end_time: '23:00', min_age: 19, instructions: '[en-US] 1 instructions' },
      checkout: { time: '11:00' },
      policies: { children: '[en-US] 1 children', pets: 'No pets', extra_beds: '[en-US] 1 extra beds', know_before_you_go: '[en-US] 1 know before you go' },
      phone: '+82-2-1234-5678',
      chain: { id: 'c1', name: 'Stub Hotels' },
      brand: { id: 'b1', name: 'Stub Stay' },
      spoken_languages: ['ko', 'en'],
      review: { score: 8.7, count: 321 },
    });
  });

  it('a property without chain, brand, reviews or an end of check-in has nulls', async () => {
    const p = (await (await get(v1('/properties/2'))).json()).data;
    expect(p).toMatchObject({ chain: null, brand: null, review: null, checkin: { begin_time: '14:00', end_time: null, min_age: 18, instructions: '2 instructions' } });
  });

  it('v1 room types: occupancy, overview, area, views, amenities and images; v2 the same with string ids', async () => {
    const rooms = (await (await get(v1('/properties/1/roomtypes'), 'ja')).json()).data;
    expect(rooms[0]).toEqual({
      id: '1-r1',
      property_id: 1,
      name: '[ja-JP] 1-r1 name',
      max_occupancy: 3,
      bed_groups: [{ id: 'b1', description: UNTRANSLATED.bedGroup['ko-KR'] }],
      occupancy: {
        max_total: 3, max_adults: 2, max_children: 1,
        age_categories: [
          { category: 'adult', min_age: 13, max_age: null },
          { category: 'child', min_age: 2, max_age: 12 },
          { category: 'infant', min_age: 0, max_age: 1 },
        ],
      },
      descriptions: { overview: '[ja-JP] 1-r1 overview' },
      area: { square_meters: 28.5 },
      views: ['city', 'river'],
      amenities: [
        { code: 'air_conditioning', group: 'general', name: '[ja-JP] air_conditioning' },
        { code: 'minibar', group: 'general', name: '[ja-JP] minibar' },
      ],
      images: [
        {
          id: '1-r1-i1', category: 'room', hero: false, caption: '[ja-JP] 1-r1-i1 caption',
          links: {
            thumbnail: { href: `${ORIGIN}/images/1/1-r1-i1/thumbnail.png`, width: 200, height: 133 },
            medium: { href: `${ORIGIN}/images/1/1-r1-i1/medium.png`, width: 640, height: 427 },
            large: { href: `${ORIGIN}/images/1/1-r1-i1/large.png`, width: 1280, height: 853 },
          },
        },
      ],
    });
    const v2rooms = await (await get(v2('/properties/1/roomtypes'), 'ja')).json();
    expect(v2rooms).toEqual(rooms.map((r: Json) => ({ ...r, property_id: '1' })));
    const v2property = await (await get(v2('/properties/1'), 'ja')).json();
    const v1property = (await (await get(v1('/properties/1'), 'ja')).json()).data;
    expect(v2property).toEqual({ ...v1property, id: '1' });
  });

  it('rate plans: names in the language and their amenities', async () => {
    const plans = (await (await get(v1('/properties/1/rateplans'), 'en-US')).json()).data;
    expect(plans[0]).toEqual({
      id: '1-r1-p1',
      roomtype_id: '1-r1',
      name: '[en-US] 1-r1-p1 name',
      meal_plan: 'breakfast',
      refundable: true,
      cancellation_policy: 'flexible',
      amenities: [
        { code: 'breakfast_included', group: 'general', name: '[en-US] breakfast_included' },
        { code: 'free_cancellation', group: 'general', name: '[en-US] free_cancellation' },
      ],
    });
    expect(plans[2].amenities).toEqual([]);
  });

  it('the v1 property is cached per language: asking again in another language does not serve the first', async () => {
    for (const language of ['en-US', 'ko-KR', 'ja-JP', 'en-US', 'zh-CN', 'ko-KR'] as const) {
      const res = await get(v1('/properties/1'), language);
      expect(res.headers.get('content-language')).toBe(language);
      expect((await res.json()).data.descriptions.headline).toBe(inLanguage('1 headline', language));
    }
  });

  it('the content file JSON is the detail answers put together: property, room types, rate plans', async () => {
    const [items, detail, rooms, plans] = await Promise.all([
      get(v1('/content/files/content'), 'ja').then((r) => r.json()),
      get(v1('/properties/1'), 'ja').then(async (r) => (await r.json()).data),
      get(v1('/properties/1/roomtypes'), 'ja').then(async (r) => (await r.json()).data),
      get(v1('/properties/1/rateplans'), 'ja').then(async (r) => (await r.json()).data),
    ]);
    expect(items).toHaveLength(2);
    const { room_types, ...property } = items[0];
    expect(property).toEqual(detail);
    expect(room_types.map(({ rate_plans, ...r }: Json) => r)).toEqual(rooms);
    expect(room_types.flatMap((r: Json) => r.rate_plans)).toEqual(plans);
  });

  it('the content file CSV: the flat fields per rate plan row', async () => {
    const rows = parse(await (await get(v1('/content/files/content?format=csv'), 'en-US')).text(), { columns: true });
    expect(rows).toHaveLength(4);
    expect(rows[1]).toMatchObject({
      property_id: '1',
      roomtype_id: '1-r1',
      rateplan_id: '1-r1-p2',
      rateplan_name: 'Free cancellation, breakfast included',
      bed_groups: '1 queen bed',
      headline: '[en-US] 1 headline',
      phone: "'+82-2-1234-5678",
      checkin_begin_time: '15:00',
      checkin_end_time: '23:00',
      checkout_time: '11:00',
      review_score: '8.7',
      review_count: '321',
      hero_image_url: `${ORIGIN}/images/1/p1-hero/large.png`,
      amenity_codes: 'free_wifi|parking',
      area_sqm: '28.5',
      views: 'city|river',
      roomtype_amenity_codes: 'air_conditioning|minibar',
      rateplan_amenity_codes: 'breakfast_included|free_cancellation',
    });
    expect(rows[3]).toMatchObject({ property_id: '2', checkin_end_time: '', review_score: '', review_count: '', headline: '[en-US] 2 headline' });
  });

  it('the catalog file adds hero_image_url and amenity_codes, in JSON and CSV', async () => {
    const items = await (await get(v1('/content/files/catalog'))).json();
    expect(items[0]).toEqual({
      id: 1, name: 'Hanok Stay', city: 'Seoul', country: 'KR', star_rating: 4.5, updated_at: '2026-10-01T00:00:00.000Z',
      hero_image_url: `${ORIGIN}/images/1/p1-hero/large.png`,
      amenity_codes: ['free_wifi', 'parking'],
    });
    const rows = parse(await (await get(v1('/content/files/catalog?format=csv'))).text(), { columns: true });
    expect(rows[1]).toMatchObject({ id: '2', hero_image_url: `${ORIGIN}/images/2/p2-hero/large.png`, amenity_codes: 'free_wifi|parking|fitness_center' });
  });

  it('updated_since still selects, in both files and formats, with the new fields', async () => {
    const since = '2026-10-01T12:00:00Z';
    const json = await (await get(v1(`/content/files/content?updated_since=${since}`), 'en-US')).json();
    expect(json.map((p: Json) => p.id)).toEqual([2]);
    expect(json[0].descriptions.headline).toBe('[en-US] 2 headline');
    const csv = parse(await (await get(v1(`/content/files/catalog?format=csv&updated_since=${since}`))).text(), { columns: true });
    expect(csv.map((r: Json) => r.id)).toEqual(['2']);
  });
});

describe('image links without PUBLIC_BASE_URL', () => {
  let plain: TestService;
  let plainKey: Record<string, string>;
  beforeAll(async () => {
    plain = await startTestService({ UPSTREAM_URL: provider.url });
    plainKey = apiKey(await plain.channel());
  });
  afterAll(() => plain?.close());

  it("start with the request's own scheme and Host, never the provider's address", async () => {
    const res = await plain.request('/channel/v1/properties/1', { headers: { ...plainKey, host: 'hotels.partner.example:8443' } });
    expect(res.status).toBe(200);
    const hrefs = strings((await res.json()).data.images).filter(([at]) => at.endsWith('.href')).map(([, href]) => href);
    expect(hrefs).toHaveLength(6);
    for (const href of hrefs) {
      expect(href).toMatch(/^http:\/\/hotels\.partner\.example:8443\/images\/1\/p1-(hero|lobby)\/(thumbnail|medium|large)\.png$/);
      expect(href).not.toContain(new URL(provider.url).host);
    }
  });

  it('a Host header unfit for a link is not used', async () => {
    const res = await plain.request('/channel/v1/properties/1/roomtypes', { headers: { ...plainKey, host: 'under_score.example' } });
    expect(res.status).toBe(200);
    const href = (await res.json()).data[0].images[0].links.large.href;
    expect(href).toBe('http://localhost/images/1/1-r1-i1/large.png');
  });
});

describe('the OpenAPI documents', () => {
  const CONTENT_ROUTES = {
    v1: ['/properties', '/properties/{id}', '/properties/{id}/roomtypes', '/properties/{id}/rateplans', '/content/files/catalog', '/content/files/content'],
    v2: ['/properties', '/properties/{id}', '/properties/{id}/roomtypes'],
  } as const;
  const SCHEMAS = {
    v1: ['Property', 'RoomType', 'RatePlan', 'Image', 'ImageLink', 'Amenity', 'CatalogItem', 'ContentItem'],
    v2: ['PropertyV2', 'RoomTypeV2', 'Image', 'Amenity'],
  } as const;
  const QUERY = {
    v1: { '/properties': [], '/properties/{id}': [], '/properties/{id}/roomtypes': [], '/properties/{id}/rateplans': ['roomtype_id'], '/content/files/catalog': ['format', 'updated_since'], '/content/files/content': ['format', 'updated_since'] },
    v2: { '/properties': ['page_token', 'per_page', 'updated_since'], '/properties/{id}': [], '/properties/{id}/roomtypes': [] },
  } as Record<'v1' | 'v2', Record<string, string[]>>;

  it.each(['v1', 'v2'] as const)('%s: the content routes document Accept-Language as a header, and no new query parameter', async (version) => {
    const doc = await (await t.request(`${version === 'v1' ? '/channel/v1' : '/api/channel/v2'}/openapi.json`)).json();
    for (const path of CONTENT_ROUTES[version]) {
      const parameters: Json[] = doc.paths[path].get.parameters ?? [];
      expect(parameters.filter((p) => p.in === 'header').map((p) => p.name), path).toEqual(['Accept-Language']);
      expect(parameters.filter((p) => p.in === 'query').map((p) => p.name).sort(), path).toEqual([...QUERY[version]![path]!].sort());
    }
  });

  it.each(['v1', 'v2'] as const)('%s: the content schemas carry examples that fit them', async (version) => {
    const doc = await (await t.request(`${version === 'v1' ? '/channel/v1' : '/api/channel/v2'}/openapi.json`)).json();
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(doc, 'doc');
    for (const name of SCHEMAS[version]) {
      const schema = doc.components.schemas[name];
      expect(schema.example, name).toBeDefined();
      const validate = ajv.getSchema(`doc#/components/schemas/${name}`)!;
      expect(validate(schema.example), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });
});
