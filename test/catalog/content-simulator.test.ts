import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalizedText } from '../../src/services/kernel/index.js';
import { AMENITY_GROUPS, IMAGE_CATEGORIES, IMAGE_WIDTHS, ROOM_VIEWS } from '../../src/services/kernel/index.js';
import type { UpstreamProperty } from '../../src/upstream/protocol.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 19 on REST, against the bundled simulator's content (the market tests and the bench see):
 * every text a REST answer serves in zh-CN is the provider's zh-CN text where it has one and its
 * ko-KR text where it has not (field by field), never an empty string; the new fields have sane
 * values; image links are the service's own, at the widths the provider advertises.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let t: TestService;
let key: Record<string, string>;
const IDS = Array.from({ length: 40 }, (_, i) => i + 1);
const raw = new Map<number, UpstreamProperty>();

beforeAll(async () => {
  t = await startTestService();
  key = apiKey(await t.channel());
  const batch = await t.service.deps.upstream.getProperties(IDS);
  for (const p of batch.properties) raw.set(p.id, p);
});
afterAll(() => t?.close());

async function get(path: string, language?: string): Promise<Json> {
  const res = await t.request(path, { headers: { ...key, ...(language && { 'accept-language': language }) } });
  expect(res.status, path).toBe(200);
  expect(res.headers.get('content-language')).toBe(language ?? 'ko-KR');
  return res.json();
}

