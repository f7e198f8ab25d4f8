import { PNG } from 'pngjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PROPERTY_AMENITIES } from '../../src/simulator/content.js';
import { Dataset, type Property } from '../../src/simulator/dataset.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { wireProperty } from '../../src/simulator/wire.js';
import { AMENITY_GROUPS, IMAGE_SIZES, IMAGE_WIDTHS, LANGUAGES } from '../../src/services/kernel/index.js';
import { answers } from '../../src/upstream/answers.js';
import type {
  AvailabilityBatchResponse,
  AvailabilityResponse,
  PropertyPage,
  UpstreamImage,
  UpstreamProperty,
  UpstreamText,
} from '../../src/upstream/protocol.js';

/**
 * The simulator's content (issue 19): the rich, localised property model of the protocol, drawn
 * from a stream of its own, images at their advertised sizes, the amenity filter and content
 * revisions.
 */

const NOW = new Date('2026-11-21T09:00:00.000Z');
const data = new Dataset(42, 500);
let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, clock: () => NOW });
});
beforeEach(() => sim.reset());
afterAll(async () => {
  await sim.close();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(sim.url + path, { headers });
const post = (path: string, body: unknown) =>
  fetch(sim.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const stay = { checkin: '2027-03-08', checkout: '2027-03-10', occupancy: [{ adults: 2, children_ages: [] }] };
const all = () => Array.from({ length: 500 }, (_, i) => data.property(i + 1)!);

/** Every text of a wire property, with where it is. */
function textsOf(p: UpstreamProperty): [string, UpstreamText][] {
  const out: [string, UpstreamText][] = [];
  for (const [k, v] of Object.entries(p.descriptions)) out.push([`descriptions.${k}`, v]);
  for (const [k, v] of Object.entries(p.policies)) out.push([`policies.${k}`, v]);
  out.push(['checkin.instructions', p.checkin.instructions]);
  for (const a of p.amenities) out.push([`amenity ${a.code}`, a.name]);
  for (const i of p.images) out.push([`image ${i.id}`, i.caption]);
  for (const r of p.room_types ?? []) {
    out.push([`${r.id}.name`, r.name], [`${r.id}.overview`, r.descriptions.overview]);
    for (const b of r.bed_groups) out.push([`${r.id}.bed ${b.id}`, b.description]);
    for (const i of r.images) out.push([`image ${i.id}`, i.caption]);
    for (const a of r.amenities) out.push([`${r.id} amenity ${a.code}`, a.name]);
    for (const rp of r.rate_plans) {
      out.push([`${rp.id}.name`, rp.name]);
      for (const a of rp.amenities) out.push([`${rp.id} amenity ${a.code}`, a.name]);
    }
  }
  return out;
}

describe('simulator content: the dataset', () => {
  it('is the same for a seed, differs between seeds, and moved none of the market figures', () => {
    const again = new Dataset(42, 500);
    for (const id of [1, 3, 250, 500]) expect(wireProperty(again.property(id)!, true)).toEqual(wireProperty(data.property(id)!, true));
    expect(wireProperty(new Dataset(43, 500).property(3)!, true).descriptions).not.toEqual(wireProperty(data.property(3)!, true).descriptions);
    // Pinned as before the content existed (simulator-dataset.test.ts pins more): the content draws
    // from its own stream, so the market's draws did not move.
    const p = data.property(3)!;
    expect([p.name, p.address, p.starRating, p.latitude, p.longitude, p.updatedAt.toISOString()]).toEqual([
      'Blossom Suites Tokyo',
      '199 Shinjuku, Tokyo',
      1.5,
      35.619401,
      139.59827,
      '2026-02-02T16:22:04.133Z',
    ]);
    expect(p.roomTypes.map((r) => [r.maxOccupancy, r.inventory, r.basePrice])).toEqual([
      [2, 16, 50300],
      [4, 16, 75900],
    ]);
    expect([data.baseStock(p.roomTypes[0]!, '2027-03-03'), data.nightlyPrice(p.roomTypes[0]!, p.roomTypes[0]!.ratePlans[0]!, '2027-03-03')]).toEqual([12, 55000]);
    // And the content itself is pinned, so a change to its stream is noticed.
    expect([p.amenities.map((a) => a.code), p.images.map((i) => `${i.id}:${i.category}`), p.review, p.phone]).toEqual([
      ['air_conditioning', 'elevator', 'restaurant', 'bar', 'non_smoking', 'free_parking', 'valet_parking', 'accessible_parking'],
      ['p1:exterior', 'p2:lobby', 'p3:room', 'p4:bathroom', 'p5:dining', 'p6:view'],
      { score: 7.1, count: 575 },
      '+81-3-3077-3832',
    ]);
  });

  it('has every text in Korean, most in four languages, and leaves some translations out on purpose', () => {
    let missingZhDining = 0;
    let missingJaPets = 0;
    const faults: string[] = [];
    for (const p of all()) {
      const wire = wireProperty(p, true);
      for (const [where, text] of textsOf(wire)) {
        if (!text['ko-KR']?.trim()) faults.push(`${p.id} ${where}: no ko-KR`);
        for (const [language, value] of Object.entries(text)) {
          if (!(LANGUAGES as readonly string[]).includes(language)) faults.push(`${p.id} ${where}: ${language}`);
          if (!value.trim()) faults.push(`${p.id} ${where} ${language}: empty`);
        }
      }
      if (!wire.descriptions.dining['zh-CN']) missingZhDining++;
      if (!wire.policies.pets['ja-JP']) missingJaPets++;
      expect(Object.keys(wire.descriptions.general)).toEqual([...LANGUAGES]);
      expect(wire.descriptions.general['en-US']).toContain(p.city);
      expect(wire.descriptions.location['en-US']).toContain(p.address);
      // Places are named in the language: no romanized district in a Korean text of a Korean city.
      if (p.country === 'KR') expect(wire.descriptions.location['ko-KR']).not.toMatch(/^[A-Za-z]/);
    }
    expect(faults).toEqual([]);
    expect(missingZhDining).toBeGreaterThan(50);
    expect(missingZhDining).toBeLessThan(150);
    expect(missingJaPets).toBeGreaterThan(50);
    expect(missingJaPets).toBeLessThan(200);
  });

  it('draws 6 to 15 amenities of a fixed table of grouped codes, images with unique ids, and room details', () => {
    expect(PROPERTY_AMENITIES.length).toBeGreaterThanOrEqual(25);
    expect(PROPERTY_AMENITIES.length).toBeLessThanOrEqual(35);
    expect(new Set(PROPERTY_AMENITIES.map((a) => a.group))).toEqual(new Set(AMENITY_GROUPS));
    const seen = new Set<string>();
    let chains = 0;
    let reviewed = 0;
    for (const p of all()) {
      expect(p.amenities.length).toBeGreaterThanOrEqual(6);
      expect(p.amenities.length).toBeLessThanOrEqual(15);
      for (const a of p.amenities) seen.add(a.code);
      expect(p.images[0]!.hero).toBe(true);
      expect(p.images.filter((i) => i.hero)).toHaveLength(1);
      expect(p.images.length).toBeGreaterThanOrEqual(5);
      expect(p.images.length).toBeLessThanOrEqual(9);
      const ids = [...p.images, ...p.roomTypes.flatMap((r) => r.images)].map((i) => i.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(p.checkin.beginTime).toMatch(/^\d{2}:\d{2}$/);
      expect(p.checkout.time).toMatch(/^\d{2}:\d{2}$/);
      expect(p.phone).toMatch(/^\+\d{2,3}(-\d+){2,3}$/);
      if (p.chain) chains++;
      if (!p.chain) expect(p.brand).toBeNull();
      if (p.review) {
        reviewed++;
        expect(p.review.score).toBeGreaterThanOrEqual(0);
        expect(p.review.score).toBeLessThanOrEqual(10);
        expect(Math.round(p.review.score * 10)).toBeCloseTo(p.review.score * 10, 6);
      }
      for (const r of p.roomTypes) {
        expect(r.occupancy.maxTotal).toBe(r.maxOccupancy);
        expect(r.images.length).toBeGreaterThanOrEqual(1);
        expect(r.images.length).toBeLessThanOrEqual(3);
        expect(r.images.every((i, k) => i.id === `${r.id.slice(r.id.indexOf('-') + 1)}-${k + 1}` && !i.hero)).toBe(true);
        expect(r.areaSqm).toBeGreaterThan(10);
        expect(r.views.length).toBeGreaterThanOrEqual(1);
      }
    }
    expect(seen).toEqual(new Set(PROPERTY_AMENITIES.map((a) => a.code)));
    expect(chains).toBeGreaterThan(150);
    expect(chains).toBeLessThan(400);
    expect(reviewed).toBeGreaterThan(400);
    expect(reviewed).toBeLessThan(500);
  });

  it('names room types after their beds, in Korean as in the other languages', () => {
    const fits: Record<string, string[]> = {
      '1 double bed': ['Standard Double', 'Superior Double', 'Junior Suite', 'Ocean View Deluxe'],
      '2 single beds': ['Superior Twin', 'Deluxe Twin', 'Standard Double', 'Ocean View Deluxe'],
      '1 king bed': ['Deluxe King', 'Junior Suite', 'Ocean View Deluxe', 'Executive Suite'],
      '1 king bed and 1 single bed': ['Family Room', 'Family Suite', 'Executive Suite'],
      'Floor mattresses (ondol)': ['Ondol Room', 'Deluxe Ondol Room', 'Family Room'],
    };
    const korean: Record<string, string> = {
      'Standard Double': '스탠다드 더블',
      'Superior Twin': '슈페리어 트윈',
      'Deluxe King': '디럭스 킹',
      'Family Room': '패밀리 룸',
      'Junior Suite': '주니어 스위트',
      'Ocean View Deluxe': '오션뷰 디럭스',
      'Executive Suite': '이그제큐티브 스위트',
      'Ondol Room': '온돌 룸',
      'Superior Double': '슈페리어 더블',
      'Deluxe Twin': '디럭스 트윈',
      'Deluxe Ondol Room': '디럭스 온돌 룸',
      'Family Suite': '패밀리 스위트',
    };
    let repeated = 0;
    for (const p of all()) {
      for (const r of p.roomTypes) {
        const name = r.name['en-US']!;
        expect(fits[r.bedGroups[0]!.description['en-US']!]).toContain(name);
        expect(r.name['ko-KR']).toBe(korean[name]);
        if (name === 'Ocean View Deluxe') expect(r.views).toEqual(['sea']);
        expect(r.descriptions.overview['en-US']).toContain(`The ${name} measures ${r.areaSqm} m²`);
      }
      if (new Set(p.roomTypes.map((r) => r.name['en-US'])).size < p.roomTypes.length) repeated++;
    }
    // A name repeats only when a property has more rooms of one kind of beds than names fit them.
    expect(repeated).toBeLessThan(25);
  });

  it('names every rate plan by its cancellation policy and meal plan, in all four languages', () => {
    // Written out here rather than read from the generator, so a wrong table fails.
    const policy = {
      flexible: { 'ko-KR': '무료 취소', 'en-US': 'Free cancellation', 'ja-JP': '無料キャンセル', 'zh-CN': '免费取消' },
      moderate: { 'ko-KR': '부분 환불 가능', 'en-US': 'Partially refundable', 'ja-JP': '一部返金可', 'zh-CN': '部分可退款' },
      strict: { 'ko-KR': '엄격한 취소 규정', 'en-US': 'Strict cancellation', 'ja-JP': '厳格なキャンセル規定', 'zh-CN': '严格取消政策' },
      non_refundable: { 'ko-KR': '환불 불가', 'en-US': 'Non-refundable', 'ja-JP': '返金不可', 'zh-CN': '不可退款' },
    };
    const meal = {
      room_only: { 'ko-KR': '객실만', 'en-US': 'room only', 'ja-JP': '素泊まり', 'zh-CN': '仅客房' },
      breakfast: { 'ko-KR': '조식 포함', 'en-US': 'breakfast included', 'ja-JP': '朝食付き', 'zh-CN': '含早餐' },
      half_board: { 'ko-KR': '조식·석식 포함', 'en-US': 'half board', 'ja-JP': '朝夕食付き', 'zh-CN': '含早晚餐' },
      full_board: { 'ko-KR': '삼식 포함', 'en-US': 'full board', 'ja-JP': '3食付き', 'zh-CN': '含三餐' },
    };
    const join = { 'ko-KR': ', ', 'en-US': ', ', 'ja-JP': '・', 'zh-CN': '，' };
    const pairs = new Set<string>();
    for (const p of all()) {
      for (const plan of p.roomTypes.flatMap((r) => r.ratePlans)) {
        pairs.add(`${plan.cancellationPolicy}|${plan.mealPlan}`);
        for (const l of LANGUAGES) {
          expect(plan.name[l], `${plan.id} ${l}`).toBe(policy[plan.cancellationPolicy][l] + join[l] + meal[plan.mealPlan][l]);
        }
        const codes = plan.amenities.map((a) => a.code);
        expect(codes.includes('free_cancellation')).toBe(plan.cancellationPolicy === 'flexible');
        expect(codes.includes('breakfast_included')).toBe(plan.mealPlan === 'breakfast');
        expect(codes.includes('half_board')).toBe(plan.mealPlan === 'half_board');
        expect(codes.includes('full_board')).toBe(plan.mealPlan === 'full_board');
      }
    }
    expect(pairs.size).toBeGreaterThanOrEqual(12);
    expect(data.property(3)!.roomTypes[1]!.ratePlans[0]!.name).toEqual({
      'ko-KR': '무료 취소, 객실만',
      'en-US': 'Free cancellation, room only',
      'ja-JP': '無料キャンセル・素泊まり',
      'zh-CN': '免费取消，仅客房',
    });
  });
});

describe('simulator content: answers fit the protocol', () => {
  it('property, batch, pages with and without rooms', async () => {
    for (const id of [1, 2, 3, 77, 500]) {
      const body = await (await get(`/properties/${id}`)).json();
      // Nothing dropped or changed by the service's own check.
      expect(answers.property.parse(body)).toEqual(body);
      expect(body).toEqual(wireProperty(data.property(id)!, true));
    }
    const batch = await (await post('/properties/batch', { ids: [5, 9, 9999] })).json();
    expect(answers.propertyBatch.parse(batch)).toEqual(batch);
    expect(batch.missing).toEqual([9999]);
    for (const query of ['limit=500&include=rooms', 'limit=500']) {
      const page = (await (await get(`/properties?${query}`)).json()) as PropertyPage;
      expect(page.properties).toHaveLength(500);
      expect(answers.propertyPage.parse(page)).toEqual(page);
      expect(page.properties.every((p) => p.descriptions.headline['ko-KR'] && p.images.length > 0)).toBe(true);
      expect(page.properties.every((p) => (p.room_types !== undefined) === query.includes('rooms'))).toBe(true);
    }
  });

  it('availability and its batch carry the hero image and the amenity codes', async () => {
    for (const detail of ['lowest', 'rates'] as const) {
      const body = (await (await post('/availability', { ...stay, city: 'Seoul', detail })).json()) as AvailabilityResponse;
      expect(body.results.length).toBeGreaterThan(50);
      expect(answers.availability.parse(body)).toEqual(body);
      for (const r of body.results.slice(0, 20)) {
        const wire = wireProperty(data.property(r.property_id)!, false);
        expect(r.hero_image).toEqual(wire.images[0]);
        expect(r.hero_image?.hero).toBe(true);
        expect(r.amenity_codes).toEqual(wire.amenities.map((a) => a.code));
      }
    }
    const batch = (await (
      await post('/availability/batch', { items: [{ ...stay, property_ids: [1, 2], detail: 'lowest' }, { ...stay, detail: 'lowest' }] })
    ).json()) as AvailabilityBatchResponse;
    expect(answers.availabilityBatch(2).parse(batch)).toEqual(batch);
    expect(batch.items[1]).toMatchObject({ error: { code: 'invalid_request' } });
  });
});

describe('simulator content: amenities filter', () => {
  const withAll = (codes: string[]) => (p: Property) => codes.every((c) => p.amenities.some((a) => a.code === c));

  it('keeps only properties with every listed amenity, in /availability and /availability/batch', async () => {
    const codes = ['free_wifi', 'fitness_center'];
    const expected = all().filter((p) => p.city === 'Busan' && withAll(codes)(p)).map((p) => p.id);
    expect(expected.length).toBeGreaterThan(0);
    const body = (await (await post('/availability', { ...stay, city: 'Busan', amenities: codes, detail: 'lowest' })).json()) as AvailabilityResponse;
    expect(body.results.map((r) => r.property_id)).toEqual(expected);
    expect(body.results.every((r) => codes.every((c) => r.amenity_codes.includes(c)))).toBe(true);
    // Fewer than without the filter; one code alone keeps more than both.
    const busan = all().filter((p) => p.city === 'Busan').length;
    expect(expected.length).toBeLessThan(busan);
    const one = (await (await post('/availability', { ...stay, city: 'Busan', amenities: ['free_wifi'], detail: 'lowest' })).json()) as AvailabilityResponse;
    expect(one.results.length).toBeGreaterThan(expected.length);
    // An empty list filters nothing; an unknown code keeps nothing.
    const none = (await (await post('/availability', { ...stay, city: 'Busan', amenities: [], detail: 'lowest' })).json()) as AvailabilityResponse;
    expect(none.results).toHaveLength(busan);
    const unknown = (await (await post('/availability', { ...stay, city: 'Busan', amenities: ['helipad'], detail: 'lowest' })).json()) as AvailabilityResponse;
    expect(unknown.results).toEqual([]);

    const ids = Array.from({ length: 60 }, (_, i) => i + 1);
    const batch = (await (
      await post('/availability/batch', {
        items: [
          { ...stay, property_ids: ids, amenities: codes, detail: 'lowest' },
          { ...stay, property_ids: ids, detail: 'lowest' },
        ],
      })
    ).json()) as AvailabilityBatchResponse;
    const [filtered, plain] = batch.items as [AvailabilityResponse, AvailabilityResponse];
    expect(filtered.results.map((r) => r.property_id)).toEqual(ids.filter((id) => withAll(codes)(data.property(id)!)));
    expect(plain.results).toHaveLength(60);
  });

  it('refuses codes that are not codes, and more than 50', async () => {
    for (const amenities of [['free_wifi,spa'], ['Free WiFi'], 'free_wifi', Array.from({ length: 51 }, (_, i) => `code_${i}`)]) {
      const res = await post('/availability', { ...stay, city: 'Busan', amenities, detail: 'lowest' });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_request' } });
    }
    const batch = (await (
      await post('/availability/batch', { items: [{ ...stay, property_ids: [1], amenities: ['a,b'], detail: 'lowest' }] })
    ).json()) as AvailabilityBatchResponse;
    expect(batch.items[0]).toMatchObject({ error: { code: 'invalid_request' } });
  });
});

describe('simulator content: images', () => {
  it('serves every advertised size of a property image and a room image at its advertised width and height', async () => {
    const property = (await (await get('/properties/1')).json()) as UpstreamProperty;
    const images: UpstreamImage[] = [property.images[0]!, property.images.at(-1)!, property.room_types![0]!.images[0]!];
    for (const image of images) {
      expect(image.links.map((l) => l.size)).toEqual([...IMAGE_SIZES]);
      for (const link of image.links) {
        expect(link.width).toBe(IMAGE_WIDTHS[link.size]);
        expect(link.height).toBe(Math.round((link.width * 2) / 3));
        expect(link.path).toBe(`/images/1/${image.id}/${link.size}.png`);
        const res = await get(link.path);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('image/png');
        expect(res.headers.get('cache-control')).toBe('public, max-age=86400, immutable');
        const etag = res.headers.get('etag');
        expect(etag).toMatch(/^"[^"]+"$/);
        const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
        expect([png.width, png.height]).toEqual([link.width, link.height]);
        // The same bytes again (deterministic), and 304 for a cache that has them.
        const again = await get(link.path, { 'if-none-match': etag! });
        expect(again.status).toBe(304);
      }
    }
    // Two images differ, and so do two sizes of one image.
    const [a, b] = await Promise.all([get(images[0]!.links[0]!.path), get(images[1]!.links[0]!.path)]);
    expect(Buffer.from(await a.arrayBuffer()).equals(Buffer.from(await b.arrayBuffer()))).toBe(false);
    expect((await get(images[0]!.links[0]!.path)).headers.get('etag')).not.toBe((await get(images[0]!.links[1]!.path)).headers.get('etag'));
  });

  it('answers 404 in the protocol error body for anything not advertised', async () => {
    const p = data.property(1)!;
    const lastRoom = p.roomTypes.at(-1)!;
    const missingRoomImage = `r${p.roomTypes.length}-${lastRoom.images.length + 1}`;
    for (const path of [
      '/images/1/p1/huge.png',
      '/images/1/p1/large.jpg',
      '/images/1/p1/large',
      `/images/1/p${p.images.length + 1}/large.png`,
      `/images/1/${missingRoomImage}/thumbnail.png`,
      '/images/501/p1/large.png',
      '/images/0/p1/large.png',
      '/images/abc/p1/large.png',
      '/images/1/p1/large.png/more',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
    }
  });
});

describe('simulator content: a content change moves updated_at', () => {
  it('revises a property: new headline and reviews, updated_at now, seen by updated_since; reset undoes it', async () => {
    const before = wireProperty(data.property(5)!, true);
    const res = await post('/_control/properties/5/content', {});
    expect(res.status).toBe(200);
    const revised = (await res.json()) as UpstreamProperty;
    expect(answers.property.parse(revised)).toEqual(revised);
    expect(revised.updated_at).toBe(NOW.toISOString());
    expect(revised.descriptions.headline).not.toEqual(before.descriptions.headline);
    if (before.review) expect(revised.review!.count).toBeGreaterThan(before.review.count);
    // Only the content moved: the same rooms, plans and market facts.
    expect(revised.room_types!.map((r) => r.rate_plans.map((rp) => rp.id))).toEqual(before.room_types!.map((r) => r.rate_plans.map((rp) => rp.id)));
    expect([revised.name, revised.address, revised.star_rating]).toEqual([before.name, before.address, before.star_rating]);
    expect(await (await get('/properties/5')).json()).toEqual(revised);

    // Every generated updated_at is before the dataset's epoch (2026-11-01); only the revised one is after.
    const page = (await (await get('/properties?updated_since=2026-11-20T00:00:00Z&limit=1000')).json()) as PropertyPage;
    expect(page.properties.map((p) => p.id)).toEqual([5]);
    expect(page.properties[0]).toEqual({ ...revised, room_types: undefined });

    // A second revision moves the headline again; a set revision is drawn the same every time.
    const second = (await (await post('/_control/properties/5/content', {})).json()) as UpstreamProperty;
    expect(second.descriptions.headline).not.toEqual(revised.descriptions.headline);
    const setAgain = (await (await post('/_control/properties/5/content', { revision: 1 })).json()) as UpstreamProperty;
    expect(setAgain).toEqual(revised);

    await post('/_control/reset', {});
    expect(await (await get('/properties/5')).json()).toEqual(before);
    const after = (await (await get('/properties?updated_since=2026-11-20T00:00:00Z')).json()) as PropertyPage;
    expect(after.properties).toEqual([]);
  });

  it('refuses an unknown property and a bad body', async () => {
    expect((await post('/_control/properties/501/content', {})).status).toBe(404);
    for (const body of [{ revision: -1 }, { revision: 1.5 }, { rev: 1 }]) {
      const res = await post('/_control/properties/5/content', body);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_request' } });
    }
  });
});