/** Every string in a JSON value, with where it is. */
function strings(value: Json, at = '$'): [string, string][] {
  if (typeof value === 'string') return [[at, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${at}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => strings(v, `${at}.${k}`));
  return [];
}

/** The provider's texts of a property beside what the served answers show for them: [where, provider text, served text]. */
function textPairs(p: UpstreamProperty, detail: Json, rooms: Json[], plans: Json[]): [string, LocalizedText, string][] {
  const pairs: [string, LocalizedText, string][] = [];
  for (const k of ['headline', 'general', 'location', 'rooms', 'dining', 'amenities'] as const) pairs.push([`descriptions.${k}`, p.descriptions[k], detail.descriptions[k]]);
  pairs.push(['checkin.instructions', p.checkin.instructions, detail.checkin.instructions]);
  pairs.push(['policies.children', p.policies.children, detail.policies.children]);
  pairs.push(['policies.pets', p.policies.pets, detail.policies.pets]);
  pairs.push(['policies.extra_beds', p.policies.extra_beds, detail.policies.extra_beds]);
  pairs.push(['policies.know_before_you_go', p.policies.know_before_you_go, detail.policies.know_before_you_go]);
  p.amenities.forEach((a, i) => pairs.push([`amenities[${i}].name`, a.name, detail.amenities[i].name]));
  p.images.forEach((img, i) => pairs.push([`images[${i}].caption`, img.caption, detail.images[i].caption]));
  (p.room_types ?? []).forEach((r, i) => {
    const room = rooms[i];
    pairs.push([`room ${r.id} name`, r.name, room.name]);
    pairs.push([`room ${r.id} overview`, r.descriptions.overview, room.descriptions.overview]);
    r.bed_groups.forEach((b, j) => pairs.push([`room ${r.id} bed ${j}`, b.description, room.bed_groups[j].description]));
    r.amenities.forEach((a, j) => pairs.push([`room ${r.id} amenity ${j}`, a.name, room.amenities[j].name]));
    r.images.forEach((img, j) => pairs.push([`room ${r.id} image ${j}`, img.caption, room.images[j].caption]));
  });
  const allPlans = (p.room_types ?? []).flatMap((r) => r.rate_plans);
  allPlans.forEach((rp, i) => {
    pairs.push([`plan ${rp.id} name`, rp.name, plans[i].name]);
    rp.amenities.forEach((a, j) => pairs.push([`plan ${rp.id} amenity ${j}`, a.name, plans[i].amenities[j].name]));
  });
  return pairs;
}

describe('the simulator content on REST, in each language', () => {
  it.each(['zh-CN', 'ja-JP', 'en-US'] as const)(
    '%s: each text is the provider\'s translation, or its ko-KR text where it has none; never empty',
    async (language) => {
      let fallbacks = 0;
      let translated = 0;
      for (const id of IDS) {
        const p = raw.get(id)!;
        const detail = (await get(`/channel/v1/properties/${id}`, language)).data;
        const rooms = (await get(`/channel/v1/properties/${id}/roomtypes`, language)).data;
        const plans = (await get(`/channel/v1/properties/${id}/rateplans`, language)).data;
        for (const [where, text, served] of textPairs(p, detail, rooms, plans)) {
          expect(served, `${id} ${where}`).toBe(text[language] || text['ko-KR']);
          if (text[language]) translated++;
          else fallbacks++;
        }
        const empty = strings({ detail, rooms, plans }).filter(([, s]) => s.trim() === '');
        expect(empty, `property ${id}`).toEqual([]);
      }
      expect(translated).toBeGreaterThan(0);
      if (language === 'zh-CN') expect(fallbacks, 'the simulator leaves some zh-CN texts untranslated').toBeGreaterThan(0);
    },
  );

  it('zh-CN: no empty string in the v2 answers, the property list or the content file', async () => {
    const answers = {
      v2detail: await get('/api/channel/v2/properties/1', 'zh-CN'),
      v2rooms: await get('/api/channel/v2/properties/1/roomtypes', 'zh-CN'),
      v2list: await get('/api/channel/v2/properties?per_page=50', 'zh-CN'),
      v1list: await get('/channel/v1/properties', 'zh-CN'),
      content: await get('/channel/v1/content/files/content?updated_since=2026-10-01T00:00:00Z', 'zh-CN'),
    };
    expect(answers.content.length).toBeGreaterThan(0);
    expect(strings(answers).filter(([, s]) => s.trim() === '')).toEqual([]);
  });
});

describe('the new fields have sane values', () => {
  const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

  function checkImage(image: Json, propertyId: number, advertised: UpstreamProperty['images'][number]) {
    expect(IMAGE_CATEGORIES).toContain(image.category);
    expect(image.id).toBe(advertised.id);
    expect(Object.keys(image.links).sort()).toEqual(['large', 'medium', 'thumbnail']);
    for (const [size, link] of Object.entries<Json>(image.links)) {
      const provider = advertised.links.find((l) => l.size === size)!;
      // The service's own public route on the origin the request reached (the test's Host), not the provider's.
      expect(link.href).toBe(`http://channel.test/images/${propertyId}/${image.id}/${size}.png`);
      expect(link.width).toBe(IMAGE_WIDTHS[size as keyof typeof IMAGE_WIDTHS]);
      expect(link.width).toBe(provider.width);
      expect(link.height).toBe(provider.height);
      expect(Math.abs(link.height - (link.width * 2) / 3)).toBeLessThan(1);
    }
  }

  it('properties: descriptions, amenities, one hero image first, check-in/out, policies, phone, languages, review', async () => {
    for (const id of IDS) {
      const p = (await get(`/channel/v1/properties/${id}`, 'en-US')).data;
      const provider = raw.get(id)!;
      expect(p.amenities.length).toBeGreaterThan(0);
      for (const a of p.amenities) {
        expect(a.code).toMatch(/^[a-z0-9_]+$/);
        expect(AMENITY_GROUPS).toContain(a.group);
      }
      expect(new Set(p.amenities.map((a: Json) => a.code)).size).toBe(p.amenities.length);
      expect(p.images.length).toBeGreaterThan(0);
      expect(p.images.filter((i: Json) => i.hero)).toHaveLength(1);
      expect(p.images[0].hero).toBe(true);
      p.images.forEach((image: Json, i: number) => checkImage(image, id, provider.images[i]!));
      expect(p.checkin.begin_time).toMatch(HHMM);
      if (p.checkin.end_time !== null) expect(p.checkin.end_time).toMatch(HHMM);
      expect(p.checkin.min_age).toBeGreaterThanOrEqual(0);
      expect(p.checkout.time).toMatch(HHMM);
      expect(p.phone).toMatch(/^\+\d/);
      expect(p.spoken_languages.length).toBeGreaterThan(0);
      if (p.review !== null) {
        expect(p.review.score).toBeGreaterThanOrEqual(0);
        expect(p.review.score).toBeLessThanOrEqual(10);
        expect(Number.isInteger(p.review.count)).toBe(true);
      }
      for (const org of [p.chain, p.brand]) if (org !== null) expect(org).toEqual({ id: expect.any(String), name: expect.any(String) });
    }
  });

  it('room types: occupancy, area, views, amenities, images; rate plans: amenities', async () => {
    for (const id of IDS) {
      const provider = raw.get(id)!;
      const rooms = (await get(`/channel/v1/properties/${id}/roomtypes`, 'ja-JP')).data;
      expect(rooms.length).toBe(provider.room_types!.length);
      rooms.forEach((r: Json, i: number) => {
        expect(r.occupancy.max_total).toBe(r.max_occupancy);
        expect(r.occupancy.max_adults).toBeGreaterThanOrEqual(1);
        expect(r.occupancy.max_adults).toBeLessThanOrEqual(r.occupancy.max_total);
        expect(r.occupancy.max_children).toBeLessThanOrEqual(r.occupancy.max_total);
        expect(r.occupancy.age_categories.map((a: Json) => a.category)).toContain('adult');
        expect(r.area.square_meters).toBeGreaterThan(5);
        for (const v of r.views) expect(ROOM_VIEWS).toContain(v);
        for (const a of r.amenities) expect(AMENITY_GROUPS).toContain(a.group);
        for (const image of r.images) expect(image.hero).toBe(false);
        r.images.forEach((image: Json, j: number) => checkImage(image, id, provider.room_types![i]!.images[j]!));
      });
      const plans = (await get(`/channel/v1/properties/${id}/rateplans`, 'ja-JP')).data;
      for (const plan of plans) {
        expect(Array.isArray(plan.amenities)).toBe(true);
        for (const a of plan.amenities) expect(a.code).toMatch(/^[a-z0-9_]+$/);
      }
    }
  });

  it('the content CSV rows carry the flat fields of the same content', async () => {
    const res = await t.request('/channel/v1/content/files/content?format=csv&updated_since=2026-10-01T00:00:00Z', { headers: { ...key, 'accept-language': 'en-US' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-language')).toBe('en-US');
    const [header, ...lines] = (await res.text()).trimEnd().split('\n');
    const columns = header!.split(',');
    for (const name of ['hero_image_url', 'amenity_codes', 'area_sqm', 'views', 'rateplan_amenity_codes', 'checkin_begin_time', 'review_score']) {
      expect(columns).toContain(name);
    }
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => /http:\/\/channel\.test\/images\/\d+\/[A-Za-z0-9_-]+\/large\.png/.test(l))).toBe(true);
  });
});
